/*
 * test_muri.cc - the muri preset's time model on hand-made traces, each
 * with its right answer worked out here (MODEL.md §3, §4.1 to §4.4).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>

#include "core/profiles/interleave.h"
#include "sim/preset.h"
#include "sim/presets/muri_model.h"
#include "tests/unit/unit.h"

using namespace tidal;
using namespace tidal::sim;
using namespace tidal::test;

/* A job as the Muri reader gives it: seconds per iteration without the
 * 1.015 solo factor. */
static Job muri_job(JobId id, int gpus, Time submit, double iterations,
		    double iter_s, const char *model)
{
	Job j = job(id, gpus, submit, iterations * iter_s);
	j.iterations = iterations;
	j.iter_time = iter_s;
	j.model = model;
	j.state = JobState::Future;
	return j;
}

static RunResult run(const char *policy, Cluster c, std::vector<Job> jobs)
{
	std::string err;
	auto preset = make_preset("muri", &err);
	assert_non_null(preset.get());
	SimInput in;
	in.cluster = std::move(c);
	in.trace.path = "test.csv";
	in.trace.jobs = std::move(jobs);
	preset->prepare(in);
	return preset->run(in, policy, preset->policy_params(policy), {},
			   RunMode::Replay);
}

static const JobResult &result(const RunResult &r, JobId id)
{
	for (const JobResult &j : r.jobs)
		if (j.id == id)
			return j;
	fail_msg("job %ld not in the result", (long)id);
	abort();
}

static void assert_near(double got, double want)
{
	if (std::fabs(got - want) > 1e-6 * std::max(1.0, std::fabs(want)))
		fail_msg("got %.9f, want %.9f", got, want);
}

static void test_constants(void **)
{
	assert_true(muri::restart_overhead(8, "a2c") == 46);
	assert_true(muri::restart_overhead(16, "vgg19") == 10);
	assert_true(muri::restart_overhead(8, "unknown") == 10);
	assert_true(muri::restart_overhead(3, "vgg16") == 10);
	/* 1019 ms: 1.019 * 1000 is not 1019 in binary; the ms value is
	 * recovered before the anchor's 1019 * 1.015 / 1000. */
	assert_true(muri::solo_iteration_time(1019 / 1000.0) ==
		    1019 * 1.015 / 1000);
	assert_true(muri::isclose(1e6, 1e6 + 5e-4, 1e-9));
	assert_false(muri::isclose(1e6, 1e6 + 2e-3, 1e-9));
	assert_false(muri::isclose(muri::kNever, 1, 1e-9, 1e-4));
	assert_true(muri::isclose(10, 10 + 5e-5, 1e-9, 1e-4));
}

/* Submits 5, 1e6, 1e6 + 0.5 ms, 1e6 + 1.5 ms: the third joins the bin at
 * 1e6 (rel 5e-10); the fourth is close to the third but not to the bin's
 * first submit, so it opens a bin of its own. */
static void test_arrival_bins(void **)
{
	std::vector<muri::MJob> jobs(4);
	double submit[] = {1e6 + 1.5e-3, 1e6, 5, 1e6 + 5e-4};
	for (int i = 0; i < 4; i++) {
		jobs[i].job.id = i;
		jobs[i].job.submit = submit[i];
	}
	auto bins = muri::bin_arrivals(jobs);
	assert_int_equal(bins.size(), 3);
	assert_true(bins[0].time == 5);
	assert_true(bins[1].time == 1e6);
	assert_int_equal(bins[1].jobs.size(), 2);
	assert_int_equal(bins[1].jobs[1]->job.id, 3);
	assert_int_equal(bins[2].jobs[0]->job.id, 0);
}

/* End times 100, 100 (1 + 5e-10), 200 and exactly 100 again.  Binned:
 * the earliest bin holds jobs 0, 1 and 3.  dlas (earliest only, exact):
 * jobs 0 and 3. */
static void test_end_events(void **)
{
	std::vector<muri::MJob> jobs(5);
	double end[] = {100, 100 * (1 + 5e-10), 200, 100, 1};
	std::vector<muri::MJob *> runnable;
	for (int i = 0; i < 5; i++) {
		jobs[i].job.id = i;
		jobs[i].job.state = i == 4 ? JobState::Pending
					   : JobState::Running;
		jobs[i].job.remaining = end[i];
		jobs[i].itertime_cur = 1;
		runnable.push_back(&jobs[i]);
	}
	std::vector<muri::MJob *> ending;
	muri::LoopRules rules;
	assert_true(muri::next_end(runnable, 0, rules, &ending) == 100);
	assert_int_equal(ending.size(), 3);
	assert_int_equal(ending[2]->job.id, 3);
	rules.earliest_end_only = true;
	assert_true(muri::next_end(runnable, 0, rules, &ending) == 100);
	assert_int_equal(ending.size(), 2);
	assert_int_equal(ending[1]->job.id, 3);
}

/* SRTF, one node of 4 GPUs.  A (4 GPUs, 1000 it x 1.015 s, resnet18: 5 s
 * overhead) runs from 0.  B (4 GPUs, 10 it) arrives at 100: A has run
 * 100 - 5 = 95 s of work, 920 s left; B (10.15 s) preempts it and ends at
 * 110.15 without paying any overhead (no event in between).  A restarts
 * and ends at 110.15 + 920. */
static void test_srtf_overhead_per_interval(void **)
{
	RunResult r = run("srtf", cluster(1, 4),
			  {muri_job(1, 4, 0, 1000, 1, "resnet18"),
			   muri_job(2, 4, 100, 10, 1, "resnet18")});
	assert_int_equal(r.jobs.size(), 2);
	assert_near(result(r, 2).jct, 10.15);
	assert_near(result(r, 1).end, 1030.15);
	assert_int_equal(result(r, 1).preemptions, 1);
}

/* dlas-gpu on 4 GPUs.  A (4 GPUs, 1000 it, vgg16: 8 s) runs from 0; its
 * queue jump is at ceil(3250 / 4) = 813 s.  B (4 GPUs, 100 it) arrives at
 * 10 and waits behind A in Q0.  At 813 A has 813 x 4 = 3252 GPU-s, moves
 * to Q1, and B runs until 813 + 101.5 = 914.5.  A did (10 - 8) + (803 - 8)
 * = 797 s of its 1015, so it ends at 914.5 + 218 = 1132.5. */
static void test_tiresias_jump_and_demotion(void **)
{
	RunResult r = run("dlas-gpu", cluster(1, 4),
			  {muri_job(1, 4, 0, 1000, 1, "vgg16"),
			   muri_job(2, 4, 10, 100, 1, "vgg16")});
	assert_near(result(r, 2).end, 914.5);
	assert_near(result(r, 1).end, 1132.5);
	assert_near(result(r, 2).queue, 803);
}

/* The anchor stores an end event on an arrival at the same time; when a
 * queue jump comes first, the arrival still ends those jobs.  A (1 GPU,
 * 4000 it, resnet18: 4 s) would end at 4060, C arrives at exactly 4060,
 * the jump at 3250 delays A by 4 s, yet A ends with C's arrival at 4060. */
static void test_tiresias_end_kept_on_arrival(void **)
{
	double at = 4000 * muri::solo_iteration_time(1);
	RunResult r = run("tiresias", cluster(1, 4),
			  {muri_job(1, 1, 0, 4000, 1, "resnet18"),
			   muri_job(2, 1, at, 10, 1, "resnet18")});
	assert_true(result(r, 1).end == at);
	assert_near(result(r, 2).jct, 10.15);
}

/* A 1-GPU job of 100 iterations of 1.1 s with stage times STAGES. */
static Job staged(JobId id, StageTimes stages, const char *model,
		  int priority = 0)
{
	Job j = muri_job(id, 1, 0, 100, 1.1, model);
	j.stages = stages;
	j.priority_class = priority;
	return j;
}

/*
 * Muri-S on one GPU: a loads data (1, 0.1, 0), b computes (0.1, 1, 0).
 * Both arrive at 0 with equal rank; a fits, its slot brings b, they need
 * 2 GPUs of 1, so the matching pairs them.  The pair's time is
 * max(1, 1) + max(0.1, 0.1) = 1.1 s x 1.33 / 1.015, less than the
 * 2 x 1.1165 s of running them one after another, so autopack keeps it.
 * No event comes between, so no overhead: both end at 100 x that.
 */
static void test_muri_s_pair(void **)
{
	for (const char *m : {"lemon", "anchor"}) {
		std::string err;
		auto preset = make_preset("muri", &err);
		SimInput in;
		in.cluster = cluster(1, 1);
		in.trace.path = "test.csv";
		in.trace.jobs = {staged(1, {1, 0.1, 0}, "dqn"),
				 staged(2, {0.1, 1, 0}, "dqn")};
		preset->prepare(in);
		Params p = preset->policy_params("muri-s");
		p.set("Muri.Matcher", m);
		RunResult r =
			preset->run(in, "muri-s", p, {}, RunMode::Replay);
		double t = 100 * (1.1 * (1.33 / 1.015));
		assert_near(result(r, 1).end, t);
		assert_near(result(r, 2).end, t);
	}
}

/*
 * AntMan on one GPU: g (priority 0) takes it, o (priority 1) joins it
 * (utilisation 0.1 < 0.8).  o's loading (1) spans exactly one of g's
 * compute+sync windows (1 + 0), its compute (0.1) one of g's load+sync
 * windows (0.1): 2 of g's iterations, so o runs at 2 x 1.1165 s.  g ends
 * at 111.65 s; that event costs o its 5 s overhead (dqn, 1 GPU); o then
 * runs alone at 1.1165 s.
 */
static void test_antman_shared_gpu(void **)
{
	std::vector<Job> jobs = {staged(1, {0.1, 1, 0}, "dqn", 0),
				 staged(2, {1, 0.1, 0}, "dqn", 1)};
	RunResult r = run("antman", cluster(1, 1), jobs);
	double it = 1.1 * 1000 * 1.015 / 1000, g_end = 100 * it;
	assert_near(result(r, 1).end, g_end);
	double left = 100 - (g_end - 5) / (2 * it);
	assert_near(result(r, 2).end, g_end + left * it);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constants),
		cmocka_unit_test(test_arrival_bins),
		cmocka_unit_test(test_end_events),
		cmocka_unit_test(test_srtf_overhead_per_interval),
		cmocka_unit_test(test_tiresias_jump_and_demotion),
		cmocka_unit_test(test_tiresias_end_kept_on_arrival),
		cmocka_unit_test(test_muri_s_pair),
		cmocka_unit_test(test_antman_shared_gpu),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
