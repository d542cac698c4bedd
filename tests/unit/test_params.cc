/*
 * test_params.cc - Key=Value parsing and the typed getters: values, the
 * defaults they fall back to, errors that name key, value and rule, and
 * the keys nobody asked for.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>

#include "core/model/params.h"

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
	assert_true(has_error(p, "Big=11: must be a number in [0, 10]"));
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
	assert_true(has_error(p, ":1: i=maybe: must be yes or no"));
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
	assert_string_equal(p.errors()[0].c_str(),
			    "cfg:1: Bad=diagonal: must be one of "
			    "consolidated, switch-aware");
}

/* errors() never says "using the default": tidal-sim stops on them.
 * errors_using_defaults() says what a caller that goes on (the plugin)
 * did instead. */
static void test_errors_with_and_without_fallback(void **)
{
	Params p = Params::parse("N=abc\nbare\nT=1,x\nL=0\n", "tidal.conf");
	p.get_long("n", 5, 0, 10);
	p.get_list("t", {3250, 7200}, 0, 1e9);
	p.get_list("l", {}, 1, 2);
	assert_int_equal(p.errors().size(), 4);
	for (const std::string &e : p.errors())
		assert_null(strstr(e.c_str(), "default"));
	std::vector<std::string> go_on = p.errors_using_defaults();
	assert_int_equal(go_on.size(), 4);
	assert_string_equal(go_on[0].c_str(),
			    "tidal.conf:2: 'bare' is not Key=Value; ignored");
	assert_string_equal(go_on[1].c_str(),
			    "tidal.conf:1: N=abc: must be an integer in "
			    "[0, 10]; using the default 5");
	assert_string_equal(go_on[2].c_str(),
			    "tidal.conf:3: T=1,x: must be a comma separated "
			    "list of numbers in [0, 1e+09]; using the default "
			    "3250,7200");
	assert_string_equal(go_on[3].c_str(),
			    "tidal.conf:4: L=0: must be a comma separated "
			    "list of numbers in [1, 2]; using the default (an "
			    "empty list)");
}

/* A pair names where it came from: a file and line, or an option written
 * as on the command line; the key as the user spelled it. */
static void test_errors_name_origin(void **)
{
	Params p = Params::parse("Placement=nowhere", "x.conf");
	p.set("tiresias.THRESHOLDS", "abc", "--param");
	p.set("Tidal.RestartOverhead", "-5", "--param");
	p.get_choice("placement", "consolidated",
		     {"consolidated", "best-fit"});
	p.get_list("Tiresias.Thresholds", {1}, 0, 1e18);
	p.get_double("Tidal.RestartOverhead", 30, 0, 86400);
	assert_int_equal(p.errors().size(), 3);
	assert_string_equal(p.errors()[0].c_str(),
			    "x.conf:1: Placement=nowhere: must be one of "
			    "consolidated, best-fit");
	assert_string_equal(p.errors()[1].c_str(),
			    "--param tiresias.THRESHOLDS=abc: must be a comma "
			    "separated list of numbers in [0, 1e+18]");
	assert_string_equal(p.errors()[2].c_str(),
			    "--param Tidal.RestartOverhead=-5: must be a "
			    "number in [0, 86400]");
	/* A near choice is suggested. */
	p.set("Placement", "best-fti", "--param");
	p.get_choice("Placement", "consolidated", {"consolidated", "best-fit"});
	assert_true(has_error(p, "best-fit (did you mean best-fit?)"));
}

/* A value the caller checks itself is reported like the getters' own. */
static void test_invalid(void **)
{
	Params p;
	p.set("Dir", "/nowhere", "--param");
	p.invalid("dir", "no tables there", "every job is held");
	p.invalid("Absent", "never reported", "");
	assert_int_equal(p.errors().size(), 1);
	assert_string_equal(p.errors()[0].c_str(),
			    "--param Dir=/nowhere: no tables there");
	assert_string_equal(p.errors_using_defaults()[0].c_str(),
			    "--param Dir=/nowhere: no tables there; every job "
			    "is held");
}

/* Keys set but never asked for are listed, with the nearest asked-for
 * key; has() and every getter count as asking, whatever the case. */
static void test_unused_keys(void **)
{
	Params p = Params::parse("Tiresias.Treshold=5 PLACEMENT=count", "c");
	p.set("Other.Key", "1", "--param");
	p.set("Preemptive", "yes");
	assert_int_equal(p.unused().size(), 4);
	p.get_list("Tiresias.Thresholds", {}, 0, 1e18);
	p.get_choice("placement", "consolidated", {"count", "consolidated"});
	p.has("preemptive");
	std::vector<Params::Unused> u = p.unused();
	assert_int_equal(u.size(), 2);
	assert_string_equal(u[0].key.c_str(), "Other.Key");
	assert_string_equal(u[0].pair.c_str(), "--param Other.Key=1");
	assert_string_equal(u[0].suggestion.c_str(), "");
	assert_string_equal(u[1].key.c_str(), "Tiresias.Treshold");
	assert_string_equal(u[1].value.c_str(), "5");
	assert_string_equal(u[1].pair.c_str(), "c:1: Tiresias.Treshold=5");
	assert_string_equal(u[1].suggestion.c_str(), "Tiresias.Thresholds");
	/* Asked-for keys keep the caller's spelling. */
	std::vector<std::string> a = p.asked();
	assert_int_equal(a.size(), 3);
	assert_string_equal(a[0].c_str(), "placement");
	assert_string_equal(a[2].c_str(), "Tiresias.Thresholds");
}

/* A policy reads a copy (preset defaults merged with the user's); what it
 * asked counts for the user's object through add_asked(). */
static void test_asked_through_copies(void **)
{
	Params user;
	user.set("Muri.Matcher", "anchor", "--param");
	user.set("Qssf.Ties", "gpus", "--param");
	Params copy;
	copy.set("Placement", "count");
	copy.merge(user);
	copy.get_choice("Muri.Matcher", "lemon", {"lemon", "anchor"});
	assert_int_equal(user.unused().size(), 2);
	user.add_asked(copy);
	assert_int_equal(user.unused().size(), 1);
	assert_string_equal(user.unused()[0].key.c_str(), "Qssf.Ties");
	/* merge() keeps what was asked of both. */
	Params m;
	m.get_bool("A", false);
	Params n;
	n.get_bool("B", false);
	m.merge(n);
	assert_int_equal(m.asked().size(), 2);
}

/* A rejected value is listed with the default used instead, so that what
 * is in force can be shown; setting the key again clears it. */
static void test_rejected_in_force(void **)
{
	Params p = Params::parse("CycleInterval=abc Port=99999 Flag=maybe "
				 "List=1,,2 Pick=z Good=3",
				 "t.conf");
	assert_true(p.get_double("CycleInterval", 2, 0.1, 3600) == 2);
	assert_int_equal(p.get_long("Port", 6829, 0, 65535), 6829);
	assert_true(p.get_bool("Flag", true));
	assert_int_equal(p.get_list("List", {3, 4}, 0, 9).size(), 2);
	assert_string_equal(p.get_choice("Pick", "a", {"a", "b"}).c_str(), "a");
	assert_int_equal(p.get_long("Good", 1, 0, 9), 3);
	const auto &r = p.rejected();
	assert_int_equal(r.size(), 5);
	assert_string_equal(r.at("cycleinterval").c_str(), "2");
	assert_string_equal(r.at("port").c_str(), "6829");
	assert_string_equal(r.at("flag").c_str(), "yes");
	assert_string_equal(r.at("list").c_str(), "3,4");
	assert_string_equal(r.at("pick").c_str(), "a");
	assert_true(r.count("good") == 0);
	/* items() still holds what was given. */
	assert_string_equal(p.items().at("cycleinterval").c_str(), "abc");
	Params q = p; /* a copy keeps them, as the plugin's does */
	q.set("Port", "7000");
	assert_int_equal(q.rejected().size(), 4);
	assert_int_equal(q.get_long("Port", 6829, 0, 65535), 7000);
}

/* settings(): each key in force, with where it came from. */
static void test_settings_in_force(void **)
{
	Params p = Params::parse("Policy=tiresias\n"
				 "CycleInterval=abc\n"
				 "Muri.Other=1\n",
				 "tidal.conf");
	(void)p.get_str("Policy", "fifo");
	(void)p.get_double("CycleInterval", 2, 0.1, 3600);
	(void)p.get_long("CtlPort", 6829, 0, 65535);
	(void)p.get_list("Tiresias.Thresholds", {3600, 36000}, 0, 1e9);
	(void)p.has("CtlHost");
	Params policy_read;
	(void)policy_read.get_bool("Tiresias.Aging", false);
	p.add_asked(policy_read);
	std::vector<Params::Setting> s = p.settings();
	assert_int_equal(s.size(), 7); /* in lower-cased key order */
	auto at = [&](size_t i, const char *key, const char *value,
		      const char *source, const char *rejected, bool read) {
		assert_string_equal(s[i].key.c_str(), key);
		assert_string_equal(s[i].value.c_str(), value);
		assert_string_equal(s[i].source.c_str(), source);
		assert_string_equal(s[i].rejected.c_str(), rejected);
		assert_true(s[i].read == read);
	};
	at(0, "CtlHost", "", "default", "", true); /* has(): no default */
	at(1, "CtlPort", "6829", "default", "", true);
	at(2, "CycleInterval", "2", "tidal.conf:2", "abc", true);
	at(3, "Muri.Other", "1", "tidal.conf:3", "", false);
	at(4, "Policy", "tiresias", "tidal.conf:1", "", true);
	at(5, "Tiresias.Aging", "no", "default", "", true);
	at(6, "Tiresias.Thresholds", "3600,36000", "default", "", true);
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
		cmocka_unit_test(test_rejected_in_force),
		cmocka_unit_test(test_settings_in_force),
		cmocka_unit_test(test_errors_with_and_without_fallback),
		cmocka_unit_test(test_errors_name_origin),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_unused_keys),
		cmocka_unit_test(test_asked_through_copies),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
