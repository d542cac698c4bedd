/*
 * elasticflow_leftover.cc - ElasticFlow's leftover GPUs by "marginal
 * return" [allocate_free_gpus, get_marginal] (see elasticflow.h).
 *
 * The artifact grants one level per pass and then re-evaluates the
 * marginal of every job that can still grow: passes x jobs plans per
 * event, each plan a walk of the free timeline.  Almost every one of those
 * re-evaluations returns the value it returned the pass before (on
 * cluster01, 96%): the grant changed the free timeline somewhere the job's
 * plan does not look, or only by GPUs its level cap never reaches.  So a
 * full evaluation records exactly what it read of the timeline (see
 * marginal_inputs) and the next pass re-plans only if that changed; the
 * values, and so every grant and the final order, are the artifact's.
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
		fv_ = std::prev(fi_)->second;
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

/* The first key after now of without_own(E), or -1. */
SlotTime first_change(const EfEntry &e, const EfEnv &env, const EfTimeline &f)
{
	OwnFreeWalk w(e, env, f);
	SlotTime t;
	int v;
	return w.next(&t, &v) ? t : -1;
}

/*
 * What the assign_gpu plan of E reads of without_own(E) when a level
 * meets the deadline (ef_plan_assigned returns true): the first key after
 * now (where its assigned segment ends), the keys from there up to the
 * aligned deadline AD, and at each of them and at AD only the largest
 * level of the job the free GPUs allow (the plan takes min(level, that)
 * everywhere).  Written to *IN as (key, level) pairs, (AD, level) last.
 * Two timelines with equal inputs give E the same plan.
 */
void marginal_inputs(const EfEntry &e, const EfEnv &env, const EfTimeline &f,
		     SlotTime ad, Inputs *in)
{
	const EfJobView &j = e.view;
	OwnFreeWalk w(e, env, f);
	int cur = w.value();
	SlotTime t;
	int v;
	in->clear();
	while (w.next(&t, &v) && t <= ad) {
		cur = v;
		if (t == ad)
			break;
		in->push_back({t, j.row->last_level(v + 1, j.max_gpu)});
	}
	in->push_back({ad, j.row->last_level(cur + 1, j.max_gpu)});
}

/* Build E's next-level plan and timeline for real. */
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
	SlotTime fet = first_change(e, env, timeline);
	if (fet < 0)
		fet = ad;
	double old = ef_gpu_time(e.plan.alloc, e.plan.end);
	e.lazy = true;
	if (fet >= end && j.deadline >= real) {
		e.marginal = ((double)e.next * (double)(end - env.now) - old) /
			     (double)(e.next - e.gpus);
		return;
	}
	thread_local Inputs in;
	if (memo) {
		marginal_inputs(e, env, timeline, ad, &in);
		if (e.memo_ok && in == e.memo_inputs) {
			e.marginal = e.memo_marginal;
			return;
		}
	}
	/* The plan only: the timeline is built if the job is picked. */
	bool bounded = ef_plan_assigned(e.view, env, e.next,
					without_own(e, env, timeline),
					&e.next_plan, nullptr);
	e.marginal = (ef_gpu_time(e.next_plan.alloc, e.next_plan.end) - old) /
		     (double)(e.next - e.gpus);
	if (memo) {
		/* A plan that went past the deadline read more: no memo. */
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
