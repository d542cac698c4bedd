/*
 * test_prometheus.cc - the Prometheus text exposition of core/obs/metrics:
 * counters, gauges and histograms with labels, escaping, numbers,
 * collectors, and the misuse that throws.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>
#include <stdexcept>
#include <thread>

#include "core/obs/metrics.h"

#include "tests/unit/unit.h"

using namespace tidal::obs;

static bool has_line(const std::string &text, const std::string &line)
{
	std::istringstream in(text);
	std::string l;
	while (std::getline(in, l))
		if (l == line)
			return true;
	return false;
}

/* HELP and TYPE lines, label sets in order, counters adding up. */
static void test_counter_with_labels(void **)
{
	Registry r;
	r.declare("tidal_decisions_total", Metric::Counter,
		  "Decisions the policy made.", {"action"});
	r.add("tidal_decisions_total", {"start"});
	r.add("tidal_decisions_total", {"start"}, 2);
	r.add("tidal_decisions_total", {"hold"});
	std::string t = r.render();
	assert_true(has_line(t, "# HELP tidal_decisions_total Decisions the policy made."));
	assert_true(has_line(t, "# TYPE tidal_decisions_total counter"));
	assert_true(has_line(t, "tidal_decisions_total{action=\"start\"} 3"));
	assert_true(has_line(t, "tidal_decisions_total{action=\"hold\"} 1"));
	/* series in label order: hold before start */
	assert_true(t.find("action=\"hold\"") < t.find("action=\"start\""));
	assert_true(r.value("tidal_decisions_total", {"start"}) == 3);
	assert_true(r.value("tidal_decisions_total", {"keep"}) == 0);
}

/* A family without labels is shown at 0 before its first update. */
static void test_unlabelled_zero(void **)
{
	Registry r;
	r.declare("tidal_up", Metric::Gauge, "Up.");
	r.declare("tidal_x_seconds", Metric::Histogram, "X.", {}, {1, 2});
	std::string t = r.render();
	assert_true(has_line(t, "tidal_up 0"));
	assert_true(has_line(t, "tidal_x_seconds_bucket{le=\"1\"} 0"));
	assert_true(has_line(t, "tidal_x_seconds_bucket{le=\"+Inf\"} 0"));
	assert_true(has_line(t, "tidal_x_seconds_count 0"));
}

/* Buckets are cumulative, le is inclusive, +Inf holds everything. */
static void test_histogram(void **)
{
	Registry r;
	r.declare("tidal_phase_seconds", Metric::Histogram, "Phases.",
		  {"phase"}, {0.5, 1, 10});
	for (double v : {0.1, 0.5, 0.7, 3.0, 100.0})
		r.observe("tidal_phase_seconds", {"checkpoint"}, v);
	std::string t = r.render();
	assert_true(has_line(t, "# TYPE tidal_phase_seconds histogram"));
	assert_true(has_line(t, "tidal_phase_seconds_bucket{phase=\"checkpoint\",le=\"0.5\"} 2"));
	assert_true(has_line(t, "tidal_phase_seconds_bucket{phase=\"checkpoint\",le=\"1\"} 3"));
	assert_true(has_line(t, "tidal_phase_seconds_bucket{phase=\"checkpoint\",le=\"10\"} 4"));
	assert_true(has_line(t, "tidal_phase_seconds_bucket{phase=\"checkpoint\",le=\"+Inf\"} 5"));
	assert_true(has_line(t, "tidal_phase_seconds_sum{phase=\"checkpoint\"} 104.3"));
	assert_true(has_line(t, "tidal_phase_seconds_count{phase=\"checkpoint\"} 5"));
	assert_true(r.value("tidal_phase_seconds", {"checkpoint"}) == 5);
}

/* Label values and help escape backslash, quote and newline. */
static void test_escaping(void **)
{
	Registry r;
	r.declare("tidal_g", Metric::Gauge, "a \\ b\nc", {"node"});
	r.set("tidal_g", {"n\"1\\\n"}, 1.5);
	std::string t = r.render();
	assert_true(has_line(t, "# HELP tidal_g a \\\\ b\\nc"));
	assert_true(has_line(t, "tidal_g{node=\"n\\\"1\\\\\\n\"} 1.5"));
}

static void test_numbers(void **)
{
	assert_string_equal(metric_number(0).c_str(), "0");
	assert_string_equal(metric_number(1e-5).c_str(), "1e-05");
	assert_string_equal(metric_number(0.1).c_str(), "0.1");
	assert_string_equal(metric_number(123456789).c_str(), "123456789");
	assert_string_equal(metric_number(INFINITY).c_str(), "+Inf");
	assert_string_equal(metric_number(-INFINITY).c_str(), "-Inf");
	assert_string_equal(metric_number(NAN).c_str(), "NaN");
}

/* A collector sets gauges afresh at each render; cleared series go. */
static void test_collector(void **)
{
	Registry r;
	r.declare("tidal_jobs", Metric::Gauge, "Jobs.", {"state"});
	int round = 0;
	r.on_collect([&round](Registry &reg) {
		reg.clear("tidal_jobs");
		reg.set("tidal_jobs", {round ? "running" : "pending"}, 4);
		round++;
	});
	std::string first = r.render(), second = r.render();
	assert_true(has_line(first, "tidal_jobs{state=\"pending\"} 4"));
	assert_false(has_line(second, "tidal_jobs{state=\"pending\"} 4"));
	assert_true(has_line(second, "tidal_jobs{state=\"running\"} 4"));
}

static bool throws(const std::function<void()> &f)
{
	try {
		f();
	} catch (const std::logic_error &) {
		return true;
	}
	return false;
}

/* Misuse is a logic_error, never a silent wrong series. */
static void test_misuse_throws(void **)
{
	Registry r;
	r.declare("tidal_c_total", Metric::Counter, "C.", {"a"});
	assert_true(throws([&] { r.declare("tidal_c", Metric::Counter, "no _total"); }));
	assert_true(throws([&] { r.declare("9bad", Metric::Gauge, "name"); }));
	assert_true(throws([&] { r.declare("tidal_h", Metric::Histogram, "le", {"le"}); }));
	assert_true(throws([&] { r.declare("tidal_h", Metric::Histogram, "b", {}, {2, 1}); }));
	assert_true(throws([&] { r.declare("tidal_c_total", Metric::Gauge, "again"); }));
	assert_true(throws([&] { r.add("tidal_nope_total"); }));
	assert_true(throws([&] { r.add("tidal_c_total", {}); }));
	assert_true(throws([&] { r.add("tidal_c_total", {"x"}, -1); }));
	assert_true(throws([&] { r.set("tidal_c_total", {"x"}, 1); }));
	assert_true(throws([&] { r.observe("tidal_c_total", {"x"}, 1); }));
	/* the same declaration again is fine */
	r.declare("tidal_c_total", Metric::Counter, "C.", {"a"});
}

/* Updates from several threads all count. */
static void test_threads(void **)
{
	Registry r;
	r.declare("tidal_n_total", Metric::Counter, "N.");
	std::vector<std::thread> ts;
	for (int i = 0; i < 4; i++)
		ts.emplace_back([&r] {
			for (int k = 0; k < 1000; k++)
				r.add("tidal_n_total");
		});
	for (auto &t : ts)
		t.join();
	assert_true(r.value("tidal_n_total") == 4000);
	assert_true(has_line(r.render(), "tidal_n_total 4000"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter_with_labels),
		cmocka_unit_test(test_unlabelled_zero),
		cmocka_unit_test(test_histogram),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_collector),
		cmocka_unit_test(test_misuse_throws),
		cmocka_unit_test(test_threads),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
