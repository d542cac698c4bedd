/*
 * test_suggest.cc - "did you mean": edit distance with swaps, case
 * ignored, the nearest close candidate or none.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/model/suggest.h"

#include <algorithm>
#include <cctype>

#include "tests/unit/unit.h"

using namespace tidal;

static void test_edit_distance(void **)
{
	assert_int_equal(edit_distance("", ""), 0);
	assert_int_equal(edit_distance("abc", ""), 3);
	assert_int_equal(edit_distance("", "abc"), 3);
	assert_int_equal(edit_distance("kitten", "sitting"), 3);
	/* Case does not count; a swap of neighbours is one edit. */
	assert_int_equal(edit_distance("FIFO", "fifo"), 0);
	assert_int_equal(edit_distance("muir", "muri"), 1);
	assert_int_equal(edit_distance("Tiresias.Treshold",
				       "Tiresias.Thresholds"), 2);
}

/* Optimal string alignment over the whole matrix, case folded: what the
 * banded, bounded edit_distance must agree with. */
static size_t reference_distance(const std::string &a, const std::string &b)
{
	size_t n = a.size(), m = b.size();
	std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
	auto f = [](char c) { return (char)std::tolower((unsigned char)c); };
	for (size_t i = 0; i <= n; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			d[i][j] = std::min({ d[i - 1][j] + 1, d[i][j - 1] + 1,
					     d[i - 1][j - 1] +
						     (f(a[i - 1]) == f(b[j - 1])
							      ? 0
							      : 1) });
			if (i > 1 && j > 1 && f(a[i - 1]) == f(b[j - 2]) &&
			    f(a[i - 2]) == f(b[j - 1]))
				d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
		}
	return d[n][m];
}

/* A bound changes nothing but the cost: the distance, or the bound plus
 * one where the distance is larger.  Checked against the whole-matrix
 * distance on many short words over a small alphabet, where swaps and
 * far pairs are common. */
static void test_edit_distance_bounded(void **)
{
	unsigned seed = 12345;
	auto next = [&seed]() {
		seed = seed * 1103515245u + 12345u;
		return (seed >> 16) & 0x7fff;
	};
	auto word = [&next]() {
		std::string w(next() % 13, 'a');
		for (char &c : w)
			c = (char)((next() % 4 ? 'a' : 'A') + next() % 3);
		return w;
	};
	for (int k = 0; k < 5000; k++) {
		std::string a = word(), b = word();
		size_t d = edit_distance(a, b);
		assert_int_equal(d, reference_distance(a, b));
		for (size_t bound = 0; bound <= 13; bound++)
			assert_int_equal(edit_distance(a, b, bound),
					 std::min(d, bound + 1));
	}
	assert_int_equal(edit_distance(std::string(5000, 'x'), "fifo", 3), 4);
}

/* The typos of the issue find what was meant, spelled as the candidate. */
static void test_nearest_finds_typos(void **)
{
	std::vector<std::string> keys = {"Tiresias.Order",
					 "Tiresias.Thresholds", "Placement",
					 "Preemptive"};
	assert_string_equal(nearest("Tiresias.Treshold", keys).c_str(),
			    "Tiresias.Thresholds");
	assert_string_equal(nearest("tiresias.thresholds", keys).c_str(),
			    "Tiresias.Thresholds");
	assert_string_equal(nearest("Placment", keys).c_str(), "Placement");
	/* A key without its prefix finds the dotted one. */
	assert_string_equal(nearest("Thresholds", keys).c_str(),
			    "Tiresias.Thresholds");
	std::vector<std::string> presets = {"tidal", "muri", "elasticflow",
					    "lucid", "pollux", "gavel"};
	assert_string_equal(nearest("muir", presets).c_str(), "muri");
	assert_string_equal(nearest("elasticflw", presets).c_str(),
			    "elasticflow");
}

/* Far words get no guess: a wrong guess misleads more than none. */
static void test_nearest_refuses_far_words(void **)
{
	std::vector<std::string> policies = {"fifo", "sjf", "srtf", "tiresias"};
	assert_string_equal(nearest("xyz", policies).c_str(), "");
	assert_string_equal(nearest("backfill", policies).c_str(), "");
	assert_string_equal(nearest("", policies).c_str(), "");
	assert_string_equal(nearest("fifo", {}).c_str(), "");
	/* Short words allow one edit. */
	assert_string_equal(nearest("sjg", policies).c_str(), "sjf");
	assert_string_equal(nearest("sxg", policies).c_str(), "");
}

/* Ties go to the first candidate, so messages do not change run to run. */
static void test_nearest_ties_and_wording(void **)
{
	assert_string_equal(nearest("srsf", {"srtf", "srsg"}).c_str(), "srtf");
	assert_string_equal(nearest("srsf", {"srsg", "srtf"}).c_str(), "srsg");
	assert_string_equal(did_you_mean("fifi", {"fifo"}).c_str(),
			    " (did you mean fifo?)");
	assert_string_equal(did_you_mean("zzzz", {"fifo"}).c_str(), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edit_distance),
		cmocka_unit_test(test_edit_distance_bounded),
		cmocka_unit_test(test_nearest_finds_typos),
		cmocka_unit_test(test_nearest_refuses_far_words),
		cmocka_unit_test(test_nearest_ties_and_wording),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
