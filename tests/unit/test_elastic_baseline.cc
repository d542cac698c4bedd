/*
 * test_elastic_baseline.cc - elastic-fifo and elastic-edf on hand-made
 * snapshots: growth into idle GPUs, shrinking for a deadline job, the
 * infeasible-deadline reject, MinGrowth.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/elastic_baseline.h"
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

static const Decision &decision(const Plan &p, JobId id)
{
	const Decision *d = p.find(id);
	assert_non_null(d);
	return *d;
}

/* Elastic job ID (MIN-MAX) running on the first NODES nodes, 8 each. */
static Job running_elastic(JobId id, int min, int max, int nodes)
{
	Job j = job(id, 8 * nodes, 0, 1000);
	j.min_gpus = min;
	j.max_gpus = max;
	j.state = JobState::Running;
	j.alloc = 8 * nodes;
	for (int n = 0; n < nodes; n++)
		j.placement.push_back({ n, 8 });
	return j;
}

/* 4 x 8 GPUs, E (8-32) runs on 16: the 16 idle GPUs go to it, beside its
 * own (its placement keeps n0 and n1). */
static void test_grows_into_idle(void **)
{
	Cluster c = cluster(4, 8);
	std::vector<Job> jobs = { running_elastic(1, 8, 32, 2) };
	Plan p = make("elastic-fifo")->decide(snapshot(c, jobs, 10));
	const Decision &d = decision(p, 1);
	assert_int_equal(d.action, Action::Resize);
	assert_int_equal(d.gpus, 32);
	assert_int_equal(placement_gpus(d.placement), 32);
	assert_int_equal(d.placement[0].node, 0);
	assert_non_null(strstr(d.reason.c_str(), "grows from 16 to "));
}

/* E (8-32) holds all 32; D (16 GPUs, deadline) arrives.  elastic-edf:
 * D's floor 16 first, E's floor 8, E keeps 8 more = 16: E shrinks to 16
 * on n0,n1 and D starts on n2,n3. */
static void test_shrinks_for_deadline_job(void **)
{
	Cluster c = cluster(4, 8);
	Job d = job(2, 16, 5, 100);
	d.deadline = 10 + 1000;
	std::vector<Job> jobs = { running_elastic(1, 8, 32, 4), d };
	Plan p = make("elastic-edf")->decide(snapshot(c, jobs, 10));
	assert_int_equal(decision(p, 1).action, Action::Resize);
	assert_int_equal(decision(p, 1).gpus, 16);
	assert_int_equal(decision(p, 1).placement[1].node, 1);
	assert_int_equal(decision(p, 2).action, Action::Start);
	assert_int_equal(decision(p, 2).gpus, 16);
	assert_int_equal(decision(p, 2).placement[0].node, 2);
	assert_non_null(
		strstr(decision(p, 1).reason.c_str(), "shrinks from 32 to 16 GPUs"));
}

/* elastic-fifo ranks by submit time.  Floors come before extras, so a
 * later rigid job of 16 would shrink E; one of 32 does not fit beside E's
 * floor of 8, so E keeps its 32 and D waits. */
static void test_fifo_keeps_earlier_job(void **)
{
	Cluster c = cluster(4, 8);
	Job d = job(2, 32, 5, 100);
	std::vector<Job> jobs = { running_elastic(1, 8, 32, 4), d };
	Plan p = make("elastic-fifo")->decide(snapshot(c, jobs, 10));
	assert_int_equal(decision(p, 1).action, Action::Keep);
	assert_int_equal(decision(p, 2).action, Action::Hold);
	assert_non_null(
		strstr(decision(p, 2).reason.c_str(), "needs 32 GPUs, 0 free"));
	assert_int_equal(decision(p, 2).rank, 2);
	assert_int_equal(decision(p, 2).ranked, 2);

	/* A rigid job says what it runs on, not only the policy's name. */
	std::vector<Job> one = { job(3, 8, 5, 100) };
	Plan q = make("elastic-fifo")->decide(snapshot(c, one, 10));
	assert_string_equal(decision(q, 3).reason.c_str(),
			    "elastic-fifo: starts on 8 GPUs");
}

/* D needs 100 s at 8 GPUs (rigid) with 50 s left: elastic-edf rejects
 * it; elastic (8-16) it would need 50 s at 16 and is accepted. */
static void test_rejects_infeasible_deadline(void **)
{
	Cluster c = cluster(2, 8);
	Job d = job(2, 8, 5, 100);
	d.deadline = 10 + 50;
	std::vector<Job> jobs = { d };
	Plan p = make("elastic-edf")->decide(snapshot(c, jobs, 10));
	assert_int_equal(decision(p, 2).action, Action::Reject);
	assert_non_null(strstr(decision(p, 2).reason.c_str(),
			       "infeasible: needs 100 s at 8 GPUs"));
	assert_int_equal(
		decision(make("elastic-fifo")->decide(snapshot(c, jobs, 10)), 2)
			.action,
		Action::Start);

	jobs[0].min_gpus = 8;
	jobs[0].max_gpus = 16;
	p = make("elastic-edf")->decide(snapshot(c, jobs, 10));
	assert_int_equal(decision(p, 2).action, Action::Start);
	assert_int_equal(decision(p, 2).gpus, 16);
}

/* D has a deadline but no known run time (no time limit, no
 * --train-iters): elastic-edf rejects it saying what it lacks, not the
 * placeholder's seconds; with --train-iters but no measured speed, the
 * same with its own words; with a known time it starts. */
static void test_rejects_unknown_work(void **)
{
	Cluster c = cluster(4, 8);
	Job d = job(2, 1, 5, 365 * 86400.0);
	d.min_gpus = 1;
	d.max_gpus = 4;
	d.deadline = 10 + 3600;
	d.time_known = false;
	d.iterations_known = false;
	std::vector<Job> jobs = { d };
	Plan p = make("elastic-edf")->decide(snapshot(c, jobs, 10));
	assert_int_equal(decision(p, 2).action, Action::Reject);
	assert_int_equal(decision(p, 2).rank, 1);
	assert_int_equal(decision(p, 2).ranked, 1);
	assert_string_equal(decision(p, 2).reason.c_str(),
			    "elastic-edf: deadline in 3600 s; its "
			    "work is unknown: no time limit and no "
			    "--train-iters, so the deadline cannot be checked; "
			    "give it a time limit (sbatch -t)");
	assert_null(strstr(decision(p, 2).reason.c_str(), "7884000"));

	jobs[0].iterations_known = true;
	p = make("elastic-edf")->decide(snapshot(c, jobs, 10));
	assert_int_equal(decision(p, 2).action, Action::Reject);
	assert_non_null(strstr(decision(p, 2).reason.c_str(),
			       "its run time is unknown: no time limit, and "
			       "its --train-iters have no measured speed yet"));

	/* elastic-fifo does not test deadlines: it runs it. */
	assert_int_equal(
		decision(make("elastic-fifo")->decide(snapshot(c, jobs, 10)), 2)
			.action,
		Action::Start);
	jobs[0].time_known = true;
	jobs[0].remaining = 100;
	p = make("elastic-edf")->decide(snapshot(c, jobs, 10));
	assert_int_equal(decision(p, 2).action, Action::Start);
}

/* One node of 8: rigid R runs on 4; pending E (2-8) starts at the 4
 * left.  With MinGrowth=2 a running E at 7 GPUs does not grow by 1. */
static void test_pending_start_size_and_min_growth(void **)
{
	Cluster c = cluster(1, 8);
	Job r = job(1, 4, 0, 100);
	r.state = JobState::Running;
	r.alloc = 4;
	r.placement = { { 0, 4 } };
	Job e = job(2, 2, 1, 100);
	e.min_gpus = 2;
	e.max_gpus = 8;
	std::vector<Job> jobs = { r, e };
	Plan p = make("elastic-fifo")->decide(snapshot(c, jobs, 10));
	assert_int_equal(decision(p, 1).action, Action::Keep);
	assert_int_equal(decision(p, 2).action, Action::Start);
	assert_int_equal(decision(p, 2).gpus, 4);

	Job e7 = e;
	e7.state = JobState::Running;
	e7.alloc = 7;
	e7.gpus = 7;
	e7.placement = { { 0, 7 } };
	std::vector<Job> one = { e7 };
	Params prm;
	prm.set("elastic-fifo.MinGrowth", "2");
	p = make("elastic-fifo", prm)->decide(snapshot(c, one, 10));
	assert_int_equal(decision(p, 2).action, Action::Keep);
	p = make("elastic-fifo")->decide(snapshot(c, one, 10));
	assert_int_equal(decision(p, 2).action, Action::Resize);
	assert_int_equal(decision(p, 2).gpus, 8);
}

/* elastic-edf rejects infeasible deadlines itself (unless told not to),
 * so sched/tidal leaves Slurm's deadline check to it; elastic-fifo does
 * not. */
static void test_admits_by_deadline(void **)
{
	Params none;
	assert_true(ElasticBaseline("elastic-edf", true, none)
			    .admits_by_deadline());
	assert_false(ElasticBaseline("elastic-fifo", false, none)
			     .admits_by_deadline());
	Params off = Params::parse("elastic-edf.Reject=no", "test");
	assert_false(ElasticBaseline("elastic-edf", true, off)
			     .admits_by_deadline());
}

/* With nothing pending, only an elastic job can change: a replay need not
 * ask while none is active (Policy::idle_without_pending). */
static void test_idle_without_elastic_jobs(void **)
{
	Cluster c = cluster(4, 8);
	auto pol = make("elastic-edf");
	Job r = job(1, 8, 0, 1000);
	r.state = JobState::Running;
	r.alloc = 8;
	r.placement = {{0, 8}};
	std::vector<Job> rigid = {r};
	pol->decide(snapshot(c, rigid, 10));
	assert_true(pol->idle_without_pending());
	std::vector<Job> mixed = {r, running_elastic(2, 8, 16, 1)};
	mixed[1].placement = {{1, 8}};
	pol->decide(snapshot(c, mixed, 20));
	assert_false(pol->idle_without_pending());
}

/* Every form of the reason, whole (the text tidalctl and squeue show):
 * grows, shrinks, starts with a deadline, waits, elastic at a size, a
 * rigid job on its GPUs, and the infeasible reject. */
static void test_reason_texts(void **)
{
	Cluster c = cluster(4, 8);
	std::vector<Job> grow = { running_elastic(1, 8, 32, 2) };
	Plan p = make("elastic-fifo")->decide(snapshot(c, grow, 10));
	assert_string_equal(decision(p, 1).reason.c_str(),
			    "elastic-fifo: elastic 8-32, grows from 16 to 32 "
			    "GPUs");

	Job d = job(2, 16, 5, 100);
	d.deadline = 10 + 1000;
	std::vector<Job> shrink = { running_elastic(1, 8, 32, 4), d };
	p = make("elastic-edf")->decide(snapshot(c, shrink, 10));
	assert_string_equal(decision(p, 1).reason.c_str(),
			    "elastic-edf: elastic 8-32, shrinks from 32 to 16 "
			    "GPUs");
	assert_string_equal(decision(p, 2).reason.c_str(),
			    "elastic-edf: deadline in 1000 s; starts on 16 "
			    "GPUs");

	std::vector<Job> wait = { running_elastic(1, 8, 32, 4),
				  job(2, 32, 5, 100) };
	p = make("elastic-fifo")->decide(snapshot(c, wait, 10));
	assert_string_equal(decision(p, 1).reason.c_str(),
			    "elastic-fifo: elastic 8-32, at 32 GPUs");
	assert_string_equal(decision(p, 2).reason.c_str(),
			    "elastic-fifo: needs 32 GPUs, 0 free");

	Job r = job(1, 4, 0, 100);
	r.state = JobState::Running;
	r.alloc = 4;
	r.placement = { { 0, 4 } };
	std::vector<Job> rigid = { r };
	p = make("elastic-fifo")->decide(snapshot(c, rigid, 10));
	assert_string_equal(decision(p, 1).reason.c_str(),
			    "elastic-fifo: on 4 GPUs");

	Job late = job(3, 8, 5, 100);
	late.deadline = 10 + 50;
	std::vector<Job> reject = { late };
	p = make("elastic-edf")->decide(snapshot(c, reject, 10));
	assert_string_equal(decision(p, 3).reason.c_str(),
			    "elastic-edf: deadline in 50 s; infeasible: needs "
			    "100 s at 8 GPUs");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grows_into_idle),
		cmocka_unit_test(test_shrinks_for_deadline_job),
		cmocka_unit_test(test_fifo_keeps_earlier_job),
		cmocka_unit_test(test_rejects_infeasible_deadline),
		cmocka_unit_test(test_rejects_unknown_work),
		cmocka_unit_test(test_pending_start_size_and_min_growth),
		cmocka_unit_test(test_admits_by_deadline),
		cmocka_unit_test(test_idle_without_elastic_jobs),
		cmocka_unit_test(test_reason_texts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
