/*
 * test_queue_policy_index.cc - the ranked-queue policies with their index
 * (a replay that says what changed: Snapshot::delta) give the very replay
 * they give without it: every job starts and ends at the same time, on
 * random clusters and traces, for every baseline policy, discipline and
 * placement, with restart overheads, requeue delays and a decision cycle.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/model/policy.h"
#include "sim/replay.h"

#include "tests/unit/unit.h"

using namespace tidal;
using namespace tidal::test;

/* POLICY as a caller sees it that cannot keep indexes: no delta, every
 * job brought up to date before each call. */
class WithoutIndex : public Policy {
public:
	explicit WithoutIndex(Policy &p) : p_(p) {}
	std::string name() const override { return p_.name(); }
	Plan decide(const Snapshot &snap) override { return p_.decide(snap); }
	bool idle_without_pending() const override
	{
		return p_.idle_without_pending();
	}
	bool reads_progress() const override { return p_.reads_progress(); }

private:
	Policy &p_;
};

static std::uint64_t rng = 0x9E3779B97F4A7C15ull;
static int next(int mod)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (int)(rng % (std::uint64_t)mod);
}

/* Nodes of 4 and 8 GPUs; jobs arriving faster than they end, with ties
 * in submit time and duration on purpose. */
static sim::SimInput random_input()
{
	static const int sizes[] = {1, 1, 1, 2, 2, 4, 8, 12, 16};
	sim::SimInput in;
	int nodes = 1 + next(6);
	in.cluster = cluster(nodes, 8);
	for (int n = 0; n < nodes; n++)
		if (next(3) == 0)
			in.cluster.nodes[n].gpus = 4;
	int total = in.cluster.total_gpus();
	int n = 20 + next(120);
	double t = 0;
	for (int i = 0; i < n; i++) {
		t += next(4) == 0 ? 0 : next(30);
		int g = sizes[next(9)];
		if (g > total)
			g = 1 + next(total);
		Job j = job(i + 1, g, t, 10 + next(8) * 40);
		j.index = (std::size_t)i;
		if (next(3) == 0)
			j.deadline = t + 100 + next(5) * 200;
		in.trace.jobs.push_back(j);
	}
	in.trace.path = "random";
	return in;
}

static void assert_same(const sim::RunResult &a, const sim::RunResult &b)
{
	assert_int_equal(a.jobs.size(), b.jobs.size());
	assert_int_equal(a.decisions, b.decisions);
	for (std::size_t i = 0; i < a.jobs.size(); i++) {
		const sim::JobResult &x = a.jobs[i], &y = b.jobs[i];
		assert_int_equal(x.id, y.id);
		assert_true(x.start == y.start);
		assert_true(x.end == y.end);
		assert_int_equal(x.preemptions, y.preemptions);
		assert_int_equal(x.rejected, y.rejected);
	}
}

static void test_same_replay(void **)
{
	const char *policies[] = {"fifo", "sjf",  "qssf",    "srtf",
				  "srsf", "edf", "tiresias"};
	const char *schemes[] = {"consolidated", "switch-aware", "first-fit",
				 "best-fit",     "count",        "most-free"};
	int indexed = 0;
	for (int round = 0; round < 120; round++) {
		sim::SimInput in = random_input();
		sim::ReplayHooks hooks;
		if (next(2)) {
			double o = next(3) * 5;
			hooks.restart_overhead = [o](const Job &, int) {
				return o;
			};
		}
		if (next(3) == 0)
			hooks.requeue_delay = 1 + next(20);
		if (next(3) == 0)
			hooks.cycle = 1 + next(5);
		for (const char *name : policies) {
			Params prm;
			if (next(2))
				prm.set("Discipline", next(2) ? "skip" : "block");
			if (next(3) == 0)
				prm.set("Preemptive", next(2) ? "yes" : "no");
			if (next(2))
				prm.set("Placement", schemes[next(6)]);
			if (next(3) == 0)
				prm.set("Moves", "yes");
			if (next(2))
				prm.set("Tiresias.Thresholds",
					next(2) ? "100,400" : "50,150,800");
			std::string err;
			auto with = make_policy(name, prm, &err);
			auto alone = make_policy(name, prm, &err);
			assert_non_null(with.get());
			assert_non_null(alone.get());
			indexed += with->incremental();
			WithoutIndex without(*alone);
			sim::RunResult a = sim::replay(in, *with, hooks, {});
			sim::RunResult b = sim::replay(in, without, hooks, {});
			assert_same(a, b);
		}
	}
	/* Every policy but none (qssf's NewOrder=gpus is not set here). */
	assert_int_equal(indexed, 120 * 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_replay),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
