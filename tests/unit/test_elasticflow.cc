/*
 * test_elasticflow.cc - ElasticFlow's planner (minimum satisfactory share),
 * admission with its rejection reason, leftover GPUs by marginal return,
 * and buddy placement, on hand-made cases worked out below.
 *
 * The plans use a 4-GPU cluster, a 10 s slot and a linear model
 * (1, 2, 4 GPUs -> 1, 2, 4 iterations/s).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <array>

#include <cstdio>
#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "core/placement/buddy_placement.h"
#include "core/policies/elasticflow.h"
#include "core/model/policy.h"

#include "tests/unit/unit.h"

using namespace tidal;

static std::map<SlotTime, int>
M(std::initializer_list<std::pair<const SlotTime, int>> l)
{
	return std::map<SlotTime, int>(l);
}

static ThroughputRow linear()
{
	ThroughputRow r;
	r.gpus = {1, 2, 4};
	r.tput = {1, 2, 4};
	r.nan = {false, false, false};
	return r;
}

static const EfEnv kEnv = {0, 10, 4};

/* 100 iterations by t=60: 1 GPU gives 60 (too few), 2 GPUs give 120, so
 * the minimum share is 2 from now; it finishes at 50 (aligned 50) and the
 * 2 GPUs come back then. */
static void test_minimum_share(void **)
{
	ThroughputRow r = linear();
	EfTimeline f(0, 4);
	EfPlan p;
	assert_true(ef_plan({&r, 4, 100, 60}, kEnv, f, &p));
	assert_true(p.alloc.to_map() == M({{0, 2}}));
	assert_int_equal(p.end, 50);
	assert_int_equal(p.real_end, 50);
	assert_true(f.to_map() == M({{0, 2}, {50, 4}}));
}

/* A deadline no level can meet: the largest level tried up to the
 * deadline, then the whole cluster; the plan reports the miss. */
static void test_no_level_meets(void **)
{
	ThroughputRow r = linear();
	EfTimeline f(0, 4);
	EfPlan p;
	assert_false(ef_plan({&r, 4, 1000, 100}, kEnv, f, &p));
	/* 4 GPUs x 100 s = 400 iterations, 600 left at 4/s: 150 s more. */
	assert_int_equal(p.real_end, 250);
	assert_int_equal(p.end, 250);
	assert_false(p.meets);
}

/* The same on a 3-GPU cluster: "the whole cluster" is the job's largest
 * level that fits it, 2 GPUs, never 3, which its profile has no
 * throughput for.  2 GPUs x 100 s = 200 iterations, 800 left at 2/s. */
static void test_no_level_meets_odd_cluster(void **)
{
	ThroughputRow r = linear();
	EfEnv env = {0, 10, 3};
	EfTimeline f(0, 3);
	EfPlan p;
	assert_false(ef_plan({&r, 4, 1000, 100}, env, f, &p));
	assert_int_equal(p.real_end, 500);
	assert_int_equal(p.end, 500);
	for (const auto &[t, g] : p.alloc.to_map())
		assert_true(g == 0 || g == 1 || g == 2 || g == 4);
	assert_true(f.to_map().rbegin()->second == 3);
}

static EfEntry entry(const ThroughputRow *r, double iters, SlotTime ddl)
{
	EfEntry e;
	e.view = {r, 4, iters, ddl};
	return e;
}

/* A (100 iterations by 60) fits; B (1000 by 100) cannot: after A the
 * cluster offers 2 GPUs x 50 s + 4 GPUs x 50 s = 300 GPU-s before B's
 * deadline, and B needs 1000 GPU-s at any level (linear scaling). */
static void test_admission(void **)
{
	ThroughputRow r = linear();
	std::vector<EfEntry> es = {entry(&r, 100, 60), entry(&r, 1000, 100)};
	EfTimeline f;
	EfAdmission ok = ef_admit(es, {0}, kEnv, f);
	assert_true(ok.ok);
	assert_true(ok.reason.empty());
	EfAdmission no = ef_admit(es, {0, 1}, kEnv, f);
	assert_false(no.ok);
	assert_int_equal(no.failed, 1);
	assert_string_equal(no.reason.c_str(),
			    "deadline 100 s (in 100 s): needs 1000 GPU-s, the "
			    "cluster can offer 300 GPU-s before it");
	/* A's plan was committed in both trials. */
	assert_int_equal(es[0].plan.end, 50);
}

/* A holds 2 GPUs (plan end 50); the 2 free GPUs raise it to 4: it then
 * ends at 25 (aligned 30).  Marginal = (4 x 30 - 2 x 50) / 2 = 10. */
static void test_leftover(void **)
{
	ThroughputRow r = linear();
	std::vector<EfEntry> es = {entry(&r, 100, 60)};
	EfTimeline f;
	ef_admit(es, {0}, kEnv, f);
	es[0].gpus = es[0].plan.alloc.at(0);
	std::vector<int> order = {0};
	int grants = 0;
	ef_allocate_leftover(es, order, kEnv, f, [&](int j, int old) {
		assert_int_equal(j, 0);
		assert_int_equal(old, 2);
		grants++;
	});
	assert_int_equal(grants, 1);
	assert_int_equal(es[0].gpus, 4);
	assert_int_equal(es[0].plan.end, 30);
	assert_int_equal(es[0].plan.real_end, 25);
	assert_true(f.to_map() == M({{0, 0}, {30, 4}}));
}

static void test_marginal_value(void **)
{
	ThroughputRow r = linear();
	std::vector<EfEntry> es = {entry(&r, 100, 60)};
	EfTimeline f;
	ef_admit(es, {0}, kEnv, f);
	es[0].gpus = 2;
	es[0].next = 4;
	ef_marginal(es[0], kEnv, 2, f);
	assert_true(es[0].marginal == 10);
	/* Not enough GPUs for the next level: never chosen. */
	ef_marginal(es[0], kEnv, 1, f);
	assert_true(es[0].marginal < -1e300);
}

static void test_gpu_time(void **)
{
	EfAllocs a;
	a.set(0, 2);
	a.set(10, 4);
	assert_true(ef_gpu_time(a, 30) == 20 + 80);
	EfAllocs b;
	b.set(5, 1);
	assert_true(ef_gpu_time(b, 5) == 0);
}

/* Two 8-GPU nodes: two 4-GPU jobs share node 0 (buddies), an 8-GPU job
 * takes node 1; a 2-GPU job fills the half node 0 frees. */
static void test_buddy(void **)
{
	BuddyCluster b(2, 8);
	assert_true(b.place(0, 4));
	assert_true(b.place(1, 4));
	assert_true(b.place(2, 8));
	assert_int_equal(b.free_gpus(), 0);
	assert_false(b.place(3, 1));
	std::vector<std::array<int, 3>> seen;
	auto rec = [&](int j, int first, int g) {
		seen.push_back({j, first, g});
	};
	b.for_each_rank(rec);
	assert_true(seen == (std::vector<std::array<int, 3>>{
				    {0, 0, 4}, {1, 4, 4}, {2, 8, 8}}));
	b.release(0, 4);
	assert_int_equal(b.free_gpus(), 4);
	assert_true(b.place(3, 2));
	seen.clear();
	b.for_each_rank(rec);
	assert_true(seen == (std::vector<std::array<int, 3>>{
				    {1, 0, 4}, {3, 4, 2}, {2, 8, 8}}));
	b.release(1, 4);
	b.release(3, 2);
	b.release(2, 8);
	assert_int_equal(b.free_gpus(), 16);
	assert_false(b.placed(2));
}

/* Two switches of two 8-GPU nodes: ElasticFlow numbers nodes within
 * their switch (ids 0, 1, 0, 1) and sorts its free list stably by that id
 * on a release, so the freed nodes interleave the switches: after a
 * 16-GPU job on nodes 0 and 1 ends, the free list is 2, 0, 3, 1 and the
 * next 16-GPU job gets nodes 2 and 0 (first rank 0 in the log's layout),
 * an 8-GPU job after it node 3 (rank 24, not 16). */
/* A 16-GPU job placed and released, then a 16-GPU and an 8-GPU job: the
 * ranks they are logged at (job, first rank, GPUs). */
static std::vector<std::array<int, 3>> ranks_after_release(BuddyCluster &b)
{
	assert_true(b.place(0, 16));
	b.release(0, 16);
	assert_true(b.place(1, 16));
	assert_true(b.place(2, 8));
	std::vector<std::array<int, 3>> seen;
	b.for_each_rank([&](int j, int first, int g) {
		seen.push_back({j, first, g});
	});
	return seen;
}

static void test_buddy_switches(void **)
{
	BuddyCluster b(4, 8, {0, 1, 0, 1});
	assert_true(ranks_after_release(b) ==
		    (std::vector<std::array<int, 3>>{{1, 0, 16}, {2, 24, 8}}));
	/* Without switch ids: nodes 0, 1, then node 2. */
	BuddyCluster c(4, 8);
	assert_true(ranks_after_release(c) ==
		    (std::vector<std::array<int, 3>>{{1, 0, 16}, {2, 16, 8}}));
}

static Job pending_job(JobId id, double iters, double deadline)
{
	Job j;
	j.id = id;
	j.name = "job" + std::to_string(id);
	j.model = "m";
	j.batch = 8;
	j.gpus = 4;
	j.min_gpus = 1;
	j.max_gpus = 4;
	j.iterations = iters;
	j.remaining = iters;
	j.deadline = deadline;
	j.state = JobState::Pending;
	return j;
}

/* A profile directory with one model, "m", that scales linearly to 4
 * GPUs; NAME makes it this test's own.  The caller removes it. */
static std::filesystem::path linear_profiles(const std::string &name)
{
	namespace fs = std::filesystem;
	fs::path dir = fs::temp_directory_path() /
		       (name + "-" + std::to_string(::getpid()));
	fs::create_directories(dir);
	std::ofstream(dir / "m.csv") << "global_batch_size,1,2,4\n8,1,2,4\n";
	return dir;
}

/* One node "n0" with 4 GPUs. */
static Cluster four_gpu_node()
{
	Cluster c;
	Node n;
	n.name = "n0";
	n.gpus = 4;
	c.nodes.push_back(n);
	return c;
}

/* The registered policy on the admission case above: A starts (its
 * minimum share 2 plus the 2 left over), B is rejected and says why. */
static void test_policy_rejects(void **)
{
	namespace fs = std::filesystem;
	fs::path dir = linear_profiles("tidal-ef");
	Params params;
	params.set("ElasticFlow.Profiles", dir.string());
	params.set("ElasticFlow.Slot", "10");
	std::string err;
	auto pol = make_policy("elasticflow", params, &err);
	assert_non_null(pol.get());
	Cluster c = four_gpu_node();
	Job a = pending_job(1, 100, 60), b = pending_job(2, 1000, 100);
	Snapshot snap;
	snap.cluster = &c;
	snap.jobs = {&a, &b};
	Plan plan = pol->decide(snap);
	const Decision *da = plan.find(1), *db = plan.find(2);
	assert_non_null(da);
	assert_non_null(db);
	assert_int_equal((int)da->action, (int)Action::Start);
	assert_int_equal(da->gpus, 4);
	assert_int_equal((int)db->action, (int)Action::Reject);
	assert_string_equal(db->reason.c_str(),
			    "deadline cannot be met: deadline 100 s (in 100 s): "
			    "needs 1000 GPU-s, the cluster can offer 300 GPU-s "
			    "before it");
	fs::remove_all(dir);
}

/* An admitted job that can no longer meet its deadline (A: it made no
 * progress in 50 s, 25 s of work left at 4 GPUs, due at 60) does not make
 * every later job fail admission: B, which fits after A, is admitted. */
static void test_late_job_admits_others(void **)
{
	namespace fs = std::filesystem;
	fs::path dir = linear_profiles("tidal-ef-late");
	Params params;
	params.set("ElasticFlow.Profiles", dir.string());
	params.set("ElasticFlow.Slot", "10");
	std::string err;
	auto pol = make_policy("elasticflow", params, &err);
	assert_non_null(pol.get());
	Cluster c = four_gpu_node();
	Job a = pending_job(1, 100, 60);
	Snapshot snap;
	snap.cluster = &c;
	snap.jobs = {&a};
	Plan plan = pol->decide(snap);
	assert_int_equal((int)plan.find(1)->action, (int)Action::Start);
	a.state = JobState::Running;
	a.alloc = 4;
	a.placement = plan.find(1)->placement;
	Job b = pending_job(2, 10, 200);
	snap.now = 50;
	snap.jobs = {&a, &b};
	plan = pol->decide(snap);
	const Decision *db = plan.find(2);
	assert_non_null(db);
	assert_int_not_equal((int)db->action, (int)Action::Reject);
	/* A job that does not fit by its own deadline is still refused. */
	Job x = pending_job(3, 1000, 100);
	snap.jobs = {&a, &b, &x};
	plan = pol->decide(snap);
	assert_int_equal((int)plan.find(3)->action, (int)Action::Reject);
	fs::remove_all(dir);
}

/* Jobs it cannot plan: a pending one is rejected naming what it lacks
 * (never held forever with an empty model name); a running one is held,
 * which changes nothing in slurmctld. */
static void test_policy_rejects_unplannable(void **)
{
	namespace fs = std::filesystem;
	fs::path dir = linear_profiles("tidal-ef-u");
	Params params;
	params.set("ElasticFlow.Profiles", dir.string());
	std::string err;
	auto pol = make_policy("elasticflow", params, &err);
	assert_non_null(pol.get());
	Cluster c = four_gpu_node();
	Job bare = pending_job(1, 100, 1000), other = pending_job(2, 100, 1000),
	    batch = pending_job(3, 100, 1000), ok = pending_job(4, 100, 1000),
	    run = pending_job(5, 100, 1000);
	bare.model = "";
	bare.batch = 0;
	bare.iterations_known = false;
	other.model = "resnet";
	batch.batch = 64;
	run.model = "";
	run.state = JobState::Running;
	Snapshot snap;
	snap.cluster = &c;
	snap.jobs = {&bare, &other, &batch, &ok, &run};
	Plan plan = pol->decide(snap);
	auto reason = [&](JobId id) { return plan.find(id)->reason; };
	assert_int_equal((int)plan.find(1)->action, (int)Action::Reject);
	assert_string_equal(reason(1).c_str(),
			    "elasticflow cannot plan this job without its "
			    "throughput profile and its iterations: no "
			    "--train-model, no --train-batch, no --train-iters");
	assert_int_equal((int)plan.find(2)->action, (int)Action::Reject);
	assert_non_null(strstr(reason(2).c_str(),
			       "no throughput table for --train-model=resnet "
			       "(tables: m)"));
	assert_int_equal((int)plan.find(3)->action, (int)Action::Reject);
	assert_non_null(strstr(reason(3).c_str(),
			       "m's table has no row for --train-batch=64 "
			       "(rows: 8)"));
	assert_int_equal((int)plan.find(4)->action, (int)Action::Start);
	assert_int_equal((int)plan.find(5)->action, (int)Action::Hold);
	assert_non_null(strstr(reason(5).c_str(), "no --train-model"));
	fs::remove_all(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minimum_share),
		cmocka_unit_test(test_no_level_meets),
		cmocka_unit_test(test_no_level_meets_odd_cluster),
		cmocka_unit_test(test_admission),
		cmocka_unit_test(test_leftover),
		cmocka_unit_test(test_marginal_value),
		cmocka_unit_test(test_gpu_time),
		cmocka_unit_test(test_buddy),
		cmocka_unit_test(test_buddy_switches),
		cmocka_unit_test(test_policy_rejects),
		cmocka_unit_test(test_policy_rejects_unplannable),
		cmocka_unit_test(test_late_job_admits_others),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
