/*
 * test_lucid.cc - the core Lucid policy (core/policies/lucid.h) on
 * hand-made snapshots: the profiler phase, packing by Lucid's rule,
 * sharing switched by the submission rate, and its saved state.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/lucid.h"
#include "tests/unit/unit.h"

#include <cstring>

using namespace tidal;
using namespace tidal::test;

/* N nodes of 2 GPUs, two shards per GPU. */
static Cluster shared_nodes(int n)
{
	Cluster c = cluster(n, 2);
	c.sharing.jobs_per_gpu = 2;
	c.sharing.gpus_per_node = 1;
	return c;
}

static Job &running(Job &j, int node, int gpus, JobId group, Time start)
{
	j.state = JobState::Running;
	j.alloc = gpus;
	j.placement = { { node, gpus } };
	j.gpu_group = group;
	j.start = start;
	return j;
}

static Job &use(Job &j, double util, double mem, double estimate)
{
	j.gpu_util = util;
	j.gpu_mem_mb = mem;
	j.estimate = estimate;
	return j;
}

static std::unique_ptr<Policy>
lucid(std::vector<std::pair<const char *, const char *>> kv)
{
	Params p;
	for (auto [k, v] : kv)
		p.set(k, v);
	std::string err;
	auto pol = make_policy("lucid", p, &err);
	assert_non_null(pol.get());
	assert_true(p.errors().empty());
	assert_true(pol->shares_gpus());
	return pol;
}

static bool says(const Decision *d, const char *what)
{
	if (d && strstr(d->reason.c_str(), what))
		return true;
	fprintf(stderr, "reason '%s' does not say '%s'\n",
		d ? d->reason.c_str() : "(no decision)", what);
	return false;
}

/*
 * New jobs go to the profiler node n1 first, Least-GPU-First: 1 and 3
 * (1 GPU each) start there, whole GPUs; 2 (2 GPUs) waits for it, and n0
 * stays free.
 */
static void test_profiler_first(void **)
{
	Cluster c = shared_nodes(2);
	std::vector<Job> jobs = { job(1, 1, 0, 1000), job(2, 2, 1, 1000),
				  job(3, 1, 2, 1000) };
	auto pol = lucid({ { "Lucid.ProfilerNodes", "n1" } });
	Plan plan = pol->decide(snapshot(c, jobs, 10));
	const Decision *d1 = plan.find(1), *d2 = plan.find(2),
		       *d3 = plan.find(3);
	assert_int_equal((int)d1->action, (int)Action::Start);
	assert_int_equal(d1->placement[0].node, 1);
	assert_false(d1->share);
	assert_true(says(d1, "profiled first: up to 200 s"));
	assert_int_equal((int)d3->action, (int)Action::Start);
	assert_int_equal(d3->placement[0].node, 1);
	assert_int_equal((int)d2->action, (int)Action::Hold);
	assert_true(says(d2, "waits for 2 GPUs on the profiler nodes, 0 free"));
	/* LGF order: 1, 3, then 2 */
	assert_true(d1->rank < d3->rank && d3->rank < d2->rank);
	/* The plan keeps n1 for profiling (sched/tidal places no other
	 * start there, not even one it lets Slurm place). */
	assert_true(plan.kept_nodes == std::vector<int>{ 1 });

	/* A name that is no node is said once, and not used. */
	pol = lucid({ { "Lucid.ProfilerNodes", "n1,n7" } });
	plan = pol->decide(snapshot(c, jobs, 10));
	assert_int_equal((int)plan.log.size(), 1);
	assert_string_equal(plan.log[0].c_str(),
			    "Lucid.ProfilerNodes: n7: no such node with GPUs; "
			    "not used");
	assert_int_equal(plan.find(1)->placement[0].node, 1);
	assert_true(plan.kept_nodes == std::vector<int>{ 1 });
	assert_true(pol->decide(snapshot(c, jobs, 11)).log.empty());
	/* Without profiler nodes it keeps none. */
	assert_true(lucid({})->decide(snapshot(c, jobs, 10)).kept_nodes.empty());
}

/*
 * Job 1 profiles on n1 from t=0, its trainer measuring 40% and 3000 MiB:
 * kept at t=100, preempted at t=200 with its profile, and then, pending,
 * it starts on n0 on a shard.  The profile survives the job's absence from
 * a snapshot (requeued, completing) and a restart.
 */
static void test_profile_end(void **)
{
	Cluster c = shared_nodes(2);
	std::vector<Job> jobs = { job(1, 1, 0, 1000) };
	running(jobs[0], 1, 1, 0, 0);
	use(jobs[0], 40, 3000, 1000);
	auto pol = lucid({ { "Lucid.ProfilerNodes", "n1" } });
	Plan plan = pol->decide(snapshot(c, jobs, 100));
	assert_int_equal((int)plan.find(1)->action, (int)Action::Keep);
	assert_true(says(plan.find(1), "profiling, 100 s of 200"));
	plan = pol->decide(snapshot(c, jobs, 200));
	const Decision *d = plan.find(1);
	assert_int_equal((int)d->action, (int)Action::Preempt);
	assert_true(says(d, "GPU utilisation 40%, 3000 MiB of GPU memory, "
			    "sharescore 1"));

	/* Requeued: out of the snapshots while it completes, then pending,
	 * with no measurement now. */
	plan = pol->decide(snapshot(c, {}, 205));
	jobs[0] = job(1, 1, 0, 1000);
	jobs[0].estimate = 1000;
	std::vector<std::string> saved = pol->save_state();
	auto again = lucid({ { "Lucid.ProfilerNodes", "n1" } });
	for (const std::string &l : saved)
		assert_true(again->load_state(l));
	assert_false(again->load_state("job 1 profile 400 1 1 1"));
	assert_false(again->load_state("job 1 profile 40 1 1"));
	assert_false(again->load_state("job x submit 1"));
	for (Policy *p : { pol.get(), again.get() }) {
		plan = p->decide(snapshot(c, jobs, 210));
		d = plan.find(1);
		assert_int_equal((int)d->action, (int)Action::Start);
		assert_int_equal(d->placement[0].node, 0);
		assert_true(d->share);
	}
	/* Packed, it measures 10%: its profile (40%, sharescore 1) stays. */
	running(jobs[0], 0, 1, 1, 220);
	use(jobs[0], 10, 3000, 1000);
	plan = pol->decide(snapshot(c, jobs, 230));
	d = plan.find(1);
	assert_int_equal((int)d->action, (int)Action::Keep);
	double score = -1;
	for (const auto &[k, v] : d->numbers)
		if (k == "sharescore")
			score = v;
	assert_true(score == 1);
}

/*
 * No profiler, sharing always on.  Host 1 runs alone on a shard of n0
 * (30%: sharescore 1).  Job 3 (90%, sharescore 2) comes first by
 * priority: 2 + 1 is over 2, so it takes n0's free GPU.  Job 2 (10%)
 * packs beside 1.  Job 4 (22000 MiB) finds 1 packed and 3 too full of
 * memory, and no free GPU: it waits.
 */
static void test_pack(void **)
{
	Cluster c = shared_nodes(1);
	std::vector<Job> jobs = { job(1, 1, 0, 1000), job(2, 1, 1, 1000),
				  job(3, 1, 2, 1000), job(4, 1, 3, 1000) };
	running(jobs[0], 0, 1, 1, 0);
	use(jobs[0], 30, 4000, 1000);
	use(jobs[1], 10, 3000, 500);
	use(jobs[2], 90, 5000, 100);
	use(jobs[3], 10, 22000, 600);
	auto pol = lucid({ { "Lucid.Sharing", "always" } });
	Plan plan = pol->decide(snapshot(c, jobs, 10));
	const Decision *d2 = plan.find(2), *d3 = plan.find(3),
		       *d4 = plan.find(4);
	assert_int_equal((int)plan.find(1)->action, (int)Action::Keep);
	assert_int_equal((int)d3->action, (int)Action::Start);
	assert_int_equal((int)d3->colocate, 0);
	assert_true(d3->share);
	assert_true(says(d3, "not packed: job 1 sharescore 2 + 1 is over 2"));
	assert_int_equal((int)d2->action, (int)Action::Start);
	assert_int_equal((int)d2->colocate, 1);
	assert_true(d2->placement == jobs[0].placement);
	assert_true(says(d2, "packed beside job 1: sharescore 0 + 1"));
	assert_int_equal((int)d4->action, (int)Action::Hold);
	assert_true(says(d4, "GPU memory 5000 + 22000 MiB is not below 24576"));
	/* priority order: 3 (100), 2 (500), 4 (600) */
	assert_true(d3->rank < d2->rank && d2->rank < d4->rank);

	/* With a bigger memory cap, 4's priority (600) is over 2 x 3's;
	 * with a ratio of 10 too, 4 joins 3. */
	plan = lucid({ { "Lucid.Sharing", "always" },
		       { "Lucid.GpuMemory", "40000" } })
		       ->decide(snapshot(c, jobs, 10));
	assert_true(
		says(plan.find(4), "priority 600 is over 2 x the host's 100"));
	plan = lucid({ { "Lucid.Sharing", "always" },
		       { "Lucid.GpuMemory", "40000" },
		       { "Lucid.PriorityRatio", "10" } })
		       ->decide(snapshot(c, jobs, 10));
	assert_int_equal((int)plan.find(4)->colocate, 3);
}

/*
 * Sharing off: in priority order, and the first that does not fit stops
 * the queue: 2 (2 GPUs) waits, so 3 waits behind it though a GPU is free.
 * Sharing on, 3 goes past 2 onto the free GPU.
 */
static void test_blocking(void **)
{
	Cluster c = shared_nodes(1);
	std::vector<Job> jobs = { job(1, 1, 0, 1000), job(2, 2, 1, 1000),
				  job(3, 1, 2, 1000) };
	running(jobs[0], 0, 1, 1, 0);
	jobs[1].estimate = 10;
	jobs[2].estimate = 100;
	Plan plan = lucid({ { "Lucid.Sharing", "never" } })
			    ->decide(snapshot(c, jobs, 10));
	assert_int_equal((int)plan.find(2)->action, (int)Action::Hold);
	assert_int_equal((int)plan.find(3)->action, (int)Action::Hold);
	assert_true(says(plan.find(3), "sharing off (Lucid.Sharing); in "
				       "priority order behind job 2"));
	plan = lucid({ { "Lucid.Sharing", "always" } })
		       ->decide(snapshot(c, jobs, 10));
	assert_int_equal((int)plan.find(3)->action, (int)Action::Start);
}

/*
 * Auto: sharing is on while more than 2 jobs per 10 minutes were
 * submitted over the last 3000 s: 11 of them (2.2) turn it on, 10 (2.0)
 * do not.
 */
static void test_auto_sharing(void **)
{
	Cluster c = shared_nodes(4);
	for (int n : { 10, 11 }) {
		std::vector<Job> jobs;
		for (int i = 0; i < n; i++)
			jobs.push_back(job(i + 1, 1, 1000 + i * 100, 1000));
		jobs.push_back(job(99, 1, 0, 1000)); /* before the window */
		Plan plan = lucid({})->decide(snapshot(c, jobs, 3100));
		assert_true(says(plan.find(1), n == 11 ? "sharing on (2.2 "
						       : "sharing off (2 "));
	}
}

/* The ranks the lucid preset's anchor model shares with the policy. */
static void test_shared_ranks(void **)
{
	assert_float_equal(lucid_priority(100, 4), 400, 0);
	assert_float_equal(lucid_priority(100, 0), 100, 0); /* as one GPU */
	Job a = job(1, 2, 0, 100), b = job(2, 1, 5, 100), c = job(3, 1, 9, 100);
	assert_true(lucid_profile_before(b, a));
	assert_false(lucid_profile_before(a, b));
	assert_false(lucid_profile_before(b, c)); /* equals: arrival order */
	assert_false(lucid_profile_before(c, b));
}

static void test_bad_params(void **)
{
	for (auto [k, v, what] :
	     { std::tuple{ "Lucid.ScoreBounds", "60,20", "first not above" },
	       std::tuple{ "Lucid.ProfilerNodes", "n[1", "unbalanced '['" },
	       std::tuple{ "Lucid.Sharing", "maybe", "Lucid.Sharing" },
	       std::tuple{ "Lucid.ProfileTime", "0", "Lucid.ProfileTime" } }) {
		Params p;
		p.set(k, v, "tidal.conf:1");
		lucid_options(p);
		assert_int_equal((int)p.errors().size(), 1);
		if (!strstr(p.errors()[0].c_str(), what))
			fail_msg("%s", p.errors()[0].c_str());
	}
	LucidOptions o;
	assert_int_equal(lucid_score(24.9, o), 0);
	assert_int_equal(lucid_score(25, o), 1);
	assert_int_equal(lucid_score(58, o), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profiler_first),
		cmocka_unit_test(test_profile_end),
		cmocka_unit_test(test_pack),
		cmocka_unit_test(test_blocking),
		cmocka_unit_test(test_auto_sharing),
		cmocka_unit_test(test_shared_ranks),
		cmocka_unit_test(test_bad_params),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
