/*
 * test_muri_policy.cc - the core Muri-S/L policy (core/policies/muri.h) on
 * a hand-made snapshot.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/muri.h"
#include "tests/unit/unit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <unistd.h>

using namespace tidal;
using namespace tidal::test;

static Job staged(JobId id, StageTimes st)
{
	Job j = job(id, 1, 0, 111.65);
	j.remaining = 100;
	j.iter_time = 1.1165;
	j.stages = st;
	return j;
}

/*
 * Two GPUs, three 1-GPU jobs: 1 loads data (1, 0.1, 0), 2 and 3 compute
 * (0.1, 1, 0).  Equal ranks keep the input order.  Job 1 fits and its slot
 * brings all three; 3 GPUs are wanted, 2 exist, so one matching round
 * merges one pair.  1 with 2 (or 3) interleaves in 1.1 s (x 1.33/1.015),
 * weight 2.2 / (1.441 x 4) = 0.38; 2 with 3 both compute, 2 s, weight
 * 0.21: the matching pairs 1 with one of them.  The pair and the single
 * job each take one GPU.
 */
static void check_groups(const char *name, const char *matcher)
{
	Cluster c = cluster(1, 2);
	std::vector<Job> jobs = {staged(1, {1, 0.1, 0}),
				 staged(2, {0.1, 1, 0}),
				 staged(3, {0.1, 1, 0})};
	Params p;
	p.set("Muri.Matcher", matcher);
	std::string err;
	auto pol = make_policy(name, p, &err);
	assert_non_null(pol.get());
	auto *muri = dynamic_cast<Muri *>(pol.get());
	assert_non_null(muri);
	Plan plan = pol->decide(snapshot(c, jobs, 0));
	assert_int_equal((int)plan.decisions.size(), 3);
	for (const Decision &d : plan.decisions)
		assert_int_equal((int)d.action, (int)Action::Start);
	/* 1 shares its GPU with exactly one of 2 and 3 (placements name
	 * nodes and counts, so the groups tell) */
	assert_int_equal((int)muri->placed().size(), 2);
	for (const Muri::Placed &g : muri->placed()) {
		if (g.members.size() == 2) {
			assert_int_equal((int)g.members[0], 1);
			assert_true(g.members[1] == 2 || g.members[1] == 3);
			assert_true(g.iter_time == 1.1 * (1.33 / 1.015));
		} else {
			assert_int_equal((int)g.members.size(), 1);
			assert_true(g.iter_time == 1.1165);
		}
	}
	const Decision *d1 = plan.find(1);
	assert_true(strstr(d1->reason.c_str(), "interleaved with job") !=
		    nullptr);
}

static void test_groups(void **)
{
	for (const char *name : {"muri-s", "muri-l"})
		for (const char *m : {"lemon", "anchor"})
			check_groups(name, m);
}

/* Muri-S ranks by remaining GPU-seconds (the duration before the first
 * run), Muri-L by attained GPU-seconds. */
static void test_sort_values(void **)
{
	Job j = job(1, 4, 0, 100);
	j.remaining = 50;
	j.iter_time = 1.5;
	j.executed = 30;
	Muri s("muri-s", MuriOptions{}), l("muri-l", [] {
		MuriOptions o;
		o.know_duration = false;
		return o;
	}());
	assert_true(s.sort_value(j) == 400); /* never ran: 100 s x 4 */
	j.start = 10;
	assert_true(s.sort_value(j) == 300); /* 50 x 1.5 s x 4 */
	assert_true(l.sort_value(j) == 120); /* 30 s x 4 */
	Params bad;
	bad.set("Muri.Matcher", "boost");
	std::string err;
	assert_null(make_policy("muri-s", bad, &err).get());
	assert_true(strstr(err.c_str(), "Muri.Matcher") != nullptr ||
		    strstr(err.c_str(), "muri.matcher") != nullptr);
}

/*
 * The setting of check_groups on a cluster that shares GPUs as
 * sched/tidal does (gres/shard): the group's first job is its anchor and
 * the partner is told to start on its GPUs; every start says share.
 * Without gres/shard (one job per GPU) nothing is grouped, and a job that
 * runs alone says why.
 */
static void test_sharing_limits(void **)
{
	std::vector<Job> jobs = { staged(1, { 1, 0.1, 0 }),
				  staged(2, { 0.1, 1, 0 }),
				  staged(3, { 0.1, 1, 0 }) };
	Cluster c = cluster(1, 2);
	c.sharing.jobs_per_gpu = 4;
	c.sharing.gpus_per_node = 1;
	Muri m("muri-s", MuriOptions{});
	Plan plan = m.decide(snapshot(c, jobs, 0));
	const Decision *d1 = plan.find(1);
	assert_non_null(d1);
	assert_true(d1->share);
	assert_int_equal((int)d1->colocate, 0);
	int partners = 0;
	for (JobId id : { 2, 3 }) {
		const Decision *d = plan.find(id);
		assert_true(d->share);
		if (d->colocate) {
			assert_int_equal((int)d->colocate, 1);
			partners++;
		}
	}
	assert_int_equal(partners, 1);

	/* One job per GPU: three jobs, two GPUs, no group; the third waits */
	c.sharing.jobs_per_gpu = 1;
	c.sharing.why = "no gres/shard";
	plan = m.decide(snapshot(c, jobs, 0));
	assert_int_equal((int)m.placed().size(), 2);
	int held = 0;
	for (const Decision &d : plan.decisions) {
		assert_int_equal((int)d.colocate, 0);
		assert_false(d.share);
		if (d.action == Action::Hold)
			held++;
		else
			assert_string_equal(d.reason.c_str(),
					    "runs alone: no gres/shard");
	}
	assert_int_equal(held, 1);

	/* 2-GPU jobs where a sharing job may hold one GPU per node */
	std::vector<Job> wide = jobs;
	for (Job &j : wide)
		j.gpus = 2;
	c = cluster(1, 4);
	c.sharing.jobs_per_gpu = 4;
	c.sharing.gpus_per_node = 1;
	plan = m.decide(snapshot(c, wide, 0));
	assert_int_equal((int)m.placed().size(), 2);
	for (const Decision &d : plan.decisions)
		assert_false(d.share);
}

/* Running jobs that share GPUs (Job::gpu_group) are named as each other's
 * partners, with their group's time, whatever the plan's new groups. */
static void test_actual_group(void **)
{
	std::vector<Job> jobs = { staged(1, { 1, 0.1, 0 }),
				  staged(2, { 0.1, 1, 0 }) };
	Cluster c = cluster(1, 2);
	c.sharing.jobs_per_gpu = 4;
	c.sharing.gpus_per_node = 1;
	for (Job &j : jobs) {
		j.state = JobState::Running;
		j.start = 0;
		j.alloc = 1;
		j.placement = { { 0, 1 } };
		j.gpu_group = 1;
	}
	Muri m("muri-s", MuriOptions{});
	Plan plan = m.decide(snapshot(c, jobs, 10));
	const Decision *d2 = plan.find(2);
	assert_int_equal((int)d2->action, (int)Action::Keep);
	assert_non_null(strstr(d2->reason.c_str(), "interleaved with job 1 ("));
	assert_int_equal((int)d2->colocate, 0);
}

/* Muri.Profiles: stages for jobs that have none, and its errors. */
static void test_profiles(void **)
{
	char dir[] = "/tmp/tidal-unit-muri.XXXXXX";
	assert_non_null(mkdtemp(dir));
	std::string good = std::string(dir) + "/good.csv";
	std::string bad = std::string(dir) + "/bad.csv";
	FILE *f = fopen(good.c_str(), "w");
	fputs("model,data,compute,comm\nio,0.3,0.05,0.05\n", f);
	fclose(f);
	f = fopen(bad.c_str(), "w");
	fputs("model,data,compute,comm\nio,0.3,-1,0\n", f);
	fclose(f);
	std::map<std::string, StageTimes> t;
	std::string err;
	assert_true(load_stage_profiles(good, &t, &err));
	assert_true(t.at("io")[0] == 0.3);
	assert_false(load_stage_profiles(bad, &t, &err));
	assert_non_null(strstr(err.c_str(), "bad.csv:2: '-1': a stage time"));
	assert_false(load_stage_profiles(std::string(dir) + "/none", &t, &err));
	assert_non_null(strstr(err.c_str(), "cannot be read"));

	Params p;
	p.set("Muri.Profiles", bad);
	auto pol = make_policy("muri-s", p, &err);
	assert_null(pol.get());
	assert_non_null(strstr(err.c_str(), "Muri.Profiles"));

	/* A job with the model and no measured stages takes the profile's:
	 * its solo time is their sum x 1.015 */
	Params ok;
	ok.set("Muri.Profiles", good);
	MuriOptions o = muri_options(ok, MuriOptions{});
	Job j = job(1, 1, 0, 100);
	j.model = "io";
	j.remaining = 100;
	j.iter_time = 1;
	std::vector<const Job *> one = { &j };
	std::vector<MuriGroup> g = muri_groups(one, { 1.0 }, cluster(1, 1), o);
	assert_int_equal((int)g.size(), 1);
	assert_true(std::abs(g[0].iter_time - 0.4 * 1.015) < 1e-12);
	unlink(good.c_str());
	unlink(bad.c_str());
	rmdir(dir);
}

/* InterleaveMemo gives interleave_raw_time() bit for bit, whatever order
 * the members come in and whether it answers from memory or not; the
 * same stage times in another job are the same entry. */
static void test_memo(void **)
{
	std::mt19937_64 g(3);
	std::uniform_real_distribution<double> d(0.01, 2.0);
	InterleaveMemo memo;
	for (int round = 0; round < 200; round++) {
		int n = 2 + round % 3;
		std::vector<InterleaveJob> jobs(n);
		for (int i = 0; i < n; i++) {
			for (double &x : jobs[i].stages)
				x = round % 7 == 0 ? 0.5 : d(g); /* ties too */
			jobs[i].index = (std::size_t)i;
		}
		std::vector<int> perm(n);
		for (int i = 0; i < n; i++)
			perm[i] = i;
		for (Ordering o : {Ordering::Best, Ordering::Worst, Ordering::None}) {
			std::vector<const InterleaveJob *> v;
			for (int i = 0; i < n; i++)
				v.push_back(&jobs[i]);
			const double want = interleave_raw_time(v, o);
			std::sort(perm.begin(), perm.end());
			do {
				std::vector<const InterleaveJob *> p;
				for (int i : perm)
					p.push_back(&jobs[i]);
				double got = memo.raw_time(p, o);
				if (o == Ordering::None)
					assert_true(got == interleave_raw_time(p, o));
				else
					assert_true(got == want);
			} while (std::next_permutation(perm.begin(), perm.end()));
			/* A copy of the jobs (other addresses, other indices):
			 * the same time. */
			std::vector<InterleaveJob> copy(jobs.rbegin(), jobs.rend());
			std::vector<const InterleaveJob *> c;
			for (const InterleaveJob &j : copy)
				c.push_back(&j);
			if (o != Ordering::None)
				assert_true(memo.raw_time(c, o) == want);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_sort_values),
		cmocka_unit_test(test_sharing_limits),
		cmocka_unit_test(test_actual_group),
		cmocka_unit_test(test_profiles),
		cmocka_unit_test(test_memo),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
