/*
 * test_pollux_relax.cc - the GPU-count relaxation of Pollux's problem:
 * its solutions, cheapest first, checked against every shape vector
 * enumerated by brute force.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/pollux_relax.h"
#include "tests/unit/unit.h"

#include <algorithm>
#include <cmath>

using namespace tidal;

static PolluxJobInput job(int maxr, double rf)
{
	PolluxJobInput j;
	j.speedup = [](int nodes, int r) {
		return nodes > 1 ? 0.8 * r : (double)r;
	};
	j.max_replicas = maxr;
	j.restart_factor = rf;
	return j;
}

/* One job's shapes by hand: (term, GPUs). */
static std::vector<std::pair<double, int>> shapes_of(const PolluxProblem &p,
						       int j, bool has_base,
						       int base_r)
{
	std::vector<std::pair<double, int>> o;
	auto term = [&](int nodes, int r, bool kept) {
		return 1.0 / (p.scaled(j, nodes, r, kept) + 1e-3);
	};
	o.push_back({ term(0, 0, !has_base), 0 });
	if (has_base)
		o.push_back({ term(1, base_r, true), base_r });
	for (int r = 1; r <= std::min(p.max_replicas(j), 2); r++)
		o.push_back({ term(1, r, false), r });
	for (int r = 2; r <= std::min(p.max_replicas(j), 4); r++)
		o.push_back({ term(2, r, false), r });
	return o;
}

/* Two nodes of 2.  Job 0 (up to 2 replicas) runs on node 0 with 1; job 1
 * (up to 3) and job 2 (up to 1) are new.  Every combination of shapes
 * with at most 4 GPUs, sorted, is the enumeration's whole list. */
static void test_relax_all(void **state)
{
	(void)state;
	PolluxProblem p({ job(2, 0.5), job(3, 0.9), job(1, 0.7) }, { 2, 2 },
			{ 1, 0, 0, 0, 0, 0 });
	auto a = shapes_of(p, 0, true, 1), b = shapes_of(p, 1, false, 0),
	     c = shapes_of(p, 2, false, 0);
	std::vector<double> want;
	for (auto &x : a)
		for (auto &y : b)
			for (auto &z : c)
				if (x.second + y.second + z.second <= 4)
					want.push_back(x.first + y.first + z.first);
	std::sort(want.begin(), want.end());
	RelaxEnum en(p);
	RelaxedShapes r;
	std::vector<double> got;
	while (en.next(&r)) {
		assert_int_equal(r.shapes.size(), 3);
		int gpus = 0;
		for (const PolluxShape &s : r.shapes)
			gpus += s.replicas;
		assert_true(gpus <= 4);
		got.push_back(r.inverse_sum);
	}
	assert_int_equal(got.size(), want.size());
	for (size_t i = 0; i < got.size(); i++) {
		assert_true(std::fabs(got[i] - want[i]) < 1e-9);
		if (i)
			assert_true(got[i] >= got[i - 1]);
	}
	/* the graph's edges, an upper bound: options per job (empty, kept,
	 * single 1..2, distributed 2..max) 5 + 6 + 3, at 5 GPU counts each,
	 * and 5 into the sink */
	assert_int_equal(pollux_relax_edges(p), 14 * 5 + 5);
	/* pollux_relax is the enumeration's head */
	std::vector<RelaxedShapes> top = pollux_relax(p, 1);
	assert_int_equal(top.size(), 1);
	assert_true(std::fabs(top[0].inverse_sum - want[0]) < 1e-12);
}

/* No jobs: one solution, empty. */
static void test_relax_empty(void **state)
{
	(void)state;
	PolluxProblem p({}, { 4 }, {});
	RelaxEnum en(p);
	RelaxedShapes r;
	assert_true(en.next(&r));
	assert_true(r.shapes.empty());
	assert_false(en.next(&r));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_relax_all),
		cmocka_unit_test(test_relax_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
