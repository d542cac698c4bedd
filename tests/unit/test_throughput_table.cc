/*
 * test_throughput_table.cc - parsing and level walks of per-model
 * throughput tables (ElasticFlow's throughputs_<gpu>/<model>.csv form).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/profiles/throughput_table.h"

#include "tests/unit/unit.h"

using namespace tidal;

static const char *kBert =
	"global_batch_size,1,2,4,8\r\n"
	"64,6.5,8.25,10,nan\r\n"
	"128,3.5,5.5,,9\r\n";

static ThroughputTable bert()
{
	ThroughputTable t;
	std::string err;
	assert_true(t.parse_csv("bert", "bert.csv", kBert, &err));
	return t;
}

/* Exact lookups; no interpolation between or beyond the columns. */
static void test_lookup_exact(void **)
{
	ThroughputTable t = bert();
	assert_true(t.lookup("bert", 64, 2) == 8.25);
	assert_true(t.lookup("bert", 128, 8) == 9);
	assert_true(std::isnan(t.lookup("bert", 64, 3)));  /* no column */
	assert_true(std::isnan(t.lookup("bert", 64, 16))); /* beyond */
	assert_true(std::isnan(t.lookup("bert", 64, 8)));  /* "nan" */
	assert_true(std::isnan(t.lookup("bert", 128, 4))); /* empty */
	assert_true(std::isnan(t.lookup("bert", 96, 1)));  /* no row */
	assert_true(std::isnan(t.lookup("gpt2", 64, 1)));  /* no model */
	assert_true(t.has_model("bert"));
	assert_null(t.row("bert", 32));
}

/* Levels: next_level walks right within max_gpu and stays put at the end;
 * last_level(g) is the largest column below g; max_listed skips "nan"
 * but not empty cells (ElasticFlow's rule). */
static void test_levels(void **)
{
	ThroughputTable t = bert();
	const ThroughputRow *r = t.row("bert", 64);
	assert_non_null(r);
	assert_int_equal(r->next_level(0, 8), 1);
	assert_int_equal(r->next_level(1, 8), 2);
	assert_int_equal(r->next_level(4, 8), 8);
	assert_int_equal(r->next_level(4, 4), 4);
	assert_int_equal(r->next_level(8, 8), 8);
	assert_int_equal(r->last_level(1, 8), 0);
	assert_int_equal(r->last_level(4, 8), 2);
	assert_int_equal(r->last_level(7 + 1, 8), 4); /* largest <= 7 free */
	assert_int_equal(r->last_level(100, 2), 2);
	assert_int_equal(r->max_listed(), 4);
	assert_int_equal(t.row("bert", 128)->max_listed(), 8);
	assert_true(r->is_level(4));
	assert_false(r->is_level(3));
}

static void expect_error(const char *text, const char *want)
{
	ThroughputTable t;
	std::string err;
	assert_false(t.parse_csv("m", "m.csv", text, &err));
	if (!strstr(err.c_str(), want)) {
		std::fprintf(stderr, "got '%s', want '%s'\n", err.c_str(), want);
		assert_true(false);
	}
}

/* Errors name the file and line and say what is wrong. */
static void test_errors(void **)
{
	expect_error("batch,1,2\n64,1,2\n", "m.csv:1: header");
	expect_error("global_batch_size,1,4,2\n", "m.csv:1: column '2'");
	expect_error("global_batch_size,1,2\n64,1,2\n128,1\n",
		     "m.csv:3: expected a batch size and 2 throughputs");
	expect_error("global_batch_size,1,2\n64,1,fast\n",
		     "m.csv:2: throughput 'fast'");
	expect_error("", "m.csv:1: empty");
}

/* load_dir: one table per <model>.csv, named by the file's stem. */
static void test_load_dir(void **)
{
	namespace fs = std::filesystem;
	fs::path dir = fs::temp_directory_path() /
		       ("tidal-tt-" + std::to_string(getpid()));
	fs::create_directories(dir);
	std::ofstream(dir / "bert.csv") << kBert;
	std::ofstream(dir / "notes.txt") << "ignored";
	ThroughputTable t;
	std::string err;
	assert_true(t.load_dir(dir.string(), &err));
	assert_true(t.lookup("bert", 128, 1) == 3.5);
	assert_false(t.has_model("notes"));
	std::ofstream(dir / "bad.csv") << "x\n";
	assert_false(t.load_dir(dir.string(), &err));
	assert_non_null(strstr(err.c_str(), "bad.csv:1:"));
	fs::remove_all(dir);
	assert_false(t.load_dir(dir.string(), &err));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup_exact),
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_load_dir),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
