/*
 * test_pollux_live.cc - Pollux as a registry policy (pollux_live.h): the
 * artifact's exploration from unfitted jobs, growth once a job has
 * reported, a batch that grows with the gradient noise, targets kept
 * between intervals, floors, the objective never below keeping the
 * current allocation, and its state across a restart.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>
#include <cstring>

#include "core/model/policy.h"
#include "core/policies/pollux_live.h"
#include "tests/unit/unit.h"

using namespace tidal;
using namespace tidal::test;

static Job elastic(JobId id, int lo, int hi, int batch, int max_batch)
{
	Job j = job(id, lo, 0, 1000);
	j.min_gpus = lo;
	j.max_gpus = hi;
	j.batch = batch;
	j.max_batch = max_batch;
	return j;
}

/* J runs on GPUS GPUs of node 0 at its batch, measured: each step takes
 * 0.05 s per 64 local samples plus 0.01 s of synchronisation beyond one
 * GPU. */
static void run_measured(Job &j, int gpus, int batch, double sqr, double var)
{
	j.state = JobState::Running;
	j.alloc = gpus;
	j.placement = { { 0, gpus } };
	j.measured = true;
	j.run_batch = batch;
	j.run_world = gpus;
	double sync = gpus > 1 ? 0.01 : 0;
	j.step_time = 0.05 * ((double)batch / gpus) / 64 + sync;
	j.sync_time = sync;
	j.grad_sqr = sqr;
	j.grad_var = var;
}

static const Decision &of(const Plan &p, JobId id)
{
	const Decision *d = p.find(id);
	assert_non_null(d);
	return *d;
}

static double number(const Decision &d, const std::string &key)
{
	for (const auto &[k, v] : d.numbers)
		if (k == key)
			return v;
	return NAN;
}

static std::unique_ptr<Policy> make(const std::string &conf = "")
{
	std::string err;
	auto p = make_policy("pollux", Params::parse(conf, "test"), &err);
	assert_non_null(p.get());
	return p;
}

/* Nothing measured: each job explores from its floor (the artifact's
 * max(2 x measured, 1) replicas), and no batch is chosen. */
static void test_unfitted_start_at_floor(void **)
{
	Cluster c = cluster(2, 4);
	std::vector<Job> jobs = { elastic(1, 1, 8, 64, 512),
				  elastic(2, 2, 8, 0, 0) };
	auto p = make();
	Plan plan = p->decide(snapshot(c, jobs, 0));
	assert_int_equal((int)of(plan, 1).action, (int)Action::Start);
	assert_int_equal(of(plan, 1).gpus, 1);
	assert_int_equal(of(plan, 2).gpus, 2);
	assert_int_equal(of(plan, 1).batch, 0);
	assert_true(plan.wake_at == 60);
	assert_non_null(std::strstr(of(plan, 2).reason.c_str(),
				    "Pollux: 2 GPUs on 1 node"));
}

/* Measured at 1 GPU, the job may take 2 at an interval (and no more:
 * twice what was measured) once it is old enough for the restart to pay
 * (at 30 s old, its restart factor 30 / 60 halves a changed allocation's
 * speedup); in between it keeps its GPUs. */
static void test_grows_after_measuring(void **)
{
	Cluster c = cluster(2, 4);
	std::vector<Job> jobs = { elastic(1, 1, 8, 64, 1024) };
	auto p = make("Pollux.Interval=30");
	p->decide(snapshot(c, jobs, 0));
	run_measured(jobs[0], 1, 64, 1.0, 2.0);
	Plan keep = p->decide(snapshot(c, jobs, 10));
	assert_int_equal((int)of(keep, 1).action, (int)Action::Keep);
	assert_true(of(keep, 1).placement == jobs[0].placement);
	keep = p->decide(snapshot(c, jobs, 30));
	assert_int_equal((int)of(keep, 1).action, (int)Action::Keep);
	assert_true(of(keep, 1).batch > 64); /* chosen, applied at a restart */
	Plan grow = p->decide(snapshot(c, jobs, 600));
	const Decision &d = of(grow, 1);
	assert_int_equal((int)d.action, (int)Action::Resize);
	assert_int_equal(d.gpus, 2);
	assert_true(d.batch >= 64 && d.batch <= 1024);
	assert_true(number(d, "efficiency") > 0);
	assert_true(number(d, "throughput") > 0);
	assert_true(number(d, "speedup") > 0);
	assert_true(number(d, "objective") >= number(d, "objective_keep"));
	assert_int_equal((int)number(d, "restarts"), 1);

	/* Requeued for that resize: gone from a snapshot, then pending.  It
	 * is the same job, not a new one: it starts on its target, with
	 * nothing re-allocated. */
	std::vector<Job> none;
	Plan gone = p->decide(snapshot(c, none, 601));
	assert_true(gone.decisions.empty());
	jobs[0].state = JobState::Pending;
	jobs[0].alloc = 0;
	jobs[0].placement.clear();
	Plan back = p->decide(snapshot(c, jobs, 603));
	assert_int_equal((int)of(back, 1).action, (int)Action::Start);
	assert_int_equal(of(back, 1).gpus, 2);
	assert_true(of(back, 1).placement == d.placement);
	assert_int_equal((int)number(of(back, 1), "restarts"), 1);

	/* The cluster loses node 1 while the job is on its way: it is
	 * re-allocated on what is left (its target may have been there). */
	Cluster one = cluster(1, 4);
	Plan moved = p->decide(snapshot(one, jobs, 604));
	assert_int_equal((int)of(moved, 1).action, (int)Action::Start);
	for (const NodeShare &n : of(moved, 1).placement)
		assert_int_equal(n.node, 0);
	/* ... and one whose target was node 1 (as if placed there). */
	auto *live = static_cast<PolluxLive *>(p.get());
	assert_non_null(live->model(1));
	Cluster two = cluster(2, 4);
	jobs[0].state = JobState::Running;
	jobs[0].alloc = 2;
	jobs[0].placement = { { 1, 2 } };
	p->decide(snapshot(two, jobs, 1300));
	jobs[0].state = JobState::Pending;
	jobs[0].alloc = 0;
	jobs[0].placement.clear();
	Plan gone1 = p->decide(snapshot(one, jobs, 1301));
	for (const NodeShare &n : of(gone1, 1).placement)
		assert_int_equal(n.node, 0);
}

/* The same job and allocation: more gradient noise, a larger batch. */
static int batch_for_noise(double var)
{
	Cluster c = cluster(1, 8);
	std::vector<Job> jobs = { elastic(1, 4, 4, 64, 4096) };
	auto p = make();
	p->decide(snapshot(c, jobs, 0));
	run_measured(jobs[0], 4, 256, 1.0, var);
	return of(p->decide(snapshot(c, jobs, 60)), 1).batch;
}

static void test_batch_grows_with_noise(void **)
{
	int quiet = batch_for_noise(0.01), noisy = batch_for_noise(100);
	assert_true(quiet >= 64 && noisy <= 4096);
	assert_true(noisy > quiet);
}

/* A rigid job runs on its size or not at all; a new job reallocates at
 * once, without waiting for the interval. */
static void test_floors_and_arrivals(void **)
{
	Cluster c = cluster(2, 4);
	std::vector<Job> jobs = { job(1, 4, 0, 100), elastic(2, 1, 8, 32, 64) };
	auto p = make();
	Plan plan = p->decide(snapshot(c, jobs, 0));
	int g = of(plan, 1).gpus;
	assert_true(g == 0 || g == 4);
	const PolluxRound before =
		static_cast<PolluxLive *>(p.get())->last_round();
	jobs.push_back(elastic(3, 1, 2, 0, 0));
	plan = p->decide(snapshot(c, jobs, 5));
	assert_int_equal(static_cast<PolluxLive *>(p.get())->last_round().jobs,
			 3);
	assert_int_equal(before.jobs, 2);
	g = of(plan, 1).gpus;
	assert_true(g == 0 || g == 4);
}

/* What a restart keeps: samples, gradient statistics, reallocations;
 * lines that break a rule are refused. */
static void test_state_round_trip(void **)
{
	Cluster c = cluster(2, 4);
	std::vector<Job> jobs = { elastic(7, 1, 8, 64, 1024) };
	auto a = make();
	a->decide(snapshot(c, jobs, 0));
	run_measured(jobs[0], 1, 64, 1.5, 3.25);
	a->decide(snapshot(c, jobs, 60));
	std::vector<std::string> lines = a->save_state();
	assert_int_equal((int)lines.size(), 1);
	auto b = make();
	for (const std::string &l : lines)
		assert_true(b->load_state(l));
	assert_true(b->save_state() == lines);
	const PolluxLive::Model *m =
		static_cast<PolluxLive *>(b.get())->model(7);
	assert_non_null(m);
	assert_int_equal((int)m->samples.size(), 1);
	assert_true(m->grad && m->grad->var == 3.25);
	for (const char *bad :
	     { "job 0 restarts 1 ran 1 grad - - samples",
	       "job 7 restarts -1 ran 1 grad - - samples",
	       "job 7 restarts 1 ran 1 grad nan 1 samples",
	       "job 7 restarts 1 ran 1 grad 1 - samples",
	       "job 7 restarts 1 ran 1 grad - - samples 1:1:64:0.1:0.05",
	       "job 7 restarts 1 ran 1 grad - - samples 2:1:64:0.05:0.1",
	       "job 7 restarts 1 ran 1 grad - - samples 1:1:64:0.05:inf",
	       "job 7 restarts 1 ran 1 grad - - samples 1:1:64:0.05:0.1:9",
	       "job 7 restarts 1 ran 1 grad - - sample 1:1:64:0.05:0.1",
	       "job 7 restarts 1 ran 2 grad - - samples",
	       "job 7 restarts 1 grad - - samples", "round 3" })
		assert_false(b->load_state(bad));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unfitted_start_at_floor),
		cmocka_unit_test(test_grows_after_measuring),
		cmocka_unit_test(test_batch_grows_with_noise),
		cmocka_unit_test(test_floors_and_arrivals),
		cmocka_unit_test(test_state_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
