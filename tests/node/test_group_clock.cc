/*
 * test_group_clock.cc - the interleaving clock (nodeagent/group_clock.h),
 * driven with simulated stage times: the period it gives a group is the
 * one Muri's model plans with (core/profiles/interleave.h), members come
 * and go between cycles, and no member ever holds two runs.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <stdlib.h>

#include <cmath>
#include <queue>
#include <random>

#include "nodeagent/group_clock.h"

#include "tests/unit/unit.h"

using namespace tidal;
using namespace tidal::agent;

namespace
{

/* Members run their dues for their stage times x factor; RET each
 * member's start times of stage 0. */
struct Sim {
	explicit Sim(GroupClock &c) : clock(c) {}
	GroupClock &clock;
	std::map<uint64_t, StageTimes> st;
	std::map<uint64_t, std::vector<double>> loads;
	std::priority_queue<std::pair<double, uint64_t>,
			    std::vector<std::pair<double, uint64_t>>,
			    std::greater<>>
		q;
	std::map<uint64_t, bool> busy;
	double now = 0;

	void hand(const std::vector<GroupClock::Due> &due)
	{
		for (const GroupClock::Due &d : due) {
			assert_false(busy[d.key]); /* one run at a time */
			busy[d.key] = true;
			double t = 0;
			for (int s = d.first; s <= d.last; s++)
				t += st[d.key][(size_t)s] * d.factor;
			if (d.first == 0)
				loads[d.key].push_back(now);
			q.push({ now + t, d.key });
		}
	}
	/* KEY is gone: its run in flight never finishes. */
	void drop(uint64_t key)
	{
		busy[key] = false;
		decltype(q) kept;
		for (; !q.empty(); q.pop())
			if (q.top().second != key)
				kept.push(q.top());
		q = std::move(kept);
	}
	void run_until(double end)
	{
		while (!q.empty() && q.top().first <= end) {
			auto [t, key] = q.top();
			q.pop();
			now = t;
			busy[key] = false;
			hand(clock.done(key));
		}
	}
};

double period(const std::vector<double> &v)
{
	size_t n = v.size();
	assert_true(n > 40);
	return (v[n - 1] - v[n / 2]) / (double)(n - 1 - n / 2);
}

} /* namespace */

/* The pair from test_interleave.cc: Muri's direct pairing (1.1) beats
 * both staggered orders; the clock runs it, at 1.1 x the 2-job factor. */
static void test_pair(void **)
{
	GroupFactors f = muri_group_factors();
	GroupClock c(2, f);
	Sim s(c);
	s.st[7] = { 1, 0.1, 0 };
	s.st[9] = { 0.1, 1, 0 };
	assert_true(c.join(7, s.st[7]).empty()); /* waits for its partner */
	assert_false(c.running());
	s.hand(c.join(9, s.st[9]));
	assert_true(c.running());
	assert_int_equal(c.plan().shape, InterleavePlan::Pair);
	s.run_until(200);
	assert_true(std::fabs(period(s.loads[7]) - 1.1 * f[1]) < 1e-9);
	assert_true(std::fabs(period(s.loads[9]) - 1.1 * f[1]) < 1e-9);
}

/* Random groups of 1 to 4: the clock's period is the model's, to the
 * last digits (the model reads its period off two rounds of the same
 * recurrence the clock runs for ever). */
static void test_model_period(void **)
{
	std::mt19937 rng(7);
	std::uniform_real_distribution<double> u(0.05, 1.0);
	GroupFactors f = muri_group_factors();
	int worse = 0;
	double worst = 0;
	for (int trial = 0; trial < 400; trial++) {
		int n = 1 + trial % 4;
		GroupClock c(n, f);
		Sim s(c);
		std::vector<InterleaveJob> js;
		for (int i = 0; i < n; i++) {
			StageTimes t{ u(rng), u(rng), u(rng) };
			s.st[(uint64_t)(100 + i)] = t;
			js.push_back({ t, 0, (size_t)i });
		}
		std::vector<const InterleaveJob *> p;
		for (auto &j : js)
			p.push_back(&j);
		double want = interleave_raw_time(p, Ordering::Best) *
			      f[(size_t)n - 1];
		for (int i = 0; i < n; i++)
			s.hand(c.join((uint64_t)(100 + i),
				      s.st[(uint64_t)(100 + i)]));
		s.run_until(400 * want);
		for (int i = 0; i < n; i++) {
			double got = period(s.loads[(uint64_t)(100 + i)]);
			double rel = std::fabs(got - want) / want;
			if (rel > 1e-6)
				worse++;
			worst = std::max(worst, rel);
		}
	}
	print_message("model vs clock: %d of 1000 member periods differ, "
		      "worst by %.3g%%\n",
		      worse, worst * 100);
	assert_int_equal(worse, 0);
}

/* A member leaving mid-cycle: the others finish their runs, the group is
 * planned again without it, and a lone member runs at its solo time. */
static void test_leave_and_join(void **)
{
	GroupFactors f = muri_group_factors();
	GroupClock c(3, f);
	Sim s(c);
	s.st[1] = { 0.3, 0.2, 0.1 };
	s.st[2] = { 0.1, 0.3, 0.2 };
	s.st[3] = { 0.2, 0.1, 0.3 };
	s.hand(c.join(1, s.st[1]));
	s.hand(c.join(2, s.st[2]));
	assert_false(c.running());
	s.hand(c.start()); /* the third is late: go with two */
	assert_int_equal(c.members(), 2);
	s.run_until(10);
	s.hand(c.join(3, s.st[3])); /* joins at the next quiet moment */
	s.run_until(20);
	assert_int_equal(c.order().size(), 3);
	/* member 2 goes; its run in flight no longer counts */
	s.drop(2);
	s.hand(c.leave(2));
	s.run_until(60);
	assert_int_equal(c.order().size(), 2);
	s.drop(3);
	s.hand(c.leave(3));
	s.loads[1].clear();
	s.run_until(200);
	assert_int_equal(c.order().size(), 1);
	assert_true(std::fabs(period(s.loads[1]) - 0.6 * f[0]) < 1e-9);
	assert_true(c.leave(1).empty());
	assert_false(c.running());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pair),
		cmocka_unit_test(test_model_period),
		cmocka_unit_test(test_leave_and_join),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
