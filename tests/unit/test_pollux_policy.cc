/*
 * test_pollux_policy.cc - Pollux's allocation problem: the objective and
 * the repair worked out by hand, the local search against brute force on
 * small clusters, the NSGA-II's determinism, and the policy's node lists.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>

#include "core/policies/pollux.h"
#include "core/policies/pollux_ga.h"
#include "core/policies/pollux_problem.h"
#include "core/policies/pollux_search.h"
#include "tests/unit/unit.h"

using namespace tidal;

static PolluxJobInput job(double per_replica, double spread, int maxr,
			  double factor)
{
	PolluxJobInput j;
	j.speedup = [=](int n, int r) {
		return r == 0 ? 0.0
			      : per_replica * std::pow(r, 0.7) *
					(n > 1 ? spread : 1.0);
	};
	j.max_replicas = maxr;
	j.restart_factor = factor;
	return j;
}

/* Two nodes of 4 GPUs (scale = 2 / 8 = 0.25).  Job 0 keeps its row
 * (1 on node 0): s = 1 x 0.25; job 1 moves to 2 on node 1: s = 2^0.7 x
 * 0.25 x 0.5.  F1 = -2 / (1 / (s0 + 1e-3) + 1 / (s1 + 1e-3)).
 * F2 = -(1 + 2^0.7) / 8 (both nodes active). */
static void test_objective(void **state)
{
	(void)state;
	PolluxProblem p({ job(1, 1, 4, 0.9), job(1, 1, 4, 0.5) }, { 4, 4 },
			{ 1, 0, 0, 0 });
	int s[] = { 1, 0, 0, 2 };
	double f1, f2;
	p.evaluate(s, &f1, &f2);
	double s0 = 0.25, s1 = std::pow(2, 0.7) * 0.25 * 0.5;
	double want = -2.0 / (1 / (s0 + 1e-3) + 1 / (s1 + 1e-3));
	assert_true(std::fabs(f1 - want) < 1e-15);
	assert_true(std::fabs(f2 + (1 + std::pow(2, 0.7)) / 8) < 1e-15);
}

/* Repair: jobs 0 and 1 are distributed and share node 1, so job 1 and
 * job 2 (local, but after them in order) lose node 1.  Job 0's 4
 * replicas exceed its max of 3: a random node order keeps 2 + 1 or
 * 1 + 2.  Capacity then gives job 3 what job 0 left on node 0. */
static void test_repair(void **state)
{
	(void)state;
	PolluxProblem p({ job(1, 1, 3, 1), job(1, 1, 8, 1), job(1, 1, 8, 1),
			  job(1, 1, 8, 1) },
			{ 4, 4, 4 }, std::vector<int>(12, 0));
	int s[] = { 2, 2, 0,   /* job 0: distributed over 0, 1 */
		    0, 1, 1,   /* job 1: distributed over 1, 2 */
		    0, 1, 0,   /* job 2: local on node 1 */
		    4, 0, 0 }; /* job 3: local on node 0 */
	Rng rng(7);
	p.repair(s, rng);
	assert_int_equal(s[3 + 1], 0); /* job 1 off node 1 */
	assert_int_equal(s[3 + 2], 1);
	assert_int_equal(s[6 + 1], 0);	  /* job 2 too (cumulative mask) */
	assert_int_equal(s[0] + s[1], 3); /* job 0 capped at 3 */
	assert_int_equal(s[9], 4 - s[0]); /* job 3 gets what is left */
	assert_true(p.feasible(s));
}

/* All states of J jobs on N nodes of C GPUs, each cell 0..C. */
static double brute_force(const PolluxProblem &p)
{
	int J = p.jobs(), N = p.nodes(), C = p.cap(0);
	size_t cells = (size_t)J * N, total = 1;
	for (size_t i = 0; i < cells; i++)
		total *= (size_t)(C + 1);
	std::vector<int> s(cells);
	double best = INFINITY;
	for (size_t code = 0; code < total; code++) {
		size_t c = code;
		for (size_t i = 0; i < cells; i++, c /= (C + 1))
			s[i] = (int)(c % (C + 1));
		if (!p.feasible(s.data()))
			continue;
		double f1, f2;
		p.evaluate(s.data(), &f1, &f2);
		best = std::min(best, f1);
	}
	return best;
}

/* Random small problems (3 jobs, 3 nodes of 2 GPUs; current rows random
 * feasible ones): the search finds the brute-force optimum in most, and
 * is never worse than the current allocation or the GA. */
static void test_search_vs_brute_force(void **state)
{
	(void)state;
	Rng rng(42);
	int optimal = 0, runs = 60;
	for (int t = 0; t < runs; t++) {
		std::vector<PolluxJobInput> jobs;
		for (int j = 0; j < 3; j++)
			jobs.push_back(job(0.5 + rng.uniform(),
					   0.5 + 0.5 * rng.uniform(),
					   1 + rng.below(6), rng.uniform()));
		std::vector<int> base(9);
		for (int &v : base)
			v = rng.below(3);
		PolluxProblem tmp(jobs, { 2, 2, 2 }, base);
		tmp.repair(base.data(), rng);
		PolluxProblem p(jobs, { 2, 2, 2 }, base);
		std::vector<int> s = pollux_search(p);
		assert_true(p.feasible(s.data()));
		double f1, f2, b1;
		p.evaluate(s.data(), &f1, &f2);
		p.evaluate(base.data(), &b1, &f2);
		assert_true(f1 <= b1 + 1e-12);
		Rng g(t);
		GaOptions o;
		o.generations = 30;
		GaResult ga = pollux_nsga2(p, { base }, g, o);
		if (f1 > ga.f1[ga.best] + 1e-9)
			print_message("t %d search %.12g ga %.12g opt %.12g\n",
				      t, f1, ga.f1[ga.best], brute_force(p));
		assert_true(f1 <= ga.f1[ga.best] + 1e-9);
		double opt = brute_force(p);
		assert_true(f1 >= opt - 1e-12);
		optimal += f1 <= opt + 1e-12;
	}
	assert_true(optimal >= runs * 9 / 10);
}

/* Same seed, same front; the best is feasible. */
static void test_ga_deterministic(void **state)
{
	(void)state;
	std::vector<PolluxJobInput> jobs;
	for (int j = 0; j < 6; j++)
		jobs.push_back(job(1 + 0.1 * j, 0.8, 8, 0.5));
	std::vector<int> base(6 * 4, 0);
	PolluxProblem p(jobs, { 4, 4, 4, 4 }, base);
	GaOptions o;
	o.generations = 20;
	Rng a(3), b(3);
	GaResult x = pollux_nsga2(p, { base }, a, o);
	GaResult y = pollux_nsga2(p, { base }, b, o);
	assert_true(x.front == y.front);
	assert_true(p.feasible(x.front[x.best].data()));
}

/* Two jobs not fitted yet, 100 s old, of up to 4 replicas each. */
static std::vector<PolluxJobState> two_unfitted()
{
	std::vector<PolluxJobState> jobs(2);
	for (int k = 0; k < 2; k++) {
		jobs[k].id = k;
		jobs[k].age = 100;
		jobs[k].max_replicas = 4;
	}
	return jobs;
}

/* The policy: two unfitted jobs on one node of 4 GPUs, fair share 2
 * each; both get 2 (balanced is best for a harmonic mean), as node
 * lists in node order. */
static void test_policy_node_lists(void **state)
{
	(void)state;
	Params params;
	PolluxPolicy pol(params, 1);
	std::vector<PolluxJobState> jobs = two_unfitted();
	auto out = pol.optimize(jobs, { 4 });
	assert_int_equal(out[0].size(), 2);
	assert_int_equal(out[1].size(), 2);
	assert_int_equal(out[0][0], 0);
}

/* The round's objective of keeping the allocation: there when it still
 * fits, and never better than the one applied; absent when a job holds
 * more replicas than its cap now allows. */
static void test_round_keep(void **state)
{
	(void)state;
	Params params;
	PolluxPolicy pol(params, 1);
	std::vector<PolluxJobState> jobs = two_unfitted();
	jobs[0].alloc = { 0, 0, 0 };
	jobs[1].alloc = { 0 };
	PolluxRound round;
	pol.optimize(jobs, { 4 }, &round);
	assert_true(std::isfinite(round.f1_base));
	assert_true(round.f1 <= round.f1_base + 1e-12);
	jobs[0].max_replicas = 2; /* its 3 replicas no longer fit */
	pol.optimize(jobs, { 4 }, &round);
	assert_true(std::isnan(round.f1_base));
	assert_true(std::isfinite(round.f1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_objective),
		cmocka_unit_test(test_repair),
		cmocka_unit_test(test_search_vs_brute_force),
		cmocka_unit_test(test_ga_deterministic),
		cmocka_unit_test(test_policy_node_lists),
		cmocka_unit_test(test_round_keep),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
