/*
 * test_baseline.cc - the baseline policies on hand-made snapshots, each
 * with its right answer worked out here.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "tests/unit/unit.h"

#include "core/policies/baseline.h"
#include "core/model/policy.h"

using namespace tidal;
using namespace tidal::test;

static std::unique_ptr<Policy> make(const char *name, Params p = {})
{
	std::string err;
	auto pol = make_policy(name, p, &err);
	assert_non_null(pol.get());
	return pol;
}

static Action action_of(const Plan &p, JobId id)
{
	const Decision *d = p.find(id);
	assert_non_null(d);
	return d->action;
}

/* 2 nodes x 4 GPUs.  FIFO: job 1 (4 GPUs) starts, job 2 (8 GPUs) cannot
 * fit in the 4 left and blocks job 3 (1 GPU) behind it. */
static void test_fifo_blocks_head_of_line(void **)
{
	Cluster c = cluster(2, 4);
	std::vector<Job> jobs = {job(1, 4, 0, 100), job(2, 8, 1, 100),
				 job(3, 1, 2, 100)};
	Plan p = make("fifo")->decide(snapshot(c, jobs, 2));
	assert_int_equal(action_of(p, 1), Action::Start);
	assert_int_equal(action_of(p, 2), Action::Hold);
	assert_int_equal(action_of(p, 3), Action::Hold);
	assert_non_null(strstr(p.find(3)->reason.c_str(), "behind job 2"));
}

/* The queue order travels as numbers, not in the Reason: rank 1..3 of
 * 3, and a Reason that stays the same when a job ahead leaves.  On 4
 * GPUs, job 1 (8 GPUs) cannot fit and blocks 2 and 3 behind it. */
static void test_rank_is_a_number(void **)
{
	Cluster c = cluster(1, 4);
	std::vector<Job> jobs = { job(1, 8, 0, 100), job(2, 8, 1, 100),
				  job(3, 1, 2, 100) };
	Plan p = make("fifo")->decide(snapshot(c, jobs, 2));
	for (JobId id = 1; id <= 3; id++) {
		assert_int_equal(p.find(id)->rank, (int)id);
		assert_int_equal(p.find(id)->ranked, 3);
		assert_null(strstr(p.find(id)->reason.c_str(), "rank"));
	}
	std::string before = p.find(3)->reason;
	jobs.erase(jobs.begin() + 1); /* job 2 is cancelled */
	Plan q = make("fifo")->decide(snapshot(c, jobs, 2));
	assert_int_equal(q.find(3)->rank, 2);
	assert_int_equal(q.find(3)->ranked, 2);
	assert_string_equal(q.find(3)->reason.c_str(), before.c_str());
}

/* The same queue with Discipline=skip backfills job 3. */
static void test_fifo_skip_backfills(void **)
{
	Cluster c = cluster(2, 4);
	std::vector<Job> jobs = {job(1, 4, 0, 100), job(2, 8, 1, 100),
				 job(3, 1, 2, 100)};
	Params prm;
	prm.set("Discipline", "skip");
	Plan p = make("fifo", prm)->decide(snapshot(c, jobs, 2));
	assert_int_equal(action_of(p, 3), Action::Start);
}

/* SRTF on 4 GPUs: running job 1 has 500 s left on 4 GPUs; job 2 arrives
 * needing 4 GPUs for 100 s.  100 < 500, so 2 starts and 1 is preempted. */
static void test_srtf_preempts_longer(void **)
{
	Cluster c = cluster(1, 4);
	std::vector<Job> jobs = {job(1, 4, 0, 1000), job(2, 4, 10, 100)};
	jobs[0].state = JobState::Running;
	jobs[0].remaining = 500;
	jobs[0].alloc = 4;
	jobs[0].placement = {{0, 4}};
	Plan p = make("srtf")->decide(snapshot(c, jobs, 10));
	assert_int_equal(action_of(p, 2), Action::Start);
	assert_int_equal(action_of(p, 1), Action::Preempt);
}

/* SRSF weighs by GPUs: job 1 has 300 s x 1 GPU = 300, job 2 200 s x 4 GPUs
 * = 800.  With 4 GPUs, 1 runs first (SRTF would pick 2). */
static void test_srsf_weighs_gpus(void **)
{
	Cluster c = cluster(1, 4);
	std::vector<Job> jobs = {job(1, 1, 0, 300), job(2, 4, 0, 200)};
	Plan srsf = make("srsf")->decide(snapshot(c, jobs, 0));
	assert_int_equal(action_of(srsf, 1), Action::Start);
	assert_int_equal(action_of(srsf, 2), Action::Hold);
	Plan srtf = make("srtf")->decide(snapshot(c, jobs, 0));
	assert_int_equal(action_of(srtf, 2), Action::Start);
	assert_int_equal(action_of(srtf, 1), Action::Hold);
}

/* EDF: the later-submitted job with the earlier deadline goes first. */
static void test_edf_orders_by_deadline(void **)
{
	Cluster c = cluster(1, 2);
	std::vector<Job> jobs = {job(1, 2, 0, 100), job(2, 2, 5, 100)};
	jobs[0].deadline = 1000;
	jobs[1].deadline = 500;
	Plan p = make("edf")->decide(snapshot(c, jobs, 5));
	assert_int_equal(action_of(p, 2), Action::Start);
	assert_int_equal(action_of(p, 1), Action::Hold);
}

/* Tiresias with thresholds {3250}: job 1 has attained 4000 GPU*s (level 1),
 * job 2 none (level 0).  On 1 GPU, 2 runs and 1 is preempted; the wake-up
 * is when job 2 crosses 3250 GPU*s at 1 GPU: now + 3250. */
static void test_tiresias_levels(void **)
{
	Cluster c = cluster(1, 1);
	std::vector<Job> jobs = {job(1, 1, 0, 10000), job(2, 1, 100, 10000)};
	jobs[0].state = JobState::Running;
	jobs[0].alloc = 1;
	jobs[0].placement = {{0, 1}};
	jobs[0].attained = 4000;
	Params prm;
	prm.set("Tiresias.Thresholds", "3250");
	Plan p = make("tiresias", prm)->decide(snapshot(c, jobs, 100));
	assert_int_equal(action_of(p, 2), Action::Start);
	assert_int_equal(action_of(p, 1), Action::Preempt);
	assert_int_equal(tiresias_level({3250, 7200}, 7200), 2);
	assert_int_equal(tiresias_level({3250, 7200}, 3249.9), 0);
}

/* QSSF: estimate x GPUs.  Job 1: 1000 s x 1 = 1000; job 2: 100 s x 8 =
 * 800, so 2 first. */
static void test_qssf_estimate_times_gpus(void **)
{
	Cluster c = cluster(1, 8);
	std::vector<Job> jobs = {job(1, 1, 0, 5), job(2, 8, 0, 5)};
	jobs[0].estimate = 1000;
	jobs[1].estimate = 100;
	Plan p = make("qssf")->decide(snapshot(c, jobs, 0));
	assert_int_equal(action_of(p, 2), Action::Start);
	assert_int_equal(action_of(p, 1), Action::Hold);
}

static void test_unknown_policy_and_bad_param(void **)
{
	std::string err;
	assert_null(make_policy("nope", {}, &err).get());
	assert_non_null(strstr(err.c_str(), "unknown policy 'nope'"));
	Params prm;
	prm.set("Placement", "diagonal");
	assert_null(make_policy("fifo", prm, &err).get());
	assert_non_null(strstr(err.c_str(), "Placement=diagonal"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_blocks_head_of_line),
		cmocka_unit_test(test_fifo_skip_backfills),
		cmocka_unit_test(test_rank_is_a_number),
		cmocka_unit_test(test_srtf_preempts_longer),
		cmocka_unit_test(test_srsf_weighs_gpus),
		cmocka_unit_test(test_edf_orders_by_deadline),
		cmocka_unit_test(test_tiresias_levels),
		cmocka_unit_test(test_qssf_estimate_times_gpus),
		cmocka_unit_test(test_unknown_policy_and_bad_param),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
