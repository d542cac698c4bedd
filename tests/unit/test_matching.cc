/*
 * test_matching.cc - maximum-weight general matching (core/solvers/matching.h):
 * both matchers against brute force on small random graphs (fixed seed),
 * and hand-made graphs whose best matching is worked out here.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>
#include <random>

#include "core/solvers/matching.h"
#include "tests/unit/unit.h"

using namespace tidal;

/* The best total weight over all matchings, by trying every choice for
 * the lowest unmatched vertex (leave it single, or pair it). */
static double brute(int n, const std::vector<std::vector<double>> &w,
		    std::vector<char> &used, int from)
{
	while (from < n && used[from])
		from++;
	if (from >= n)
		return 0;
	used[from] = 1;
	double best = brute(n, w, used, from + 1);
	for (int v = from + 1; v < n; v++)
		if (!used[v] && w[from][v] > 0) {
			used[v] = 1;
			best = std::max(best,
					w[from][v] + brute(n, w, used, from + 1));
			used[v] = 0;
		}
	used[from] = 0;
	return best;
}

/* MATE must be symmetric and use only edges. */
static void assert_valid(const std::vector<int> &mate,
			 const std::vector<std::vector<double>> &w)
{
	for (size_t u = 0; u < mate.size(); u++) {
		int v = mate[u];
		if (v < 0)
			continue;
		assert_int_equal(mate[v], (int)u);
		assert_true(w[u][v] > 0);
	}
}

static void check_random(Matcher m)
{
	std::mt19937 rng(20260522);
	for (int round = 0; round < 300; round++) {
		int n = 1 + (int)(rng() % 10);
		std::vector<std::vector<double>> w(n, std::vector<double>(n));
		std::vector<WeightedEdge> edges;
		/* small integer weights make many ties; some rounds real */
		bool ties = round % 2 == 0;
		for (int u = 0; u < n; u++)
			for (int v = u + 1; v < n; v++) {
				if (rng() % 3 == 0)
					continue;
				double x = ties ? 1 + rng() % 3
						: 0.05 + (rng() % 1000) / 1000.0;
				w[u][v] = w[v][u] = x;
				edges.push_back({u, v, x});
			}
		std::vector<int> mate = max_weight_matching(n, edges, m);
		assert_int_equal((int)mate.size(), n);
		assert_valid(mate, w);
		std::vector<char> used(n, 0);
		double want = brute(n, w, used, 0);
		double got = matching_weight(mate, edges);
		if (std::fabs(got - want) > 1e-9 * std::max(1.0, want))
			fail_msg("round %d n %d: weight %.9f, best %.9f",
				 round, n, got, want);
	}
}

static void test_lemon_random(void **) { check_random(Matcher::Lemon); }
static void test_anchor_random(void **) { check_random(Matcher::Anchor); }

/*
 * A path 0-1-2-3 with weights 2, 3, 2: the middle edge alone weighs 3, the
 * two outer ones 4, so the best matching is {0-1, 2-3} although the
 * greedy heaviest-edge-first choice would take 1-2.  A triangle 0-1-2 of
 * weight-5 edges with a pendant 2-3 of weight 0.1: only 0-1 with 2-3
 * reaches 5.1, every other matching weighs 5.
 */
static void test_hand_made(void **)
{
	for (Matcher m : {Matcher::Lemon, Matcher::Anchor}) {
		std::vector<int> mate = max_weight_matching(
			4, {{0, 1, 2}, {1, 2, 3}, {2, 3, 2}}, m);
		assert_int_equal(mate[0], 1);
		assert_int_equal(mate[2], 3);
		mate = max_weight_matching(
			4, {{0, 1, 5}, {1, 2, 5}, {0, 2, 5}, {2, 3, 0.1}}, m);
		assert_int_equal(mate[0], 1);
		assert_int_equal(mate[2], 3);
		/* no edges: nobody is matched */
		mate = max_weight_matching(3, {}, m);
		assert_int_equal(mate[0], -1);
		assert_int_equal(mate[2], -1);
	}
	Matcher m;
	assert_true(matcher_from_name("Anchor", &m) && m == Matcher::Anchor);
	assert_false(matcher_from_name("boost", &m));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lemon_random),
		cmocka_unit_test(test_anchor_random),
		cmocka_unit_test(test_hand_made),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
