/*
 * elasticflow.cc - ElasticFlow's planner: minimum satisfactory share,
 * admission (see the header; the leftover allocation is in
 * elasticflow_leftover.cc).
 *
 * The planner works on a copy of the free timeline ("nf") while reading the
 * timeline it was given ("f"), exactly as the artifact does: several of its
 * numbers come from one and several from the other.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/elasticflow.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace tidal {

void EfTimeline::merge()
{
	size_t out = 0;
	int last = -1;
	for (size_t i = 0; i < v_.size(); i++) {
		if (v_[i].second == last)
			continue;
		last = v_[i].second;
		v_[out++] = v_[i];
	}
	v_.resize(out);
}

namespace {

using Map = EfTimeline;

EfTimeline merged(Map m)
{
	m.merge();
	return m;
}

EfAllocs merged_allocs(EfAllocs m)
{
	m.merge();
	return m;
}

/* One planning pass; see ef_sim_allocation. */
struct Planner {
	const EfJobView &job;
	const EfEnv &env;
	const Map &f; /* the timeline given */
	Map &nf;      /* the one being built (scratch storage) */
	EfAllocs &na; /* new allocations (scratch storage) */
	SlotTime event_time, ad;
	double left;
	int leg;      /* the artifact's last_event_gpu, carried along */
	int assigned = -1;
	EfPlan plan;

	static Map &scratch_nf()
	{
		thread_local Map m;
		return m;
	}
	static EfAllocs &scratch_na()
	{
		thread_local EfAllocs m;
		return m;
	}

	/* One Planner at a time per thread: it works in scratch storage. */
	Planner(const EfJobView &j, const EfEnv &e, const Map &tl)
		: job(j), env(e), f(tl), nf(scratch_nf()), na(scratch_na()),
		  event_time(e.now), left(j.iter_left), leg(e.cluster)
	{
		nf.copy_from(tl);
		na.clear();
		load_levels();
		na[env.now] = 0;
		ad = align_to_slot(env.now, job.deadline, env.slot);
		if (!nf.count(ad) && ad >= env.now) {
			for (const auto &[k, v] : nf) {
				if (k >= ad)
					break;
				leg = v;
			}
			nf[ad] = leg;
		}
	}

	/* The job's levels (columns <= max_gpu) and speeds, inline: the
	 * walks below ask for them at every key. */
	int nlv = 0;
	int lv[16];
	double tp[16];

	void load_levels()
	{
		const ThroughputRow &r = *job.row;
		for (size_t i = 0; i < r.gpus.size() && nlv < 16; i++) {
			if (r.gpus[i] > job.max_gpu)
				break;
			lv[nlv] = r.gpus[i];
			tp[nlv++] = r.tput[i];
		}
	}
	double tput(int g) const
	{
		for (int i = 0; i < nlv; i++)
			if (lv[i] == g)
				return tp[i];
		return job.row->at(g);
	}
	/* The largest level < G (called with free + 1), 0 if none. */
	int last_level(int g) const
	{
		int best = 0;
		for (int i = 0; i < nlv && lv[i] < g; i++)
			best = lv[i];
		return best;
	}
	int next_level(int g) const
	{
		if (g == 0)
			return nlv ? lv[0] : 0;
		for (int i = 0; i + 1 < nlv; i++)
			if (lv[i] == g)
				return lv[i + 1];
		return g;
	}
	SlotTime seg(SlotTime from, SlotTime to) const
	{
		return to == ad ? job.deadline - from : to - from;
	}

	bool finish(SlotTime end, SlotTime real)
	{
		plan.alloc = merged_allocs(na);
		plan.end = end;
		plan.real_end = real;
		plan.meets = real <= job.deadline;
		return plan.meets;
	}
	bool assigned_first(int q);
	bool minimum_share();
	void build(int q, int lq, SlotTime point);
	void fallback(int lq, int llq, SlotTime point);
	void after_deadline();
};

/* assign_gpu: Q GPUs from now to the next key.  RET: true if that
 * finishes the job in time (plan done). */
bool Planner::assigned_first(int q)
{
	int avail = nf.at(env.now);
	bool found = false;
	SlotTime fet = ad;
	for (const auto &[t, v] : f) {
		if (t < env.now) {
			avail = v;
			nf.erase(t);
			continue;
		}
		if (t == env.now) {
			avail = v;
			continue;
		}
		found = true;
		fet = t;
		break;
	}
	if (!found)
		fet = ad;
	na[env.now] = q;
	SlotTime real = (SlotTime)std::ceil((double)env.now + left / tput(q));
	SlotTime end = align_to_slot(env.now, real, env.slot);
	if (fet >= end && job.deadline >= real) {
		for (const auto &[t, v] : f) {
			if (t < env.now || t >= end)
				continue;
			leg = nf[t];
			nf[t] -= q;
		}
		if (env.now != end)
			nf[env.now] = avail - q;
		if (!f.count(end))
			nf[end] = leg;
		finish(end, real);
		return true;
	}
	left -= (double)seg(env.now, fet) * tput(q);
	if (nf.count(env.now))
		nf[env.now] -= q;
	else
		nf[env.now] = leg - na[env.now];
	event_time = fet;
	na[fet] = 0;
	return false;
}

/* Phase A: the smallest level that meets the deadline, latest first.
 * RET: true when one did (plan built). */
bool Planner::minimum_share()
{
	int q = next_level(0), lq = 0, llq = 0;
	SlotTime point = env.now - 1;
	/* Every key before the deadline gets an allocation entry (the
	 * artifact re-adds them for every level; the keys do not change). */
	for (const auto &[k, v] : nf) {
		if (k >= ad)
			break;
		na.emplace(k, 0);
	}
	/* The segments [event_time, ad) latest first, with the largest level
	 * their free GPUs allow: the same for every level tried. */
	struct Seg {
		SlotTime k;
		int ll;
	};
	thread_local std::vector<Seg> segs;
	segs.clear();
	for (auto it = nf.rbegin(); it != nf.rend(); ++it) {
		if (it->first >= ad)
			continue;
		if (it->first < event_time)
			break;
		segs.push_back({it->first, last_level(1 + it->second)});
	}
	while (q <= env.cluster && q <= job.max_gpu) {
		SlotTime period_end = ad;
		double acc = 0;
		for (const Seg &sg : segs) {
			int a = std::min(q, sg.ll);
			if (a == 0) {
				period_end = sg.k;
				continue;
			}
			acc += (double)seg(sg.k, period_end) * tput(a);
			if (acc >= left) {
				build(q, lq, sg.k);
				return true;
			}
			period_end = sg.k;
		}
		llq = lq;
		lq = q;
		q = next_level(q);
		if (q == lq)
			break;
	}
	fallback(lq, llq, point);
	return false;
}

/* Build the plan forward: Q from POINT on, LQ before it. */
void Planner::build(int q, int lq, SlotTime point)
{
	bool have = false, done = false;
	SlotTime lat = 0, end = 0, real = 0;
	int la = 0;
	Map::iterator lat_it;
	auto pick = [&](Map::iterator it) {
		return std::min(it->first >= point ? q : lq,
				last_level(1 + it->second));
	};
	for (auto it = nf.begin(); it != nf.end(); ++it) {
		SlotTime t = it->first;
		if (t > ad)
			break;
		if (t < event_time)
			continue;
		if (!have) {
			have = true;
			lat = t;
			lat_it = it;
			la = pick(it);
			continue;
		}
		na[lat] = la;
		lat_it->second -= la;
		if (la != 0) {
			double iters = (double)seg(lat, t) * tput(la);
			if (lat < point || iters < left) {
				left -= iters;
			} else {
				SlotTime rl = (SlotTime)std::ceil(left / tput(la));
				end = lat + align_to_slot(0, rl, env.slot);
				real = lat + rl;
				done = true;
				break;
			}
		}
		lat = t;
		lat_it = it;
		la = pick(it);
	}
	if (!done) {
		na[lat] = la;
		lat_it->second -= la;
		SlotTime rl = (SlotTime)std::ceil(left / tput(la));
		real = lat + rl;
		end = lat + align_to_slot(0, rl, env.slot);
	}
	int back = env.cluster;
	for (const auto &[t, v] : f)
		if (t >= event_time && t < end)
			back = v;
	if (!f.count(end))
		nf[end] = back;
	finish(end, real);
}

/* No level meets the deadline: the largest tried up to it. */
void Planner::fallback(int lq, int llq, SlotTime point)
{
	bool have = false;
	SlotTime lat = 0;
	Map::iterator lat_it;
	int la = 0;
	for (auto it = nf.begin(); it != nf.end(); ++it) {
		SlotTime t = it->first;
		if (t > ad)
			break;
		if (t < event_time)
			continue;
		int first = std::min(t >= point ? lq : llq,
				     last_level(1 + it->second));
		if (!have) {
			have = true;
			lat = t;
			lat_it = it;
			la = first;
			continue;
		}
		na[lat] = la;
		lat_it->second -= la;
		if (la == 0) {
			lat = t;
			lat_it = it;
			la = first;
			continue;
		}
		left -= (double)seg(lat, t) * tput(la);
		lat = t;
		lat_it = it;
		la = std::min(lq, last_level(it->second + 1));
	}
	after_deadline();
}

/* Past the aligned deadline: whatever is free, then the whole cluster. */
void Planner::after_deadline()
{
	SlotTime lat = std::max(ad, event_time);
	for (auto it = nf.upper_bound(ad); it != nf.end(); ++it) {
		SlotTime t = it->first;
		int q = std::min(last_level(nf[lat] + 1), job.max_gpu);
		if (q == 0) {
			na[lat] = 0;
			lat = t;
			continue;
		}
		na[lat] = q;
		double iters = (double)(t - lat) * tput(q);
		if (iters >= left) {
			SlotTime real = (SlotTime)std::ceil((double)lat +
							    left / tput(q));
			SlotTime end = align_to_slot(env.now, real, env.slot);
			/* leg: the last given key in [ad, end) */
			auto fk = f.lower_bound(end);
			if (fk != f.begin() && std::prev(fk)->first >= ad)
				leg = std::prev(fk)->second;
			for (auto it1 = nf.lower_bound(lat);
			     it1 != nf.end() && it1->first < end; ++it1)
				it1->second -= q;
			if (lat != end)
				nf[lat] = leg - q;
			if (!f.count(end))
				nf[end] = leg;
			finish(end, real);
			return;
		}
		left -= iters;
		/* leg: our value at the last given key before lat */
		for (auto fk = f.lower_bound(lat); fk != f.begin();) {
			--fk;
			auto it1 = nf.find(fk->first);
			if (it1 != nf.end()) {
				leg = it1->second;
				break;
			}
		}
		for (auto it1 = nf.lower_bound(lat);
		     it1 != nf.end() && it1->first < t; ++it1)
			it1->second -= q;
		lat = t;
	}
	/* The job's largest level on the whole cluster: a cluster of, say,
	 * 24 GPUs gives a job of levels 1, 2, ..., 32 its 16, never a count
	 * its profile has no throughput for.  A job whose smallest level is
	 * more than the cluster still gets a finite (unmeetable) plan. */
	int q = last_level(std::min(env.cluster, job.max_gpu) + 1);
	if (q == 0 && nlv > 0)
		q = lv[0];
	if (assigned >= 0)
		q = assigned;
	na[lat] = q;
	SlotTime real = (SlotTime)std::ceil((double)lat + left / tput(q));
	SlotTime end = align_to_slot(env.now, real, env.slot);
	nf[lat] = env.cluster - q;
	nf[end] = env.cluster;
	finish(end, real);
}

} /* namespace */

bool ef_plan(const EfJobView &job, const EfEnv &env, EfTimeline &timeline,
	     EfPlan *plan)
{
	Planner p(job, env, timeline);
	p.minimum_share();
	timeline = merged(p.nf);
	*plan = std::move(p.plan);
	return plan->meets;
}

bool ef_plan_assigned(const EfJobView &job, const EfEnv &env, int gpus,
		      const EfTimeline &timeline, EfPlan *plan,
		      EfTimeline *out)
{
	Planner p(job, env, timeline);
	p.assigned = gpus;
	bool bounded = p.assigned_first(gpus) || p.minimum_share();
	if (out)
		*out = merged(p.nf);
	*plan = std::move(p.plan);
	return bounded;
}

double ef_gpu_time(const EfAllocs &alloc, SlotTime end)
{
	double t = 0;
	bool first = true;
	SlotTime last_t = 0;
	int last_g = 0;
	for (const auto &[k, g] : alloc) {
		if (!first)
			t += (double)last_g * (double)(k - last_t);
		first = false;
		last_t = k;
		last_g = g;
	}
	return t + (double)last_g * (double)(end - last_t);
}

double ef_needed_gpu_time(const EfJobView &job)
{
	double best = std::numeric_limits<double>::infinity();
	for (int g : job.row->gpus) {
		if (g > job.max_gpu)
			break;
		double v = job.row->at(g);
		if (std::isfinite(v) && v > 0)
			best = std::min(best, (double)g * job.iter_left / v);
	}
	return best;
}

double ef_offered_gpu_time(const EfJobView &job, const EfEnv &env,
			   const EfTimeline &timeline)
{
	const Map &m = timeline;
	double offer = 0;
	for (auto it = m.begin(); it != m.end(); ++it) {
		SlotTime from = std::max(it->first, env.now);
		auto nx = std::next(it);
		SlotTime to = nx == m.end() ? job.deadline
					    : std::min(nx->first, job.deadline);
		if (to <= from)
			continue;
		int g = job.row->last_level(it->second + 1, job.max_gpu);
		offer += (double)g * (double)(to - from);
	}
	return offer;
}

std::string ef_rejection_reason(const EfJobView &job, const EfEnv &env,
				const EfTimeline &before)
{
	std::ostringstream s;
	s.setf(std::ios::fixed);
	s.precision(0);
	s << "deadline " << job.deadline << " s (in "
	  << (job.deadline - env.now) << " s): needs "
	  << ef_needed_gpu_time(job) << " GPU-s, the cluster can offer "
	  << ef_offered_gpu_time(job, env, before) << " GPU-s before it";
	return s.str();
}

EfAdmission ef_admit(std::vector<EfEntry> &entries,
		     const std::vector<int> &order, const EfEnv &env,
		     EfTimeline &timeline)
{
	EfAdmission r;
	timeline.reset(env.now, env.cluster);
	for (size_t i = 0; i < order.size(); i++) {
		EfEntry &e = entries[order[i]];
		if (ef_plan(e.view, env, timeline, &e.plan) || !r.ok)
			continue;
		r.ok = false;
		r.failed = (int)i;
	}
	if (r.ok)
		return r;
	/* The reason needs the timeline the failed job saw: plan the jobs
	 * before it again (deterministic, and only when one fails). */
	EfTimeline before(env.now, env.cluster);
	EfPlan scratch;
	for (int i = 0; i < r.failed; i++)
		ef_plan(entries[order[i]].view, env, before, &scratch);
	r.reason = ef_rejection_reason(entries[order[r.failed]].view, env,
				       before);
	return r;
}

} /* namespace tidal */
