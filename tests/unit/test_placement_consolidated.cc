/*
 * test_placement_consolidated.cc - FreeMap's consolidated scheme, which
 * finds nodes through an index by free count, against hand-worked maps and
 * against a plain scan over every node (the definition in placement.h) on
 * many random maps.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <numeric>

#include "core/placement/placement.h"

#include "tests/unit/unit.h"

using namespace tidal;
using namespace tidal::test;

/* Nodes of PER GPUs with FREE[i] free on node i. */
static FreeMap with_free(const Cluster &c, const std::vector<int> &free)
{
	FreeMap m(c);
	for (int n = 0; n < (int)free.size(); n++)
		if (free[n] < c.nodes[n].gpus)
			assert_true(m.take({{n, c.nodes[n].gpus - free[n]}}));
	return m;
}

/* The definition, by scanning: tightest single node (lowest index on
 * ties); else emptiest nodes first (stable by index), the remainder on the
 * tightest unused node that holds it. */
static std::optional<Placement> by_scan(const std::vector<int> &free, int gpus)
{
	int best = -1;
	for (int n = 0; n < (int)free.size(); n++)
		if (free[n] >= gpus && (best < 0 || free[n] < free[best]))
			best = n;
	if (best >= 0)
		return Placement{{best, gpus}};
	std::vector<int> order(free.size());
	std::iota(order.begin(), order.end(), 0);
	std::stable_sort(order.begin(), order.end(),
			 [&](int a, int b) { return free[a] > free[b]; });
	std::vector<bool> used(free.size(), false);
	Placement p;
	int left = gpus;
	for (int n : order) {
		if (free[n] == 0)
			break;
		if (free[n] >= left) {
			int tight = n;
			for (int m : order)
				if (!used[m] && free[m] >= left &&
				    free[m] < free[tight])
					tight = m;
			p.push_back({tight, left});
			return p;
		}
		p.push_back({n, free[n]});
		used[n] = true;
		left -= free[n];
	}
	return std::nullopt;
}

static void assert_same(const std::optional<Placement> &got,
			const std::optional<Placement> &want)
{
	assert_int_equal(got.has_value(), want.has_value());
	if (!want)
		return;
	assert_int_equal(got->size(), want->size());
	for (size_t i = 0; i < want->size(); i++) {
		assert_int_equal((*got)[i].node, (*want)[i].node);
		assert_int_equal((*got)[i].gpus, (*want)[i].gpus);
	}
}

/* Free [3, 8, 5, 5]: 4 GPUs go to n2 (5 is the smallest count that holds
 * 4, n2 before n3); 3 GPUs to n0; 6 to n1. */
static void test_single_node_tightest_lowest(void **)
{
	Cluster c = cluster(4, 8);
	FreeMap m = with_free(c, {3, 8, 5, 5});
	auto cons = PlacementScheme::Consolidated;
	assert_same(m.place(4, cons, PlaceMode::Test), Placement{{2, 4}});
	assert_same(m.place(3, cons, PlaceMode::Test), Placement{{0, 3}});
	assert_same(m.place(6, cons, PlaceMode::Test), Placement{{1, 6}});
}

/* Free [6, 2, 7, 3, 6]; no node holds 12, so the emptiest go first:
 * n2 (7), then 5 are left and n0 (6) holds them; the tightest unused node
 * holding 5 is n0 (n4 also has 6 but comes later).  13: n2 7 + n0 6. */
static void test_spread_emptiest_then_tightest(void **)
{
	Cluster c = cluster(5, 8);
	FreeMap m = with_free(c, {6, 2, 7, 3, 6});
	auto cons = PlacementScheme::Consolidated;
	assert_same(m.place(12, cons, PlaceMode::Test),
		    Placement{{2, 7}, {0, 5}});
	assert_same(m.place(13, cons, PlaceMode::Test),
		    Placement{{2, 7}, {0, 6}});
	/* 16: n2 7, n0 6, then 3 are left: n3 (3) is tighter than n4. */
	assert_same(m.place(16, cons, PlaceMode::Test),
		    Placement{{2, 7}, {0, 6}, {3, 3}});
	assert_same(m.place(25, cons, PlaceMode::Test), std::nullopt);
}

/* Commit and release keep the index in step with the counts. */
static void test_commit_and_release(void **)
{
	Cluster c = cluster(3, 8);
	FreeMap m(c);
	auto cons = PlacementScheme::Consolidated;
	auto a = m.place(5, cons);
	assert_same(a, Placement{{0, 5}});
	assert_same(m.place(3, cons, PlaceMode::Test), Placement{{0, 3}});
	m.release(*a);
	assert_same(m.place(3, cons, PlaceMode::Test), Placement{{0, 3}});
	assert_int_equal(m.free_on(0), 8);
	assert_int_equal(m.free_total(), 24);
}

/* Random maps (xorshift, fixed seed), mixed node sizes, against the
 * scan. */
static void test_random_against_scan(void **)
{
	std::uint64_t x = 88172645463325252ull;
	auto next = [&](int mod) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		return (int)(x % (std::uint64_t)mod);
	};
	for (int round = 0; round < 400; round++) {
		int nodes = 1 + next(150);
		Cluster c = cluster(nodes, 8);
		for (Node &n : c.nodes)
			if (next(5) == 0)
				n.gpus = 4;
		std::vector<int> free;
		for (const Node &n : c.nodes)
			free.push_back(next(4) == 0 ? n.gpus : next(n.gpus + 1));
		FreeMap m = with_free(c, free);
		for (int k = 0; k < 20; k++) {
			int g = 1 + next(40);
			auto want = g > m.free_total() ? std::nullopt
						       : by_scan(free, g);
			auto got = m.place(g, PlacementScheme::Consolidated);
			assert_same(got, want);
			if (got)
				for (const NodeShare &s : *got)
					free[s.node] -= s.gpus;
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_node_tightest_lowest),
		cmocka_unit_test(test_spread_emptiest_then_tightest),
		cmocka_unit_test(test_commit_and_release),
		cmocka_unit_test(test_random_against_scan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
