/*
 * replay.cc - the event loop behind tidal-sim's native model.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "sim/replay.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "core/placement.h"
#include "sim/csv.h"

namespace tidal::sim {

static constexpr Time kNever = std::numeric_limits<Time>::infinity();

double linear_speed(const Job &job, int gpus)
{
	if (job.iter_time <= 0 || job.gpus <= 0)
		return 0;
	return (double)gpus / job.gpus / job.iter_time;
}

namespace {

struct Live {
	Job *job;
	double owed = 0;       /* restart overhead still to pay, s */
	double speed = 0;      /* iterations per second while running */
	Time finish = kNever;  /* predicted completion */
};

class Replayer {
public:
	Replayer(const SimInput &in, Policy &policy, const ReplayHooks &hooks,
		 const Progress &progress)
		: in_(in), policy_(policy), hooks_(hooks), progress_(progress),
		  free_(in.cluster)
	{
		jobs_ = in.trace.jobs;
		for (Job &j : jobs_) {
			j.state = JobState::Future;
			j.remaining = j.iterations;
		}
		arrival_order_.resize(jobs_.size());
		std::iota(arrival_order_.begin(), arrival_order_.end(), 0);
		std::stable_sort(arrival_order_.begin(), arrival_order_.end(),
				 [&](size_t a, size_t b) {
					 return jobs_[a].submit < jobs_[b].submit;
				 });
		result_.policy = policy.name();
		result_.total_gpus = in.cluster.total_gpus();
		snap_.cluster = &in_.cluster;
		snap_.want_reasons = false;
		snap_.changes_only = true;
		snap_.free = &free_;
	}

	RunResult run();

private:
	double speed(const Job &j, int gpus) const
	{
		return hooks_.speed ? hooks_.speed(j, gpus)
				    : linear_speed(j, gpus);
	}
	double overhead(const Job &j, int gpus) const
	{
		return hooks_.restart_overhead ? hooks_.restart_overhead(j, gpus)
					       : 0;
	}
	void advance(Time to);
	void complete(Time now);
	void decide(Time now);
	void apply(const Plan &plan, Time now);
	void release(Job &j);
	void predict(Live &l, Time now);
	Time next_event() const;
	void record_util(Time now);
	void finish(Job &j, Time now);
	/* Remove the jobs in STATE from active_ and the snapshot. */
	void drop(JobState state);

	const SimInput &in_;
	Policy &policy_;
	const ReplayHooks &hooks_;
	const Progress &progress_;

	std::vector<Job> jobs_;
	std::vector<size_t> arrival_order_;
	size_t next_arrival_ = 0;
	std::vector<Live> active_; /* arrival order; preempted stay in place */
	/* The policy's view, kept from event to event: snap_.jobs[i] is
	 * active_[i].job, free_ the GPUs the running jobs leave. */
	Snapshot snap_;
	FreeMap free_;
	/* Scratch for apply(): decisions that change a job, by slot. */
	std::vector<std::size_t> changed_, slot_;
	std::uint64_t seq_ = 0;
	Time now_ = 0;
	Time wake_ = kNever;
	int busy_ = 0;
	long done_ = 0;
	RunResult result_;
};

void Replayer::predict(Live &l, Time now)
{
	Job &j = *l.job;
	if (j.state != JobState::Running || l.speed <= 0) {
		l.finish = kNever;
		return;
	}
	l.finish = now + l.owed + j.remaining / l.speed;
}

void Replayer::advance(Time to)
{
	double dt = to - now_;
	if (dt <= 0)
		return;
	for (Live &l : active_) {
		Job &j = *l.job;
		if (j.state == JobState::Pending) {
			j.queued += dt;
			continue;
		}
		double pay = std::min(l.owed, dt);
		l.owed -= pay;
		j.remaining -= (dt - pay) * l.speed;
		j.attained += dt * j.alloc;
		j.executed += dt;
	}
	now_ = to;
}

void Replayer::drop(JobState state)
{
	std::erase_if(active_,
		      [&](const Live &l) { return l.job->state == state; });
	std::erase_if(snap_.jobs,
		      [&](const Job *j) { return j->state == state; });
}

/* Give back J's GPUs. */
void Replayer::release(Job &j)
{
	free_.release(j.placement);
	busy_ -= j.alloc;
	j.alloc = 0;
	j.placement.clear();
}

void Replayer::finish(Job &j, Time now)
{
	j.state = JobState::Done;
	j.end = now;
	j.remaining = 0;
	JobResult r;
	r.id = j.id;
	r.name = j.name;
	r.gpus = j.gpus;
	r.submit = j.submit;
	r.start = j.start;
	r.end = now;
	r.jct = now - j.submit;
	r.queue = j.queued;
	r.preemptions = j.preemptions;
	r.deadline = j.deadline;
	result_.jobs.push_back(r);
	release(j);
	done_++;
}

void Replayer::complete(Time now)
{
	bool any = false;
	for (Live &l : active_)
		if (l.job->state == JobState::Running &&
		    (l.finish <= now ||
		     l.finish - now <= 1e-9 * std::max(1.0, std::fabs(now)))) {
			finish(*l.job, now);
			any = true;
		}
	if (any)
		drop(JobState::Done);
}

void Replayer::record_util(Time now)
{
	if (!result_.util.empty() && result_.util.back().busy == busy_)
		return;
	if (!result_.util.empty() && result_.util.back().t == now)
		result_.util.back().busy = busy_;
	else
		result_.util.push_back({now, busy_});
}

void Replayer::decide(Time now)
{
	snap_.now = now;
	Plan plan = policy_.decide(snap_);
	result_.decisions++;
	wake_ = plan.wake_at > now ? plan.wake_at : kNever;
	apply(plan, now);
	for (Live &l : active_)
		predict(l, now);
	record_util(now);
}

/* Apply PLAN in the order of active_ (arrival order): releases first, so
 * starts see the freed GPUs.  A job without a decision is unchanged. */
void Replayer::apply(const Plan &plan, Time now)
{
	const std::vector<Decision> &ds = plan.decisions;
	std::unordered_map<JobId, std::size_t> slot_of; /* policies without slots */
	changed_.clear();
	slot_.resize(ds.size());
	for (std::size_t k = 0; k < ds.size(); k++) {
		std::ptrdiff_t s = ds[k].slot;
		if (s < 0 || s >= (std::ptrdiff_t)snap_.jobs.size() ||
		    snap_.jobs[s]->id != ds[k].job) {
			if (slot_of.empty())
				for (std::size_t i = 0; i < snap_.jobs.size(); i++)
					slot_of.emplace(snap_.jobs[i]->id, i);
			auto it = slot_of.find(ds[k].job);
			if (it == slot_of.end())
				continue;
			s = (std::ptrdiff_t)it->second;
		}
		changed_.push_back(k);
		slot_[k] = (std::size_t)s;
	}
	/* By slot; the first decision for a job wins. */
	std::stable_sort(changed_.begin(), changed_.end(),
			 [&](std::size_t a, std::size_t b) {
				 return slot_[a] < slot_[b];
			 });
	changed_.erase(std::unique(changed_.begin(), changed_.end(),
				   [&](std::size_t a, std::size_t b) {
					   return slot_[a] == slot_[b];
				   }),
		       changed_.end());

	bool rejected = false;
	for (std::size_t k : changed_) {
		const Decision &d = ds[k];
		Live &l = active_[slot_[k]];
		Job &j = *l.job;
		if (d.action == Action::Preempt && j.state == JobState::Running) {
			release(j);
			j.state = JobState::Pending;
			j.preemptions++;
			j.seq = seq_++;
			l.owed = 0;
			l.speed = 0;
			if (hooks_.on_preempt)
				hooks_.on_preempt(j);
		} else if (d.action == Action::Reject) {
			if (j.state == JobState::Running)
				release(j);
			j.state = JobState::Rejected;
			JobResult r;
			r.id = j.id;
			r.name = j.name;
			r.gpus = j.gpus;
			r.submit = j.submit;
			r.deadline = j.deadline;
			r.rejected = true;
			result_.jobs.push_back(r);
			done_++;
			rejected = true;
		} else if ((d.action == Action::Start ||
			    d.action == Action::Resize) &&
			   j.state == JobState::Running) {
			free_.release(j.placement);
		}
	}
	for (std::size_t k : changed_) {
		const Decision &d = ds[k];
		Live &l = active_[slot_[k]];
		Job &j = *l.job;
		if (j.state == JobState::Rejected ||
		    (d.action != Action::Start && d.action != Action::Resize))
			continue;
		if (!free_.take(d.placement))
			throw InputError("policy " + policy_.name() + ": job " +
					 std::to_string(j.id) +
					 " placed on GPUs that are not free");
		busy_ += d.gpus - j.alloc;
		bool changed = j.alloc != d.gpus || j.state != JobState::Running;
		j.alloc = d.gpus;
		j.placement = d.placement;
		if (j.state != JobState::Running && j.start < 0)
			j.start = now;
		j.state = JobState::Running;
		l.speed = speed(j, j.alloc);
		if (changed)
			l.owed = overhead(j, j.alloc);
	}
	if (rejected)
		drop(JobState::Rejected);
}

Time Replayer::next_event() const
{
	Time t = kNever;
	if (next_arrival_ < arrival_order_.size())
		t = jobs_[arrival_order_[next_arrival_]].submit;
	for (const Live &l : active_)
		t = std::min(t, l.finish);
	t = std::min(t, wake_);
	if (hooks_.period > 0 && t > now_) {
		/* Pending work waits for the next boundary. */
		bool pending = std::any_of(active_.begin(), active_.end(),
					   [](const Live &l) {
						   return l.job->state ==
							  JobState::Pending;
					   });
		if (pending) {
			Time b = (std::floor(now_ / hooks_.period) + 1) *
				 hooks_.period;
			t = std::min(t, b);
		}
	}
	return t;
}

RunResult Replayer::run()
{
	long total = (long)jobs_.size();
	record_util(0);
	while (next_arrival_ < arrival_order_.size() || !active_.empty()) {
		Time t = next_event();
		if (t == kNever) {
			/* Nothing can ever run: jobs too large for the
			 * cluster.  Reject them so the run ends. */
			for (Live &l : active_) {
				l.job->state = JobState::Rejected;
				JobResult r;
				r.id = l.job->id;
				r.name = l.job->name;
				r.gpus = l.job->gpus;
				r.submit = l.job->submit;
				r.rejected = true;
				result_.jobs.push_back(r);
			}
			active_.clear();
			snap_.jobs.clear();
			break;
		}
		advance(t);
		complete(t);
		while (next_arrival_ < arrival_order_.size() &&
		       jobs_[arrival_order_[next_arrival_]].submit <= t) {
			Job &j = jobs_[arrival_order_[next_arrival_++]];
			j.state = JobState::Pending;
			j.seq = seq_++;
			active_.push_back({&j});
			snap_.jobs.push_back(&j);
		}
		result_.events++;
		bool boundary = hooks_.period <= 0 ||
				std::fmod(t, hooks_.period) == 0;
		if (boundary)
			decide(t);
		else
			for (Live &l : active_)
				predict(l, t);
		if (progress_)
			progress_(done_, total);
	}
	record_util(now_);
	return std::move(result_);
}

} /* namespace */

RunResult replay(const SimInput &in, Policy &policy, const ReplayHooks &hooks,
		 const Progress &progress)
{
	Replayer r(in, policy, hooks, progress);
	return r.run();
}

} /* namespace tidal::sim */
