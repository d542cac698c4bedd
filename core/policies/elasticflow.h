/*
 * elasticflow.h - ElasticFlow's deadline planner (ASPLOS'23): the minimum
 * satisfactory share, admission control, and leftover GPUs by "marginal
 * return".  Shared by the simulator's elasticflow preset and the plugin.
 *
 * A job is a number of iterations left, a deadline and a throughput row
 * (iterations/s per legal GPU count, core/profiles/throughput_table.h).
 * Jobs are planned one after another in deadline order against a
 * EfTimeline that starts as {now: cluster}:
 *
 *   minimum satisfactory share (ef_plan): for q = 1, 2, 4, ... (levels
 *   <= max_gpu) walk the free timeline *backwards* from the deadline,
 *   taking min(q, largest level <= free) in every segment, until the
 *   iterations fit; the segments before that point get the previous level.
 *   The plan is then built forward, the GPUs are reserved, and they come
 *   back at the slot-aligned finish.  If no level meets the deadline the
 *   job gets the largest level it tried up to the deadline and whatever is
 *   free after it.
 *
 *   admission (ef_admit): re-plan every admitted job plus the arrivals in
 *   deadline order; if any plan misses its deadline the arrivals are
 *   rejected, with a reason that names the deadline, the GPU-time the job
 *   needs and the GPU-time the cluster can still offer it.
 *
 *   leftover GPUs (ef_marginal, ef_allocate_leftover): the GPUs free now
 *   go, one level at a time, to the job whose plan *grows the most in
 *   GPU-seconds per added GPU* (the artifact sorts that value descending:
 *   the least efficient scaler first; jobs not yet running always first).
 *
 * The arithmetic copies the artifact [scheduler.ef_sim_allocation,
 * get_marginal, allocate_free_gpus] including its quirks (the segment that
 * ends at the aligned deadline is measured to the true deadline; the
 * release key takes the free count of the original timeline).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/placement/free_timeline.h"
#include "core/profiles/throughput_table.h"

namespace tidal {

/*
 * A free-GPU timeline (or a job's allocations): GPUs from each key until
 * the next one, keys ascending, kept in a flat sorted vector because the
 * planner copies and walks it many times per event.  The interface is the
 * subset of std::map the planner uses.
 */
class EfTimeline {
public:
	using Item = std::pair<SlotTime, int>;
	using iterator = std::vector<Item>::iterator;
	using const_iterator = std::vector<Item>::const_iterator;

	EfTimeline() = default;
	EfTimeline(SlotTime now, int total) { reset(now, total); }

	void reset(SlotTime now, int total) { v_.assign(1, {now, total}); }
	iterator begin() { return v_.begin(); }
	iterator end() { return v_.end(); }
	const_iterator begin() const { return v_.begin(); }
	const_iterator end() const { return v_.end(); }
	auto rbegin() const { return v_.rbegin(); }
	auto rend() const { return v_.rend(); }
	size_t size() const { return v_.size(); }
	bool empty() const { return v_.empty(); }

	const_iterator lower_bound(SlotTime k) const
	{
		return std::lower_bound(v_.begin(), v_.end(), k, less);
	}
	iterator lower_bound(SlotTime k)
	{
		return std::lower_bound(v_.begin(), v_.end(), k, less);
	}
	const_iterator upper_bound(SlotTime k) const
	{
		return std::upper_bound(v_.begin(), v_.end(), k, greater);
	}
	iterator upper_bound(SlotTime k)
	{
		return std::upper_bound(v_.begin(), v_.end(), k, greater);
	}
	const_iterator find(SlotTime k) const
	{
		auto it = lower_bound(k);
		return it != v_.end() && it->first == k ? it : v_.end();
	}
	bool count(SlotTime k) const { return find(k) != v_.end(); }
	int at(SlotTime k) const { return find(k)->second; }
	/* The value at K, inserting K (value 0) if absent. */
	int &operator[](SlotTime k)
	{
		auto it = lower_bound(k);
		if (it == v_.end() || it->first != k)
			it = v_.insert(it, {k, 0});
		return it->second;
	}
	void emplace(SlotTime k, int v)
	{
		auto it = lower_bound(k);
		if (it == v_.end() || it->first != k)
			v_.insert(it, {k, v});
	}
	void set(SlotTime k, int v) { (*this)[k] = v; }
	/* Become a copy of O, reusing this one's storage. */
	void copy_from(const EfTimeline &o) { v_.assign(o.v_.begin(), o.v_.end()); }
	void clear() { v_.clear(); }
	void erase(SlotTime k)
	{
		auto it = lower_bound(k);
		if (it != v_.end() && it->first == k)
			v_.erase(it);
	}
	/* Drop keys whose value equals the previous key's value. */
	void merge();
	bool operator==(const EfTimeline &o) const { return v_ == o.v_; }
	std::map<SlotTime, int> to_map() const
	{
		return std::map<SlotTime, int>(v_.begin(), v_.end());
	}

private:
	static bool less(const Item &a, SlotTime k) { return a.first < k; }
	static bool greater(SlotTime k, const Item &a) { return k < a.first; }
	std::vector<Item> v_;
};

/* GPUs held from each key until the next one. */
using EfAllocs = EfTimeline;

struct EfJobView {
	const ThroughputRow *row = nullptr;
	int max_gpu = 1;
	double iter_left = 0; /* > 0 */
	SlotTime deadline = 0;
};

struct EfPlan {
	EfAllocs alloc;       /* merged: equal neighbours dropped */
	SlotTime end = 0;     /* slot-aligned end (GPUs come back) */
	SlotTime real_end = 0; /* unaligned finish */
	bool meets = false;   /* real_end <= deadline */
};

struct EfEnv {
	SlotTime now = 0, slot = 240;
	int cluster = 0;
};

/* Plan JOB on TIMELINE (replaced by the timeline with the job's GPUs
 * reserved).  RET: plan.meets. */
bool ef_plan(const EfJobView &job, const EfEnv &env, EfTimeline &timeline,
	     EfPlan *plan);

/* The artifact's assign_gpu variant: exactly GPUS from now to the next key
 * of TIMELINE, then the minimum share.  *OUT (if not null) gets the new
 * timeline.  RET: true when the plan read TIMELINE only up to the job's
 * slot-aligned deadline (false: no level met it, and the plan went on
 * past it). */
bool ef_plan_assigned(const EfJobView &job, const EfEnv &env, int gpus,
		      const EfTimeline &timeline, EfPlan *plan,
		      EfTimeline *out);

/* Sum of GPUs x seconds of ALLOC up to END. */
double ef_gpu_time(const EfAllocs &alloc, SlotTime end);

/* The GPU-seconds JOB needs at its most efficient level, and the
 * GPU-seconds TIMELINE can offer it between now and its deadline (per
 * segment the largest level that fits the free GPUs). */
double ef_needed_gpu_time(const EfJobView &job);
double ef_offered_gpu_time(const EfJobView &job, const EfEnv &env,
			   const EfTimeline &timeline);

/* One job's state for admission and leftover allocation. */
struct EfEntry {
	EfJobView view;
	int gpus = 0;     /* allocation now */
	EfPlan plan;      /* current plan */
	/* scratch for ef_allocate_leftover */
	int next = 0;
	double marginal = 0;
	bool lazy = false; /* next_plan/next_timeline not built yet */
	EfPlan next_plan;
	EfTimeline next_timeline;
	/* ef_allocate_leftover's memo of the last full marginal: what it
	 * read of the free timeline (see ef_marginal_inputs) and its value;
	 * valid while the entry's plan and level are unchanged. */
	bool memo_ok = false;
	double memo_marginal = 0;
	std::vector<std::pair<SlotTime, int>> memo_inputs;
};

struct EfAdmission {
	bool ok = true;
	int failed = -1;         /* index (into the planned list) that missed */
	std::string reason;      /* empty when ok */
};

/* Plan ORDER (indices into ENTRIES, already in deadline order) on
 * TIMELINE reset to {now: cluster}, committing each plan to its entry.
 * The first job that misses its deadline is reported with the reason (see
 * ef_rejection_reason); every job is planned regardless, as the artifact
 * does. */
EfAdmission ef_admit(std::vector<EfEntry> &entries,
		     const std::vector<int> &order, const EfEnv &env,
		     EfTimeline &timeline);

/* The rejection text for JOB given the timeline left by the jobs before
 * it: "deadline D s (in S s): needs N GPU-s, the cluster can offer O GPU-s
 * before it" (N: ef_needed_gpu_time, O: ef_offered_gpu_time). */
std::string ef_rejection_reason(const EfJobView &job, const EfEnv &env,
				const EfTimeline &before);

/* Marginal GPU-seconds per added GPU of raising ENTRY one level (into
 * entry.next_plan / next_timeline).  -inf when it cannot grow within
 * ALLOCATABLE GPUs, +inf (after planning) when it holds no GPUs yet. */
void ef_marginal(EfEntry &entry, const EfEnv &env, int allocatable,
		 const EfTimeline &timeline);

/* Give the GPUs free now away one level at a time.  ORDER holds indices
 * into ENTRIES (the runnable list; re-sorted in place, stably, by the
 * marginal, descending).  ADOPT is called for every grant (index, old
 * GPUs) after the entry took its new plan; TIMELINE is updated. */
void ef_allocate_leftover(std::vector<EfEntry> &entries,
			  std::vector<int> &order, const EfEnv &env,
			  EfTimeline &timeline,
			  const std::function<void(int, int)> &adopt);

} /* namespace tidal */
