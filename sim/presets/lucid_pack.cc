/*
 * lucid_pack.cc - one virtual cluster under the Lucid policy, event-driven
 * (MODEL.md §4.6.2-4.6.6).
 *
 * Per second (the original's order):
 *   (1) progress/completion pass over the running list, in list order:
 *       remain <= 0 ends the job (a packed-in job hands its partner back
 *       exclusive use at rate 1), otherwise remain -= rate;
 *   (2) arrivals (jobs the profiler finished are only counted);
 *   (3) queue stably sorted by priority = estimate x GPUs;
 *   (4) PAS refreshed at t % 100 == 0; PAS off: place in order, stop at
 *       the first failure; PAS on: pack onto a running job, else place,
 *       never stop;
 *   (5) vcYVn follows the profiler's scaling.
 *
 * Seconds visited: arrivals, completions (each job's end second is
 * computed exactly from its remain and rate, see drain_seconds), PAS
 * changes while jobs wait, scaling seconds, and the second after any
 * change.  Decisions read only the lists, priorities and placements, none
 * of which move in between.  At a visited second every running job is
 * brought up to date by repeating its own subtraction (drain), so a rate
 * that changes mid-pass takes effect exactly where the original's does.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/placement/packing.h"
#include "core/policies/lucid.h"
#include "sim/csv.h"
#include "sim/presets/lucid_pack.h"

namespace tidal::sim::lucid {

namespace {

constexpr Time kNever = std::numeric_limits<Time>::infinity();

struct PackJob {
	const Job *job = nullptr;
	ProfiledJob prof;
	double priority = 0;
	WorkloadKey key;
	int score = 0;
	/* state */
	bool done = false;
	double rem = 0, rate = 1;
	Time sync = 0;   /* the next second whose subtraction is not applied */
	Time end_at = kNever;
	bool exclusive = true;
	bool packed_in = false; /* packed onto `partner` (the later arrival) */
	long partner = -1;
	std::vector<std::pair<long, int>> where;
	double queue = 0;
	Time start = -1, end = -1;
};

class PackReplay {
public:
	explicit PackReplay(const PackInput &in);
	VcOutput run();

private:
	Time next_time() const;
	void advance(PackJob &j, Time t) const;
	void set_rate(PackJob &j, double rate, Time t);
	bool complete(Time t);
	void finish(size_t i, Time t);
	bool admit(Time t);
	bool decide(Time t);
	bool start(size_t i, Time t);
	long target_for(const PackJob &j) const;
	void pack(size_t i, size_t r, Time t);
	bool echo(Time t);
	bool pas_at(Time t) const;
	Time next_pas_change(Time t) const;

	const PackInput &in_;
	std::vector<PackJob> jobs_;
	NodeList nodes_;
	std::vector<size_t> queue_, running_;
	size_t next_ = 0, done_ = 0;
	Time wake_ = kNever;
	bool pas_ = false;
	VcOutput out_;
};

PackReplay::PackReplay(const PackInput &in)
	: in_(in), nodes_((int)in.vc->cluster.nodes.size(),
			  in.vc->cluster.max_gpus_per_node())
{
	for (const Job &j : in.vc->jobs) {
		PackJob p;
		p.job = &j;
		auto it = in.profiler->jobs.find(j.id);
		if (it != in.profiler->jobs.end())
			p.prof = it->second;
		p.queue = p.prof.profqueue;
		if (!p.prof.toskip) {
			if (j.estimate < 0)
				throw InputError(
					"lucid preset: no estimate for job " +
					std::to_string(j.id) +
					" (the lucid policy needs one per job)");
			p.priority = lucid_priority(j.estimate, j.gpus);
			p.key = workload_key(j);
			p.score = in.tables->score(p.key, j.id);
		}
		jobs_.push_back(std::move(p));
	}
}

bool PackReplay::pas_at(Time t) const
{
	Time b = std::floor(t / 100) * 100;
	bool on = false;
	for (const auto &[at, v] : *in_.pas) {
		if (at > b)
			break;
		on = v;
	}
	return on;
}

Time PackReplay::next_pas_change(Time t) const
{
	for (const auto &[at, v] : *in_.pas)
		if (at > t && v != pas_)
			return at;
	return kNever;
}

Time PackReplay::next_time() const
{
	Time t = wake_;
	if (next_ < jobs_.size())
		t = std::min(t, jobs_[next_].job->submit);
	for (size_t i : running_)
		t = std::min(t, jobs_[i].end_at);
	return t;
}

/* Apply the subtractions of seconds j.sync .. t-1. */
void PackReplay::advance(PackJob &j, Time t) const
{
	if (t > j.sync) {
		j.rem = drain(j.rem, j.rate, (long)(t - j.sync));
		j.sync = t;
	}
}

void PackReplay::set_rate(PackJob &j, double rate, Time t)
{
	advance(j, t);
	j.rate = rate;
	j.end_at = j.sync + (Time)drain_seconds(j.rem, j.rate);
}

/* Step 1, in running-list order. */
bool PackReplay::complete(Time t)
{
	bool any = false;
	for (size_t k = 0; k < running_.size();) {
		size_t i = running_[k];
		PackJob &j = jobs_[i];
		advance(j, t);
		if (j.rem > 0) {
			j.rem -= j.rate;
			j.sync = t + 1;
			k++;
			continue;
		}
		running_.erase(running_.begin() + (long)k);
		finish(i, t);
		any = true;
	}
	return any;
}

/* Q4: the partner lookup finds the target for a packed-in job, but the
 * ending job itself for a target, whose packed-in job then keeps its
 * shared rate and is never a target again. */
void PackReplay::finish(size_t i, Time t)
{
	PackJob &j = jobs_[i];
	j.done = true;
	j.end = t;
	j.end_at = kNever;
	done_++;
	if (j.partner >= 0) {
		PackJob &r = jobs_[(size_t)j.partner];
		if (j.packed_in) {
			r.exclusive = true;
			set_rate(r, 1.0, t);
		}
		r.partner = -1;
		return; /* the partner still holds the GPUs */
	}
	nodes_.release(j.where);
	out_.busy.emplace_back(t, -j.job->gpus);
}

bool PackReplay::admit(Time t)
{
	bool any = false;
	for (; next_ < jobs_.size() && jobs_[next_].job->submit <= t; next_++) {
		PackJob &j = jobs_[next_];
		if (j.prof.toskip) {
			j.done = true;
			done_++;
			continue;
		}
		queue_.push_back(next_);
		any = true;
	}
	if (any)
		std::stable_sort(queue_.begin(), queue_.end(),
				 [&](size_t a, size_t b) {
					 return jobs_[a].priority <
						jobs_[b].priority;
				 });
	return any;
}

PackView view(const PackJob &j)
{
	return {j.job->gpus, j.job->gpu_mem_mb, j.score, j.priority,
		j.exclusive};
}

/* §4.6.5: the first running job, in list order, that J may join (the
 * rule is core's grouping stage, core/placement/packing.h, with Lucid's
 * limits). */
long PackReplay::target_for(const PackJob &j) const
{
	static const PackRules rules; /* 24,576 MiB, sharescore 2, ratio 2 */
	PackView me = view(j);
	for (size_t r : running_)
		if (may_pack(me, view(jobs_[r]), rules))
			return (long)r;
	return -1;
}

void PackReplay::pack(size_t i, size_t r, Time t)
{
	PackJob &j = jobs_[i], &c = jobs_[r];
	auto [sj, sr] = in_.tables->speeds(j.key, c.key, j.job->id);
	j.exclusive = c.exclusive = false;
	j.packed_in = true;
	j.partner = (long)r;
	c.partner = (long)i;
	j.where = c.where;
	j.rate = sj;
	set_rate(c, sr, t + 1);
}

/* Start bookkeeping, shared by packing and placement. */
bool PackReplay::start(size_t i, Time t)
{
	PackJob &j = jobs_[i];
	if (j.where.empty()) {
		j.where = nodes_.place(j.job->gpus);
		if (j.where.empty())
			return false;
		out_.busy.emplace_back(t, j.job->gpus);
	}
	j.start = t;
	j.queue += t - j.job->submit; /* Q5: profqueue counted too */
	j.rem = j.job->duration;
	j.sync = t + 1;
	j.end_at = j.sync + (Time)drain_seconds(j.rem, j.rate);
	running_.push_back(i);
	return true;
}

bool PackReplay::decide(Time t)
{
	pas_ = pas_at(t); /* the value set at the last multiple of 100 */
	out_.decisions++;
	std::vector<size_t> snapshot = queue_;
	std::vector<size_t> kept;
	bool any = false;
	for (size_t i : snapshot) {
		PackJob &j = jobs_[i];
		bool started = false;
		if (pas_ && j.job->gpus <= 8) {
			long r = target_for(j);
			if (r >= 0) {
				pack(i, (size_t)r, t);
				started = start(i, t);
			}
		}
		if (!started)
			started = start(i, t);
		if (started) {
			any = true;
			continue;
		}
		kept.push_back(i);
		if (!pas_) {
			kept.insert(kept.end(),
				    std::find(snapshot.begin(), snapshot.end(),
					      i) + 1,
				    snapshot.end());
			break;
		}
	}
	queue_ = std::move(kept);
	return any;
}

/* §4.6.6: vcYVn gives a node back while the profiler holds its extra one. */
bool PackReplay::echo(Time t)
{
	if (!in_.echo_scaling || (long)t % 10 != 0)
		return false;
	bool any = false;
	for (const auto &[at, d] : in_.profiler->scaling) {
		if (at != t)
			continue;
		if (d > 0)
			any |= nodes_.remove_highest_idle();
		else if (!nodes_.has(9999)) {
			nodes_.add(9999);
			any = true;
		}
	}
	return any;
}

VcOutput PackReplay::run()
{
	if (in_.echo_scaling)
		for (const auto &[at, d] : in_.profiler->scaling)
			(void)d, wake_ = std::min(wake_, at);
	while (done_ < jobs_.size()) {
		Time t = next_time();
		if (t == kNever)
			throw InputError("lucid preset: " + in_.vc->name + ": " +
					 std::to_string(queue_.size()) +
					 " job(s) can never start");
		out_.events++;
		wake_ = kNever;
		bool changed = complete(t);
		changed |= admit(t);
		changed |= decide(t);
		changed |= echo(t);
		if (changed)
			wake_ = t + 1;
		if (!queue_.empty())
			wake_ = std::min(wake_, next_pas_change(t));
		if (in_.echo_scaling)
			for (const auto &[at, d] : in_.profiler->scaling)
				if (at > t)
					wake_ = std::min(wake_, at);
	}
	for (const PackJob &p : jobs_) {
		const Job &j = *p.job;
		JobResult r;
		r.id = j.id;
		r.name = j.name;
		r.gpus = j.gpus;
		r.submit = j.submit;
		r.start = p.prof.toskip ? p.prof.start : p.start;
		r.end = p.prof.toskip ? p.prof.end : p.end;
		r.queue = p.queue;
		r.jct = r.end - j.submit;
		out_.jobs.push_back(r);
	}
	return std::move(out_);
}

} /* namespace */

std::vector<std::pair<Time, bool>> pas_schedule(const PackTables &t,
						Time start_ts)
{
	Forecast f(t, t.pred_jobs, start_ts, 10);
	std::vector<std::pair<Time, bool>> out;
	Time last = start_ts + (t.pred_offset.empty() ? 0
						      : t.pred_offset.back());
	for (Time b = start_ts; b <= last + 100; b += 100) {
		double m = f.mean_after(b);
		bool on = !(m <= 2); /* NaN: on */
		if (out.empty() || out.back().second != on)
			out.emplace_back(b, on);
	}
	return out;
}

VcOutput replay_lucid_vc(const PackInput &in)
{
	return PackReplay(in).run();
}

} /* namespace tidal::sim::lucid */
