/*
 * test_baseline_options.cc - the baseline options that reproduce Lucid's
 * simulator (Qssf.Ties, Qssf.NewOrder, Tiresias.Demote), each on a
 * hand-made snapshot with its right answer worked out here.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/baseline.h"
#include "core/model/policy.h"

#include "tests/unit/unit.h"

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

static Job estimated(JobId id, int gpus, Time submit, double estimate)
{
	Job j = job(id, gpus, submit, 10 * estimate);
	j.estimate = estimate;
	return j;
}

/* One node of 2 GPUs.  Job 1: 2 GPUs x 500 s = 1000; job 2: 1 GPU x
 * 1000 s = 1000.  Arrival order starts 1 (2 GPUs) and holds 2; ties by
 * GPUs start 2 first, and 1 (needs 2, 1 free) blocks. */
static void test_qssf_ties_by_gpus(void **)
{
	Cluster c = cluster(1, 2);
	std::vector<Job> jobs = {estimated(1, 2, 0, 500),
				 estimated(2, 1, 1, 1000)};
	Plan a = make("qssf")->decide(snapshot(c, jobs, 5));
	assert_int_equal(action_of(a, 1), Action::Start);
	assert_int_equal(action_of(a, 2), Action::Hold);

	Params p;
	p.set("Qssf.Ties", "gpus");
	Plan g = make("qssf", p)->decide(snapshot(c, jobs, 5));
	assert_int_equal(action_of(g, 2), Action::Start);
	assert_int_equal(action_of(g, 1), Action::Hold);
}

/* Both jobs arrive at t = 10.  Job 1: 2 GPUs x 100 s = 200 ranks before
 * job 2: 1 GPU x 1000 s = 1000 by estimate; with NewOrder=gpus a queue of
 * only new jobs goes by GPU count, so job 2 starts and job 1 waits. */
static void test_qssf_new_queue_by_gpus(void **)
{
	Cluster c = cluster(1, 2);
	std::vector<Job> jobs = {estimated(1, 2, 10, 100),
				 estimated(2, 1, 10, 1000)};
	Plan e = make("qssf")->decide(snapshot(c, jobs, 10));
	assert_int_equal(action_of(e, 1), Action::Start);

	Params p;
	p.set("Qssf.NewOrder", "gpus");
	Plan g = make("qssf", p)->decide(snapshot(c, jobs, 10));
	assert_int_equal(action_of(g, 2), Action::Start);
	assert_int_equal(action_of(g, 1), Action::Hold);
	assert_non_null(strstr(g.find(2)->reason.c_str(), "waited"));
}

/* Once any pending job was submitted earlier than now, estimates apply
 * again: job 1 (200) before job 2 (1000). */
static void test_qssf_waited_job_uses_estimates(void **)
{
	Cluster c = cluster(1, 2);
	std::vector<Job> jobs = {estimated(1, 2, 5, 100),
				 estimated(2, 1, 10, 1000)};
	Params p;
	p.set("Qssf.NewOrder", "gpus");
	Plan g = make("qssf", p)->decide(snapshot(c, jobs, 10));
	assert_int_equal(action_of(g, 1), Action::Start);
	assert_int_equal(action_of(g, 2), Action::Hold);
}

/* Threshold 100: attained 100 reaches it (level 1) but does not exceed
 * it (level 0); 101 exceeds it. */
static void test_tiresias_level_exceed(void **)
{
	std::vector<double> th = {100};
	assert_int_equal(tiresias_level(th, 100), 1);
	assert_int_equal(tiresias_level(th, 100, true), 0);
	assert_int_equal(tiresias_level(th, 101, true), 1);
	assert_int_equal(tiresias_level(th, 99), 0);
}

/* One GPU.  Running job 1 (submitted at 0) has attained exactly 100
 * GPU-s; job 2 (submitted at 5) waits with none.  Demote=reach puts 1 in
 * the low queue, so 2 starts and 1 is preempted; Demote=exceed keeps both
 * high, ordered by submit time, so 1 keeps its GPU. */
static void test_tiresias_demote_exceed(void **)
{
	Cluster c = cluster(1, 1);
	std::vector<Job> jobs = {job(1, 1, 0, 1000), job(2, 1, 5, 1000)};
	jobs[0].state = JobState::Running;
	jobs[0].attained = 100;
	jobs[0].alloc = 1;
	jobs[0].placement = {{0, 1}};
	Params p;
	p.set("Tiresias.Thresholds", "100");
	p.set("Tiresias.Order", "submit");
	p.set("Discipline", "quota");
	Plan r = make("tiresias", p)->decide(snapshot(c, jobs, 100));
	assert_int_equal(action_of(r, 2), Action::Start);
	assert_int_equal(action_of(r, 1), Action::Preempt);

	p.set("Tiresias.Demote", "exceed");
	Plan e = make("tiresias", p)->decide(snapshot(c, jobs, 100));
	assert_int_equal(action_of(e, 1), Action::Keep);
	assert_int_equal(action_of(e, 2), Action::Hold);
}

/* A value outside the choices names itself in the error. */
static void test_bad_option_is_reported(void **)
{
	Params p;
	p.set("Qssf.Ties", "random");
	std::string err;
	auto pol = make_policy("qssf", p, &err);
	assert_null(pol.get());
	assert_non_null(strstr(err.c_str(), "random"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qssf_ties_by_gpus),
		cmocka_unit_test(test_qssf_new_queue_by_gpus),
		cmocka_unit_test(test_qssf_waited_job_uses_estimates),
		cmocka_unit_test(test_tiresias_level_exceed),
		cmocka_unit_test(test_tiresias_demote_exceed),
		cmocka_unit_test(test_bad_option_is_reported),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
