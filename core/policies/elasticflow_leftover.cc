/*
 * elasticflow_leftover.cc - ElasticFlow's leftover GPUs by "marginal
 * return" [allocate_free_gpus, get_marginal] (see elasticflow.h).
 *
 * The artifact grants one level per pass and then re-evaluates the
 * marginal of every job that can still grow: passes x jobs plans per
 * event, each plan a walk of the free timeline.  Almost every one of those
 * re-evaluations returns the value it returned the pass before (on
 * cluster01, 96%).  Two shortcuts, both exact (the values, and so every
 * grant and the final order, are the artifact's bit for bit;
 * tests/unit/test_elasticflow_marginal.cc checks them against the naive
 * loop):
 *
 *   - a marginal needs only the GPU-seconds of the job's plan, and the plan
 *     reads only a few things of the timeline (marginal_inputs: its keys
 *     up to the aligned deadline and the level each allows); InputPlan
 *     computes the GPU-seconds from those alone, without copying the
 *     timeline or building the plan;
 *   - the inputs are kept with the value, and the next pass re-plans a job
 *     only if they changed (a grant elsewhere often changes the timeline
 *     only past the job's deadline, or by GPUs its level cap never
 *     reaches).
 *
 * Only a plan that misses the deadline at every level reads further; it
 * runs the planner itself and is never memoised.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>
#include <limits>

#include "core/policies/elasticflow.h"

namespace tidal {

namespace {

using Inputs = std::vector<std::pair<SlotTime, int>>;

/* The timeline without E's own plan (get_marginal's tmp), merged. */
EfTimeline without_own(const EfEntry &e, const EfEnv &env,
		       const EfTimeline &timeline)
{
	EfTimeline tmp = timeline;
	SlotTime end = e.plan.end;
	if (!tmp.count(end)) {
		int leg = env.cluster;
		for (const auto &[k, v] : tmp) {
			if (k >= end)
				break;
			leg = v;
		}
		tmp[end] = leg;
	}
	int last = 0;
	for (const auto &[a, g] : e.plan.alloc) {
		if (!tmp.count(a)) {
			auto it = tmp.upper_bound(a);
			int v = it == tmp.begin() ? env.cluster
						  : std::prev(it)->second;
			tmp[a] = v;
		}
		for (auto it = tmp.lower_bound(a);
		     it != tmp.end() && it->first < end; ++it)
			it->second += g - last;
		last = g;
	}
	tmp.merge();
	return tmp;
}

/*
 * The keys after now of without_own(E) and their values, one at a time,
 * without building it: a merge of the timeline's keys, the plan's keys and
 * the plan's end, skipping points where the sum does not change (the keys
 * merge() would drop).
 */
class OwnFreeWalk {
public:
	OwnFreeWalk(const EfEntry &e, const EfEnv &env, const EfTimeline &f)
		: f_(f), p_(e.plan.alloc), end_(e.plan.end),
		  fi_(f.upper_bound(env.now)), pi_(p_.upper_bound(env.now))
	{
		/* No key at or before now: the whole cluster is free. */
		fv_ = fi_ == f.begin() ? env.cluster : std::prev(fi_)->second;
		pv_ = pi_ == p_.begin() ? 0 : std::prev(pi_)->second;
		v_ = fv_ + (env.now < end_ ? pv_ : 0);
		end_seen_ = end_ <= env.now;
	}
	/* The value at now. */
	int value() const { return v_; }
	/* The next key: *T and its value *V.  RET: false if none. */
	bool next(SlotTime *t, int *v)
	{
		constexpr SlotTime none = std::numeric_limits<SlotTime>::max();
		for (;;) {
			SlotTime k = none;
			if (fi_ != f_.end())
				k = fi_->first;
			if (pi_ != p_.end())
				k = std::min(k, pi_->first);
			if (!end_seen_)
				k = std::min(k, end_);
			if (k == none)
				return false;
			if (fi_ != f_.end() && fi_->first == k)
				fv_ = (fi_++)->second;
			if (pi_ != p_.end() && pi_->first == k)
				pv_ = (pi_++)->second;
			if (k == end_)
				end_seen_ = true;
			int nv = fv_ + (k < end_ ? pv_ : 0);
			if (nv == v_)
				continue;
			v_ = nv;
			*t = k;
			*v = nv;
			return true;
		}
	}

private:
	const EfTimeline &f_;
	const EfAllocs &p_;
	SlotTime end_;
	EfTimeline::const_iterator fi_, pi_;
	int fv_ = 0, pv_ = 0, v_ = 0;
	bool end_seen_ = false;
};

/*
 * What the assign_gpu plan of E reads of without_own(E) when a level
 * meets the deadline (ef_plan_assigned returns true): the first key after
 * now (where its assigned segment ends), the keys from there up to the
 * aligned deadline AD, and at each of them and at AD only the largest
 * level of the job the free GPUs allow (the plan takes min(level, that)
 * everywhere).  Written to *IN as (key, level) pairs, (AD, level) last.
 * Two timelines with equal inputs give E the same plan.
 * RET: the first key after now, or -1 if there is none.
 */
SlotTime marginal_inputs(const EfEntry &e, const EfEnv &env,
			 const EfTimeline &f, SlotTime ad, Inputs *in)
{
	/* last_level(v + 1, max_gpu) over the job's levels, inline. */
	const ThroughputRow &r = *e.view.row;
	int lv[16], nlv = 0;
	for (size_t i = 0; i < r.gpus.size() && nlv < 16; i++) {
		if (r.gpus[i] > e.view.max_gpu)
			break;
		lv[nlv++] = r.gpus[i];
	}
	auto level = [&](int v) {
		int best = 0;
		for (int i = 0; i < nlv && lv[i] <= v; i++)
			best = lv[i];
		return best;
	};
	OwnFreeWalk w(e, env, f);
	int cur = w.value();
	SlotTime t, first = -1;
	int v;
	in->clear();
	while (w.next(&t, &v)) {
		if (first < 0)
			first = t;
		if (t > ad)
			break;
		cur = v;
		if (t == ad)
			break;
		in->push_back({t, level(v)});
	}
	in->push_back({ad, level(cur)});
	return first;
}

/*
 * The GPU-seconds of E's assign_gpu plan at e.next computed from its
 * inputs IN alone (see marginal_inputs): the planner's steps [Planner::
 * assigned_first, minimum_share, build] on the keys in IN, without copying
 * the timeline.  RET: false when no level meets the deadline (then the
 * plan reads past AD: the caller runs the planner).
 */
class InputPlan {
public:
	InputPlan(const EfEntry &e, const EfEnv &env, const Inputs &in,
		  SlotTime ad)
		: j_(e.view), env_(env), in_(in), ad_(ad), qa_(e.next)
	{
		const ThroughputRow &r = *j_.row;
		for (size_t i = 0; i < r.gpus.size() && nlv_ < 16; i++) {
			if (r.gpus[i] > j_.max_gpu)
				break;
			lv_[nlv_] = r.gpus[i];
			tp_[nlv_++] = r.tput[i];
		}
	}
	bool gpu_time(double *out);

private:
	double tput(int g) const
	{
		for (int i = 0; i < nlv_; i++)
			if (lv_[i] == g)
				return tp_[i];
		return j_.row->at(g);
	}
	int next_level(int g) const
	{
		if (g == 0)
			return nlv_ ? lv_[0] : 0;
		for (int i = 0; i + 1 < nlv_; i++)
			if (lv_[i] == g)
				return lv_[i + 1];
		return g;
	}
	SlotTime seg(SlotTime from, SlotTime to) const
	{
		return to == ad_ ? j_.deadline - from : to - from;
	}
	bool build(int q, int lq, SlotTime point, double left, double *out);

	const EfJobView &j_;
	const EfEnv &env_;
	const Inputs &in_;
	SlotTime ad_;
	int qa_;
	int nlv_ = 0;
	int lv_[16];
	double tp_[16];
};

bool InputPlan::gpu_time(double *out)
{
	size_t m = in_.size() - 1; /* keys before ad: in_[0, m) */
	if (m == 0)
		return false;
	double left = j_.iter_left -
		      (double)seg(env_.now, in_[0].first) * tput(qa_);
	int q = next_level(0), lq = 0;
	while (q <= env_.cluster && q <= j_.max_gpu) {
		SlotTime period_end = ad_;
		double acc = 0;
		for (size_t i = m; i-- > 0;) {
			int a = std::min(q, in_[i].second);
			SlotTime k = in_[i].first;
			if (a != 0) {
				acc += (double)seg(k, period_end) * tput(a);
				if (acc >= left)
					return build(q, lq, k, left, out);
			}
			period_end = k;
		}
		lq = q;
		q = next_level(q);
		if (q == lq)
			break;
	}
	return false;
}

/* Planner::build on the inputs, then ef_gpu_time of the allocations it
 * leaves: QA from now, the level picked at each key it reaches, 0 at the
 * keys before ad it does not reach. */
bool InputPlan::build(int q, int lq, SlotTime point, double left,
		      double *out)
{
	size_t m = in_.size() - 1;
	auto pick = [&](size_t i) {
		return std::min(in_[i].first >= point ? q : lq, in_[i].second);
	};
	/* GPU-seconds so far: QA on [now, in_[0]). */
	double gt = (double)qa_ * (double)(in_[0].first - env_.now);
	size_t lat = 0;
	int la = pick(0);
	SlotTime end = 0;
	for (size_t i = 1; i <= m; i++) {
		SlotTime lt = in_[lat].first, t = in_[i].first;
		if (la != 0) {
			double iters = (double)seg(lt, t) * tput(la);
			if (!(lt < point || iters < left)) {
				SlotTime rl = (SlotTime)std::ceil(left / tput(la));
				end = lt + align_to_slot(0, rl, env_.slot);
				/* la until the plan's next key: the one after
				 * lat if it is before ad (0 from there), else
				 * the end. */
				*out = gt + (double)la *
						    (double)((t < ad_ ? t : end) - lt);
				return true;
			}
			left -= iters;
		}
		gt += (double)la * (double)(t - lt);
		lat = i;
		la = pick(i);
	}
	/* Not done by ad: la from ad on, ad being a key of the plan. */
	if (la == 0)
		return false;
	SlotTime lt = in_[lat].first;
	SlotTime rl = (SlotTime)std::ceil(left / tput(la));
	end = lt + align_to_slot(0, rl, env_.slot);
	*out = gt + (double)la * (double)(end - lt);
	return true;
}

/* Build E's next-level plan and timeline for real. *//* Build E's next-level plan and timeline for real. */
void build_next(EfEntry &e, const EfEnv &env, const EfTimeline &f)
{
	ef_plan_assigned(e.view, env, e.next, without_own(e, env, f),
			 &e.next_plan, &e.next_timeline);
	e.lazy = false;
}

/* ef_marginal; with MEMO, reuse the last full evaluation when what it
 * read of TIMELINE is unchanged (the caller invalidates e.memo_ok when
 * the entry's plan or level changes). */
void marginal(EfEntry &e, const EfEnv &env, int allocatable,
	      const EfTimeline &timeline, bool memo)
{
	if (e.next - e.gpus > allocatable || e.next == e.gpus) {
		e.marginal = -std::numeric_limits<double>::infinity();
		return;
	}
	/* Jobs holding no GPUs come first whatever their plan: build it
	 * only if it is adopted (the timeline is the same then). */
	if (e.gpus == 0) {
		e.marginal = std::numeric_limits<double>::infinity();
		e.lazy = true;
		return;
	}
	/* The common case: the next level finishes the job before the free
	 * GPUs change.  Same numbers as the full plan, without building it. */
	const EfJobView &j = e.view;
	double tput = j.row->at(e.next);
	SlotTime real = (SlotTime)std::ceil((double)env.now + j.iter_left / tput);
	SlotTime end = align_to_slot(env.now, real, env.slot);
	SlotTime ad = align_to_slot(env.now, j.deadline, env.slot);
	thread_local Inputs in;
	SlotTime fet = marginal_inputs(e, env, timeline, ad, &in);
	if (fet < 0)
		fet = ad;
	double old = ef_gpu_time(e.plan.alloc, e.plan.end);
	e.lazy = true;
	if (fet >= end && j.deadline >= real) {
		e.marginal = ((double)e.next * (double)(end - env.now) - old) /
			     (double)(e.next - e.gpus);
		return;
	}
	if (memo && e.memo_ok && in == e.memo_inputs) {
		e.marginal = e.memo_marginal;
		return;
	}
	/* The plan from the inputs alone; the planner itself (on a copy of
	 * the timeline) only when no level meets the deadline.  The plan's
	 * timeline is built if the job is picked. */
	double gt;
	bool bounded = InputPlan(e, env, in, ad).gpu_time(&gt);
	if (!bounded) {
		ef_plan_assigned(e.view, env, e.next,
				 without_own(e, env, timeline), &e.next_plan,
				 nullptr);
		gt = ef_gpu_time(e.next_plan.alloc, e.next_plan.end);
	}
	e.marginal = (gt - old) / (double)(e.next - e.gpus);
	if (memo) {
		e.memo_ok = bounded;
		e.memo_inputs.swap(in);
		e.memo_marginal = e.marginal;
	}
}

void sort_by_marginal(std::vector<EfEntry> &entries, std::vector<int> &order)
{
	std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
		return entries[a].marginal > entries[b].marginal;
	});
}

} /* namespace */

void ef_marginal(EfEntry &e, const EfEnv &env, int allocatable,
		 const EfTimeline &timeline)
{
	marginal(e, env, allocatable, timeline, false);
}

void ef_allocate_leftover(std::vector<EfEntry> &entries,
			  std::vector<int> &order, const EfEnv &env,
			  EfTimeline &timeline,
			  const std::function<void(int, int)> &adopt)
{
	int used = 0;
	for (int j : order) {
		EfEntry &e = entries[j];
		e.next = e.view.row->next_level(e.gpus, e.view.max_gpu);
		e.memo_ok = false;
		used += e.gpus;
	}
	int allocatable = env.cluster - used;
	if (allocatable <= 0)
		return;
	for (int j : order)
		marginal(entries[j], env, allocatable, timeline, true);
	sort_by_marginal(entries, order);
	bool granted = true;
	while (allocatable > 0 && granted) {
		granted = false;
		for (int j : order) {
			EfEntry &e = entries[j];
			if (e.next - e.gpus > allocatable || e.next == e.gpus)
				continue;
			int old = e.gpus;
			if (e.lazy)
				build_next(e, env, timeline);
			timeline = e.next_timeline;
			e.plan = e.next_plan;
			e.gpus = e.next;
			e.memo_ok = false;
			allocatable -= e.gpus - old;
			granted = true;
			e.next = e.view.row->next_level(e.gpus, e.view.max_gpu);
			adopt(j, old);
			break;
		}
		for (int j : order)
			if (entries[j].next - entries[j].gpus > 0)
				marginal(entries[j], env, allocatable,
					 timeline, true);
		sort_by_marginal(entries, order);
	}
}

} /* namespace tidal */
