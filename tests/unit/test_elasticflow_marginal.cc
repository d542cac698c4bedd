/*
 * test_elasticflow_marginal.cc - ElasticFlow's leftover allocation
 * (core/policies/elasticflow_leftover.cc) against the artifact's
 * definition, written out naively here: every marginal is a full
 * assign_gpu plan on the timeline with the job's own plan added back, and
 * every pass re-plans every job.  The fast path (plans from the keys the
 * planner reads, memoised across passes) must give bit-identical marginals,
 * grants, order and timeline on random clusters and job mixes.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>
#include <limits>
#include <random>

#include "core/policies/elasticflow.h"

#include "tests/unit/unit.h"

using namespace tidal;

/* A sub-linear profile: 1..32 GPUs. */
static ThroughputRow profile(int k)
{
	ThroughputRow r;
	double base = 1.0 + 0.37 * k;
	for (int g = 1, i = 0; g <= 32; g *= 2, i++) {
		r.gpus.push_back(g);
		r.tput.push_back(base * std::pow(g, 0.6 + 0.08 * k) + 0.01 * i);
		r.nan.push_back(false);
	}
	return r;
}

/* TIMELINE with E's own plan added back over [its keys, its end), merged
 * (the artifact's get_marginal tmp). */
static EfTimeline own_free(const EfEntry &e, const EfEnv &env,
			   const EfTimeline &f)
{
	std::map<SlotTime, int> keys = f.to_map();
	for (const auto &[a, g] : e.plan.alloc)
		keys.emplace(a, 0);
	keys.emplace(e.plan.end, 0);
	EfTimeline out;
	for (auto &[t, v] : keys) {
		auto fi = f.upper_bound(t);
		int fv = fi == f.begin() ? env.cluster : std::prev(fi)->second;
		auto pi = e.plan.alloc.upper_bound(t);
		int pv = pi == e.plan.alloc.begin() ? 0 : std::prev(pi)->second;
		out.set(t, fv + (t < e.plan.end ? pv : 0));
	}
	out.merge();
	return out;
}

static double ref_marginal(EfEntry &e, const EfEnv &env, int allocatable,
			   const EfTimeline &f)
{
	if (e.next - e.gpus > allocatable || e.next == e.gpus)
		return -std::numeric_limits<double>::infinity();
	if (e.gpus == 0)
		return std::numeric_limits<double>::infinity();
	EfPlan p;
	ef_plan_assigned(e.view, env, e.next, own_free(e, env, f), &p, nullptr);
	return (ef_gpu_time(p.alloc, p.end) -
		ef_gpu_time(e.plan.alloc, e.plan.end)) /
	       (double)(e.next - e.gpus);
}

/* allocate_free_gpus as the artifact writes it. */
static void ref_leftover(std::vector<EfEntry> &es, std::vector<int> &order,
			 const EfEnv &env, EfTimeline &f)
{
	int used = 0;
	for (int j : order) {
		es[j].next = es[j].view.row->next_level(es[j].gpus,
							es[j].view.max_gpu);
		used += es[j].gpus;
	}
	int allocatable = env.cluster - used;
	if (allocatable <= 0)
		return;
	auto sort = [&] {
		std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
			return es[a].marginal > es[b].marginal;
		});
	};
	for (int j : order)
		es[j].marginal = ref_marginal(es[j], env, allocatable, f);
	sort();
	bool granted = true;
	while (allocatable > 0 && granted) {
		granted = false;
		for (int j : order) {
			EfEntry &e = es[j];
			if (e.next - e.gpus > allocatable || e.next == e.gpus)
				continue;
			EfTimeline nf;
			ef_plan_assigned(e.view, env, e.next,
					 own_free(e, env, f), &e.plan, &nf);
			f = nf;
			allocatable -= e.next - e.gpus;
			e.gpus = e.next;
			e.next = e.view.row->next_level(e.gpus, e.view.max_gpu);
			granted = true;
			break;
		}
		for (int j : order)
			if (es[j].next - es[j].gpus > 0)
				es[j].marginal =
					ref_marginal(es[j], env, allocatable, f);
		sort();
	}
}

/* One random case: admitted jobs planned in deadline order at NOW. */
static void check_case(unsigned seed, const std::vector<ThroughputRow> &rows)
{
	std::mt19937 rng(seed);
	auto uni = [&](int lo, int hi) {
		return std::uniform_int_distribution<int>(lo, hi)(rng);
	};
	EfEnv env{(SlotTime)uni(0, 5000), (SlotTime)(uni(0, 1) ? 60 : 240),
		  8 * uni(2, 16)};
	int n = uni(1, 40);
	std::vector<EfEntry> es(n);
	for (EfEntry &e : es) {
		const ThroughputRow &r = rows[uni(0, (int)rows.size() - 1)];
		e.view.row = &r;
		e.view.max_gpu = 1 << uni(0, 5);
		e.view.iter_left = uni(100, 400000) + 0.25 * uni(0, 3);
		e.view.deadline = env.now + uni(60, 200000);
	}
	std::vector<int> order(n);
	for (int i = 0; i < n; i++)
		order[i] = i;
	std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
		return es[a].view.deadline < es[b].view.deadline;
	});
	EfTimeline f;
	ef_admit(es, order, env, f);
	for (EfEntry &e : es)
		e.gpus = e.plan.alloc.at(env.now);
	/* Some jobs not running yet. */
	for (EfEntry &e : es)
		if (uni(0, 9) == 0 && e.gpus > 0) {
			e.gpus = 0;
		}
	std::vector<EfEntry> ref = es;
	std::vector<int> ref_order = order;
	EfTimeline ref_f = f;
	int grants = 0;
	ef_allocate_leftover(es, order, env, f, [&](int, int) { grants++; });
	ref_leftover(ref, ref_order, env, ref_f);
	assert_true(order == ref_order);
	assert_true(f == ref_f);
	for (int i = 0; i < n; i++) {
		assert_int_equal(es[i].gpus, ref[i].gpus);
		assert_int_equal(es[i].plan.end, ref[i].plan.end);
		assert_true(es[i].plan.alloc == ref[i].plan.alloc);
		/* Stale values of jobs at their top level included. */
		assert_true(es[i].marginal == ref[i].marginal ||
			    (std::isnan(es[i].marginal) &&
			     std::isnan(ref[i].marginal)));
	}
}

static void test_random_leftover(void **)
{
	std::vector<ThroughputRow> rows;
	for (int k = 0; k < 4; k++)
		rows.push_back(profile(k));
	for (unsigned seed = 1; seed <= 400; seed++)
		check_case(seed, rows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_leftover),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
