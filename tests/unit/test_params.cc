/*
 * test_params.cc - Key=Value parsing and the typed getters: values, the
 * defaults they fall back to, and errors that name key, value and rule.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>

#include "core/params.h"

#include "tests/unit/unit.h"

using namespace tidal;

static bool has_error(const Params &p, const char *needle)
{
	for (const std::string &e : p.errors())
		if (e.find(needle) != std::string::npos)
			return true;
	return false;
}

/* Pairs on one line or several, '#' comments, keys case-insensitive. */
static void test_parse_pairs_and_comments(void **)
{
	Params p = Params::parse("A=1 b=two\n# all comment\n\nCee=x#tail\n"
				 "Path=/a=b\n",
				 "t.conf");
	assert_true(p.errors().empty());
	assert_true(p.has("a") && p.has("A") && p.has("B") && p.has("cee"));
	assert_string_equal(p.get_str("a", "").c_str(), "1");
	assert_string_equal(p.get_str("B", "").c_str(), "two");
	assert_string_equal(p.get_str("CEE", "").c_str(), "x");
	/* Only the first '=' splits. */
	assert_string_equal(p.get_str("path", "").c_str(), "/a=b");
	assert_string_equal(p.get_str("missing", "dflt").c_str(), "dflt");
	assert_int_equal(p.items().size(), 4);
}

/* A word without '=' or with an empty key is reported with origin:line. */
static void test_parse_errors_name_line(void **)
{
	Params p = Params::parse("Good=1\nbare Also=2\n=5\n", "my.conf");
	assert_int_equal(p.errors().size(), 2);
	assert_string_equal(p.errors()[0].c_str(),
			    "my.conf:2: 'bare' is not Key=Value");
	assert_string_equal(p.errors()[1].c_str(),
			    "my.conf:3: '=5' is not Key=Value");
	assert_string_equal(p.get_str("also", "").c_str(), "2");
}

/* Later pairs override earlier ones, in a file and through merge(). */
static void test_override_and_merge(void **)
{
	Params a = Params::parse("K=1 K=2", "a");
	assert_string_equal(a.get_str("k", "").c_str(), "2");
	Params b = Params::parse("k=3 Other=4 oops", "b");
	a.merge(b);
	assert_string_equal(a.get_str("K", "").c_str(), "3");
	assert_string_equal(a.get_str("other", "").c_str(), "4");
	assert_true(has_error(a, "b:1: 'oops'"));
}

static void test_get_double(void **)
{
	Params p;
	p.set("Ok", "2.5");
	p.set("Big", "11");
	p.set("Word", "fast");
	p.set("Inf", "inf");
	assert_true(p.get_double("ok", 1, 0, 10) == 2.5);
	assert_true(p.get_double("absent", 1, 0, 10) == 1);
	assert_true(p.errors().empty());
	/* Out of range / not a number: the default, and an error naming the
	 * key, the value and the rule. */
	assert_true(p.get_double("Big", 1, 0, 10) == 1);
	assert_true(has_error(p, "Big=11: must be a number in [0, 10]; "
				 "using the default 1"));
	assert_true(p.get_double("Word", 3, 0, 10) == 3);
	assert_true(has_error(p, "Word=fast"));
	assert_true(p.get_double("Inf", 3, 0, 1e300) == 3);
	assert_int_equal(p.errors().size(), 3);
}

static void test_get_long(void **)
{
	Params p;
	p.set("N", "42");
	p.set("Frac", "1.5");
	p.set("Neg", "-3");
	p.set("Empty", "");
	assert_int_equal(p.get_long("n", 0, 0, 100), 42);
	assert_int_equal(p.get_long("Frac", 7, 0, 100), 7);
	assert_true(has_error(p, "Frac=1.5: must be an integer in [0, 100]"));
	assert_int_equal(p.get_long("Neg", 7, 0, 100), 7);
	assert_int_equal(p.get_long("Neg", 7, -5, 100), -3);
	assert_int_equal(p.get_long("Empty", 9, 0, 100), 9);
	assert_int_equal(p.errors().size(), 3);
}

static void test_get_bool(void **)
{
	Params p = Params::parse("a=yes b=No c=TRUE d=false e=1 f=0 g=on "
				 "h=off i=maybe",
				 "");
	assert_true(p.get_bool("a", false));
	assert_false(p.get_bool("b", true));
	assert_true(p.get_bool("c", false));
	assert_false(p.get_bool("d", true));
	assert_true(p.get_bool("e", false));
	assert_false(p.get_bool("f", true));
	assert_true(p.get_bool("g", false));
	assert_false(p.get_bool("h", true));
	assert_true(p.errors().empty());
	assert_true(p.get_bool("i", true));
	assert_true(has_error(p, "i=maybe: must be yes or no; using the "
				 "default yes"));
	assert_false(p.get_bool("absent", false));
}

static void test_get_list(void **)
{
	Params p;
	p.set("T", "3600, 7200,1e4");
	p.set("Empty", "");
	p.set("Hole", "1,,2");
	p.set("Trailing", "1,2,");
	p.set("Word", "1,x");
	p.set("Range", "1,-2");
	std::vector<double> def = {9};
	std::vector<double> t = p.get_list("t", def, 0, 1e9);
	assert_int_equal(t.size(), 3);
	assert_true(t[0] == 3600 && t[1] == 7200 && t[2] == 10000);
	assert_int_equal(p.get_list("Empty", def, 0, 1).size(), 0);
	assert_true(p.get_list("absent", def, 0, 1) == def);
	assert_true(p.errors().empty());
	for (const char *k : {"Hole", "Trailing", "Word", "Range"})
		assert_true(p.get_list(k, def, 0, 100) == def);
	assert_int_equal(p.errors().size(), 4);
	assert_true(has_error(p, "Range=1,-2: must be a comma separated list "
				 "of numbers in [0, 100]"));
	assert_true(has_error(p, "Trailing=1,2,:"));
}

/* Choices match case-insensitively and come back in their own spelling. */
static void test_get_choice(void **)
{
	Params p = Params::parse("Placement=Switch-Aware Bad=diagonal", "cfg");
	std::vector<std::string> ch = {"consolidated", "switch-aware"};
	assert_string_equal(
		p.get_choice("placement", "consolidated", ch).c_str(),
		"switch-aware");
	assert_string_equal(p.get_choice("Bad", "consolidated", ch).c_str(),
			    "consolidated");
	assert_true(has_error(p, "cfg: Bad=diagonal: must be one of "
				 "consolidated, switch-aware; using the "
				 "default consolidated"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_pairs_and_comments),
		cmocka_unit_test(test_parse_errors_name_line),
		cmocka_unit_test(test_override_and_merge),
		cmocka_unit_test(test_get_double),
		cmocka_unit_test(test_get_long),
		cmocka_unit_test(test_get_bool),
		cmocka_unit_test(test_get_list),
		cmocka_unit_test(test_get_choice),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
