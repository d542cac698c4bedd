/*
 * test_metrics.cc - summarize() on hand-made run results: the percentile,
 * makespan and JCT-truncation rules, deadline ratios, finish-time
 * fairness and utilisation over a hand-made busy-GPU series.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>

#include "sim/preset.h"

#include "tests/unit/unit.h"

using namespace tidal;
using namespace tidal::sim;

using test::near;

static JobResult done(Time submit, Time end, double queue = 0,
		      Time deadline = kNoDeadline)
{
	JobResult j;
	j.submit = submit;
	j.start = submit + queue;
	j.end = end;
	j.jct = end - submit;
	j.queue = queue;
	j.deadline = deadline;
	return j;
}

static JobResult rejected(Time submit, Time deadline = kNoDeadline)
{
	JobResult j;
	j.submit = submit;
	j.deadline = deadline;
	j.rejected = true;
	return j;
}

/* JCTs 10, 20, 30, 40 (and a rejected job, which counts nowhere but in
 * `rejected`).  Mean 25; median at 0.5*3 = 1.5 -> 25; p99 interpolated
 * at 0.99*3 = 2.97 -> 30 + 0.97*10 = 39.7; by index sorted[int(3.96)] =
 * sorted[3] = 40. */
static void test_percentiles(void **)
{
	RunResult r;
	for (double jct : {40.0, 10.0, 30.0, 20.0})
		r.jobs.push_back(done(0, jct));
	r.jobs.push_back(rejected(0));
	MetricRules numpy;
	numpy.makespan_from_first_submit = true;
	Summary s = summarize(r, numpy);
	assert_int_equal(s.jobs, 4);
	assert_int_equal(s.rejected, 1);
	near(s.avg_jct, 25);
	near(s.median_jct, 25);
	near(s.p99_jct, 39.7);
	MetricRules muri;
	muri.percentile_by_index = true;
	near(summarize(r, muri).p99_jct, 40);

	/* 100 JCTs 1..100: interpolation at 98.01 gives 99.01, the index
	 * rule sorted[int(99.0)] = 100. */
	RunResult h;
	for (int i = 100; i >= 1; i--)
		h.jobs.push_back(done(0, i));
	near(summarize(h, numpy).p99_jct, 99.01);
	near(summarize(h, muri).p99_jct, 100);
	near(summarize(h, numpy).median_jct, 50.5);
}

/* ElasticFlow truncates each JCT to whole seconds before averaging. */
static void test_truncate_jct(void **)
{
	RunResult r;
	r.jobs.push_back(done(0, 10.9));
	r.jobs.push_back(done(0.5, 20.2)); /* JCT 19.7 */
	MetricRules trunc;
	trunc.truncate_jct = true;
	near(summarize(r, trunc).avg_jct, (10 + 19) / 2.0);
	near(summarize(r, MetricRules{}).avg_jct, (10.9 + 19.7) / 2);
}

/* Submits 5 and 10, ends 50 and 100: makespan 95 from the first submit,
 * 100 from time 0; a preset's own makespan wins. */
static void test_makespan(void **)
{
	RunResult r;
	r.jobs.push_back(done(10, 50));
	r.jobs.push_back(done(5, 100));
	MetricRules from_first, from_zero;
	from_zero.makespan_from_first_submit = false;
	near(summarize(r, from_first).makespan, 95);
	near(summarize(r, from_zero).makespan, 100);
	r.makespan = 77;
	near(summarize(r, from_first).makespan, 77);
}

/* Deadlines: on time (end == deadline counts), late, rejected (a miss);
 * jobs without one are not counted.  1 of 3.  A preset's ratio wins. */
static void test_deadline_ratio(void **)
{
	RunResult r;
	r.jobs.push_back(done(0, 100, 0, 100));
	r.jobs.push_back(done(0, 101, 0, 100));
	r.jobs.push_back(rejected(0, 50));
	r.jobs.push_back(done(0, 500));
	Summary s = summarize(r, MetricRules{});
	assert_true(s.deadline_ratio.has_value());
	near(*s.deadline_ratio, 1.0 / 3);
	r.deadline_ratio = 0.25;
	near(*summarize(r, MetricRules{}).deadline_ratio, 0.25);

	RunResult none;
	none.jobs.push_back(done(0, 1));
	assert_false(summarize(none, MetricRules{}).deadline_ratio.has_value());
}

/* Queue times 0, 10, 20, 1000: mean 257.5; p99.9 at 0.999*3 = 2.997 ->
 * 20 + 0.997*980 = 997.06. */
static void test_queue(void **)
{
	RunResult r;
	double q[] = {1000, 0, 20, 10};
	for (double v : q)
		r.jobs.push_back(done(0, 2000, v));
	Summary s = summarize(r, MetricRules{});
	near(s.avg_queue, 257.5);
	near(s.p999_queue, 997.06);
}

/* Finish-time fairness: rho -1 means not computed and is left out.
 * Rhos 0.5, 1.5, 2: worst 2, two of three above 1. */
static void test_rho(void **)
{
	RunResult r;
	for (double rho : {0.5, 1.5, -1.0, 2.0}) {
		r.jobs.push_back(done(0, 10));
		r.jobs.back().rho = rho;
	}
	Summary s = summarize(r, MetricRules{});
	near(*s.worst_rho, 2);
	near(*s.unfair_fraction, 2.0 / 3);
	r.worst_rho = 9;
	r.unfair_fraction = 0.5;
	near(*summarize(r, MetricRules{}).worst_rho, 9);

	RunResult none;
	none.jobs.push_back(done(0, 1));
	assert_false(summarize(none, MetricRules{}).worst_rho.has_value());
}

/* 4 GPUs; busy 0 from 0, 2 from 5, 4 from 10, 1 from 20, 0 from 40.
 * Jobs span [5, 30] (first submit, last end).  Busy GPU-seconds inside:
 * 5*2 + 10*4 + 10*1 = 60 (the 1-GPU stretch is cut at 30) over 25*4 =
 * 100 -> 0.6. */
static void test_utilisation(void **)
{
	RunResult r;
	r.total_gpus = 4;
	r.jobs.push_back(done(5, 30));
	r.jobs.push_back(done(8, 12));
	r.util = {{0, 0}, {5, 2}, {10, 4}, {20, 1}, {40, 0}};
	near(summarize(r, MetricRules{}).utilization, 0.6);
	/* No jobs, no window: everything stays 0. */
	RunResult empty;
	empty.total_gpus = 4;
	empty.util = {{0, 0}};
	Summary s = summarize(empty, MetricRules{});
	assert_int_equal(s.jobs, 0);
	near(s.utilization, 0);
	near(s.makespan, 0);
	near(s.avg_jct, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percentiles),
		cmocka_unit_test(test_truncate_jct),
		cmocka_unit_test(test_makespan),
		cmocka_unit_test(test_deadline_ratio),
		cmocka_unit_test(test_queue),
		cmocka_unit_test(test_rho),
		cmocka_unit_test(test_utilisation),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
