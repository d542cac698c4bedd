/*
 * test_live.cc - sim/live.cc: the trace F times faster, its submit plan,
 * sacct's record of a live run read back as a RunResult (requeued runs,
 * jobs never started, missing jobs, runs not ended, jobs that did not
 * finish their work), and the sacct-style
 * record tidal-sim writes.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/profiles/throughput_table.h"
#include "sim/csv.h"
#include "sim/live.h"
#include "sim/trace.h"

#include "tests/unit/unit.h"

using namespace tidal;
using namespace tidal::sim;

using test::near;
using test::put;
static const std::string &root = test::scratch_root;

/* Three jobs on one 8-GPU node; job 2 has a deadline. */
static SimInput input()
{
	SimInput in;
	in.trace = load_trace(put("id,submit,gpus,duration,deadline\n"
				  "1,0,4,100,\n"
				  "2,10,8,60,400\n"
				  "3,20,2,30,\n"));
	in.cluster_path = "c.conf";
	Node n;
	n.name = "n1";
	n.gpus = 8;
	in.cluster.nodes.push_back(n);
	return in;
}

static void test_compress(void **)
{
	SimInput in = input();
	in.trace.jobs[1].estimate = 120;
	in.trace.jobs[1].iter_time = 2;
	in.trace.jobs[1].iterations = 30;
	compress_time(in.trace, 10);
	const Job &b = in.trace.jobs[1];
	near(b.submit, 1);
	near(b.duration, 6);
	near(b.iter_time, 0.2);
	near(b.iterations, 30); /* the work is the same */
	near(b.deadline, 40);
	near(b.estimate, 12);
	assert_true(in.trace.jobs[0].deadline == kNoDeadline);
}

static void test_plan(void **)
{
	SimInput in = input();
	in.trace.jobs[0].submit = 15; /* out of order: the plan sorts */
	std::ostringstream out;
	write_submit_plan(out, in, ThroughputTable());
	std::string p = out.str();
	assert_non_null(strstr(p.c_str(), "(3 jobs) on c.conf\n"
					  "at\tname\toptions\trun\tdeadline\n"
					  "10.000\ttidal-2\t--gpus=8 -t 3\t60.000"
					  "\t400.000\n"
					  "15.000\ttidal-1\t--gpus=4 -t 4\t100.000"
					  "\t-\n"
					  "20.000\ttidal-3\t--gpus=2 -t 2\t30.000"
					  "\t-\n"));
}

/* A table for model m at batch 64: 10 it/s on 1 GPU, 16 on 2, 30 on 4. */
static ThroughputTable table()
{
	ThroughputTable t;
	std::string err;
	assert_true(t.parse_csv("m", "m.csv",
				"global_batch_size,1,2,4\n64,10,16,30\n", &err));
	return t;
}

/* A job whose model and batch have a row is a trainer: its plan line
 * gives --train-*, and --elastic-gpus when it is elastic; its work counts
 * in steps small enough for a live trainer to keep the table's pace. */
static void test_trainer_plan(void **)
{
	SimInput in = input();
	Job &a = in.trace.jobs[0];
	a.model = "m";
	a.batch = 64;
	a.iterations = 1000;
	a.iter_time = 0.1; /* 100 s, the trace's duration */
	a.gpus = 2;
	a.min_gpus = 1;
	a.max_gpus = 2;
	Job &c = in.trace.jobs[2];
	c.model = "other"; /* no table: a paced process */
	c.batch = 64;
	ThroughputTable t = table();
	assert_true(live_trainer(a, t));
	assert_false(live_trainer(c, t));
	assert_false(live_trainer(in.trace.jobs[1], t));
	/* Up to 2 GPUs it runs at most 16 it/s: 10 times faster, 160 a
	 * second; at most 50 a second takes steps of 4 iterations. */
	assert_int_equal(live_step_size(in.trace, t, 10, 50), 4);
	assert_int_equal(live_step_size(in.trace, t, 1, 50), 1);
	a.max_gpus = 3; /* between two columns: up to the 4-GPU speed */
	assert_int_equal(live_step_size(in.trace, t, 10, 50), 6);
	a.max_gpus = 2;
	count_in_steps(in.trace, t, 4);
	near(a.iterations, 250);
	near(a.iter_time, 0.4);
	near(c.iterations, 30); /* not a trainer: as it was */
	std::ostringstream out;
	write_submit_plan(out, in, t);
	assert_non_null(strstr(out.str().c_str(),
			       "0.000\ttidal-1\t--gpus=2 -t 4 --elastic-gpus=1-2 "
			       "--train-model=m --train-batch=64 "
			       "--train-iters=250\t100.000\t-\n"));
	assert_non_null(strstr(out.str().c_str(),
			       "20.000\ttidal-3\t--gpus=2 -t 2\t30.000\t-\n"));
}

static const char *kHead = "JobID|JobName|Submit|Start|End|State|AllocTRES\n";

/* Job 1 requeued once (two runs, -D), job 3 cancelled while pending (a
 * rejection: sacct gives it a Start, but no allocation); a step row and a
 * job not of ours are ignored. */
static void test_live_result(void **)
{
	SimInput in = input();
	std::string path = put(std::string(kHead) +
		"40|tidal-1|2026-02-01T00:00:05|2026-02-01T00:00:06|"
		"2026-02-01T00:00:50|REQUEUED|gres/gpu=4\n"
		"40|tidal-1|2026-02-01T00:00:51|2026-02-01T00:01:10|"
		"2026-02-01T00:02:00|COMPLETED|billing=1,gres/gpu=4,node=1\n"
		"40.batch|batch|2026-02-01T00:00:51|2026-02-01T00:01:10|"
		"2026-02-01T00:02:00|COMPLETED|\n"
		"41|tidal-2|2026-02-01T00:00:16|2026-02-01T00:00:16|"
		"2026-02-01T00:01:16|COMPLETED|gres/gpu=8\n"
		"42|tidal-3|2026-02-01T00:00:25|2026-02-01T00:00:26|"
		"2026-02-01T00:00:26|CANCELLED by 0|\n"
		"43|other|2026-02-01T00:00:00|2026-02-01T00:00:00|"
		"2026-02-01T00:00:01|COMPLETED|gres/gpu=1\n");
	RunResult r = live_result(path, in, "live:fifo");
	assert_string_equal(r.policy.c_str(), "live:fifo");
	assert_int_equal(r.jobs.size(), 3);
	/* Time 0: the earliest live submit less its trace submit = :05. */
	const JobResult &a = r.jobs[0], &b = r.jobs[1], &c = r.jobs[2];
	assert_int_equal(a.id, 1);
	near(a.submit, 0);
	near(a.start, 1);
	near(a.end, 115);
	near(a.jct, 115);
	assert_int_equal(a.preemptions, 1);
	near(a.queue, 115 - 44 - 50);
	assert_int_equal(b.id, 2);
	near(b.submit, 10);
	near(b.start, 11);
	near(b.jct, 61);
	assert_true(b.deadline == 400);
	assert_true(c.rejected);
	/* GPUs busy: 4 from 1 s, 8 more from 11 s, ... */
	assert_true(r.util.size() >= 4);
	near(r.util[1].t, 1);
	assert_int_equal(r.util[1].busy, 4);
	near(r.util[2].t, 11);
	assert_int_equal(r.util[2].busy, 12);
}

/* A job whose last run did not complete (TIMEOUT, FAILED) did not finish
 * its work: it misses its deadline though it ended before it, and each is
 * named in a warning.  A requeued run before a COMPLETED one does not
 * count. */
static void test_live_unfinished(void **)
{
	SimInput in = input();
	std::string path = put(std::string(kHead) +
		"40|tidal-1|2026-02-01T00:00:05|2026-02-01T00:00:06|"
		"2026-02-01T00:00:50|REQUEUED|gres/gpu=4\n"
		"40|tidal-1|2026-02-01T00:00:51|2026-02-01T00:01:10|"
		"2026-02-01T00:02:00|COMPLETED|gres/gpu=4\n"
		"41|tidal-2|2026-02-01T00:00:16|2026-02-01T00:00:16|"
		"2026-02-01T00:01:16|TIMEOUT|gres/gpu=8\n"
		"42|tidal-3|2026-02-01T00:00:25|2026-02-01T00:00:26|"
		"2026-02-01T00:00:30|FAILED|gres/gpu=2\n");
	RunResult r = live_result(path, in, "live:fifo");
	assert_int_equal(r.jobs.size(), 3);
	assert_false(r.jobs[0].unfinished);
	assert_true(r.jobs[1].unfinished);
	assert_true(r.jobs[1].end < r.jobs[1].deadline);
	assert_true(r.jobs[2].unfinished);
	assert_int_equal(r.warnings.size(), 2);
	assert_non_null(strstr(r.warnings[0].c_str(),
			       "job tidal-2 ended TIMEOUT without finishing"));
	assert_non_null(strstr(r.warnings[1].c_str(), "tidal-3 ended FAILED"));
	Summary s = summarize(r, MetricRules{});
	assert_true(s.deadline_ratio.has_value());
	near(*s.deadline_ratio, 0);
	/* The same job COMPLETED meets it. */
	std::string ok = put(std::string(kHead) +
		"41|tidal-2|2026-02-01T00:00:16|2026-02-01T00:00:16|"
		"2026-02-01T00:01:16|COMPLETED|gres/gpu=8\n"
		"40|tidal-1|2026-02-01T00:00:05|2026-02-01T00:00:06|"
		"2026-02-01T00:00:50|COMPLETED|gres/gpu=4\n"
		"42|tidal-3|2026-02-01T00:00:25|2026-02-01T00:00:26|"
		"2026-02-01T00:00:30|COMPLETED|gres/gpu=2\n");
	r = live_result(ok, in, "live:fifo");
	assert_true(r.warnings.empty());
	near(*summarize(r, MetricRules{}).deadline_ratio, 1);
}

/* work.tsv beside the record: time 0 and each run to the microsecond. */
static void test_live_work_times(void **)
{
	SimInput in = input();
	std::string dir = root + "/run";
	std::filesystem::create_directories(dir);
	std::ofstream(dir + "/slurm_acct.out") << std::string(kHead) <<
		"40|tidal-1|2026-02-01T00:00:05|2026-02-01T00:00:06|"
		"2026-02-01T00:00:50|COMPLETED|gres/gpu=4\n"
		"41|tidal-2|2026-02-01T00:00:16|2026-02-01T00:00:16|"
		"2026-02-01T00:01:16|COMPLETED|gres/gpu=8\n"
		"42|tidal-3|2026-02-01T00:00:25|2026-02-01T00:00:26|"
		"2026-02-01T00:00:56|COMPLETED|gres/gpu=2\n";
	/* 2026-02-01T00:00:04.5 is 1769904004.5 */
	std::ofstream(dir + "/work.tsv") << "# start 1769904004.5\n"
					    "tidal-1\t1769904005.75\t1769904050.25\n"
					    "tidal-2\t1769904016.0\t1769904076.0\n";
	RunResult r = live_result(dir + "/slurm_acct.out", in, "live");
	near(r.jobs[0].start, 1.25);
	near(r.jobs[0].end, 45.75);
	near(r.jobs[1].end, 71.5);
	/* No line for job 3: sacct's seconds, from the same time 0. */
	near(r.jobs[2].end, 51.5);
	std::ofstream(dir + "/work.tsv") << "tidal-7\t1\t2\n";
	try {
		live_result(dir + "/slurm_acct.out", in, "live");
		fail_msg("a work.tsv of another run was taken");
	} catch (const InputError &e) {
		assert_non_null(strstr(e.what(), "work.tsv:1: job tidal-7 is in "
						 "no record beside it"));
	}
}

/* submit.log beside the record: how late each job reached slurmctld.
 * The replay takes job 1 in 12 s late, after job 2 (order by the new
 * submits), and its results count from the trace's submit again. */
static void test_submit_delays(void **)
{
	SimInput in = input();
	std::string dir = root + "/delays";
	std::filesystem::create_directories(dir);
	std::string rec = dir + "/slurm_acct.out";
	std::ofstream(rec) << std::string(kHead);
	assert_true(live_submit_delays(rec, in).empty()); /* no log */
	std::ofstream(dir + "/submit.log") << "tidal-1\t0.000\t12.0\n"
					      "tidal-2\t10.000\t10.25\n"
					      "tidal-9\t1\t2\n"; /* not ours */
	std::map<JobId, double> d = live_submit_delays(rec, in);
	assert_int_equal(d.size(), 2);
	near(d[1], 12.0);
	near(d[2], 0.25);
	SimInput s = in;
	shift_submits(s, d);
	assert_int_equal(s.trace.jobs[0].id, 2);
	near(s.trace.jobs[0].submit, 10.25);
	assert_int_equal(s.trace.jobs[1].id, 1);
	near(s.trace.jobs[1].submit, 12.0);
	near(s.trace.jobs[2].submit, 20); /* no line: as traced */
	RunResult r;
	JobResult j;
	j.id = 1, j.submit = 12, j.start = 12, j.end = 112, j.jct = 100;
	r.jobs.push_back(j);
	unshift_results(r, d);
	near(r.jobs[0].submit, 0);
	near(r.jobs[0].jct, 112);
	near(r.jobs[0].queue, 12);
	std::ofstream(dir + "/submit.log") << "tidal-1\t0\n";
	try {
		live_submit_delays(rec, in);
		fail_msg("a line without its actual time was taken");
	} catch (const InputError &e) {
		assert_non_null(strstr(e.what(), "submit.log:1: expected"));
	}
}

static std::string error_of(const std::string &text)
{
	SimInput in = input();
	std::string path = put(text);
	try {
		live_result(path, in, "live");
	} catch (const InputError &e) {
		std::string m = e.what();
		return m.substr(m.find(".txt") + 4);
	}
	return "(no error)";
}

static void test_live_errors(void **)
{
	std::string one = std::string(kHead) +
		"1|tidal-1|2026-02-01T00:00:00|2026-02-01T00:00:01|"
		"2026-02-01T00:00:09|COMPLETED|gres/gpu=4\n";
	assert_string_equal(error_of(one).c_str(),
			    ": job tidal-2 of the trace is not in this record "
			    "(submitted? sacct -a -D -X?)");
	std::string open = std::string(kHead) +
		"1|tidal-1|2026-02-01T00:00:00|2026-02-01T00:00:01|Unknown|"
		"RUNNING|gres/gpu=4\n"
		"2|tidal-2|2026-02-01T00:00:10|Unknown|Unknown|PENDING|\n"
		"3|tidal-3|2026-02-01T00:00:20|Unknown|Unknown|PENDING|\n";
	assert_string_equal(error_of(open).c_str(),
			    ": job tidal-1 has a run that has not ended: take "
			    "the record once every job has ended");
	std::string other = error_of(std::string(kHead) +
				     "1|tidal-9|2026-02-01T00:00:00|Unknown|"
				     "Unknown|PENDING|\n");
	assert_true(other.rfind(":2: job tidal-9 is not in the trace ", 0) == 0);
	assert_string_equal(error_of("JobID|Submit\n1|x\n").c_str(),
			    ":1: missing column 'JobName'");
	assert_string_equal(
		error_of(std::string(kHead) + "1|tidal-1|yesterday|Unknown|"
					      "Unknown|PENDING|\n")
			.c_str(),
		":2: Submit 'yesterday' is not YYYY-MM-DDTHH:MM:SS");
}

/* The sacct-style record reads back as a sacct trace: each completed job
 * with its GPUs and run time. */
static void test_acct_round_trip(void **)
{
	RunResult r;
	r.policy = "fifo";
	JobResult a;
	a.id = 7;
	a.gpus = 4;
	a.submit = 10;
	a.start = 20;
	a.end = 20 + 90061; /* a day and an hour, a minute, a second */
	r.jobs.push_back(a);
	JobResult b;
	b.id = 8;
	b.name = "late";
	b.gpus = 2;
	b.submit = 5;
	b.rejected = true;
	r.jobs.push_back(b);
	std::ostringstream out;
	write_acct(out, {r}, 1767225600); /* 2026-01-01T00:00:00 */
	std::string s = out.str();
	assert_non_null(strstr(s.c_str(),
			       "8|late|fifo|2026-01-01T00:00:05|Unknown|Unknown|"
			       "00:00:00|CANCELLED||0\n"
			       "7|tidal-7|fifo|2026-01-01T00:00:10|"
			       "2026-01-01T00:00:20|2026-01-02T01:01:21|"
			       "1-01:01:01|COMPLETED|gres/gpu=4|0\n"));
	Trace t = load_trace(put(s));
	assert_string_equal(t.format.c_str(), "sacct");
	assert_int_equal(t.jobs.size(), 1);
	assert_int_equal(t.jobs[0].id, 7);
	assert_int_equal(t.jobs[0].gpus, 4);
	near(t.jobs[0].duration, 90061);
}

/* Tables sped up as the trace: every measured cell times F, "nan" and
 * empty cells kept; a directory without tables is an error. */
static void test_speed_up_profiles(void **)
{
	std::string src = root + "/tables", dst = root + "/fast";
	std::filesystem::create_directories(src);
	std::ofstream(src + "/m.csv") << "global_batch_size,1,2,4\n"
					 "64,1.5,nan,\n128,0.25,0.5,0.75\n";
	speed_up_profiles(src, 10, dst);
	ThroughputTable t;
	std::string err;
	assert_true(t.load_dir(dst, &err));
	near(t.lookup("m", 64, 1), 15);
	assert_true(std::isnan(t.lookup("m", 64, 2)));
	assert_true(t.row("m", 64)->nan[1]);
	assert_true(std::isnan(t.lookup("m", 64, 4)));
	near(t.lookup("m", 128, 4), 7.5);
	try {
		speed_up_profiles(root + "/none", 2, dst);
		fail_msg("a missing directory was sped up");
	} catch (const InputError &e) {
		assert_non_null(strstr(e.what(), "(--speedup scales a directory "
						 "of <model>.csv throughput "
						 "tables)"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compress),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_trainer_plan),
		cmocka_unit_test(test_live_result),
		cmocka_unit_test(test_live_unfinished),
		cmocka_unit_test(test_live_work_times),
		cmocka_unit_test(test_submit_delays),
		cmocka_unit_test(test_live_errors),
		cmocka_unit_test(test_acct_round_trip),
		cmocka_unit_test(test_speed_up_profiles),
	};
	return cmocka_run_group_tests(tests, test::scratch_setup,
				      test::scratch_teardown);
}
