/*
 * test_solver.cc - the LP/MILP interface (GLPK backend) and Themis's
 * finish-time fair shares on problems solved by hand.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/themis.h"
#include "core/solvers/solver.h"

#include "tests/unit/unit.h"

using namespace tidal;

static bool near(double a, double b) { return std::fabs(a - b) < 1e-7; }

/* max x + y, x + 2y <= 4, 3x + y <= 6: the corner (1.6, 1.2). */
static LpProblem corner(bool integer)
{
	LpProblem p(LpProblem::Sense::Maximize);
	int x = p.add_var(0, HUGE_VAL, 1, integer);
	int y = p.add_var(0, HUGE_VAL, 1, integer);
	p.add_row({{x, 1}, {y, 2}}, -HUGE_VAL, 4);
	p.add_row({{x, 3}, {y, 1}}, -HUGE_VAL, 6);
	return p;
}

static void test_lp(void **)
{
	LpResult r = solve_lp(corner(false));
	assert_true(r.ok());
	assert_true(near(r.objective, 2.8));
	assert_true(near(r.x[0], 1.6) && near(r.x[1], 1.2));
}

/* The same with integers: (2, 0), (1, 1) and (0, 2) all give 2. */
static void test_milp(void **)
{
	LpResult r = solve_lp(corner(true));
	assert_true(r.ok());
	assert_true(near(r.objective, 2));
	assert_true(near(r.x[0] + r.x[1], 2));
}

static void test_infeasible(void **)
{
	LpProblem p;
	int x = p.add_var(5, HUGE_VAL, 1);
	p.add_row({{x, 1}}, -HUGE_VAL, 3);
	LpResult r = solve_lp(p);
	assert_int_equal((int)r.status, (int)LpStatus::Infeasible);
	assert_false(r.ok());
}

/* Two equal 1-GPU jobs on 1 GPU: rho = (0 + 10 / x) / 20 is equal for both
 * at x = 0.5, so the worst rho is 1. */
static void test_themis_equal(void **)
{
	std::vector<FtfJob> jobs = {{0, 10, 20, 1}, {0, 10, 20, 1}};
	FtfShares s = themis_shares(jobs, 1);
	assert_true(std::fabs(s.rho - 1) < 1e-9);
	assert_true(std::fabs(s.x[0] - 0.5) < 1e-6);
	assert_true(std::fabs(s.x[1] - 0.5) < 1e-6);
}

/* Room for everyone: the worst rho is that of full shares, and every job
 * gets its full share. */
static void test_themis_room(void **)
{
	std::vector<FtfJob> jobs = {{10, 10, 10, 2}, {0, 5, 10, 2}};
	FtfShares s = themis_shares(jobs, 8);
	assert_true(std::fabs(s.rho - 2) < 1e-9);
	assert_true(std::fabs(s.x[0] - 1) < 1e-9);
	assert_true(std::fabs(s.x[1] - 1) < 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lp),
		cmocka_unit_test(test_milp),
		cmocka_unit_test(test_infeasible),
		cmocka_unit_test(test_themis_equal),
		cmocka_unit_test(test_themis_room),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
