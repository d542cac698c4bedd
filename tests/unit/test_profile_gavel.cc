/*
 * test_profile_gavel.cc - the Gavel throughput JSON loader: tuple keys,
 * job-type splitting, lookups, and the error message for each malformed
 * input, on small files written to a temporary directory; then a few
 * values of the Shockwave anchor's tacc_throughputs.json, read off the
 * file by hand.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cstdlib>
#include <unistd.h>

#include "core/profiles/profile_gavel.h"
#include "tests/unit/unit.h"

using namespace tidal;

static const char *kAnchor =
	"../shared/anchors/shockwave/throughputs/tacc_throughputs.json";

static std::string g_dir;

static int make_dir(void **)
{
	char tmpl[] = "/tmp/test_profile_gavel.XXXXXX";
	if (!mkdtemp(tmpl))
		return -1;
	g_dir = tmpl;
	return 0;
}

static int remove_dir(void **)
{
	std::string cmd = "rm -rf '" + g_dir + "'";
	return std::system(cmd.c_str()) == 0 ? 0 : -1;
}

static std::string write_file(const std::string &name, const std::string &text)
{
	std::string path = g_dir + "/" + name;
	std::ofstream(path) << text;
	return path;
}

static bool contains(const std::string &s, const std::string &part)
{
	if (s.find(part) != std::string::npos)
		return true;
	print_error("'%s' does not contain '%s'\n", s.c_str(), part.c_str());
	return false;
}

static void test_keys(void **)
{
	GavelJobKey k;
	std::string why;
	assert_true(parse_gavel_key("('ResNet-18 (batch size 16)', 1)", &k, &why));
	assert_string_equal(k.job_type.c_str(), "ResNet-18 (batch size 16)");
	assert_int_equal(k.scale_factor, 1);
	assert_true(parse_gavel_key("  ( 'A3C' ,8 ) ", &k, &why));
	assert_string_equal(k.job_type.c_str(), "A3C");
	assert_int_equal(k.scale_factor, 8);
	/* repr's double quotes and escapes; a comma inside the name */
	assert_true(parse_gavel_key("(\"Bob's net, v2\", 4)", &k, &why));
	assert_string_equal(k.job_type.c_str(), "Bob's net, v2");
	assert_true(parse_gavel_key("('a\\'b\\\\c', 2)", &k, &why));
	assert_string_equal(k.job_type.c_str(), "a'b\\c");
	assert_string_equal(gavel_key_str({"LM (batch size 5)", 2}).c_str(),
			    "('LM (batch size 5)', 2)");

	const char *bad[] = {
		"",
		"null",
		"ResNet-18 (batch size 16)",
		"'LM', 1)",
		"(LM, 1)",
		"('LM', 1",
		"('LM' 1)",
		"('LM', 1) x",
		"('LM)",
		"('', 1)",
	};
	for (const char *s : bad) {
		why.clear();
		if (parse_gavel_key(s, &k, &why))
			print_error("accepted '%s'\n", s);
		assert_false(parse_gavel_key(s, &k, &why));
		assert_false(why.empty());
	}
	for (const char *s : {"('LM', 0)", "('LM', -1)", "('LM', 1.5)",
			      "('LM', )", "('LM', x)", "('LM', 99999999999)"}) {
		assert_false(parse_gavel_key(s, &k, &why));
		assert_true(contains(why, "is not a positive integer"));
	}
}

static void test_split(void **)
{
	GavelJobType t = split_gavel_job_type("ResNet-18 (batch size 16)");
	assert_string_equal(t.model.c_str(), "ResNet-18");
	assert_int_equal(t.batch_size, 16);
	t = split_gavel_job_type("Recommendation (batch size 8192)");
	assert_string_equal(t.model.c_str(), "Recommendation");
	assert_int_equal(t.batch_size, 8192);
	/* parentheses and spaces in the model name stay in the model */
	t = split_gavel_job_type("My net (v2) (batch size 8)");
	assert_string_equal(t.model.c_str(), "My net (v2)");
	assert_int_equal(t.batch_size, 8);
	for (const char *s : {"A3C", "CycleGAN", "X (batch size 0)",
			      "X (batch size 16", "X (batch size 1a)",
			      "X (batch size )"}) {
		t = split_gavel_job_type(s);
		assert_string_equal(t.model.c_str(), s);
		assert_int_equal(t.batch_size, 0);
	}
	assert_string_equal(gavel_job_type("LM", 80).c_str(),
			    "LM (batch size 80)");
}

/* Two worker types, listed p100 first.  On v100, A (sf 1) is measured
 * alone and packed with itself and with B; B has no "null". */
static const char *kSmall = R"j({
  "p100": {
    "('A (batch size 16)', 1)": {"null": 2.5},
    "('A (batch size 16)', 4)": {"null": 9}
  },
  "v100": {
    "('A (batch size 16)', 1)": {
      "null": 4.0,
      "('A (batch size 16)', 1)": [2.0, 2.0],
      "('B', 1)": [3.25, 0.5]
    },
    "('B', 1)": {"('A (batch size 16)', 1)": [0.5, 3.25]},
    "('A (batch size 16)', 2)": {"null": 7.5}
  }
})j";

static void test_lookups(void **)
{
	GavelThroughputs t;
	std::string err;
	assert_true(t.empty());
	assert_true(t.load(write_file("small.json", kSmall), &err));
	assert_false(t.empty());
	assert_int_equal(t.worker_types().size(), 2);
	assert_string_equal(t.worker_types()[0].c_str(), "p100");
	assert_string_equal(t.worker_types()[1].c_str(), "v100");
	assert_true(t.has_worker("v100"));
	assert_false(t.has_worker("k80"));

	assert_true(*t.isolated("v100", "A (batch size 16)", 1) == 4.0);
	assert_true(*t.isolated("v100", "A (batch size 16)", 2) == 7.5);
	assert_true(*t.isolated("p100", "A (batch size 16)", 4) == 9.0);
	assert_false(t.isolated("v100", "A (batch size 16)", 4).has_value());
	assert_false(t.isolated("k80", "A (batch size 16)", 1).has_value());
	assert_false(t.isolated("v100", "A (batch size 32)", 1).has_value());
	assert_false(t.isolated("v100", "B", 1).has_value()); /* no "null" */
	assert_non_null(t.entry("v100", "B", 1));

	auto p = t.packed("v100", "A (batch size 16)", 1, "B", 1);
	assert_true(p && p->self == 3.25 && p->other == 0.5);
	p = t.packed("v100", "B", 1, "A (batch size 16)", 1);
	assert_true(p && p->self == 0.5 && p->other == 3.25);
	p = t.packed("v100", "A (batch size 16)", 1, "A (batch size 16)", 1);
	assert_true(p && p->self == 2.0 && p->other == 2.0);
	assert_false(t.packed("v100", "A (batch size 16)", 1, "B", 2).has_value());
	assert_false(t.packed("p100", "A (batch size 16)", 1, "B", 1).has_value());
	assert_false(t.packed("v100", "A (batch size 16)", 2, "B", 1).has_value());

	auto all = t.job_types();
	assert_int_equal(all.size(), 2);
	assert_string_equal(all[0].c_str(), "A (batch size 16)");
	assert_string_equal(all[1].c_str(), "B");
	assert_int_equal(t.job_types("p100").size(), 1);
	assert_int_equal(t.job_types("k80").size(), 0);
	auto sfs = t.scale_factors("v100", "A (batch size 16)");
	assert_int_equal(sfs.size(), 2);
	assert_int_equal(sfs[0], 1);
	assert_int_equal(sfs[1], 2);
	assert_int_equal(t.scale_factors("v100", "A").size(), 0);
}

/* Each malformed document and the error it must give.  The table loaded
 * before stays as it was. */
static void test_errors(void **)
{
	struct Case {
		const char *json, *msg;
	} cases[] = {
		{"[1, 2]", "bad.json: top level must be an object"},
		{R"j({"v100": 3})j", "bad.json: v100: value must be an object"},
		{R"j({"v100": {"LM": {"null": 1}}})j",
		 R"j(bad.json: v100: key "LM": not "('<job_type>', <scale_factor>)")j"},
		{R"j({"v100": {"('LM', 0)": {"null": 1}}})j",
		 R"j(bad.json: v100: key "('LM', 0)": scale factor '0' is not a positive integer)j"},
		{R"j({"v100": {"('LM', 1)": [1]}})j",
		 R"j(bad.json: v100: key "('LM', 1)": value must be an object)j"},
		{R"j({"v100": {"('LM', 1)": {"null": "fast"}}})j",
		 R"j(key "('LM', 1)": "null" (isolated) must be a non-negative number)j"},
		{R"j({"v100": {"('LM', 1)": {"null": -1}}})j",
		 R"j("null" (isolated) must be a non-negative number)j"},
		{R"j({"v100": {"('LM', 1)": {"null": NaN}}})j",
		 R"j("null" (isolated) must be a non-negative number)j"},
		{R"j({"v100": {"('X', 1)": {"('LM', 1)": 3}}})j",
		 R"j(bad.json: v100: key "('X', 1)": inner key "('LM', 1)": packed value must be [self, other])j"},
		{R"j({"v100": {"('X', 1)": {"('LM', 1)": [1, 2, 3]}}})j",
		 "packed value must be [self, other]"},
		{R"j({"v100": {"('X', 1)": {"('LM', 1)": [1, "2"]}}})j",
		 "packed value must be [self, other]"},
		{R"j({"v100": {"('X', 1)": {"LM": [1, 2]}}})j",
		 R"j(key "('X', 1)": inner key "LM": not ")j"},
		{R"j({"v100": {"('X', 1)": {}, "(\"X\", 1)": {}}})j",
		 R"j(key "("X", 1)": repeats ('X', 1))j"},
		{R"j({"v100": {"('X', 1)": {"('Y', 1)": [1, 2], "('Y',1)": [1, 2]}}})j",
		 R"j(inner key "('Y',1)": repeats ('Y', 1))j"},
		{"{\"v100\": {\n  \"('X', 1)\": {\"null\": 1,}\n}}",
		 "bad.json:2: invalid JSON: "},
		{"{\"v100\": {}", "bad.json:1: invalid JSON: unexpected end of input"},
		{"{} {}", "bad.json:1: invalid JSON: "},
		{"{\"v100\": {\n\"('X', 1)\": {}}}\n\n x", "bad.json:4: invalid JSON: "},
		{"", "bad.json:1: invalid JSON: unexpected end of input"},
	};
	GavelThroughputs t;
	std::string err;
	assert_true(t.parse("small.json", kSmall, &err));
	for (const Case &c : cases) {
		err.clear();
		if (t.parse("bad.json", c.json, &err))
			print_error("accepted '%s'\n", c.json);
		assert_false(t.parse("bad.json", c.json, &err));
		assert_true(contains(err, c.msg));
		assert_true(*t.isolated("v100", "A (batch size 16)", 1) == 4.0);
	}
	/* A zero throughput is a valid measurement (A3C on v100 is 0.0). */
	assert_true(t.parse("zero.json", R"j({"v100": {"('A3C', 1)":
		{"null": 0, "('A3C', 1)": [0.0, 0]}}})j", &err));
	assert_true(*t.isolated("v100", "A3C", 1) == 0.0);
}

static void test_missing_file(void **)
{
	GavelThroughputs t;
	std::string err;
	std::string path = g_dir + "/nope.json";
	assert_false(t.load(path, &err));
	assert_true(contains(err, path + ": cannot open: "));
	assert_true(t.load(write_file("bad.json", "{\"k80\": 1}"), &err) == false);
	assert_true(contains(err, g_dir + "/bad.json: k80: value must be"));
}

/* Values copied from the file by hand. */
static void test_anchor(void **)
{
	if (access(kAnchor, R_OK) != 0) {
		print_message("skipping: %s not found\n", kAnchor);
		skip();
	}
	GavelThroughputs t;
	std::string err;
	if (!t.load(kAnchor, &err))
		print_error("%s\n", err.c_str());
	assert_true(err.empty());
	const auto &w = t.worker_types();
	assert_int_equal(w.size(), 6);
	assert_string_equal(w[0].c_str(), "k80");
	assert_string_equal(w[2].c_str(), "v100");
	assert_int_equal(t.job_types("v100").size(), 26);
	assert_true(*t.isolated("v100", "ResNet-50 (batch size 64)", 4) ==
		    11.63777067);
	assert_true(*t.isolated("v100", "LM (batch size 80)", 1) == 21.7129984);
	assert_true(*t.isolated("k80", "Transformer (batch size 64)", 8) ==
		    8.97621997981465);
	assert_true(*t.isolated("v100", "A3C", 1) == 0.0);
	assert_false(t.isolated("v100", "A3C", 2).has_value());
	assert_false(t.isolated("v100", "Recommendation (batch size 8192)", 2)
			     .has_value());
	auto p = t.packed("v100", "ResNet-18 (batch size 16)", 1,
			  "ResNet-50 (batch size 32)", 1);
	assert_true(p && p->self == 26.002008754304228 &&
		    p->other == 7.002117100116916);
	p = t.packed("v100", "Transformer (batch size 128)", 2,
		     "ResNet-50 (batch size 64)", 2);
	assert_true(p && p->self == 0.0 && p->other == 0.0);
	auto sfs = t.scale_factors("v100", "ResNet-18 (batch size 16)");
	assert_true(sfs == std::vector<int>({1, 2, 4, 8}));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_lookups),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_anchor),
	};
	return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
