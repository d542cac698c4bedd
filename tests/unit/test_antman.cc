/*
 * test_antman.cc - the core AntMan policy (core/policies/antman.h) on
 * hand-made snapshots of one node with two GPUs, two shards each.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/antman.h"
#include "tests/unit/unit.h"

#include <cstring>

using namespace tidal;
using namespace tidal::test;

static Cluster shared_node()
{
	Cluster c = cluster(1, 2);
	c.sharing.jobs_per_gpu = 2;
	c.sharing.gpus_per_node = 1;
	return c;
}

static Job best_effort(JobId id, Time submit)
{
	Job j = job(id, 1, submit, 100);
	j.best_effort = true;
	return j;
}

/* Running on GPUS of node 0, holding a shard of group GROUP (0 = a whole
 * GPU). */
static Job &running(Job &j, int gpus, JobId group)
{
	j.state = JobState::Running;
	j.alloc = gpus;
	j.placement = { { 0, gpus } };
	j.gpu_group = group;
	return j;
}

static std::unique_ptr<Policy> antman(double cap = 0.8)
{
	Params p;
	p.set("AntMan.UtilCap", std::to_string(cap));
	std::string err;
	auto pol = make_policy("antman", p, &err);
	assert_non_null(pol.get());
	assert_true(pol->shares_gpus());
	return pol;
}

static bool says(const Decision *d, const char *what)
{
	return d && strstr(d->reason.c_str(), what) != nullptr;
}

/*
 * All pending: guaranteed 1 first, on a GPU it shares; best-effort 2 takes
 * the idle GPU (utilisation 0 comes first); 3 joins job 1 (10% < 80%);
 * 4 finds job 1's GPU at 100% and 2's at 90%, and waits.
 */
static void test_start(void **)
{
	Cluster c = shared_node();
	std::vector<Job> jobs = { best_effort(2, 0), job(1, 1, 5, 100),
				  best_effort(3, 1), best_effort(4, 2) };
	Plan plan = antman()->decide(snapshot(c, jobs, 10));
	assert_int_equal((int)plan.decisions.size(), 4);
	assert_int_equal((int)plan.decisions[0].job, 1); /* guaranteed first */
	const Decision *d1 = plan.find(1), *d2 = plan.find(2),
		       *d3 = plan.find(3), *d4 = plan.find(4);
	assert_int_equal((int)d1->action, (int)Action::Start);
	assert_true(d1->share);
	assert_int_equal((int)d1->colocate, 0);
	assert_int_equal((int)d2->action, (int)Action::Start);
	assert_int_equal((int)d2->colocate, 0);
	assert_true(says(d2, "idle GPUs"));
	assert_int_equal((int)d3->action, (int)Action::Start);
	assert_int_equal((int)d3->colocate, 1);
	assert_true(d3->placement == d1->placement);
	assert_true(says(d3, "beside job 1 on GPUs at 10% utilisation"));
	assert_int_equal((int)d4->action, (int)Action::Hold);
	assert_true(says(d4, "cap of 80%"));
	assert_int_equal(d1->rank, 1);
	assert_int_equal(d4->ranked, 4);

	/* A cap of 0.05: no GPU with a job on it is under it. */
	plan = antman(0.05)->decide(snapshot(c, jobs, 10));
	assert_int_equal((int)plan.find(3)->action, (int)Action::Hold);
}

/*
 * Both GPUs held: guaranteed 1 on GPU 0 (a shard), best-effort 2 alone on
 * GPU 1.  Guaranteed 3 arrives: 2 is evicted and 3 waits for its GPU;
 * best-effort 4 joins job 1, never the GPU kept for 3.
 */
static void test_evict_for_guaranteed(void **)
{
	Cluster c = shared_node();
	std::vector<Job> jobs = { job(1, 1, 0, 100), best_effort(2, 1),
				  job(3, 1, 5, 100), best_effort(4, 6) };
	running(jobs[0], 1, 1);
	running(jobs[1], 1, 2);
	Plan plan = antman()->decide(snapshot(c, jobs, 10));
	assert_int_equal((int)plan.find(1)->action, (int)Action::Keep);
	const Decision *d2 = plan.find(2), *d3 = plan.find(3),
		       *d4 = plan.find(4);
	assert_int_equal((int)d2->action, (int)Action::Preempt);
	assert_true(says(d2, "evicted (checkpointed): guaranteed job 3"));
	assert_int_equal((int)d3->action, (int)Action::Hold);
	assert_true(says(d3, "once best-effort jobs 2 have left"));
	assert_int_equal((int)d4->action, (int)Action::Start);
	assert_int_equal((int)d4->colocate, 1);

	/* 2 has gone (requeued): 3 starts on the GPU it left. */
	jobs[1].state = JobState::Pending;
	jobs[1].alloc = 0;
	jobs[1].placement.clear();
	jobs[1].gpu_group = 0;
	plan = antman()->decide(snapshot(c, jobs, 20));
	assert_int_equal((int)plan.find(3)->action, (int)Action::Start);
	assert_int_equal((int)plan.find(3)->colocate, 0);
	/* 2 comes back beside 1 (4 too, on 3's GPU: both under the cap) */
	assert_int_equal((int)plan.find(2)->action, (int)Action::Start);
	assert_int_equal((int)plan.find(2)->colocate, 1);
	assert_int_equal((int)plan.find(4)->action, (int)Action::Start);
	assert_int_equal((int)plan.find(4)->colocate, 3);
}

/*
 * The owner grows: elastic guaranteed 1 (1-2 GPUs) runs on GPU 0 with
 * best-effort 2 beside it; GPU 1 is idle.  1 can grow to 2 GPUs, whole:
 * 2 is evicted first, then 1 is resized, and 2 waits for a GPU.
 */
static void test_owner_grows(void **)
{
	Cluster c = shared_node();
	std::vector<Job> jobs = { job(1, 1, 0, 100), best_effort(2, 1) };
	jobs[0].min_gpus = 1;
	jobs[0].max_gpus = 2;
	running(jobs[0], 1, 1);
	running(jobs[1], 1, 1);
	Plan plan = antman()->decide(snapshot(c, jobs, 10));
	assert_int_equal((int)plan.find(1)->action, (int)Action::Keep);
	assert_true(says(plan.find(1), "grows to 2 GPUs once best-effort "
				       "jobs 2 have left"));
	assert_int_equal((int)plan.find(2)->action, (int)Action::Preempt);
	assert_true(says(plan.find(2), "grows onto its GPUs"));

	jobs[1].state = JobState::Pending;
	jobs[1].alloc = 0;
	jobs[1].placement.clear();
	jobs[1].gpu_group = 0;
	plan = antman()->decide(snapshot(c, jobs, 20));
	const Decision *d1 = plan.find(1);
	assert_int_equal((int)d1->action, (int)Action::Resize);
	assert_int_equal(d1->gpus, 2);
	assert_true(d1->placement == Placement({ { 0, 2 } }));
	assert_int_equal((int)plan.find(2)->action, (int)Action::Hold);
}

/* A guaranteed job that uses its GPU at the cap or more evicts its
 * best-effort partner; below it, the partner stays. */
static void test_busy_owner(void **)
{
	Cluster c = shared_node();
	std::vector<Job> jobs = { job(1, 1, 0, 100), best_effort(2, 1) };
	running(jobs[0], 1, 1);
	running(jobs[1], 1, 1);
	jobs[0].gpu_util = 85;
	Plan plan = antman()->decide(snapshot(c, jobs, 10));
	assert_int_equal((int)plan.find(2)->action, (int)Action::Preempt);
	assert_true(says(plan.find(2), "use 85%, not under the cap of 80%"));
	jobs[0].gpu_util = 30;
	plan = antman()->decide(snapshot(c, jobs, 10));
	assert_int_equal((int)plan.find(2)->action, (int)Action::Keep);
	assert_true(says(plan.find(2), "sharing its GPUs with job 1; their "
				       "guaranteed jobs use 30%, under the "
				       "cap of 80% (120% in all)"));
}

/* Without gres/shard nothing shares: best-effort jobs wait for idle GPUs,
 * and a guaranteed job that does not fit reserves the node. */
static void test_no_sharing(void **)
{
	Cluster c = cluster(1, 2);
	c.sharing.jobs_per_gpu = 1;
	std::vector<Job> jobs = { job(1, 1, 0, 100), job(2, 2, 1, 100),
				  best_effort(3, 2) };
	running(jobs[0], 1, 0);
	Plan plan = antman()->decide(snapshot(c, jobs, 10));
	assert_int_equal((int)plan.find(2)->action, (int)Action::Hold);
	assert_true(says(plan.find(2), "needs 2 GPUs, 1 are free"));
	/* the reserved GPU is lent to the best-effort job, whole */
	const Decision *d3 = plan.find(3);
	assert_int_equal((int)d3->action, (int)Action::Start);
	assert_false(d3->share);
	assert_int_equal((int)d3->colocate, 0);
}

/* The rules the muri preset's anchor model shares with the policy. */
static void test_shared_rules(void **)
{
	/* Guaranteed first, then by submit time, then input order. */
	Job g = job(1, 1, 50, 100), o = best_effort(2, 10);
	Job c = job(3, 1, 5, 100);
	c.priority_class = 2;
	g.index = 1, o.index = 2, c.index = 3;
	assert_true(antman_before(g, o));
	assert_false(antman_before(o, g));
	assert_true(antman_before(g, c));
	assert_true(antman_before(c, o)); /* both opportunistic: submit */
	Job g2 = job(4, 1, 50, 100);
	g2.index = 4;
	assert_true(antman_before(g, g2));
	assert_false(antman_before(g2, g));
	assert_false(antman_before(g, g));
	assert_float_equal(antman_default_util(false), 0.1, 0);
	assert_float_equal(antman_default_util(true), 0.9, 0);
	assert_float_equal(antman_util(o), 0.9, 0);
	o.gpu_util = 40;
	assert_float_equal(antman_util(o), 0.4, 1e-12);

	/* The least utilised under the cap, the lower index among equals,
	 * all or nothing. */
	std::vector<double> u = { 0.5, 0.1, 0.8, 0.1, 0.79 };
	std::vector<int> pick = antman_least_utilised(u, 3, 0.8);
	assert_int_equal(pick.size(), 3);
	assert_int_equal(pick[0], 1);
	assert_int_equal(pick[1], 3);
	assert_int_equal(pick[2], 0);
	assert_true(antman_least_utilised(u, 5, 0.8).empty()); /* 0.8 is not under */
	assert_int_equal(antman_least_utilised(u, 5, 0.81).size(), 5);
	assert_true(antman_least_utilised(u, 0, 0.8).empty());
	assert_true(antman_least_utilised(u, -1, 0.8).empty());
	assert_true(antman_least_utilised({}, 1, 0.8).empty());
}

static void test_bad_params(void **)
{
	Params p;
	p.set("AntMan.UtilCap", "abc");
	std::string err;
	auto pol = make_policy("antman", p, &err);
	assert_null(pol.get());
	assert_non_null(strstr(err.c_str(), "AntMan.UtilCap"));
	Params q;
	q.set("AntMan.Placement", "nowhere");
	pol = make_policy("antman", q, &err);
	assert_null(pol.get());
	assert_non_null(strstr(err.c_str(), "AntMan.Placement"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start),
		cmocka_unit_test(test_evict_for_guaranteed),
		cmocka_unit_test(test_owner_grows),
		cmocka_unit_test(test_busy_owner),
		cmocka_unit_test(test_no_sharing),
		cmocka_unit_test(test_shared_rules),
		cmocka_unit_test(test_bad_params),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
