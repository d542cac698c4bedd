/*
 * test_interleave.cc - staggered group iteration times and AntMan's
 * interleaving count (core/profiles/interleave.h), on hand-made stage times.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>

#include "core/profiles/interleave.h"
#include "tests/unit/unit.h"

using namespace tidal;

static void assert_close(double got, double want)
{
	if (std::fabs(got - want) > 1e-12 * std::max(1.0, std::fabs(want)))
		fail_msg("got %.15g, want %.15g", got, want);
}

static double raw(std::vector<StageTimes> st, Ordering o)
{
	std::vector<InterleaveJob> js;
	for (size_t i = 0; i < st.size(); i++)
		js.push_back({st[i], 0, i});
	std::vector<const InterleaveJob *> p;
	for (const InterleaveJob &j : js)
		p.push_back(&j);
	return interleave_raw_time(p, o);
}

/* One job alone runs its stages one after another. */
static void test_single_job(void **)
{
	StageTimes c{3, 2, 1};
	const StageTimes *order[] = {&c};
	assert_close(staggered_time(order, 1), 6);
	InterleaveJob j{c, 6.09, 0};
	std::vector<const InterleaveJob *> g{&j};
	/* a group of one runs at its solo time, factor included */
	assert_close(group_iter_time(g, Ordering::Best, muri_group_factors()),
		     6.09);
}

/*
 * a = (1, 0.1, 0) mostly loads data, b = (0.1, 1, 0) mostly computes.
 * Muri's direct pairing hides each one's compute behind the other's
 * loading: max(1, 1 + 0) + max(0.1, 0.1 + 0) = 1.1.  The staggered slots
 * give 2.1 for [a, b] (a's loading waits for b's compute to start) and
 * 1.2 for [b, a].  Best = 1.1, worst = 2.1, no ordering = [a, b] = 2.1.
 */
static void test_pair(void **)
{
	StageTimes a{1, 0.1, 0}, b{0.1, 1, 0};
	const StageTimes *ab[] = {&a, &b}, *ba[] = {&b, &a};
	assert_close(staggered_time(ab, 2), 2.1);
	assert_close(staggered_time(ba, 2), 1.2);
	assert_close(raw({a, b}, Ordering::Best), 1.1);
	assert_close(raw({a, b}, Ordering::Worst), 2.1);
	assert_close(raw({a, b}, Ordering::None), 2.1);
	/* the 2-job factor: 1.1 x 1.33 / 1.015 */
	InterleaveJob ja{a, 1.1165, 0}, jb{b, 1.1165, 1};
	std::vector<const InterleaveJob *> g{&ja, &jb};
	assert_close(group_iter_time(g, Ordering::Best, muri_group_factors()),
		     1.1 * (1.33 / 1.015));
}

/* The plan: which shape and slot order give the best time, and what
 * each boundary of it starts. */
static void test_plan(void **)
{
	StageTimes a{ 1, 0.1, 0 }, b{ 0.1, 1, 0 }, c{ 3, 2, 1 }, d{ 1, 2, 3 };
	InterleaveJob ja{ a, 0, 0 }, jb{ b, 0, 1 }, jc{ c, 0, 0 },
		jd{ d, 0, 1 };
	InterleavePlan p = interleave_plan({ &ja, &jb }, Ordering::Best);
	assert_int_equal(p.shape, InterleavePlan::Pair);
	assert_close(p.raw, 1.1);
	p = interleave_plan({ &jc, &jd, &jc }, Ordering::Best);
	assert_int_equal(p.shape, InterleavePlan::Staggered);
	assert_int_equal(p.order.size(), 3);
	assert_close(p.raw, raw({ c, d, c }, Ordering::Best));
	/* pair: even boundaries, member 0 loads while member 1 computes
	 * and syncs; odd ones the reverse */
	auto r = slot_starts(InterleavePlan::Pair, 2, 4);
	assert_int_equal(r.size(), 2);
	assert_int_equal(r[0].member, 0);
	assert_int_equal(r[0].first, 0);
	assert_int_equal(r[1].first, 1);
	assert_int_equal(r[1].last, 2);
	assert_int_equal(r[1].end, 5);
	/* staggered, 2 members at boundary 5: member 1 loads (until 7),
	 * member 0 syncs (5 - 0 = 1 mod 4: nothing; 5 - 1 = 0: load) */
	r = slot_starts(InterleavePlan::Staggered, 2, 5);
	assert_int_equal(r.size(), 1);
	assert_int_equal(r[0].member, 1);
	assert_int_equal(r[0].first, 0);
	assert_int_equal(r[0].end, 7);
	r = slot_starts(InterleavePlan::Staggered, 2, 7);
	assert_int_equal(r.size(), 2); /* member 0 syncs, member 1 computes */
	assert_int_equal(r[0].member, 0);
	assert_int_equal(r[0].first, 2);
	assert_int_equal(r[1].member, 1);
	assert_int_equal(r[1].first, 1);
}

/* Three and four jobs: the minimum and maximum over all 3! / 4! slot
 * orders of the recurrence (MODEL.md §4.5). */
static void test_three_and_four(void **)
{
	StageTimes c{3, 2, 1}, d{1, 2, 3}, e{2, 2, 2}, f{0.5, 1, 0.25};
	assert_close(raw({c, d, e}, Ordering::Best), 8);
	assert_close(raw({c, d, e}, Ordering::Worst), 9);
	assert_close(raw({c, d, e, f}, Ordering::Best), 8);
	assert_close(raw({c, d, e, f}, Ordering::Worst), 9);
	/* two identical jobs: staggering beats the direct pairing (10) */
	assert_close(raw({d, d}, Ordering::Best), 7);
	/* the order of the inputs does not change the best time */
	assert_close(raw({e, d, c}, Ordering::Best), 8);
}

/*
 * AntMan: iterations of the guaranteed job c that overlap one of t.
 * t = (4, 1, 1), c = (1, 1, 1): t's loading spans 4 / (1 + 1) = 2 of c's
 * compute+sync windows exactly; its compute (1) is shorter than c's
 * load+sync window (2), so one more, partial; its sync (1) is not longer
 * than c's loading (1), so no more: 3.
 * t = (3, 2, 2), c = (1, 1, 0.5): 3 / 1.5 = 2 exactly; 2 / 1.5 = 1 rest
 * 0.5 -> 1 + 1 more, and the rest 0.5 < c's loading 1 lets t's sync
 * start early: 2 - min(2, 2 - 0.5) = 0.5; 0.5 / 2 = 0 and the rest 0.5 is
 * not longer than 1: 4.
 */
static void test_antman_iterations(void **)
{
	assert_int_equal(antman_iterations({4, 1, 1}, {1, 1, 1}), 3);
	assert_int_equal(antman_iterations({3, 2, 2}, {1, 1, 0.5}), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_job),
		cmocka_unit_test(test_pair),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_three_and_four),
		cmocka_unit_test(test_antman_iterations),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
