/*
 * test_lp_glpk.cc - the GLPK LP/MILP layer on tiny problems whose optima
 * are worked out by hand, and the assignment solver (lsap.h) against
 * brute force.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>

#include "core/solvers/lp_glpk.h"
#include "core/solvers/lsap.h"
#include "tests/unit/unit.h"

using namespace tidal;

static bool near(double a, double b) { return std::fabs(a - b) < 1e-9; }

/* max 3x + 2y, x + y <= 4, x + 3y <= 6, 0 <= x <= 3, y >= 0:
 * the vertices are (0,0) (3,0) (3,1) (0,2); (3,1) gives 11. */
static void test_lp_max(void **)
{
	LinearProgram lp;
	int x = lp.add_var(0, 3, 3), y = lp.add_var(0, kLpInf, 2);
	lp.add_row({{x, 1}, {y, 1}}, -kLpInf, 4);
	lp.add_row({{x, 1}, {y, 3}}, -kLpInf, 6);
	lp.set_maximize(true);
	assert_int_equal((int)lp.solve(), (int)LpStatus::Optimal);
	assert_true(near(lp.value(x), 3) && near(lp.value(y), 1));
	assert_true(near(lp.objective(), 11));
	assert_false(lp.hit_time_limit());
	/* The interior-point method reaches the same (unique) optimum. */
	LpOptions ipm;
	ipm.interior = true;
	assert_int_equal((int)lp.solve(ipm), (int)LpStatus::Optimal);
	assert_true(std::fabs(lp.value(x) - 3) < 1e-6 &&
		    std::fabs(lp.value(y) - 1) < 1e-6);
}

/* min x + y with x + 2y >= 4 and 3x + y >= 6 (row lower bounds):
 * the corner x = 1.6, y = 1.2 gives 2.8. */
static void test_lp_min_rows(void **)
{
	LinearProgram lp;
	int x = lp.add_var(0, kLpInf, 1), y = lp.add_var(0, kLpInf, 1);
	lp.add_row({{x, 1}, {y, 2}}, 4, kLpInf);
	lp.add_row({{x, 3}, {y, 1}}, 6, kLpInf);
	assert_int_equal((int)lp.solve(), (int)LpStatus::Optimal);
	assert_true(near(lp.value(x), 1.6) && near(lp.value(y), 1.2));
	assert_true(near(lp.objective(), 2.8));
}

static void test_lp_infeasible_unbounded(void **)
{
	LinearProgram a; /* x + y = 1 with x >= 2, y >= 0 */
	int x = a.add_var(2, kLpInf), y = a.add_var(0, kLpInf);
	a.add_row({{x, 1}, {y, 1}}, 1, 1);
	assert_int_equal((int)a.solve(), (int)LpStatus::Infeasible);
	assert_int_equal((int)a.solve({.time_limit_s = 1, .mip_gap = 0,
				       .presolve = false}),
			 (int)LpStatus::Infeasible);

	LinearProgram b; /* max x, x >= 0 */
	b.add_var(0, kLpInf, 1);
	b.set_maximize(true);
	assert_int_equal((int)b.solve(), (int)LpStatus::Unbounded);
}

/* 0-1 knapsack: values 5 4 3, weights 2 3 1, capacity 5.  Subsets that
 * fit: {a,b} = 9, {a,c} = 8, {b,c} = 7; the LP relaxation is 10.33. */
static void test_mip_knapsack(void **)
{
	LinearProgram lp;
	int a = lp.add_var(0, 1, 5, true), b = lp.add_var(0, 1, 4, true),
	    c = lp.add_var(0, 1, 3, true);
	lp.add_row({{a, 2}, {b, 3}, {c, 1}}, -kLpInf, 5);
	lp.set_maximize(true);
	LpStatus st = lp.solve({.time_limit_s = 5, .mip_gap = 1e-3});
	assert_int_equal((int)st, (int)LpStatus::Optimal);
	assert_true(near(lp.objective(), 9));
	assert_true(near(lp.value(a), 1) && near(lp.value(b), 1) &&
		    near(lp.value(c), 0));
	assert_true(lp.seconds() >= 0);
}

/* The same model solves again after a change (the model is ours). */
static void test_lp_resolve(void **)
{
	LinearProgram lp;
	int x = lp.add_var(0, 10, 1);
	lp.set_maximize(true);
	assert_int_equal((int)lp.solve(), (int)LpStatus::Optimal);
	assert_true(near(lp.value(x), 10));
	lp.add_row({{x, 2}}, -kLpInf, 7);
	assert_int_equal((int)lp.solve(), (int)LpStatus::Optimal);
	assert_true(near(lp.value(x), 3.5));
	assert_string_equal(lp_status_name(LpStatus::Feasible), "feasible");
}

static double brute(const std::vector<double> &c, int r, int n)
{
	std::vector<int> cols(n);
	for (int i = 0; i < n; i++)
		cols[i] = i;
	double best = INFINITY;
	do {
		double s = 0;
		for (int i = 0; i < r; i++)
			s += c[(size_t)i * n + cols[i]];
		best = std::min(best, s);
	} while (std::next_permutation(cols.begin(), cols.end()));
	return best;
}

static void test_lsap(void **)
{
	/* 3x3: rows take columns 1, 0, 2 for 1 + 2 + 2 = 5. */
	std::vector<double> c = {4, 1, 3, 2, 0, 5, 3, 2, 2};
	auto a = linear_sum_assignment(c, 3, 3);
	assert_true(a == std::vector<int>({1, 0, 2}));
	/* A constant matrix gives the identity (SciPy's order). */
	std::vector<double> k(9, 7.0);
	assert_true(linear_sum_assignment(k, 3, 3) ==
		    std::vector<int>({0, 1, 2}));
	/* Rectangular, against brute force on pseudo-random costs. */
	unsigned s = 12345;
	for (int trial = 0; trial < 50; trial++) {
		int r = 1 + trial % 4, n = r + trial % 3;
		std::vector<double> m((size_t)r * n);
		for (double &v : m) {
			s = s * 1103515245u + 12345u;
			v = (double)((s >> 16) % 10);
		}
		auto col = linear_sum_assignment(m, r, n);
		assert_int_equal((int)col.size(), r);
		double sum = 0;
		for (int i = 0; i < r; i++)
			sum += m[(size_t)i * n + col[i]];
		assert_true(near(sum, brute(m, r, n)));
		std::vector<int> sorted = col;
		std::sort(sorted.begin(), sorted.end());
		assert_true(std::adjacent_find(sorted.begin(), sorted.end()) ==
			    sorted.end());
	}
	assert_true(linear_sum_assignment(c, 3, 2).empty()); /* rows > cols */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lp_max),
		cmocka_unit_test(test_lp_min_rows),
		cmocka_unit_test(test_lp_infeasible_unbounded),
		cmocka_unit_test(test_mip_knapsack),
		cmocka_unit_test(test_lp_resolve),
		cmocka_unit_test(test_lsap),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
