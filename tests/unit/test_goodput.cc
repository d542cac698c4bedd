/*
 * test_goodput.cc - Pollux's goodput model: the bounded minimiser, the
 * analytic gradient of the fitting loss, recovery of known throughput
 * parameters from synthetic step times, efficiency, the batch-size choice
 * and the speedup function, with the answers worked out here.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>

#include "core/profiles/goodput.h"
#include "core/solvers/minimize_box.h"
#include "tests/unit/unit.h"

using namespace tidal;

static bool rel_near(double a, double b, double tol)
{
	return std::fabs(a - b) <= tol * std::max(1e-12, std::fabs(b));
}

/* (x - 3)^2 + (y + 1)^2 + (z - 0.5)^2 on [0, 2] x [0, 5] x [-1, 1]:
 * the minimum is (2, 0, 0.5), with two bounds active. */
static void test_minimize_box(void **state)
{
	(void)state;
	Objective f = [](const std::vector<double> &x, std::vector<double> *g) {
		(*g)[0] = 2 * (x[0] - 3);
		(*g)[1] = 2 * (x[1] + 1);
		(*g)[2] = 2 * (x[2] - 0.5);
		return (x[0] - 3) * (x[0] - 3) + (x[1] + 1) * (x[1] + 1) +
		       (x[2] - 0.5) * (x[2] - 0.5);
	};
	std::vector<double> x = { 1, 4, -1 };
	MinimizeResult r = minimize_box(f, x, { 0, 0, -1 }, { 2, 5, 1 });
	assert_true(r.converged);
	assert_true(std::fabs(x[0] - 2) < 1e-9);
	assert_true(std::fabs(x[1]) < 1e-9);
	assert_true(std::fabs(x[2] - 0.5) < 1e-5);
	assert_true(std::fabs(r.value - 2.0) < 1e-9);
}

/* Rosenbrock from (-1.2, 1) with a box that does not bind: (1, 1). */
static void test_minimize_rosenbrock(void **state)
{
	(void)state;
	Objective f = [](const std::vector<double> &x, std::vector<double> *g) {
		double a = 1 - x[0], b = x[1] - x[0] * x[0];
		(*g)[0] = -2 * a - 400 * x[0] * b;
		(*g)[1] = 200 * b;
		return a * a + 100 * b * b;
	};
	std::vector<double> x = { -1.2, 1 };
	MinimizeOptions o;
	o.ftol = 1e-15;
	minimize_box(f, x, { -5, -5 }, { 5, 5 }, o);
	assert_true(std::fabs(x[0] - 1) < 1e-4 && std::fabs(x[1] - 1) < 1e-4);
}

static const PerfParams truth = { 0.05, 0.002, 0.3, 0.01, 0.1, 0.004, 1.6 };

static std::vector<PerfSample> synthetic()
{
	std::vector<PerfSample> out;
	int shapes[][2] = { { 1, 1 }, { 1, 2 },	 { 1, 4 },
			    { 2, 8 }, { 4, 16 }, { 2, 4 } };
	for (auto &s : shapes)
		for (int b : { 16, 32, 64, 128 }) {
			PerfSample p;
			p.nodes = s[0];
			p.replicas = s[1];
			p.atomic_bsz = b;
			p.accum_time = predict_accum_time(truth, b);
			double net = predict_network_time(truth, s[0], s[1]);
			p.optim_time =
				predict_optim_time(truth, p.accum_time, net);
			out.push_back(p);
		}
	return out;
}

/* The analytic gradient against central differences, away from the
 * optimum (where the RMSE terms are smooth). */
static void test_loss_gradient(void **state)
{
	(void)state;
	std::vector<PerfSample> s = synthetic();
	std::array<double, 7> x = { 0.07, 0.003, 0.2, 0.02, 0.15, 0.001, 2.3 };
	std::array<double, 7> g;
	perf_loss(x, s, &g);
	for (int i = 0; i < 7; i++) {
		std::array<double, 7> a = x, b = x;
		double h = 1e-6 * std::max(1.0, std::fabs(x[i])) * x[i];
		a[i] += h;
		b[i] -= h;
		double fd =
			(perf_loss(a, s, nullptr) - perf_loss(b, s, nullptr)) /
			(2 * h);
		assert_true(rel_near(g[i], fd, 1e-5));
	}
}

/* Step times generated from known parameters: the fit finds them (the
 * loss is 0 there and the priors are small). */
static void test_fit_recovers(void **state)
{
	(void)state;
	FitStats st;
	PerfParams p = fit_perf_params(synthetic(), &st);
	std::array<double, 7> got = p.vec(), want = truth.vec();
	for (int i = 0; i < 7; i++)
		assert_true(rel_near(got[i], want[i], 0.02));
	assert_true(st.loss < 1e-2);
}

/* One replica, one atomic size: alpha_c is pinned at mean(accum) / 2 and
 * every network term at 1e-8; alpha_n, beta_n get the 1.1 x prior. */
static void test_fit_pinning(void **state)
{
	(void)state;
	std::vector<PerfSample> s = { { 1, 1, 32, 0.4, 0.41 } };
	PerfParams p = fit_perf_params(s);
	assert_true(p.alpha_c == 0.2);
	assert_true(p.alpha_r == 1e-8 && p.beta_r == 1e-8);
	assert_true(rel_near(p.alpha_n, 1.1e-8, 1e-12));
	assert_true(rel_near(p.beta_n, 1.1e-8, 1e-12));
	/* T_opt = T_acc here, so any T_acc in [0.4, 0.41] is optimal */
	double acc = p.alpha_c + 32 * p.beta_c;
	assert_true(acc >= 0.4 - 1e-6 && acc <= 0.41 + 1e-6);
}

/* var = 0: gain 1, efficiency = init / batch.  sqr = 0: efficiency 1. */
static void test_efficiency(void **state)
{
	(void)state;
	GoodputFunction a(truth, { 1.0, 0.0 }, 64);
	assert_true(rel_near(a.efficiency(256), 0.25, 1e-15));
	GoodputFunction b(truth, { 0.0, 1.0 }, 64);
	assert_true(rel_near(b.efficiency(256), 1.0, 1e-15));
	/* sqr 1, var 3, scale 4: gain (3 + 1) / (3 / 4 + 1) = 16 / 7 */
	GoodputFunction c(truth, { 1.0, 3.0 }, 64);
	assert_true(rel_near(c.efficiency(256), 16.0 / 7 / 4, 1e-15));
}

/* Throughput = batch / (accum x T_acc + T_opt). */
static void test_throughput(void **state)
{
	(void)state;
	PerfParams p = { 0.1, 0.01, 0.3, 0.0, 0.2, 0.0, 1.0 };
	GoodputFunction f(p, { 1, 0 }, 8);
	/* 2 nodes, 4 replicas, atomic 10, 1 accum step: T_acc = 0.2,
	 * T_net = 0.3, T_opt = 0.5 (gamma 1), total 0.7, batch 80 */
	assert_true(rel_near(f.throughput(2, 4, 10, 1), 80 / 0.7, 1e-12));
}

/* sqr = 0: goodput = throughput, which grows with the batch, so the
 * largest candidate wins: B = 1024 on 2 replicas is local 512 = 4 x 128.
 * var = 0: goodput = init / total time, smallest at the first candidate
 * max(64, 16 x 2) = 64: local 32, no accumulation. */
static void test_optimize(void **state)
{
	(void)state;
	GoodputFunction big(truth, { 0.0, 1.0 }, 64);
	GoodputChoice c = big.optimize(1, 2, 1024, 16, 128, true);
	assert_int_equal(c.atomic_bsz, 128);
	assert_int_equal(c.accum_steps, 3);
	assert_true(rel_near(c.goodput, big.evaluate(1, 2, 128, 3), 1e-15));
	GoodputFunction small(truth, { 1.0, 0.0 }, 64);
	c = small.optimize(1, 2, 1024, 16, 128, true);
	assert_int_equal(c.atomic_bsz, 32);
	assert_int_equal(c.accum_steps, 0);
	/* one replica above the initial batch always accumulates: with
	 * max batch 64 = init there is a single size, 64, no accumulation */
	c = big.optimize(1, 1, 64, 16, 128, true);
	assert_int_equal(c.atomic_bsz, 64);
	assert_int_equal(c.accum_steps, 0);
	/* ... and at 1024 it is 8 x 128 */
	c = big.optimize(1, 1, 1024, 16, 128, true);
	assert_int_equal(c.atomic_bsz, 128);
	assert_int_equal(c.accum_steps, 7);
	/* without accumulation, atomic > 128 scores 0; best is B = 128 or
	 * the last candidate not above it */
	c = big.optimize(1, 1, 1024, 16, 128, false);
	assert_true(c.atomic_bsz <= 128 && c.accum_steps == 0);
}

static void test_speedup(void **state)
{
	(void)state;
	GoodputFunction f(truth, { 0.5, 2.0 }, 64);
	SpeedupFunction s(f, 1024, 16, 128, true);
	assert_true(s(0, 0) == 0.0);
	assert_true(rel_near(s(1, 1), 1.0, 1e-15));
	double g4 = f.optimize(1, 4, 1024, 16, 128, true).goodput;
	assert_true(rel_near(s(1, 4), g4 / s.base(), 1e-15));
	s.set_base(1, 4);
	assert_true(rel_near(s(1, 4), 1.0, 1e-15));
	double g28 = f.optimize(2, 8, 1024, 16, 128, true).goodput;
	assert_true(rel_near(s(2, 8), g28 / g4, 1e-15));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minimize_box),
		cmocka_unit_test(test_minimize_rosenbrock),
		cmocka_unit_test(test_loss_gradient),
		cmocka_unit_test(test_fit_recovers),
		cmocka_unit_test(test_fit_pinning),
		cmocka_unit_test(test_efficiency),
		cmocka_unit_test(test_throughput),
		cmocka_unit_test(test_optimize),
		cmocka_unit_test(test_speedup),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
