/*
 * test_profile_pollux.cc - the Pollux profile lookups, the most-free
 * placement and the preset's job dynamics, on hand-made tables with the
 * right answers worked out here.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>

#include "core/placement/placement.h"
#include "core/profiles/profile_pollux.h"
#include "sim/presets/pollux_job.h"
#include "tests/unit/unit.h"

using namespace tidal;

static bool near(double a, double b)
{
	return std::fabs(a - b) <= 1e-12 * std::max(1.0, std::fabs(b));
}

/* Placement 1: local 10 -> (1.0, 0.1), 20 -> (2.0, 0.3), 40 -> (3.0, 0.5);
 * placement 12 the same plus 1 s.  Linear data elsewhere:
 * step = 0.1 n + 0.01 r + 0.001 local for the fallback.  Validation at
 * B = 8: progress 10, 20, 30, sqr 1, 2, 3, var 2, 4, 6; at B = 16:
 * progress 9, 21, 31, sqr 5, 6, 7, var 6, 8, 10. */
static PolluxApp make_app(bool measured = true)
{
	PolluxApp a;
	a.name = "toy";
	double pts[3][3] = {{10, 1.0, 0.1}, {20, 2.0, 0.3}, {40, 3.0, 0.5}};
	for (auto &r : pts) {
		if (!measured)
			break;
		a.placements.push_back({1, (int)r[0], {r[1], r[2]}});
		a.placements.push_back({12, (int)r[0], {r[1] + 1, r[2]}});
	}
	auto lin = [](int n, int r, int l) {
		return StepTime{0.1 * n + 0.01 * r + 0.001 * l, 0.0};
	};
	for (long id : {1L, 2L, 11L, 22L}) {
		if (measured && id == 1)
			continue;
		std::string d = std::to_string(id);
		int n = (int)d.size(), r = 0;
		for (char c : d)
			r += c - '0';
		for (int l : {10, 40})
			a.placements.push_back({id, l, lin(n, r, l)});
	}
	for (int r : {4, 8})
		for (int l : {10, 40})
			a.scalability.push_back({4, r, l, lin(4, r, l)});
	a.validation[8] = {{10, 100, 0, {1, 2}},
			   {20, 200, 0, {2, 4}},
			   {30, 300, 0, {3, 6}}};
	a.validation[16] = {{9, 50, 0, {5, 6}},
			    {21, 100, 0, {6, 8}},
			    {31, 150, 0, {7, 10}}};
	a.finish();
	return a;
}

static void test_placement_id(void **)
{
	assert_int_equal(PolluxApp::placement_id({4, 2}), 24);
	assert_int_equal(PolluxApp::placement_id({3, 4, 1}), 134);
	assert_int_equal(PolluxApp::placement_id({4, 1, 3}), 134);
	assert_int_equal(PolluxApp::placement_id({4, 3, 1}), 143);
	assert_int_equal(PolluxApp::placement_id({0, 2, 0, 1}), 12);
}

static void test_defaults(void **)
{
	PolluxApp a = make_app();
	assert_int_equal(a.init_batch_size, 8);
	assert_int_equal(a.max_batch_size, 16);
	assert_int_equal(a.min_local_bsz, 10);
	assert_int_equal(a.max_local_bsz, 40);
	assert_int_equal(a.max_epochs, 3);
	assert_int_equal(a.completion_epoch(), 2);
}

/* interp1d: 15 is half-way between 10 and 20 -> (1.5, 0.2); 30 half-way
 * between 20 and 40 -> (2.5, 0.4); the rotation (2, 1) reads 12. */
static void test_measured_interpolation(void **)
{
	PolluxApp a = make_app();
	StepTime t = a.throughput({1}, 15);
	assert_true(near(t.step, 1.5) && near(t.sync, 0.2));
	t = a.throughput({1}, 30);
	assert_true(near(t.step, 2.5) && near(t.sync, 0.4));
	t = a.throughput({1}, 10);
	assert_true(t.step == 1.0 && t.sync == 0.1);
	t = a.throughput({2, 1}, 15);
	assert_true(near(t.step, 2.5));
	bool threw = false;
	try {
		a.throughput({1}, 41);
	} catch (const ProfileError &) {
		threw = true;
	}
	assert_true(threw);
}

/* Only the linear data (placements 1, 2, 11, 22, scalability at 4 nodes):
 * (1, 1, 1) is unmeasured, 3 nodes and 3 replicas on the hull edge r = n
 * between (2, 2) and (4, 4): 0.3 + 0.03 + 0.025 = 0.355 at local 25.
 * Five nodes lie outside the data: an error naming the placement. */
static void test_fallback(void **)
{
	PolluxApp a = make_app(false);
	StepTime t = a.throughput({1, 1, 1}, 25);
	assert_true(std::fabs(t.step - 0.355) < 1e-12);
	t = a.throughput({2, 2, 2}, 10);
	assert_true(std::fabs(t.step - (0.3 + 0.06 + 0.01)) < 1e-12);
	std::string msg;
	try {
		a.throughput({1, 1, 1, 1, 1}, 25);
	} catch (const ProfileError &e) {
		msg = e.what();
	}
	assert_non_null(strstr(msg.c_str(), "placement (1, 1, 1, 1, 1)"));
}

/* progress(e) = min over batch sizes of progress[e - 1]; grad stats at
 * B = 12, epoch 1: sqr (4*6 + 4*2)/8 = 4, var (4*8 + 4*4)/8 = 6. */
static void test_validation_lookups(void **)
{
	PolluxApp a = make_app();
	assert_true(a.progress(0) == 0.0);
	assert_true(a.progress(1) == 9.0);
	assert_true(a.progress(2) == 20.0);
	assert_true(a.progress(3) == 30.0);
	GradStats g = a.grad_stats(12, 1);
	assert_true(near(g.sqr, 4.0) && near(g.var, 6.0));
	g = a.grad_stats(16, 2);
	assert_true(g.sqr == 7.0 && g.var == 10.0);
	assert_true(near(a.iteration(10, 0), (2 * 50 + 6 * 100) / 8.0));
	bool threw = false;
	try {
		a.grad_stats(20, 0);
	} catch (const ProfileError &) {
		threw = true;
	}
	assert_true(threw);
}

/* 3 nodes x 4 GPUs, node 1 holding 1 GPU: 6 GPUs take node 0 (4 free,
 * first of the ties) then node 2 (4 free beats node 1's 3). */
static void test_most_free(void **)
{
	Cluster c = test::cluster(3, 4);
	FreeMap f(c);
	assert_true(f.take({{1, 1}}));
	auto p = f.place(6, PlacementScheme::MostFree);
	assert_true(p.has_value());
	assert_true((*p == Placement{{0, 4}, {2, 2}}));
	p = f.place(1, PlacementScheme::MostFree);
	assert_true((*p == Placement{{1, 1}}));
}

static void test_round_half_even(void **)
{
	assert_true(sim::round_half_even(2.5) == 2.0);
	assert_true(sim::round_half_even(3.5) == 4.0);
	assert_true(sim::round_half_even(2.4999) == 2.0);
	assert_true(sim::round_half_even(7.6) == 8.0);
}

/* One replica, batch 8 (local 8 is below the table: use 10 and a table
 * that starts at 8), step 1 s, var 0 so gain 1: one progress unit a
 * second.  Epoch boundaries at progress 9, 20 (min over batch sizes), and
 * completion at epoch 3 = progress 30.  Rounds of 60 s from t = 0:
 *   [0,60):   delay 30, progress 30 -> crosses 9 at 30+9 = 39 (round 9),
 *             20 at 39+11 = 50, 30 at 50+10 = 60: completes at 60.
 * Attained = 60 GPU-s. */
static void test_job_dynamics(void **)
{
	PolluxApp a;
	a.name = "unit";
	a.placements = {{1, 8, {1.0, 0.0}}, {1, 16, {1.0, 0.0}}};
	a.validation[8] = {{9, 0, 0, {1, 0}}, {20, 0, 0, {1, 0}},
			   {30, 0, 0, {1, 0}}};
	a.finish();
	sim::PolluxJob j;
	j.app = &a;
	j.target_batch = 8;
	j.target_replicas = 1;
	j.reallocate({1});
	assert_int_equal(j.atomic_bsz, 8);
	assert_int_equal(j.accum_steps, 0);
	assert_int_equal(j.restarts, 0);
	j.step(0, 60);
	assert_true(j.done());
	assert_true(j.completion == 60.0);
	assert_true(j.attained == 60.0);
	assert_int_equal(j.epoch, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_placement_id),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_measured_interpolation),
		cmocka_unit_test(test_fallback),
		cmocka_unit_test(test_validation_lookups),
		cmocka_unit_test(test_most_free),
		cmocka_unit_test(test_round_half_even),
		cmocka_unit_test(test_job_dynamics),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
