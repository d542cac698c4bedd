/*
 * lucid_profiler.cc - Lucid's global profiler pass (MODEL.md §4.6.1).
 *
 * Every job of every VC with at most 8 GPUs runs for up to 200 s on a
 * 2-node profiling cluster, Least-GPU-First with head-of-line blocking;
 * a job that ends inside those 200 s is done ("toskip").  A third node is
 * added while more than 10 jobs wait and removed again when the queue is
 * short, the node idle and the predicted GPU demand low.
 *
 * Per second:  (1) release jobs whose end has come  (2) arrivals
 *              (3) sort by GPUs, place until one fails  (4) scaling
 *
 * Event-driven: the seconds visited are arrivals, releases, the second
 * after any change, and the 10-s / 100-s boundaries while a scaling rule
 * could fire; nothing else changes in between.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/policies/lucid.h"
#include "sim/csv.h"
#include "sim/presets/lucid_pack.h"

namespace tidal::sim::lucid {

namespace {

constexpr Time kNever = std::numeric_limits<Time>::infinity();
constexpr int kBaseNodes = 2;
constexpr int kGpuLimit = 8;    /* int(2 nodes * factor 4) */
constexpr Time kTimeLimit = 200;
constexpr long kExtraNode = 9999;

struct Running {
	size_t job;
	Time end;
	std::vector<std::pair<long, int>> where;
};

class Profiler {
public:
	Profiler(const std::vector<Job> &jobs, const PackTables &tables,
		 Time start_ts)
		: jobs_(jobs), nodes_(kBaseNodes),
		  forecast_(tables, tables.pred_gpus, start_ts, -1)
	{
	}
	ProfilerResult run();

private:
	Time next_time() const;
	bool release(Time t);
	bool admit(Time t);
	bool place(Time t);
	bool scale(Time t);

	const std::vector<Job> &jobs_;
	NodeList nodes_;
	Forecast forecast_;
	std::vector<size_t> queue_;
	std::vector<Running> running_;
	size_t next_ = 0;
	Time wake_ = kNever;
	ProfilerResult out_;
};

Time Profiler::next_time() const
{
	Time t = wake_;
	if (next_ < jobs_.size())
		t = std::min(t, jobs_[next_].submit);
	for (const Running &r : running_)
		t = std::min(t, r.end);
	return t;
}

bool Profiler::release(Time t)
{
	size_t kept = 0;
	for (size_t k = 0; k < running_.size(); k++) {
		Running &r = running_[k];
		if (r.end != t) {
			if (kept != k)
				running_[kept] = std::move(r);
			kept++;
			continue;
		}
		nodes_.release(r.where);
	}
	bool any = kept != running_.size();
	running_.resize(kept);
	return any;
}

bool Profiler::admit(Time t)
{
	bool any = false;
	for (; next_ < jobs_.size() && jobs_[next_].submit <= t; next_++) {
		const Job &j = jobs_[next_];
		out_.jobs[j.id]; /* every job gets a record */
		if (j.gpus > kGpuLimit)
			continue; /* not profiled, counted as done */
		queue_.push_back(next_);
		any = true;
	}
	return any;
}

/* Least-GPU-First; ties in arrival order; stop at the first failure. */
bool Profiler::place(Time t)
{
	std::stable_sort(queue_.begin(), queue_.end(), [&](size_t a, size_t b) {
		return lucid_profile_before(jobs_[a], jobs_[b]);
	});
	size_t placed = 0;
	for (size_t i : queue_) {
		const Job &j = jobs_[i];
		auto where = nodes_.place(j.gpus);
		if (where.empty())
			break;
		ProfiledJob &p = out_.jobs[j.id];
		p.profiled = true;
		p.start = t;
		p.profqueue = t - j.submit;
		p.toskip = j.duration <= kTimeLimit;
		if (p.toskip && j.duration <= 0)
			throw InputError("lucid preset: job " +
					 std::to_string(j.id) +
					 " has duration 0; the original "
					 "profiler never ends it");
		p.end = t + std::min(j.duration, kTimeLimit);
		running_.push_back({i, p.end, std::move(where)});
		placed++;
	}
	queue_.erase(queue_.begin(), queue_.begin() + placed);
	return placed > 0;
}

bool Profiler::scale(Time t)
{
	long ti = (long)t;
	if (ti % 10 == 0 && queue_.size() > 10 && nodes_.size() == kBaseNodes) {
		nodes_.add(kExtraNode);
		out_.scaling.emplace_back(t, +1);
		return true;
	}
	if (ti % 100 == 0 && queue_.size() < 5 &&
	    nodes_.size() == kBaseNodes + 1 && nodes_.idle_nodes() >= 1 &&
	    nodes_.is_idle(kExtraNode) &&
	    forecast_.mean_after(t) <= kGpuLimit * 5) {
		nodes_.remove_highest_idle();
		out_.scaling.emplace_back(t, -1);
		return true;
	}
	return false;
}

ProfilerResult Profiler::run()
{
	while (next_ < jobs_.size() || !queue_.empty() || !running_.empty()) {
		Time t = next_time();
		if (t == kNever)
			throw InputError("lucid preset: the profiler can never "
					 "place " +
					 std::to_string(queue_.size()) +
					 " job(s)");
		wake_ = kNever;
		bool changed = release(t);
		changed |= admit(t);
		changed |= place(t);
		changed |= scale(t);
		long ti = (long)t;
		if (changed)
			wake_ = t + 1;
		if (queue_.size() > 10 && nodes_.size() == kBaseNodes)
			wake_ = std::min(wake_, (Time)((ti / 10 + 1) * 10));
		if (queue_.size() < 5 && nodes_.size() == kBaseNodes + 1)
			wake_ = std::min(wake_, (Time)((ti / 100 + 1) * 100));
	}
	return std::move(out_);
}

} /* namespace */

ProfilerResult run_profiler(const std::vector<Job> &jobs,
			    const PackTables &tables, Time start_ts)
{
	return Profiler(jobs, tables, start_ts).run();
}

} /* namespace tidal::sim::lucid */
