/*
 * test_queue_policy_changes.cc - the short walks (changes only, with the
 * caller's free map) give the full walk's plan less its Keep and Hold
 * decisions: one hand-made case per walk, then many random snapshots for
 * every baseline policy.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/placement/placement.h"
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

/* Run JOB on P, in the job and in MAP. */
static void run_on(Job &j, Placement p, FreeMap &map)
{
	assert_true(map.take(p));
	j.state = JobState::Running;
	j.alloc = placement_gpus(p);
	j.placement = std::move(p);
}

static std::uint64_t rng = 88172645463325252ull;
static int next(int mod)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (int)(rng % (std::uint64_t)mod);
}

/* The full plan without Keep/Hold must equal the short one, decision by
 * decision, and every slot must point at its job. */
static void assert_same_changes(Policy &pol, Snapshot snap,
				const FreeMap &map)
{
	snap.want_reasons = false;
	Plan full = pol.decide(snap);
	snap.changes_only = true;
	snap.free = &map;
	if (next(2)) {
		snap.pending = 0;
		for (const Job *j : snap.jobs)
			snap.pending += j->state == JobState::Pending;
	}
	Plan part = pol.decide(snap);
	std::vector<const Decision *> want;
	for (const Decision &d : full.decisions)
		if (d.action != Action::Keep && d.action != Action::Hold)
			want.push_back(&d);
	assert_int_equal(part.decisions.size(), want.size());
	for (size_t i = 0; i < want.size(); i++) {
		const Decision &d = part.decisions[i];
		assert_int_equal(d.job, want[i]->job);
		assert_int_equal(d.action, want[i]->action);
		assert_int_equal(d.gpus, want[i]->gpus);
		assert_true(d.placement == want[i]->placement);
		assert_true(d.slot >= 0 && d.slot < (long)snap.jobs.size());
		assert_int_equal(snap.jobs[d.slot]->id, d.job);
	}
	assert_true(full.wake_at == part.wake_at);
}

/* FIFO on 2 x 4 GPUs, job 1 runs on 3 GPUs of n0: job 2 (4) starts on n1,
 * job 3 (2) blocks, job 4 (1) waits behind it: one decision. */
static void test_fifo_starts_only(void **)
{
	Cluster c = cluster(2, 4);
	FreeMap map(c);
	std::vector<Job> jobs = {job(1, 3, 0, 100), job(2, 4, 1, 100),
				 job(3, 2, 2, 100), job(4, 1, 3, 100)};
	run_on(jobs[0], {{0, 3}}, map);
	Snapshot snap = snapshot(c, jobs, 3);
	snap.want_reasons = false;
	snap.changes_only = true;
	snap.free = &map;
	Plan p = make("fifo")->decide(snap);
	assert_int_equal(p.decisions.size(), 1);
	assert_int_equal(p.decisions[0].job, 2);
	assert_int_equal(p.decisions[0].slot, 1);
	assert_true(p.decisions[0].placement == Placement({{1, 4}}));
	assert_same_changes(*make("fifo"), snapshot(c, jobs, 3), map);
}

/* Tiresias on 1 x 4 GPUs: job 1 (level 1, 2 GPUs) runs; job 2 (level 0,
 * 4 GPUs) arrives.  Job 2 ranks first and takes the whole node, so job 1
 * cannot take its GPUs back and is preempted. */
static void test_tiresias_preempts_behind(void **)
{
	Cluster c = cluster(1, 4);
	FreeMap map(c);
	std::vector<Job> jobs = {job(1, 2, 0, 1e5), job(2, 4, 1, 100)};
	run_on(jobs[0], {{0, 2}}, map);
	jobs[0].attained = 4000;
	jobs[0].seq = 0;
	jobs[1].seq = 1;
	auto pol = make("tiresias");
	Snapshot snap = snapshot(c, jobs, 1);
	snap.want_reasons = false;
	snap.changes_only = true;
	snap.free = &map;
	Plan p = pol->decide(snap);
	assert_int_equal(p.decisions.size(), 2);
	assert_int_equal(p.decisions[0].job, 2);
	assert_int_equal(p.decisions[0].action, Action::Start);
	assert_int_equal(p.decisions[1].job, 1);
	assert_int_equal(p.decisions[1].action, Action::Preempt);
	/* With only 2 GPUs asked, job 2 fits beside job 1: no change to
	 * job 1, so the short walk's plan stands. */
	jobs[1].gpus = 2;
	p = pol->decide(snap);
	assert_int_equal(p.decisions.size(), 1);
	assert_int_equal(p.decisions[0].action, Action::Start);
	assert_true(p.decisions[0].placement == Placement({{0, 2}}));
}

/* Tiresias on 2 x 4 GPUs: job 1 (level 1) runs on the whole of n0, n1 is
 * idle; job 2 (level 0, 4 GPUs) arrives.  It ranks first, but fits in the
 * GPUs no running job holds: it starts on n1 and job 1 keeps n0 (before,
 * the walk gave job 2 n0, the lowest node with 4 GPUs once job 1's were
 * counted free, and moved job 1 to n1 for it). */
static void test_preempt_only_for_room(void **)
{
	Cluster c = cluster(2, 4);
	FreeMap map(c);
	std::vector<Job> jobs = {job(1, 4, 0, 1e5), job(2, 4, 1, 100)};
	run_on(jobs[0], {{0, 4}}, map);
	jobs[0].attained = 4000;
	jobs[0].seq = 0;
	jobs[1].seq = 1;
	for (const char *moves : {"yes", "no"}) {
		Params prm;
		prm.set("Moves", moves);
		auto pol = make("tiresias", prm);
		Plan p = pol->decide(snapshot(c, jobs, 1));
		assert_int_equal(p.decisions.size(), 2);
		assert_int_equal(p.decisions[0].job, 2);
		assert_int_equal(p.decisions[0].action, Action::Start);
		assert_true(p.decisions[0].placement == Placement({{1, 4}}));
		assert_int_equal(p.decisions[1].job, 1);
		assert_int_equal(p.decisions[1].action, Action::Keep);
		assert_same_changes(*pol, snapshot(c, jobs, 1), map);
	}
	/* With 8 GPUs asked, job 2 needs job 1's: preempted (Moves=no, the
	 * default), as there is nowhere else for it. */
	jobs[1].gpus = 8;
	auto pol = make("tiresias");
	Plan p = pol->decide(snapshot(c, jobs, 1));
	assert_int_equal(p.decisions.size(), 2);
	assert_int_equal(p.decisions[0].action, Action::Start);
	assert_int_equal(p.decisions[1].job, 1);
	assert_int_equal(p.decisions[1].action, Action::Preempt);
	assert_same_changes(*pol, snapshot(c, jobs, 1), map);
}

/* A random cluster state: running jobs placed by consolidated placement,
 * the rest pending; ties in submit, duration and deadline on purpose. */
static void random_case(const Cluster &c, FreeMap &map, std::vector<Job> &jobs)
{
	static const int sizes[] = {1, 1, 1, 2, 4, 8, 16};
	int n = 1 + next(40);
	for (int i = 0; i < n; i++) {
		Job j = job(i + 1, sizes[next(7)], next(20), 1 + next(5) * 100);
		j.seq = (std::uint64_t)next(50);
		j.attained = next(4) * 3000.0;
		j.remaining = j.duration - next(50);
		if (next(3) == 0)
			j.deadline = 1000 + next(3) * 500;
		jobs.push_back(j);
	}
	for (Job &j : jobs)
		if (next(3) != 0) {
			auto p = map.place(j.gpus, PlacementScheme::Consolidated,
					   PlaceMode::Test);
			if (p)
				run_on(j, *p, map);
		}
}

static void test_random_against_full_walk(void **)
{
	const char *policies[] = {"fifo", "sjf", "qssf", "srtf",
				  "srsf", "edf",  "tiresias"};
	for (int round = 0; round < 300; round++) {
		Cluster c = cluster(1 + next(8), 8);
		FreeMap map(c);
		std::vector<Job> jobs;
		random_case(c, map, jobs);
		for (const char *name : policies) {
			Params prm;
			if (next(2))
				prm.set("Discipline", next(2) ? "skip" : "block");
			if (next(2))
				prm.set("Preemptive", next(2) ? "yes" : "no");
			if (next(2))
				prm.set("Moves", next(2) ? "yes" : "no");
			auto pol = make(name, prm);
			assert_same_changes(*pol, snapshot(c, jobs, 20), map);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_starts_only),
		cmocka_unit_test(test_tiresias_preempts_behind),
		cmocka_unit_test(test_preempt_only_for_room),
		cmocka_unit_test(test_random_against_full_walk),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
