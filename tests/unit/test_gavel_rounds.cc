/*
 * test_gavel_rounds.cc - Gavel's round mechanism (priorities, backfill,
 * lease extension, the idle slot of jobs newer than the allocation, the
 * reset throttle) on hand-made rounds, the allocation policies on small
 * cases worked out by hand, and the gavel preset's batch-size profiles
 * against the Shockwave artifact's materialised profile.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>
#include <fstream>

#include <json-c/json.h>

#include "core/model/params.h"
#include "core/model/policy.h"
#include "core/policies/gavel_alloc.h"
#include "core/policies/gavel_rounds.h"
#include "sim/presets/gavel_profile.h"
#include "tests/unit/unit.h"

using namespace tidal;
using namespace tidal::sim;

static GavelJob gj(JobId id, int sf, double tput = 10, double rem = 1000,
		   double since = 0)
{
	GavelJob j;
	j.id = id;
	j.sf = sf;
	j.tput = tput;
	j.remaining = rem;
	j.since_start = since;
	return j;
}

static std::unique_ptr<GavelAllocator> alloc(const char *name)
{
	std::string err;
	auto a = make_gavel_allocator(name, Params(), &err);
	assert_non_null(a.get());
	return a;
}

using Sched = std::vector<std::pair<JobId, std::vector<int>>>;

/* 4 workers, jobs of 2, 2 and 1 GPUs, equal shares (gandiva-fair: 1).
 * Round 1: all have job time 60 of 180, p = 3; in order 0, 1 fit and 2
 * does not.  After 0 and 1 ran 100 s: p0 = p1 = 1 / (160/380) = 2.375,
 * p2 = 1 / (60/380) = 6.33, so 2 goes first, 0 keeps its workers (lease
 * extension) and 1 no longer fits. */
static void test_priorities_and_leases(void **)
{
	auto gf = alloc("gandiva-fair");
	GavelRounds r(4, 120, 1000);
	for (JobId id = 0; id < 3; id++)
		r.add_job(id);
	std::vector<GavelJob> act = {gj(0, 2), gj(1, 2), gj(2, 1)};
	Sched s = r.schedule(0, act, *gf);
	assert_true(r.reset_last_round());
	assert_true(s == Sched({{0, {0, 1}}, {1, {2, 3}}}));
	r.job_ran(0, 100);
	r.job_ran(1, 100);
	s = r.schedule(120, act, *gf);
	assert_false(r.reset_last_round());
	assert_true(s == Sched({{0, {0, 1}}, {2, {2}}}));
}

/* A job added after the last reset, with the throttle holding, is
 * selected last (p = 0) and given no workers: Gavel idles its GPU. */
static void test_new_job_idles(void **)
{
	auto gf = alloc("gandiva-fair");
	GavelRounds r(2, 120, 1000);
	r.add_job(7);
	std::vector<GavelJob> act = {gj(7, 1)};
	Sched s = r.schedule(10, act, *gf);
	assert_true(s == Sched({{7, {0}}}));
	r.job_ran(7, 120);
	r.add_job(8);
	act.push_back(gj(8, 1));
	s = r.schedule(130, act, *gf);
	assert_false(r.reset_last_round()); /* 120 s < 1000 s */
	assert_true(s == Sched({{7, {0}}}));
	assert_int_equal((int)r.allocation().count(8), 0);
	s = r.schedule(1010, act, *gf); /* the throttle has passed */
	assert_true(r.reset_last_round());
	assert_int_equal((int)s.size(), 2);
}

/* FIFO as the anchor's policies/fifo.py: on 4 GPUs jobs 1 (1 GPU), 2 (1)
 * and 3 (2) are placed.  When 1 ends, its place goes to the queue's head
 * (job 4, 2 GPUs) at once, checked against the GPUs counted so far in the
 * walk over the placed jobs in id order (none yet: 4 free), so 2, 3 and 4
 * hold 5 of the 4 GPUs: selection leaves one out of each round.  A head
 * wider than what is counted (job 5, 5 GPUs) is not placed, and the
 * queue behind it waits (strict FIFO). */
static void test_fifo_overcommit(void **)
{
	auto fifo = alloc("fifo");
	auto a = fifo->allocate({gj(1, 1), gj(2, 1), gj(3, 2)}, 4, 0);
	assert_true(a[1] == 1 && a[2] == 1 && a[3] == 1);
	a = fifo->allocate({gj(2, 1), gj(3, 2), gj(4, 2)}, 4, 120);
	assert_true(a[2] == 1 && a[3] == 1 && a[4] == 1);
	a = fifo->allocate({gj(3, 2), gj(4, 2), gj(5, 5), gj(6, 1)}, 4, 240);
	assert_true(a[3] == 1 && a[4] == 1);
	assert_true(a[5] == 0 && a[6] == 0);
}

/* Max-min fairness with 3 jobs of 1, 1 and 4 GPUs on 8 GPUs: the least
 * share t = sf x is 1 (the 1-GPU jobs at x = 1); the 4-GPU job may take
 * x in [1/4, 1] and the capacity leaves it 6/4 > 1, so it gets 1 too. */
static void test_max_min(void **)
{
	auto mm = alloc("max-min-fairness");
	auto a = mm->allocate({gj(0, 1), gj(1, 1), gj(2, 4)}, 8, 0);
	assert_true(std::fabs(a[0] - 1) < 1e-6 && std::fabs(a[1] - 1) < 1e-6);
	assert_true(a[2] > 0.25 && a[2] <= 1);
	/* 4 one-GPU jobs on 2 GPUs: the capacity binds, x = 1/2 each. */
	a = mm->allocate({gj(0, 1), gj(1, 1), gj(2, 1), gj(3, 1)}, 2, 0);
	for (int i = 0; i < 4; i++)
		assert_true(std::fabs(a[i] - 0.5) < 1e-6);
	assert_int_equal((int)mm->solve_seconds.size(), 2);
}

/* Max sum throughput on 2 GPUs: the fastest job per GPU (tput/sf) takes
 * a whole share, two tied jobs split what is left evenly. */
static void test_max_sum_throughput(void **)
{
	auto ms = alloc("max-sum-throughput");
	auto a = ms->allocate({gj(0, 1, 50), gj(1, 1, 10), gj(2, 1, 10)}, 2, 0);
	assert_true(std::fabs(a[0] - 1) < 1e-9);
	assert_true(std::fabs(a[1] - 0.5) < 1e-9 && std::fabs(a[2] - 0.5) < 1e-9);
}

/* The centre: every free share meets its stationarity condition
 * wx/x + wl/(x - l) - 1/(1 - x) = sf / slack. */
static void test_center_kkt(void **)
{
	std::vector<double> low = {0.1, 0.3, 0.05, 1.0};
	std::vector<int> sf = {1, 2, 1, 1};
	for (GavelBarrier w : {GavelBarrier{1, 1}, GavelBarrier{0, 2}}) {
		auto x = gavel_center(low, sf, 4, w);
		double used = 0;
		for (size_t j = 0; j < x.size(); j++)
			used += sf[j] * x[j];
		double slack = 4 - used;
		assert_true(slack > 0);
		assert_true(x[3] == 1.0);
		for (size_t j = 0; j < 3; j++) {
			double g = w.x / x[j] + w.lower / (x[j] - low[j]) -
				   1 / (1 - x[j]);
			assert_true(std::fabs(g - sf[j] / slack) < 1e-4 * g);
		}
	}
	/* Lower bounds that fill the capacity are the answer. */
	auto x = gavel_center({0.5, 0.5}, {2, 2}, 2);
	assert_true(x[0] == 0.5 && x[1] == 0.5);
}

/* AlloX on 2 free GPUs, jobs waiting 30, 20 and 10 s with rem/tput 100,
 * 10 and 50: the pool keeps max(int(0.2 x 3), 2) = 2 oldest jobs (0, 1).
 * Costs (k+1) rem/tput + wait: job 0 130 | 230, job 1 30 | 40; the
 * least total (160) puts both first on their own worker, so both get a
 * whole share and job 2 none.  Next time they are already allocated: no
 * worker is free and nothing changes. */
static void test_allox(void **)
{
	auto ax = alloc("allox");
	auto a = ax->allocate({gj(0, 1, 1, 100, 30), gj(1, 1, 1, 10, 20),
			       gj(2, 1, 1, 50, 10)},
			      2, 0);
	assert_true(a == (std::map<JobId, double>{{0, 1}, {1, 1}, {2, 0}}));
	auto b = ax->allocate({gj(0, 1, 1, 90, 150), gj(1, 1, 1, 5, 140),
			       gj(2, 1, 1, 45, 130)},
			      2, 120);
	assert_true(b == a);
}

/* The registry policy on core types: 2 nodes x 2 GPUs, jobs of 2, 2
 * and 1 GPUs (as in test_priorities_and_leases): jobs 0 and 1 start on
 * node 0 and node 1, job 2 holds.  Calls within the round change
 * nothing.  A round later (0 and 1 ran 100 s) job 0 keeps node 0 and
 * job 1 is preempted; job 2 waits for job 1's GPUs and is asked about
 * again at once, and starts on node 1 once job 1 is back in the queue. */
static void test_registry_policy(void **)
{
	Cluster c = test::cluster(2, 2);
	std::vector<Job> jobs = {test::job(0, 2, 0, 1000),
				 test::job(1, 2, 0, 1000),
				 test::job(2, 1, 0, 1000)};
	std::string err;
	auto p = make_policy("gandiva-fair", Params(), &err);
	assert_non_null(p.get());
	Plan plan = p->decide(test::snapshot(c, jobs, 0));
	assert_int_equal((int)plan.find(0)->action, (int)Action::Start);
	assert_true(plan.find(0)->placement == Placement({{0, 2}}));
	assert_true(plan.find(1)->placement == Placement({{1, 2}}));
	assert_int_equal((int)plan.find(2)->action, (int)Action::Hold);
	assert_true(plan.wake_at == 120);
	for (int i = 0; i < 2; i++) {
		jobs[i].state = JobState::Running;
		jobs[i].placement = plan.find(i)->placement;
		jobs[i].executed = 100;
	}
	/* Mid-round: the same round, though the priorities have moved. */
	plan = p->decide(test::snapshot(c, jobs, 100));
	assert_int_equal((int)plan.find(0)->action, (int)Action::Keep);
	assert_int_equal((int)plan.find(1)->action, (int)Action::Keep);
	assert_int_equal((int)plan.find(2)->action, (int)Action::Hold);
	assert_true(plan.wake_at == 120);

	plan = p->decide(test::snapshot(c, jobs, 120));
	assert_int_equal((int)plan.find(0)->action, (int)Action::Keep);
	assert_true(plan.find(0)->placement == Placement({ { 0, 2 } }));
	assert_int_equal((int)plan.find(1)->action, (int)Action::Preempt);
	assert_int_equal((int)plan.find(2)->action, (int)Action::Hold);
	assert_true(plan.wake_at > 120 && plan.wake_at < 121);
	/* Job 1 still completing (gone from the snapshot, its GPUs not yet
	 * free: the plugin's view): job 2 still waits, and job 1 is not
	 * forgotten. */
	Cluster busy = c;
	busy.nodes[1].gpus = 0;
	std::vector<Job> two = { jobs[0], jobs[2] };
	plan = p->decide(test::snapshot(busy, two, 121));
	assert_null(plan.find(1));
	assert_int_equal((int)plan.find(2)->action, (int)Action::Hold);
	jobs[1].state = JobState::Pending;
	jobs[1].placement.clear();
	plan = p->decide(test::snapshot(c, jobs, 122));
	assert_int_equal((int)plan.find(1)->action, (int)Action::Hold);
	assert_int_equal((int)plan.find(2)->action, (int)Action::Start);
	assert_true(plan.find(2)->placement == Placement({{1, 1}}));
	assert_true(plan.wake_at == 240);
}

/* A job that stays is kept where Slurm runs it, though the round's
 * worker ids put it elsewhere; an entrant whose worker is taken goes where
 * a GPU is free.  2 nodes x 1 GPU: the round gives job 0 worker 0 (node
 * 0) and job 1 worker 1 (node 1), but job 0 runs on node 1. */
static void test_registry_policy_keeps_placement(void **)
{
	Cluster c = test::cluster(2, 1);
	std::vector<Job> jobs = { test::job(0, 1, 0, 1000),
				  test::job(1, 1, 0, 1000) };
	jobs[0].state = JobState::Running;
	jobs[0].placement = { { 1, 1 } };
	std::string err;
	auto p = make_policy("max-min-fairness", Params(), &err);
	assert_non_null(p.get());
	Plan plan = p->decide(test::snapshot(c, jobs, 0));
	assert_int_equal((int)plan.find(0)->action, (int)Action::Keep);
	assert_true(plan.find(0)->placement == Placement({ { 1, 1 } }));
	assert_int_equal((int)plan.find(1)->action, (int)Action::Start);
	assert_true(plan.find(1)->placement == Placement({ { 0, 1 } }));
}

/* The GPUs that count are those usable now: with no node up at the
 * first call (slurmctld before its nodes register) nothing runs, and
 * once they are up the next round runs jobs on them. */
static void test_registry_policy_nodes_come_up(void **)
{
	Cluster down = test::cluster(2, 2);
	for (Node &n : down.nodes)
		n.gpus = 0;
	Cluster up = test::cluster(2, 2);
	std::vector<Job> jobs = { test::job(0, 2, 0, 1000),
				  test::job(1, 2, 0, 1000) };
	std::string err;
	auto p = make_policy("max-min-fairness", Params(), &err);
	assert_non_null(p.get());
	Plan plan = p->decide(test::snapshot(down, jobs, 0));
	assert_int_equal((int)plan.find(0)->action, (int)Action::Hold);
	assert_int_equal((int)plan.find(1)->action, (int)Action::Hold);
	plan = p->decide(test::snapshot(up, jobs, 120));
	assert_int_equal((int)plan.find(0)->action, (int)Action::Start);
	assert_int_equal((int)plan.find(1)->action, (int)Action::Start);
}

/* A solve bounded by limit_s: with no time to solve (under GLPK's 1 ms),
 * each LP policy says it ran out and GavelRounds keeps what it had:
 * equal shares at first, then the allocation of the last solve that
 * ended in time, with the update still due (a job added meanwhile has no
 * share and no workers).  Unbounded again, the next round solves. */
static void test_solve_limit(void **)
{
	for (const char *name :
	     { "max-min-fairness", "max-sum-throughput", "min-total-duration",
	       "finish-time-fairness", "allox" }) {
		auto a = alloc(name);
		a->limit_s = 1e-9; /* AlloX checks after its assignment */
		a->allocate({ gj(0, 1), gj(1, 1) }, 2, 0);
		assert_true(a->over_limit);
		assert_int_equal((int)a->solve_seconds.size(), 1);
		a->limit_s = 0;
		a->over_limit = false;
		a->allocate({ gj(0, 1), gj(1, 1) }, 2, 0);
		assert_false(a->over_limit);
	}

	auto mm = alloc("max-min-fairness");
	mm->limit_s = 1e-6;
	GavelRounds r(2, 120, 0);
	r.add_job(0);
	r.add_job(1);
	r.add_job(2);
	std::vector<GavelJob> act = { gj(0, 1), gj(1, 1), gj(2, 2) };
	Sched s = r.schedule(0, act, *mm);
	assert_true(r.kept_last_round());
	for (JobId id = 0; id < 3; id++)
		assert_true(std::fabs(r.allocation().at(id) - 2.0 / 3) < 1e-12);
	assert_false(s.empty());
	/* In time: job 2 (2 GPUs) gets what max-min gives it. */
	mm->limit_s = 0;
	s = r.schedule(120, act, *mm);
	assert_false(r.kept_last_round());
	std::map<JobId, double> solved = r.allocation();
	/* Out of time again, with job 3 new: the solved shares stay. */
	mm->limit_s = 1e-6;
	r.add_job(3);
	act.push_back(gj(3, 1));
	s = r.schedule(240, act, *mm);
	assert_true(r.kept_last_round());
	assert_true(r.allocation() == solved);
	for (auto &[id, ws] : s)
		assert_true(id != 3);
	mm->limit_s = 0;
	r.schedule(360, act, *mm);
	assert_false(r.kept_last_round());
	assert_true(r.allocation().count(3) && r.allocation().at(3) > 0);
}

/* The registry policy with Gavel.SolveLimit too short for any solve: its
 * jobs still run (equal shares), and the plan's log says why once per
 * round, naming the key. */
static void test_registry_policy_solve_limit(void **)
{
	Cluster c = test::cluster(1, 2);
	std::vector<Job> jobs = { test::job(0, 1, 0, 1000),
				  test::job(1, 1, 0, 1000) };
	Params params;
	std::string err;
	params.set("Gavel.SolveLimit", "0.000001", "test");
	auto p = make_policy("max-min-fairness", params, &err);
	assert_non_null(p.get());
	Plan plan = p->decide(test::snapshot(c, jobs, 0));
	assert_int_equal((int)plan.find(0)->action, (int)Action::Start);
	assert_int_equal((int)plan.find(1)->action, (int)Action::Start);
	assert_int_equal((int)plan.log.size(), 1);
	assert_true(plan.log[0].find("Gavel.SolveLimit=1e-06 s") !=
		    std::string::npos);
	assert_true(plan.log[0].find("last allocation is kept") !=
		    std::string::npos);
	plan = p->decide(test::snapshot(c, jobs, 60));
	assert_true(plan.log.empty());
	/* The default bound (5 s) is far from a 2-job solve. */
	auto q = make_policy("max-min-fairness", Params(), &err);
	plan = q->decide(test::snapshot(c, jobs, 0));
	assert_true(plan.log.empty());
}

/* Apply PLAN to JOBS as a cluster would, at once: starts run where
 * planned, preempted jobs wait again. */
static void run_plan(const Plan &plan, std::vector<Job> *jobs)
{
	for (Job &j : *jobs) {
		const Decision *d = plan.find(j.id);
		if (!d)
			continue;
		if (d->action == Action::Start) {
			j.state = JobState::Running;
			j.placement = d->placement;
		} else if (d->action == Action::Preempt) {
			j.state = JobState::Pending;
			j.placement.clear();
		}
	}
}

static bool same_plan(const Plan &a, const Plan &b)
{
	if (a.decisions.size() != b.decisions.size() || a.wake_at != b.wake_at)
		return false;
	for (size_t i = 0; i < a.decisions.size(); i++) {
		const Decision &x = a.decisions[i], &y = b.decisions[i];
		if (x.job != y.job || x.action != y.action ||
		    x.placement != y.placement || x.numbers != y.numbers)
			return false;
	}
	return true;
}

/* A restart mid-round and one between rounds: a policy made afresh from
 * the saved lines (every round policy, FTF's and AlloX's own state
 * included) decides exactly as the one that ran on, call after call; it
 * says its state changed (state_serial) at each round.  Without the
 * lines, a fresh policy would start a new round at once. */
static void test_registry_policy_restart(void **)
{
	for (const char *name :
	     { "gandiva-fair", "max-min-fairness", "finish-time-fairness",
	       "min-total-duration", "max-sum-throughput", "allox" }) {
		for (double cut :
		     { 150.0, 240.0, 510.0 }) { /* mid-round, at an end */
			/* Jobs arrive and finish, so that shares are
			 * recomputed and deficits build up. */
			Cluster c = test::cluster(2, 2);
			std::vector<Job> all;
			for (JobId id = 0; id < 10; id++)
				all.push_back(test::job(id, id % 3 == 2 ? 2 : 1,
							20.0 * id,
							200 + 70 * (id % 5)));
			auto active = [&](double t) {
				std::vector<Job> v;
				for (const Job &j : all)
					if (j.submit <= t && j.remaining > 0)
						v.push_back(j);
				return v;
			};
			std::string err;
			auto a = make_policy(name, Params(), &err);
			assert_non_null(a.get());
			std::unique_ptr<Policy> b;
			std::uint64_t serial = a->state_serial();
			int rounds = 0;
			for (double t = 0; t <= 3000; t += 30) {
				std::vector<Job> jobs = active(t);
				if (t == cut) {
					b = make_policy(name, Params(), &err);
					for (const std::string &l :
					     a->save_state())
						assert_true(b->load_state(l));
					assert_true(b->save_state() ==
						    a->save_state());
					assert_false(b->load_state("round x"));
				}
				Plan pa = a->decide(test::snapshot(c, jobs, t));
				if (b) {
					Plan pb = b->decide(
						test::snapshot(c, jobs, t));
					assert_true(same_plan(pa, pb));
				}
				if (a->state_serial() != serial)
					rounds++;
				serial = a->state_serial();
				run_plan(pa, &all);
				for (Job &j : all)
					if (j.state == JobState::Running) {
						j.executed += 30;
						j.remaining -= 30;
					}
			}
			assert_true(rounds >= 5);
			for (const Job &j : all)
				assert_true(j.remaining <= 0);
		}
	}
	/* Fresh, with no lines: a new round at the first call. */
	Cluster c = test::cluster(1, 1);
	std::vector<Job> jobs = { test::job(0, 1, 0, 1000),
				  test::job(1, 1, 0, 1000) };
	std::string err;
	auto a = make_policy("max-min-fairness", Params(), &err);
	Plan p = a->decide(test::snapshot(c, jobs, 0));
	assert_true(p.wake_at == 120);
	run_plan(p, &jobs);
	auto b = make_policy("max-min-fairness", Params(), &err);
	for (const std::string &l : a->save_state())
		b->load_state(l);
	assert_true(b->decide(test::snapshot(c, jobs, 60)).wake_at == 120);
	auto fresh = make_policy("max-min-fairness", Params(), &err);
	assert_true(fresh->decide(test::snapshot(c, jobs, 60)).wake_at == 180);
}

/* State lines: a job's workers as long as a large job's (thousands of
 * GPUs) read back whole; malformed ones and workers beyond the cluster
 * are refused. */
static void test_state_lines(void **)
{
	std::vector<int> big, back;
	for (int w = 0; w < 6000; w++)
		big.push_back(w);
	std::string text = gavel_workers_text(big);
	assert_true(text.size() > 4096);
	assert_true(gavel_parse_workers(text, &back) && back == big);
	assert_true(gavel_parse_workers("-", &back) && back.empty());
	for (const char *bad : { "", "1,", ",1", "1,,2", "x", "-1", "1 2" })
		assert_false(gavel_parse_workers(bad, &back));

	std::string err;
	auto p = make_policy("max-min-fairness", Params(), &err);
	assert_true(p->load_state("rounds 8000 0 0 0"));
	assert_true(p->load_state("chosen 4 " + text));
	assert_true(p->load_state("prev 4 " + text));
	bool found_chosen = false, found_prev = false;
	for (const std::string &l : p->save_state()) {
		found_chosen = found_chosen || l == "chosen 4 " + text;
		found_prev = found_prev || l == "prev 4 " + text;
	}
	assert_true(found_chosen && found_prev);
	assert_false(p->load_state("prev 5 8000"));
	assert_false(p->load_state("round nan 1"));
	assert_false(p->load_state("alloc 3 inf"));
	assert_false(p->load_state("chosen 4"));
	/* Fewer workers now: the lease beyond them is dropped. */
	assert_true(p->load_state("rounds 16 0 0 0"));
	for (const std::string &l : p->save_state())
		assert_true(l.rfind("prev 4 ", 0) != 0);
}

/* Shockwave as a registry policy on 1 node x 2 GPUs, six 1-GPU jobs of
 * 200 to 450 s arriving over a minute: two run per round, the GPUs are
 * never over-committed, jobs take turns (preemptions), every job ends,
 * and each decision carries its epoch progress and the round's end.  A
 * restart in the middle of a round keeps that round: the restored
 * policy decides as the first until the round ends. */
static void test_shockwave_policy(void **)
{
	Cluster c = test::cluster(1, 2);
	std::vector<Job> all;
	for (JobId id = 0; id < 6; id++)
		all.push_back(test::job(id, 1, 10.0 * id, 200 + 50 * id));
	std::string err;
	auto a = make_policy("shockwave", Params(), &err);
	assert_non_null(a.get());
	std::unique_ptr<Policy> b;
	int preempts = 0;
	for (double t = 0; t <= 4000; t += 30) {
		std::vector<Job> jobs;
		for (const Job &j : all)
			if (j.submit <= t && j.remaining > 0)
				jobs.push_back(j);
		if (t == 150) {
			b = make_policy("shockwave", Params(), &err);
			for (const std::string &l : a->save_state())
				assert_true(b->load_state(l));
		}
		Plan p = a->decide(test::snapshot(c, jobs, t));
		if (b && t < 240)
			assert_true(same_plan(
				p, b->decide(test::snapshot(c, jobs, t))));
		int busy = 0;
		for (const Decision &d : p.decisions) {
			bool has_end = false, has_epoch = false;
			for (auto &[k, v] : d.numbers) {
				has_end = has_end || k == "round_end";
				has_epoch = has_epoch || k == "epoch";
			}
			assert_true(has_end && has_epoch);
			if (d.action == Action::Start ||
			    d.action == Action::Keep)
				busy += d.gpus;
			preempts += d.action == Action::Preempt;
		}
		assert_true(busy <= 2);
		run_plan(p, &all);
		for (Job &j : all)
			if (j.state == JobState::Running && j.remaining > 0) {
				j.executed += 30;
				j.remaining -= 30;
			}
	}
	for (const Job &j : all)
		assert_true(j.remaining <= 0);
	assert_true(preempts > 0);
}

/* The profile rules against the artifact's regenerated profile JSON. */
static void test_profiles_match_artifact(void **)
{
	const char *dir = "../shared/anchors/shockwave/";
	std::ifstream f(std::string(dir) + "traces/120_0.2_5_100_40_25_0,0.5,"
					   "0.5_0.6,0.3,0.09,0.01_multigpu_"
					   "dynamic.trace");
	json_object *prof = json_object_from_file(
		(std::string(dir) +
		 "traces/120_jobs_generated_per_epoch_profile.json")
			.c_str());
	GavelThroughputs tp;
	std::string err;
	if (!f || !prof ||
	    !tp.load(std::string(dir) + "throughputs/tacc_throughputs.json",
		     &err)) {
		skip();
		return;
	}
	std::string line;
	for (size_t i = 0; std::getline(f, line); i++) {
		std::vector<std::string> c;
		std::stringstream ss(line);
		std::string cell;
		while (std::getline(ss, cell, '\t'))
			c.push_back(cell);
		GavelJobType t = split_gavel_job_type(c[0]);
		BsMode mode = c[7] == "gns"	  ? BsMode::Gns
			      : c[7] == "accordion" ? BsMode::Accordion
						    : BsMode::Static;
		GavelProfile p;
		assert_true(gavel_make_profile(tp, t.model, t.batch_size,
					       std::stoi(c[6]), mode,
					       std::stod(c[5]), &p, &err));
		json_object *e = json_object_array_get_idx(prof, i), *bs, *dur;
		json_object_object_get_ex(e, "bs_every_epoch", &bs);
		json_object_object_get_ex(e, "duration_every_epoch", &dur);
		assert_int_equal((int)json_object_array_length(bs), p.epochs);
		for (int k = 0; k < p.epochs; k++) {
			assert_int_equal(json_object_get_int(
						 json_object_array_get_idx(bs, k)),
					 p.bs_every_epoch[k]);
			double d = json_object_get_double(
				json_object_array_get_idx(dur, k));
			assert_true(std::fabs(d - p.duration_every_epoch[k]) <=
				    1e-9 * d);
		}
	}
	json_object_put(prof);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_priorities_and_leases),
		cmocka_unit_test(test_new_job_idles),
		cmocka_unit_test(test_fifo_overcommit),
		cmocka_unit_test(test_max_min),
		cmocka_unit_test(test_max_sum_throughput),
		cmocka_unit_test(test_center_kkt),
		cmocka_unit_test(test_allox),
		cmocka_unit_test(test_registry_policy),
		cmocka_unit_test(test_registry_policy_keeps_placement),
		cmocka_unit_test(test_registry_policy_nodes_come_up),
		cmocka_unit_test(test_solve_limit),
		cmocka_unit_test(test_registry_policy_solve_limit),
		cmocka_unit_test(test_registry_policy_restart),
		cmocka_unit_test(test_state_lines),
		cmocka_unit_test(test_shockwave_policy),
		cmocka_unit_test(test_profiles_match_artifact),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
