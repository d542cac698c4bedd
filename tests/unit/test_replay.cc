/*
 * test_replay.cc - the native replay (the `tidal` preset's hooks: linear
 * speed, a restart overhead per start or resume) on a hand-made 3-job
 * scenario whose every event is worked out below.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "sim/csv.h"
#include "sim/preset.h"

#include "tests/unit/unit.h"

using namespace tidal;
using namespace tidal::sim;

static void near(double got, double want)
{
	if (std::fabs(got - want) > 1e-6 * std::max(1.0, std::fabs(want)))
		fail_msg("got %.12g, want %.12g", got, want);
}

/* One node of 4 GPUs.  Work is in seconds at the requested size:
 *   job 1: submit 0,  4 GPUs, 100 s
 *   job 2: submit 10, 2 GPUs,  20 s
 *   job 3: submit 20, 2 GPUs,  50 s */
static SimInput scenario()
{
	SimInput in;
	in.cluster = test::cluster(1, 4);
	in.trace.path = "hand";
	in.trace.jobs = {test::job(1, 4, 0, 100), test::job(2, 2, 10, 20),
			 test::job(3, 2, 20, 50)};
	for (size_t i = 0; i < in.trace.jobs.size(); i++)
		in.trace.jobs[i].index = i;
	return in;
}

static RunResult run(const char *policy, double overhead)
{
	std::string err;
	auto preset = make_preset("tidal", &err);
	assert_non_null(preset.get());
	SimInput in = scenario();
	preset->prepare(in);
	Params p;
	p.set("Tidal.RestartOverhead", std::to_string(overhead));
	return preset->run(in, policy, p, {}, RunMode::Replay);
}

static const JobResult &result(const RunResult &r, JobId id)
{
	for (const JobResult &j : r.jobs)
		if (j.id == id)
			return j;
	fail_msg("job %ld has no result", (long)id);
	return r.jobs[0];
}

/* FIFO, overhead 10 s.  t=0: 1 starts, pays 10 s, ends 0+10+100 = 110.
 * 2 and 3 wait (head-of-line) until 110, then both start and pay 10 s:
 * 2 ends 110+10+20 = 140, 3 ends 110+10+50 = 170.
 * JCTs 110, 130, 150 (mean 130); queues 0, 100, 90. */
static void test_fifo_with_overhead(void **)
{
	RunResult r = run("fifo", 10);
	assert_int_equal(r.jobs.size(), 3);
	near(result(r, 1).end, 110);
	near(result(r, 2).end, 140);
	near(result(r, 3).end, 170);
	near(result(r, 2).start, 110);
	near(result(r, 2).queue, 100);
	near(result(r, 3).queue, 90);
	Summary s = summarize(r, MetricRules{});
	near(s.avg_jct, 130);
	near(s.makespan, 170);
	/* Busy: 4 GPUs over [0, 110), 4 over [110, 140), 2 over [140, 170):
	 * (440 + 120 + 60) / (170 * 4). */
	near(s.utilization, 620.0 / 680);
	assert_int_equal(r.total_gpus, 4);
}

/* The same without overhead: 1 ends 100; 2 ends 120, 3 ends 150.
 * JCTs 100, 110, 130. */
static void test_fifo_without_overhead(void **)
{
	RunResult r = run("fifo", 0);
	near(result(r, 1).end, 100);
	near(result(r, 2).end, 120);
	near(result(r, 3).end, 150);
	near(summarize(r, MetricRules{}).avg_jct, 340.0 / 3);
}

/* SRTF, overhead 10 s.
 *   t=0   1 starts (owes 10 s; would end 110).
 *   t=10  1 has paid its overhead, 100 s left.  2 arrives with 20 s: 2
 *         ranks first and takes 2 GPUs, 1 no longer fits and is
 *         preempted.  2 owes 10 s: ends 10+10+20 = 40.
 *   t=20  3 arrives (50 s) and takes the 2 free GPUs: ends 20+10+50 = 80.
 *         1 (100 s) still does not fit.
 *   t=40  2 ends; 3 keeps running; 1 needs 4, 2 are free.
 *   t=80  3 ends; 1 resumes, pays 10 s again: ends 80+10+100 = 190.
 * JCTs 190, 30, 60 (mean 280/3); 1 was preempted once and queued from
 * 10 to 80. */
static void test_srtf_with_overhead(void **)
{
	RunResult r = run("srtf", 10);
	assert_int_equal(r.jobs.size(), 3);
	const JobResult &j1 = result(r, 1), &j2 = result(r, 2),
			&j3 = result(r, 3);
	near(j2.end, 40);
	near(j3.end, 80);
	near(j1.end, 190);
	near(j1.start, 0);
	assert_int_equal(j1.preemptions, 1);
	assert_int_equal(j2.preemptions, 0);
	near(j1.queue, 70);
	near(j3.queue, 0);
	Summary s = summarize(r, MetricRules{});
	near(s.avg_jct, 280.0 / 3);
	near(s.makespan, 190);
}

/* A job larger than the cluster is refused when the preset prepares the
 * input, naming the trace's line, the job, its GPUs and the cluster's. */
static void test_too_large(void **)
{
	std::string err;
	auto preset = make_preset("tidal", &err);
	SimInput in = scenario();
	in.cluster_path = "slurm.conf";
	in.trace.row_lines = {2, 3, 5};
	in.trace.jobs[1].gpus = 5;
	try {
		preset->prepare(in);
		fail_msg("a 5-GPU job was accepted on 4 GPUs");
	} catch (const InputError &e) {
		assert_string_equal(e.what(),
				    "hand:3: job 2 asks for 5 GPUs; the "
				    "cluster in slurm.conf has 4");
	}
}

/* RunMode::Check builds the policy and reads its keys, and replays
 * nothing: what tidal-sim does with every policy before the first
 * replay. */
static void test_check_mode(void **)
{
	std::string err;
	auto preset = make_preset("tidal", &err);
	SimInput in = scenario();
	preset->prepare(in);
	Params p;
	p.set("Tidal.RestartOverhead", "10");
	p.set("Tiresias.Thresholds", "100");
	p.set("Bogus", "1");
	RunResult r = preset->run(in, "tiresias", p, {}, RunMode::Check);
	assert_int_equal(r.jobs.size(), 0);
	assert_int_equal(r.events, 0);
	std::vector<Params::Unused> u = p.unused();
	assert_int_equal(u.size(), 1);
	assert_string_equal(u[0].key.c_str(), "Bogus");
	/* fifo reads no Tiresias key. */
	Params q;
	q.set("Tiresias.Thresholds", "100");
	preset->run(in, "fifo", q, {}, RunMode::Check);
	assert_int_equal(q.unused().size(), 1);
}

/* elasticflow plans with throughput tables: without them it would reject
 * every job, which the check says; --profiles gives them, and one that
 * does not load is an error. */
static void test_elasticflow_profiles(void **)
{
	std::string err;
	auto preset = make_preset("tidal", &err);
	SimInput in = scenario();
	preset->prepare(in);
	Params p = preset->policy_params("elasticflow");
	RunResult r = preset->run(in, "elasticflow", p, {}, RunMode::Check);
	assert_int_equal(r.warnings.size(), 1);
	assert_non_null(strstr(r.warnings[0].c_str(),
			       "policy elasticflow has no throughput profiles, "
			       "so it will reject every job; give --profiles "
			       "DIR or --param ElasticFlow.Profiles=DIR"));
	in.profiles_path = "/nonexistent-tidal-profiles";
	try {
		preset->prepare(in);
		fail_msg("a missing --profiles directory was accepted");
	} catch (const InputError &e) {
		assert_non_null(strstr(e.what(), "--profiles "
						 "/nonexistent-tidal-profiles: "
						 "cannot read throughput "
						 "tables"));
	}
	/* Only the elasticflow policies read it. */
	assert_false(preset->policy_params("fifo").has("ElasticFlow.Profiles"));
}

/* With --profiles, a job whose model and batch have a table runs at the
 * table's speed (ThroughputRow::paced: between columns, the straight
 * line); one without, at its traced speed scaled linearly. */
static void test_profile_speeds(void **)
{
	char dir[] = "/tmp/tidal-test-replay.XXXXXX";
	assert_non_null(mkdtemp(dir));
	std::ofstream(std::string(dir) + "/m.csv")
		<< "global_batch_size,1,2,4\n64,1.0,1.5,2.5\n";
	std::string err;
	auto preset = make_preset("tidal", &err);
	SimInput in;
	in.cluster = test::cluster(1, 8);
	in.trace.path = "hand";
	in.trace.jobs = {test::job(1, 3, 0, 100), test::job(2, 2, 0, 100)};
	in.trace.jobs[0].model = "m";
	in.trace.jobs[0].batch = 64;
	in.trace.jobs[0].iterations = 200;
	in.trace.jobs[0].iter_time = 0.5; /* 100 s, were it linear */
	in.trace.jobs[1].index = 1;
	in.profiles_path = dir;
	preset->prepare(in);
	Params p;
	p.set("Tidal.RestartOverhead", "0");
	RunResult r = preset->run(in, "fifo", p, {}, RunMode::Replay);
	/* 3 GPUs: 2.0 it/s between 1.5 at 2 and 2.5 at 4. */
	assert_true(std::fabs(result(r, 1).end - 100) < 1e-9);
	in.trace.jobs[0].iterations = 300;
	r = preset->run(in, "fifo", p, {}, RunMode::Replay);
	assert_true(std::fabs(result(r, 1).end - 150) < 1e-9);
	assert_true(std::fabs(result(r, 2).end - 100) < 1e-9); /* linear */
	std::filesystem::remove_all(dir);
}

/* Tidal.CycleInterval: an arrival is decided at once, freed GPUs wait
 * for the next cycle after the last decision (as sched/tidal's cycle). */
static void test_cycle(void **)
{
	std::string err;
	auto preset = make_preset("tidal", &err);
	SimInput in;
	in.cluster = test::cluster(1, 4);
	in.trace.path = "hand";
	in.trace.jobs = {test::job(1, 4, 0, 10.5), test::job(2, 4, 0.3, 5),
			 test::job(3, 1, 20.25, 1)};
	for (size_t i = 0; i < in.trace.jobs.size(); i++)
		in.trace.jobs[i].index = i;
	preset->prepare(in);
	Params p;
	p.set("Tidal.RestartOverhead", "0");
	p.set("Tidal.CycleInterval", "1");
	RunResult r = preset->run(in, "fifo", p, {}, RunMode::Replay);
	/* Decisions at 0 and 0.3 (arrivals), then 1.3, ..., 11.3. */
	near(result(r, 1).end, 10.5);
	near(result(r, 2).start, 11.3);
	near(result(r, 2).end, 16.3);
	near(result(r, 3).start, 20.25); /* free GPUs: at once */
	/* A policy's wake-up (tiresias demotes at its thresholds) is taken
	 * at the cycle it falls in; it must not stop the clock. */
	p.set("Tiresias.Thresholds", "1");
	r = preset->run(in, "tiresias", p, {}, RunMode::Replay);
	assert_int_equal(r.jobs.size(), 3);
	for (const JobResult &j : r.jobs)
		assert_false(j.rejected);
}

/* A job that no placement can ever start (best-fit takes whole nodes for
 * a wide job: 16 GPUs on nodes of 8, 4 and 4) ends the replay rejected
 * under a cycle too, rather than being decided again every cycle,
 * forever. */
static void test_cycle_never_starts(void **)
{
	std::string err;
	auto preset = make_preset("tidal", &err);
	SimInput in;
	in.cluster = test::cluster(3, 4);
	in.cluster.nodes[0].gpus = 8;
	in.trace.path = "hand";
	in.trace.jobs = {test::job(1, 16, 0, 10), test::job(2, 4, 1, 5)};
	for (size_t i = 0; i < in.trace.jobs.size(); i++)
		in.trace.jobs[i].index = i;
	preset->prepare(in);
	Params p;
	p.set("Tidal.RestartOverhead", "0");
	p.set("Tidal.CycleInterval", "5");
	p.set("Placement", "best-fit");
	RunResult r = preset->run(in, "srtf", p, {}, RunMode::Replay);
	assert_int_equal(r.jobs.size(), 2);
	assert_true(result(r, 1).rejected);
	near(result(r, 2).end, 6);
}

/* Under a cycle, the last job to arrive waits for one that ends between
 * two cycles: the replay goes on to the next cycle and starts it there
 * (the decision at its arrival, t=1, changed nothing and no more arrivals
 * were to come; cycles count from that decision: 6, 11). */
static void test_cycle_end_between_ticks(void **)
{
	std::string err;
	auto preset = make_preset("tidal", &err);
	SimInput in;
	in.cluster = test::cluster(1, 8);
	in.trace.path = "hand";
	in.trace.jobs = {test::job(1, 8, 0, 7), test::job(2, 8, 1, 3)};
	for (size_t i = 0; i < in.trace.jobs.size(); i++)
		in.trace.jobs[i].index = i;
	preset->prepare(in);
	Params p;
	p.set("Tidal.RestartOverhead", "0");
	p.set("Tidal.CycleInterval", "5");
	RunResult r = preset->run(in, "fifo", p, {}, RunMode::Replay);
	assert_int_equal(r.jobs.size(), 2);
	assert_false(result(r, 2).rejected);
	near(result(r, 1).end, 7);
	near(result(r, 2).start, 11);
	near(result(r, 2).end, 14);
}

/* What a preemption costs live (Tidal.RequeueDelay, Tidal.PreemptRelease),
 * on the SRTF scenario without overhead, where job 2 preempts job 1 at
 * t=10. */
static RunResult run_preempt(const char *requeue, const char *release,
			     size_t jobs)
{
	std::string err;
	auto preset = make_preset("tidal", &err);
	SimInput in = scenario();
	in.trace.jobs.resize(jobs);
	preset->prepare(in);
	Params p;
	p.set("Tidal.RestartOverhead", "0");
	p.set("Tidal.RequeueDelay", requeue);
	p.set("Tidal.PreemptRelease", release);
	return preset->run(in, "srtf", p, {}, RunMode::Replay);
}

/* Jobs 1 and 2 only.  Without a delay 1 resumes when 2 ends (t=30) and
 * ends 30+90 = 120.  With Tidal.RequeueDelay=30 it is out of the
 * policy's view until t=40, though the GPUs are free from 30: it ends
 * 40+90 = 130, having queued 10..40. */
static void test_requeue_delay(void **)
{
	RunResult r = run_preempt("0", "0", 2);
	near(result(r, 1).end, 120);
	r = run_preempt("30", "0", 2);
	near(result(r, 2).start, 10);
	near(result(r, 2).end, 30);
	near(result(r, 1).end, 130);
	near(result(r, 1).queue, 30);
	assert_int_equal(result(r, 1).preemptions, 1);
}

/* All three, Tidal.PreemptRelease=5: at t=10 job 1 is preempted, but
 * 2's start on its node waits until the node is done completing (t=15,
 * itself an event): 2 runs 15..35; 3 arrives at 20 and takes the other
 * 2 GPUs at once (20..70); 1 resumes at 70 and ends 160. */
static void test_preempt_release(void **)
{
	RunResult r = run_preempt("0", "5", 3);
	near(result(r, 2).start, 15);
	near(result(r, 2).end, 35);
	near(result(r, 3).start, 20);
	near(result(r, 3).end, 70);
	near(result(r, 1).end, 160);
	assert_int_equal(result(r, 1).preemptions, 1);
}

/* --policy names the tidal preset accepts: the registry's, but those
 * that interleave jobs (they need --preset muri). */
static void test_policy_names(void **)
{
	std::string err;
	auto preset = make_preset("tidal", &err);
	std::vector<std::string> n = preset->policy_names();
	auto has = [&](const char *x) {
		return std::find(n.begin(), n.end(), x) != n.end();
	};
	assert_true(has("fifo") && has("tiresias") && has("elasticflow"));
	assert_false(has("muri-s") || has("muri-l"));
}

/* A bad RestartOverhead is an error, not a silent default. */
static void test_bad_overhead(void **)
{
	std::string err;
	auto preset = make_preset("tidal", &err);
	SimInput in = scenario();
	preset->prepare(in);
	Params p;
	p.set("Tidal.RestartOverhead", "-5");
	try {
		preset->run(in, "fifo", p, {}, RunMode::Replay);
		fail_msg("RestartOverhead=-5 was accepted");
	} catch (const InputError &e) {
		assert_non_null(strstr(e.what(), "Tidal.RestartOverhead=-5"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_with_overhead),
		cmocka_unit_test(test_fifo_without_overhead),
		cmocka_unit_test(test_srtf_with_overhead),
		cmocka_unit_test(test_too_large),
		cmocka_unit_test(test_check_mode),
		cmocka_unit_test(test_elasticflow_profiles),
		cmocka_unit_test(test_profile_speeds),
		cmocka_unit_test(test_cycle),
		cmocka_unit_test(test_cycle_never_starts),
		cmocka_unit_test(test_cycle_end_between_ticks),
		cmocka_unit_test(test_requeue_delay),
		cmocka_unit_test(test_preempt_release),
		cmocka_unit_test(test_policy_names),
		cmocka_unit_test(test_bad_overhead),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
