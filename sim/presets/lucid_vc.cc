/*
 * lucid_vc.cc - one virtual cluster of the Lucid simulator, event-driven.
 *
 * Reproduces the original's per-second loop (MODEL.md §2, §4.1-4.5) at
 * only the seconds where something can change; see lucid.h for which.
 * A running job's remaining time and attained service are kept as values
 * at its last (re)start and worked out for any later second t:
 *
 *   remain(t)   = remain0 - (t - since)          (CountDown: one per second
 *   attained(t) = attained0 + gpus * (t - since)  from the second after the
 *                                                 start; ends at
 *                                                 since + remain0 + 1)
 *
 * The lists are the original's: the queue in append order (arrivals, then
 * preempted jobs at the tail) and the running list in start order; the
 * policy sees them concatenated in the model's order and sorts stably.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "sim/csv.h"
#include "sim/presets/lucid.h"

namespace tidal::sim::lucid {

namespace {

constexpr Time kNever = std::numeric_limits<Time>::infinity();

class VcReplay {
public:
	VcReplay(const VcInput &vc, Policy &policy, const Model &model)
		: vc_(vc), policy_(policy), m_(model), jobs_(vc.jobs)
	{
		size_t n = jobs_.size();
		since_.assign(n, 0);
		remain0_.assign(n, 0);
		attained0_.assign(n, 0);
		pend_since_.assign(n, 0);
		end_at_.assign(n, kNever);
		for (size_t i = 0; i < n; i++) {
			Job &j = jobs_[i];
			j.state = JobState::Future;
			j.remaining = j.duration;
			j.attained = 0;
			j.queued = 0;
			j.preemptions = 0;
			index_[j.id] = i;
		}
	}

	VcOutput run();

private:
	Time next_time() const;
	void want(Time t);
	bool complete(Time t);
	bool admit(Time t);
	bool decide(Time t);
	void materialise(Time t);
	void start(size_t i, const Placement &p, Time t);
	void preempt(size_t i, Time t);
	void watch(Time t);
	void watch_remaining(Time t);
	void watch_attained(Time t);
	[[noreturn]] void refuse(const Decision &d, const char *what) const;

	const VcInput &vc_;
	Policy &policy_;
	const Model &m_;
	std::vector<Job> jobs_;
	std::unordered_map<JobId, size_t> index_;
	std::vector<Time> since_, pend_since_, end_at_;
	std::vector<double> remain0_, attained0_;
	std::vector<size_t> queue_, running_;
	size_t next_arrival_ = 0;
	size_t done_ = 0;
	Time decide_at_ = kNever;
	TiresiasOptions levels_;
	VcOutput out_;
};

Time VcReplay::next_time() const
{
	Time t = decide_at_;
	if (next_arrival_ < jobs_.size())
		t = std::min(t, jobs_[next_arrival_].submit);
	for (size_t i : running_)
		t = std::min(t, end_at_[i]);
	return t;
}

/* Visit second T, or the first placement boundary at or after it. */
void VcReplay::want(Time t)
{
	if (m_.period > 1)
		t = std::ceil(t / (double)m_.period) * (double)m_.period;
	decide_at_ = std::min(decide_at_, t);
}

/* Step 1: release jobs whose last second has come, in running order. */
bool VcReplay::complete(Time t)
{
	size_t kept = 0;
	bool any = false;
	for (size_t i : running_) {
		if (end_at_[i] != t) {
			running_[kept++] = i;
			continue;
		}
		Job &j = jobs_[i];
		j.state = JobState::Done;
		j.end = t;
		j.remaining = 0;
		out_.busy.emplace_back(t, -j.alloc);
		j.alloc = 0;
		j.placement.clear();
		end_at_[i] = kNever;
		done_++;
		any = true;
	}
	running_.resize(kept);
	return any;
}

/* Step 2: jobs submitted this second join the queue in arrival order. */
bool VcReplay::admit(Time t)
{
	bool any = false;
	while (next_arrival_ < jobs_.size() &&
	       jobs_[next_arrival_].submit <= t) {
		Job &j = jobs_[next_arrival_];
		j.state = JobState::Pending;
		pend_since_[next_arrival_] = j.submit;
		queue_.push_back(next_arrival_++);
		any = true;
	}
	return any;
}

void VcReplay::materialise(Time t)
{
	for (size_t i : running_) {
		Job &j = jobs_[i];
		double ran = t - since_[i];
		j.remaining = remain0_[i] - ran;
		j.attained = attained0_[i] + j.gpus * ran;
	}
}

void VcReplay::refuse(const Decision &d, const char *what) const
{
	throw InputError("lucid preset: policy " + policy_.name() + " " +
			 what + " job " + std::to_string(d.job) + " at " +
			 vc_.name + "; the Lucid model has no such step");
}

/* Steps 3-5: the policy sorts and selects, then preemptions and starts
 * are applied.  RET: whether any job changed state. */
bool VcReplay::decide(Time t)
{
	materialise(t);
	Snapshot snap;
	snap.cluster = &vc_.cluster;
	snap.now = t;
	const std::vector<size_t> &first = m_.running_first ? running_ : queue_;
	const std::vector<size_t> &second = m_.running_first ? queue_ : running_;
	for (size_t i : first)
		snap.jobs.push_back(&jobs_[i]);
	for (size_t i : second)
		snap.jobs.push_back(&jobs_[i]);
	Plan plan = policy_.decide(snap);
	out_.decisions++;

	bool changed = false;
	for (const Decision &d : plan.decisions) {
		auto it = index_.find(d.job);
		if (it == index_.end())
			refuse(d, "decided on unknown");
		JobState s = jobs_[it->second].state;
		switch (d.action) {
		case Action::Keep:
		case Action::Hold:
			break;
		case Action::Start:
			if (s != JobState::Pending)
				refuse(d, "started non-pending");
			start(it->second, d.placement, t);
			changed = true;
			break;
		case Action::Preempt:
			if (s != JobState::Running)
				refuse(d, "preempted non-running");
			preempt(it->second, t);
			changed = true;
			break;
		case Action::Resize:
			refuse(d, "resized");
		case Action::Reject:
			refuse(d, "rejected");
		}
	}
	return changed;
}

void VcReplay::start(size_t i, const Placement &p, Time t)
{
	Job &j = jobs_[i];
	if (m_.progress == Model::Progress::FixedEnd && j.remaining <= 0)
		throw InputError("lucid preset: job " + std::to_string(j.id) +
				 " has duration 0; the original never ends it");
	if (j.start < 0)
		j.start = t;
	j.queued += t - pend_since_[i];
	j.state = JobState::Running;
	j.alloc = j.gpus;
	j.placement = p;
	since_[i] = t;
	remain0_[i] = j.remaining;
	attained0_[i] = j.attained;
	end_at_[i] = m_.progress == Model::Progress::FixedEnd
			     ? t + j.remaining
			     : t + j.remaining + 1;
	queue_.erase(std::find(queue_.begin(), queue_.end(), i));
	running_.push_back(i);
	out_.busy.emplace_back(t, j.alloc);
}

/* Checkpoint cost is added to the work left (MODEL.md §4 common rule). */
void VcReplay::preempt(size_t i, Time t)
{
	Job &j = jobs_[i];
	j.remaining += j.gpus <= 8 ? m_.overhead_small : m_.overhead_large;
	j.preemptions++;
	j.state = JobState::Pending;
	out_.busy.emplace_back(t, -j.alloc);
	j.alloc = 0;
	j.placement.clear();
	pend_since_[i] = t;
	end_at_[i] = kNever;
	running_.erase(std::find(running_.begin(), running_.end(), i));
	queue_.push_back(i);
}

/* SRTF: the stable sort puts a queued job ahead of a running one with the
 * same remaining time; the order changes when the running job's time
 * drops below the queued one's, r - k < p, i.e. k = r - p + 1. */
void VcReplay::watch_remaining(Time t)
{
	std::vector<double> pending;
	for (size_t i : queue_)
		pending.push_back(jobs_[i].remaining);
	if (pending.empty())
		return;
	std::sort(pending.begin(), pending.end());
	for (size_t i : running_) {
		double r = jobs_[i].remaining;
		auto it = std::upper_bound(pending.begin(), pending.end(), r);
		if (it == pending.begin())
			continue; /* already ahead of every queued job */
		want(t + (r - *(it - 1)) + 1);
	}
}

/* Tiresias: a running job changes level when its attained service reaches
 * (or passes) the next threshold; it gains `gpus` each second. */
void VcReplay::watch_attained(Time t)
{
	bool exceed = levels_.demote == TiresiasOptions::Demote::Exceed;
	for (size_t i : running_) {
		const Job &j = jobs_[i];
		for (double th : levels_.thresholds) {
			double left = th - j.attained;
			if (exceed ? left < 0 : left <= 0)
				continue;
			double k = exceed ? std::floor(left / j.gpus) + 1
					  : std::ceil(left / j.gpus);
			want(t + k);
			break;
		}
	}
}

void VcReplay::watch(Time t)
{
	if (m_.watch == Model::Watch::Remaining)
		watch_remaining(t);
	else if (m_.watch == Model::Watch::Attained)
		watch_attained(t);
}

VcOutput VcReplay::run()
{
	if (m_.watch == Model::Watch::Attained)
		levels_ = m_.levels;
	while (done_ < jobs_.size()) {
		Time t = next_time();
		if (t == kNever)
			throw InputError("lucid preset: " + vc_.name + ": " +
					 std::to_string(queue_.size()) +
					 " job(s) can never start");
		out_.events++;
		bool completed = complete(t);
		bool arrived = admit(t);
		if (completed || arrived)
			want(t);
		if (decide_at_ > t)
			continue;
		decide_at_ = kNever;
		/* A decision that moved jobs between the lists, or sorted
		 * jobs that arrived this second, may sort differently next
		 * second (preempted jobs carry their overhead, QSSF ranks by
		 * estimate once a job has waited). */
		if (decide(t) || arrived)
			want(t + 1);
		watch(t);
	}
	for (const Job &j : jobs_) {
		JobResult r;
		r.id = j.id;
		r.name = j.name;
		r.gpus = j.gpus;
		r.submit = j.submit;
		r.start = j.start;
		r.end = j.end;
		r.queue = j.queued;
		r.jct = j.end - j.submit;
		r.preemptions = j.preemptions;
		out_.jobs.push_back(r);
	}
	return std::move(out_);
}

} /* namespace */

VcOutput replay_vc(const VcInput &vc, Policy &policy, const Model &model)
{
	return VcReplay(vc, policy, model).run();
}

} /* namespace tidal::sim::lucid */
