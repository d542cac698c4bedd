/*
 * test_muri_policy.cc - the core Muri-S/L policy (core/policies/muri.h) on
 * a hand-made snapshot.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/muri.h"
#include "tests/unit/unit.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_sort_values),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
