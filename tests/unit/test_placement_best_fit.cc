/*
 * test_placement_best_fit.cc - FreeMap's best-fit scheme against Lucid's
 * "consolidate" placer (anchors/lucid/MODEL.md §3), one hand-made free
 * map per rule with the answer worked out here.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/placement/placement.h"

#include "tests/unit/unit.h"

using namespace tidal;
using namespace tidal::test;

/* Nodes of 8 GPUs with FREE[i] free on node i. */
static FreeMap with_free(const Cluster &c, const std::vector<int> &free)
{
	FreeMap m(c);
	for (int n = 0; n < (int)free.size(); n++)
		if (free[n] < 8)
			assert_true(m.take({{n, 8 - free[n]}}));
	return m;
}

static void assert_placement(const std::optional<Placement> &got,
			     const Placement &want)
{
	assert_true(got.has_value());
	assert_int_equal(got->size(), want.size());
	for (size_t i = 0; i < want.size(); i++) {
		assert_int_equal((*got)[i].node, want[i].node);
		assert_int_equal((*got)[i].gpus, want[i].gpus);
	}
}

/* g <= 8: ascending free, ties by node order.  Free [3, 8, 5, 5]: the
 * order is n0(3) n2(5) n3(5) n1(8); the first with >= 4 is n2. */
static void test_narrow_tightest_then_first(void **)
{
	Cluster c = cluster(4, 8);
	FreeMap m = with_free(c, {3, 8, 5, 5});
	assert_placement(m.place(4, PlacementScheme::BestFit, PlaceMode::Test),
			 {{2, 4}});
	assert_placement(m.place(8, PlacementScheme::BestFit, PlaceMode::Test),
			 {{1, 8}});
}

/* g % 8 == 0: whole idle nodes in node order.  Free [8, 5, 8, 8]: the
 * descending order is n0 n2 n3 n1, so 16 GPUs take n0 and n2. */
static void test_wide_whole_idle_nodes(void **)
{
	Cluster c = cluster(4, 8);
	FreeMap m = with_free(c, {8, 5, 8, 8});
	assert_placement(m.place(16, PlacementScheme::BestFit, PlaceMode::Test),
			 {{0, 8}, {2, 8}});
}

/* g % 8 == 0 fails at the first node that is not idle, even with enough
 * free GPUs in all: free [8, 7, 6, 3] holds 24 but only one idle node. */
static void test_wide_fails_without_idle_nodes(void **)
{
	Cluster c = cluster(4, 8);
	FreeMap m = with_free(c, {8, 7, 6, 3});
	assert_false(m.place(16, PlacementScheme::BestFit).has_value());
	assert_int_equal(m.free_total(), 24); /* unchanged */
}

/* g % 8 != 0: whole idle nodes, then the remainder on the next node in
 * descending-free order, which may be idle too (not a best fit).  Free
 * [8, 5, 8]: 12 GPUs take n0 whole and 4 on n2, not on n1. */
static void test_wide_remainder_on_next_node(void **)
{
	Cluster c = cluster(3, 8);
	FreeMap m = with_free(c, {8, 5, 8});
	assert_placement(m.place(12, PlacementScheme::BestFit, PlaceMode::Test),
			 {{0, 8}, {2, 4}});
	/* Free [5, 8]: n1 whole, the remainder on n0. */
	Cluster c2 = cluster(2, 8);
	FreeMap m2 = with_free(c2, {5, 8});
	assert_placement(m2.place(12, PlacementScheme::BestFit), {{1, 8}, {0, 4}});
	assert_int_equal(m2.free_total(), 1);
}

/* The remainder's node must hold it: free [8, 3, 3] has 14 but 12 GPUs
 * fail at n1 (3 < 4). */
static void test_wide_remainder_must_fit(void **)
{
	Cluster c = cluster(3, 8);
	FreeMap m = with_free(c, {8, 3, 3});
	assert_false(m.place(12, PlacementScheme::BestFit).has_value());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_narrow_tightest_then_first),
		cmocka_unit_test(test_wide_whole_idle_nodes),
		cmocka_unit_test(test_wide_fails_without_idle_nodes),
		cmocka_unit_test(test_wide_remainder_on_next_node),
		cmocka_unit_test(test_wide_remainder_must_fit),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
