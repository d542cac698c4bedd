/*
 * test_placement.cc - every placement scheme on hand-made free maps, with
 * the expected shares worked out in the comments; Test vs Commit mode,
 * take/release, and refusals that leave the map as it was.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/placement/placement.h"

#include "tests/unit/unit.h"

using namespace tidal;
using namespace tidal::test;

static bool same(const std::optional<Placement> &p, const Placement &want)
{
	return p && *p == want;
}

/* Occupy USED[i] GPUs on node i. */
static void occupy(FreeMap &m, const std::vector<int> &used)
{
	for (int n = 0; n < (int)used.size(); n++)
		if (used[n])
			assert_true(m.take({{n, used[n]}}));
}

static std::vector<int> free_of(const FreeMap &m, int nodes)
{
	std::vector<int> f;
	for (int n = 0; n < nodes; n++)
		f.push_back(m.free_on(n));
	return f;
}

static void test_scheme_names(void **)
{
	PlacementScheme s = PlacementScheme::Count;
	assert_true(placement_scheme_from_name("Switch-Aware", &s));
	assert_int_equal(s, PlacementScheme::SwitchAware);
	assert_true(placement_scheme_from_name("best-fit", &s));
	assert_int_equal(s, PlacementScheme::BestFit);
	assert_false(placement_scheme_from_name("diagonal", &s));
	assert_int_equal(s, PlacementScheme::BestFit);
	assert_string_equal(placement_scheme_name(PlacementScheme::FirstFit),
			    "first-fit");
	assert_string_equal(placement_scheme_name(PlacementScheme::Count),
			    "count");
}

/* 3 x 4 GPUs, free 3 / 2 / 4.  One node: the tightest that holds the job
 * (2 -> n1, 3 -> n0, 4 -> n2).  Six GPUs: emptiest first (n2: 4), then
 * the tightest node for the remaining 2, which is n1 (2 free), not n0. */
static void test_consolidated(void **)
{
	Cluster c = cluster(3, 4);
	FreeMap m(c);
	occupy(m, {1, 2, 0});
	assert_true(same(m.place(2, PlacementScheme::Consolidated,
				 PlaceMode::Test),
			 {{1, 2}}));
	assert_true(same(m.place(3, PlacementScheme::Consolidated,
				 PlaceMode::Test),
			 {{0, 3}}));
	assert_true(same(m.place(4, PlacementScheme::Consolidated,
				 PlaceMode::Test),
			 {{2, 4}}));
	assert_true(same(m.place(6, PlacementScheme::Consolidated),
			 {{2, 4}, {1, 2}}));
	assert_true(free_of(m, 3) == std::vector<int>({3, 0, 0}));
	assert_int_equal(m.free_total(), 3);
}

/* Test answers without taking; Commit takes the very same shares. */
static void test_test_then_commit(void **)
{
	Cluster c = cluster(2, 4);
	FreeMap m(c);
	occupy(m, {3, 0});
	for (int s = 0; s <= (int)PlacementScheme::Count; s++) {
		auto t = m.place(2, (PlacementScheme)s, PlaceMode::Test);
		assert_true(t.has_value());
		assert_int_equal(m.free_total(), 5);
		assert_true(free_of(m, 2) == std::vector<int>({1, 4}));
		auto p = m.place(2, (PlacementScheme)s, PlaceMode::Commit);
		assert_true(p == t);
		assert_int_equal(m.free_total(), 3);
		m.release(*p);
		assert_int_equal(m.free_total(), 5);
		assert_true(free_of(m, 2) == std::vector<int>({1, 4}));
	}
}

/* Refusals leave the map unchanged: more than is free (every scheme), and
 * fragmentation that only consolidated can span.  2 x 4 GPUs with 2 free
 * on each node: first-fit and best-fit want one node with 4 free. */
static void test_failure_leaves_map(void **)
{
	Cluster c = cluster(2, 4);
	FreeMap m(c);
	occupy(m, {2, 2});
	for (int s = 0; s <= (int)PlacementScheme::Count; s++) {
		assert_false(m.place(5, (PlacementScheme)s).has_value());
		assert_false(m.place(0, (PlacementScheme)s).has_value());
		assert_false(m.place(-1, (PlacementScheme)s).has_value());
	}
	assert_false(m.place(4, PlacementScheme::FirstFit).has_value());
	assert_false(m.place(4, PlacementScheme::BestFit).has_value());
	assert_true(free_of(m, 2) == std::vector<int>({2, 2}));
	assert_int_equal(m.free_total(), 4);
	assert_true(same(m.place(4, PlacementScheme::Consolidated),
			 {{0, 2}, {1, 2}}));
	assert_int_equal(m.free_total(), 0);
}

/* Yarn: 4 x 4 GPUs, n1 has 3 free.  3 GPUs: the first node with room
 * (n0).  9 GPUs: two whole free nodes in index order (n0, n2; n1 is not
 * whole), then the first other node with 1 free (n1). */
static void test_first_fit(void **)
{
	Cluster c = cluster(4, 4);
	FreeMap m(c);
	occupy(m, {0, 1, 0, 0});
	assert_true(same(m.place(3, PlacementScheme::FirstFit,
				 PlaceMode::Test),
			 {{0, 3}}));
	assert_true(same(m.place(9, PlacementScheme::FirstFit),
			 {{0, 4}, {2, 4}, {1, 1}}));
	/* Left: n1 2, n3 4.  Six: the one whole node n3, then n1 for 2. */
	assert_true(same(m.place(6, PlacementScheme::FirstFit, PlaceMode::Test),
			 {{3, 4}, {1, 2}}));
	/* Five: whole n3, then the first node with 1 free, n1. */
	assert_true(same(m.place(5, PlacementScheme::FirstFit, PlaceMode::Test),
			 {{3, 4}, {1, 1}}));
	assert_int_equal(m.free_total(), 6);
}

/* Lucid: free 4 / 3 / 1 / 4.  Narrow jobs go to the node with the least
 * room that holds them (1 -> n2, 2 -> n1).  Wide: whole free nodes in
 * descending free order, remainder on the next node with room: 6 ->
 * n0:4 + n3:2; 8 -> n0 + n3; 12 needs a third whole node and n1 is not
 * whole, so it is refused although 12 are free. */
static void test_best_fit(void **)
{
	Cluster c = cluster(4, 4);
	FreeMap m(c);
	occupy(m, {0, 1, 3, 0});
	assert_true(same(m.place(1, PlacementScheme::BestFit, PlaceMode::Test),
			 {{2, 1}}));
	assert_true(same(m.place(2, PlacementScheme::BestFit, PlaceMode::Test),
			 {{1, 2}}));
	assert_true(same(m.place(6, PlacementScheme::BestFit, PlaceMode::Test),
			 {{0, 4}, {3, 2}}));
	assert_true(same(m.place(8, PlacementScheme::BestFit, PlaceMode::Test),
			 {{0, 4}, {3, 4}}));
	assert_int_equal(m.free_total(), 12);
	assert_false(m.place(12, PlacementScheme::BestFit).has_value());
	assert_true(free_of(m, 4) == std::vector<int>({4, 3, 1, 4}));
}

/* A global counter: one share on node -1, no node's count changes. */
static void test_count(void **)
{
	Cluster c = cluster(2, 4);
	FreeMap m(c);
	auto p = m.place(5, PlacementScheme::Count);
	assert_true(same(p, {{-1, 5}}));
	assert_int_equal(m.free_total(), 3);
	assert_true(free_of(m, 2) == std::vector<int>({4, 4}));
	assert_false(m.place(4, PlacementScheme::Count).has_value());
	m.release(*p);
	assert_int_equal(m.free_total(), 8);
}

static void test_take_release(void **)
{
	Cluster c = cluster(2, 4);
	FreeMap m(c);
	assert_true(m.take({{0, 2}, {1, 1}}, PlaceMode::Test));
	assert_int_equal(m.free_total(), 8);
	assert_true(m.take({{0, 2}, {1, 1}}));
	assert_true(free_of(m, 2) == std::vector<int>({2, 3}));
	/* Too many on a node, twice the same node beyond its room, a node
	 * that does not exist, a negative share: refused, nothing taken. */
	assert_false(m.take({{1, 1}, {0, 3}}));
	assert_false(m.take({{0, 2}, {0, 1}}));
	assert_false(m.take({{2, 1}}));
	assert_false(m.take({{0, -1}, {1, 3}}));
	assert_true(free_of(m, 2) == std::vector<int>({2, 3}));
	assert_int_equal(m.free_total(), 5);
	assert_true(m.take({{1, 1}, {1, 2}}));
	assert_int_equal(m.free_on(1), 0);
	m.release({{0, 2}, {1, 1}});
	m.release({{1, 1}, {1, 2}});
	assert_int_equal(m.free_total(), 8);
	m.reset();
	assert_int_equal(m.free_total(), 8);
}

/* Two leaf switches of two 4-GPU nodes: s0 = n0 (3 free), n1 (0 free);
 * s1 = n2 (2), n3 (2).  Four GPUs: consolidated takes n0:3 + n2:1 and
 * spans both switches; switch-aware finds s1 holds 4 and stays there.
 * Two GPUs: switch-aware tries the tightest switch first (s0, 3 free):
 * n0.  Six fit in no switch: spread from the emptiest switch. */
static void test_switch_aware_prefers_one_switch(void **)
{
	Cluster c = cluster(4, 4, 2);
	FreeMap m(c);
	occupy(m, {1, 4, 2, 2});
	assert_true(same(m.place(4, PlacementScheme::Consolidated,
				 PlaceMode::Test),
			 {{0, 3}, {2, 1}}));
	assert_true(same(m.place(4, PlacementScheme::SwitchAware,
				 PlaceMode::Test),
			 {{2, 2}, {3, 2}}));
	assert_true(same(m.place(2, PlacementScheme::SwitchAware,
				 PlaceMode::Test),
			 {{0, 2}}));
	assert_true(same(m.place(6, PlacementScheme::SwitchAware),
			 {{2, 2}, {3, 2}, {0, 2}}));
	assert_int_equal(m.free_total(), 1);
}

/* Without switches switch-aware is consolidated; nodes under no leaf
 * switch (a partial topology.conf) are still used when spreading. */
static void test_switch_aware_partial_topology(void **)
{
	Cluster flat = cluster(2, 4);
	FreeMap f(flat);
	assert_true(same(f.place(6, PlacementScheme::SwitchAware),
			 {{0, 4}, {1, 2}}));

	Cluster c = cluster(3, 4);
	Switch s;
	s.name = "s0";
	s.nodes = {0};
	c.switches.push_back(s);
	c.nodes[0].switch_id = 0;
	FreeMap m(c);
	assert_true(same(m.place(8, PlacementScheme::SwitchAware),
			 {{0, 4}, {1, 4}}));
	assert_int_equal(m.free_total(), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scheme_names),
		cmocka_unit_test(test_consolidated),
		cmocka_unit_test(test_test_then_commit),
		cmocka_unit_test(test_failure_leaves_map),
		cmocka_unit_test(test_first_fit),
		cmocka_unit_test(test_best_fit),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_take_release),
		cmocka_unit_test(test_switch_aware_prefers_one_switch),
		cmocka_unit_test(test_switch_aware_partial_topology),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
