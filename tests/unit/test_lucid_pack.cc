/*
 * test_lucid_pack.cc - the pieces of the lucid preset's Lucid policy:
 * fractional-rate progress (closed form against the original's repeated
 * subtraction), the consolidate placer over a growing node list, the
 * throughput forecast's 5-bin mean, and the packing tables' lookups, on
 * small hand-made inputs whose answers are worked out below.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>
#include <cstdlib>
#include <unistd.h>

#include "sim/csv.h"
#include "sim/presets/lucid_pack.h"
#include "tests/unit/unit.h"

using namespace tidal;
using namespace tidal::sim;
using namespace tidal::sim::lucid;

/* The original: remain -= rate once a second until remain <= 0. */
static long iterate(double remain, double rate)
{
	long n = 0;
	while (remain > 0) {
		remain -= rate;
		n++;
	}
	return n;
}

static void test_drain_by_hand(void **)
{
	/* 3, 2.5, 2, 1.5, 1, 0.5, 0: six subtractions. */
	assert_int_equal(drain_seconds(3, 0.5), 6);
	/* 1, 0.7, 0.39999999999999997, 0.09999999999999998, < 0. */
	assert_int_equal(drain_seconds(1, 0.3), 4);
	assert_true(drain(1, 0.3, 2) == 0.39999999999999997);
	/* Rate 1: an unpacked job of duration d ends d + 1 s after its
	 * start, i.e. d subtractions after the first one is due. */
	assert_int_equal(drain_seconds(8765, 1), 8765);
	assert_int_equal(drain_seconds(0, 1), 0);
	assert_int_equal(drain_seconds(-0.447, 0.7), 0);
}

/* Closed form at rate 1 and drain() against the plain loop, for the
 * remainders a packed job leaves when it is handed back rate 1. */
static void test_drain_matches_loop(void **)
{
	const double rates[] = {1.0, 0.444, 0.983, 1.034, 1.498, 0.7, 1.0 / 3};
	for (double rate : rates)
		for (double r0 : {1.0, 229.0, 8765.0, 43200.0}) {
			/* some packed seconds first, then rate 1 */
			for (long k : {0L, 1L, 17L, 200L}) {
				double rem = r0;
				for (long i = 0; i < k && rem > 0; i++)
					rem -= rate;
				assert_true(drain(r0, rate, k) == rem ||
					    rem <= 0);
				if (rem <= 0)
					continue;
				assert_int_equal(drain_seconds(rem, 1.0),
						 iterate(rem, 1.0));
				assert_int_equal(drain_seconds(rem, rate),
						 iterate(rem, rate));
				double left = rem;
				for (long i = 0; i < 100 && left - 1 >= 0; i++)
					left -= 1;
				long n = 0;
				for (double x = rem; n < 100 && x - 1 >= 0; n++)
					x -= 1;
				assert_true(drain(rem, 1.0, n) == left);
			}
		}
}

static void test_nodes(void **)
{
	NodeList n(3);
	auto p = n.place(3); /* all free: the first node */
	assert_true(p == (std::vector<std::pair<long, int>>{{0, 3}}));
	p = n.place(6); /* node 0 has 5: too few; best fit is node 1 */
	assert_true(p == (std::vector<std::pair<long, int>>{{1, 6}}));
	p = n.place(4); /* free 5, 2, 8: node 0 is the tightest fit */
	assert_true(p == (std::vector<std::pair<long, int>>{{0, 4}}));
	/* free 1, 2, 8; 10 GPUs: one idle node plus 2 more on the next in
	 * descending free order (node 1, 2 free). */
	p = n.place(10);
	assert_true(p == (std::vector<std::pair<long, int>>{{2, 8}, {1, 2}}));
	assert_int_equal(n.free_total(), 1);
	assert_true(n.place(2).empty());
	n.add(9999);
	assert_int_equal(n.idle_nodes(), 1);
	assert_true(n.is_idle(9999));
	p = n.place(16); /* only one idle node: fails at once */
	assert_true(p.empty());
	assert_true(n.remove_highest_idle());
	assert_false(n.has(9999));
	assert_false(n.remove_highest_idle());
	n.release({{2, 8}, {1, 2}});
	assert_int_equal(n.free_total(), 11);
}

static PackTables tables()
{
	PackTables t;
	for (int i = 0; i < 8; i++) {
		t.pred_offset.push_back(600.0 * i);
		t.pred_jobs.push_back(i + 1); /* 1, 2, ..., 8 */
		t.pred_gpus.push_back(10);
	}
	WorkloadKey a{"VGG", "CIFAR-10", 32, 0}, b{"LSTM", "Wikitext2", 64, 1};
	t.colocate.set(a, b, {0.8, 1.2});
	t.sharescore[a] = 1;
	return t;
}

static void test_forecast(void **)
{
	PackTables t = tables();
	Forecast f(t, t.pred_jobs, 1000, 10);
	/* bins at 1000, 1600, ...: after 1000 come 2..8 (7 left): 5 used. */
	assert_true(f.mean_after(1000) == (2 + 3 + 4 + 5 + 6) / 5.0);
	/* after 3500 only the bins at 4000, 4600, 5200 (6, 7, 8) are left:
	 * fewer than 6, so all of them. */
	assert_true(f.mean_after(3500) == (6 + 7 + 8) / 3.0);
	Forecast g(t, t.pred_jobs, 1000, 10);
	assert_true(g.mean_after(3400) == (6 + 7 + 8) / 3.0);
	assert_true(std::isnan(g.mean_after(5200))); /* dropped the last */
	assert_true(g.mean_after(5300) == 10);       /* already empty */
	/* PAS: off while the mean is <= 2, i.e. never here (2..6 > 2). */
	auto pas = pas_schedule(t, 1000);
	assert_true(!pas.empty() && pas.front().first == 1000 &&
		    pas.front().second);
}

static void test_lookups(void **)
{
	PackTables t = tables();
	WorkloadKey a{"VGG", "CIFAR-10", 32, 0}, b{"LSTM", "Wikitext2", 64, 1};
	WorkloadKey bert{"BERT", "SQuAD", 32, 0};
	assert_true(t.speeds(a, b, 1) == std::make_pair(0.8, 1.2));
	assert_true(t.speeds(b, a, 1) == std::make_pair(1.2, 0.8));
	assert_true(t.speeds(bert, a, 1) == std::make_pair(1.0, 1.0));
	bool threw = false;
	try {
		t.speeds(a, a, 7);
	} catch (const InputError &e) {
		threw = std::string(e.what()).find("job 7") != std::string::npos;
	}
	assert_true(threw);
	assert_int_equal(t.score(a, 1), 1);
	threw = false;
	try {
		t.score(b, 9);
	} catch (const InputError &e) {
		threw = std::string(e.what()).find("single_data") !=
			std::string::npos;
	}
	assert_true(threw);
	Job j;
	j.model = "VGG/CIFAR-10/32/0";
	assert_true(workload_key(j) == a);
}

/* A few values of the Lucid artifact's tables, read off the files. */
static void test_anchor_tables(void **)
{
	const char *dir = "../shared/anchors/lucid/lucid";
	if (access(dir, R_OK) != 0)
		skip();
	PackTables t = load_pack_tables(dir);
	assert_int_equal((int)t.sharescore.size(), 66);
	assert_int_equal((int)t.colocate.rows(), 1388);
	assert_int_equal((int)t.pred_jobs.size(), 4032);
	WorkloadKey m{"MobileNetV3", "ImageNet", 32, 0},
		r{"ResNet18", "CIFAR-10", 32, 1};
	assert_true(t.speeds(m, r, 1) == std::make_pair(1.055, 0.97));
	assert_true(t.speeds(r, m, 1) == std::make_pair(0.97, 1.055));
	assert_int_equal(t.score({"BERT", "SQuAD", 32, 0}, 1), 2);
	/* MODEL.md §4.6.4: PAS is off from 13234200 to 13248500. */
	auto pas = pas_schedule(t, 13219200);
	assert_true(pas.size() >= 3 && pas[1] == std::make_pair(13234200.0, false) &&
		    pas[2] == std::make_pair(13248600.0, true));
}

/* 13 one-node jobs at once on the 2-node profiler: 11 wait, so a third
 * node comes at t = 0 and takes job 2 at t = 1; pairs then start every
 * 200 s (the limit) and the third node's job a second later.  Job 12
 * starts at 800 on node 0; node 9999 is idle from 801 and, with an
 * empty forecast (fallback -1 <= 40) and no queue, goes at 900.  A
 * 16-GPU job is never profiled; a 150-s job finishes inside ("toskip"). */
static void test_profiler_scaling(void **)
{
	std::vector<Job> jobs;
	for (int i = 0; i < 13; i++) {
		Job j;
		j.id = i;
		j.gpus = 8;
		j.duration = 1000;
		jobs.push_back(j);
	}
	Job wide;
	wide.id = 100;
	wide.gpus = 16;
	wide.duration = 1000;
	wide.submit = 5;
	jobs.push_back(wide);
	Job shortj;
	shortj.id = 101;
	shortj.gpus = 1;
	shortj.duration = 150;
	shortj.submit = 1000;
	jobs.push_back(shortj);
	PackTables t;
	ProfilerResult r = run_profiler(jobs, t, 0);
	assert_true(r.scaling == (std::vector<std::pair<Time, int>>{
					 {0, +1}, {900, -1}}));
	const Time start[13] = {0, 0, 1, 200, 200, 201, 400, 400,
				401, 600, 600, 601, 800};
	for (int i = 0; i < 13; i++) {
		const ProfiledJob &p = r.jobs.at(i);
		assert_true(p.profiled && !p.toskip);
		assert_true(p.start == start[i] && p.profqueue == start[i]);
		assert_true(p.end == start[i] + 200);
	}
	assert_false(r.jobs.at(100).profiled);
	const ProfiledJob &s = r.jobs.at(101);
	assert_true(s.toskip && s.start == 1000 && s.end == 1150);
}

/* vcYVn follows the profiler's scaling (MODEL.md §4.6.6), after the
 * second's placements: one node; A runs 5..56 (ends duration + 1 s after
 * its start); the profiler's +1 at 60 takes vcYVn's idle node away, so B
 * (arrived at 80) waits until the -1 at 200 brings node 9999 back, and
 * starts the second after.  Sharescores 2 + 2 keep them from packing. */
static void test_vc_follows_scaling(void **)
{
	PackTables t;
	WorkloadKey k{"M", "D", 32, 0};
	t.sharescore[k] = 2;
	VcInput vc;
	vc.name = "vcYVn";
	Node n;
	n.name = "0";
	n.gpus = 8;
	n.group = "vcYVn";
	vc.cluster.nodes.push_back(n);
	for (int i = 0; i < 2; i++) {
		Job j;
		j.id = i + 1;
		j.gpus = 8;
		j.model = "M/D/32/0";
		j.estimate = 100;
		j.submit = i == 0 ? 5 : 80;
		j.duration = i == 0 ? 50 : 10;
		vc.jobs.push_back(j);
	}
	ProfilerResult prof;
	prof.scaling = {{60, +1}, {200, -1}};
	std::vector<std::pair<Time, bool>> pas = {{0, true}};
	PackInput in;
	in.vc = &vc;
	in.tables = &t;
	in.profiler = &prof;
	in.pas = &pas;
	in.echo_scaling = true;
	VcOutput o = replay_lucid_vc(in);
	assert_int_equal((int)o.jobs.size(), 2);
	assert_true(o.jobs[0].start == 5 && o.jobs[0].end == 56);
	assert_true(o.jobs[1].start == 201 && o.jobs[1].end == 212);
	assert_true(o.jobs[1].queue == 121);
	/* without the echo B starts on arrival */
	in.echo_scaling = false;
	o = replay_lucid_vc(in);
	assert_true(o.jobs[1].start == 80 && o.jobs[1].end == 91);
}

/* Two 1-GPU jobs on one node, PAS on, both at half speed when packed.
 * R runs from 0 (remain 90 after second 10); J arrives at 10 and packs
 * onto it; from 11 both lose 0.5 a second.  R reaches 0 after second 190
 * and ends at 191; being the target, its end "restores" itself (Q4), so J
 * keeps rate 0.5: 10 left at 191, 20 more seconds, ends at 211 (not 201).
 * With J only 20 s long, J ends first at 51 and hands R rate 1 after R's
 * own half-speed second 51: 90 - 41 x 0.5 = 69.5, so R ends at 122. */
static void test_packed_pair(void **)
{
	PackTables t;
	WorkloadKey k{"VGG", "CIFAR-10", 32, 0};
	t.sharescore[k] = 0;
	t.colocate.set(k, k, {0.5, 0.5});
	VcInput vc;
	vc.name = "vcA";
	Node n;
	n.name = "0";
	n.gpus = 8;
	vc.cluster.nodes.push_back(n);
	for (int i = 0; i < 2; i++) {
		Job j;
		j.id = i + 1;
		j.gpus = 1;
		j.model = "VGG/CIFAR-10/32/0";
		j.estimate = 100;
		j.submit = i * 10;
		j.duration = 100;
		vc.jobs.push_back(j);
	}
	ProfilerResult prof;
	std::vector<std::pair<Time, bool>> pas = {{0, true}};
	PackInput in;
	in.vc = &vc;
	in.tables = &t;
	in.profiler = &prof;
	in.pas = &pas;
	VcOutput o = replay_lucid_vc(in);
	assert_true(o.jobs[0].start == 0 && o.jobs[0].end == 191);
	assert_true(o.jobs[1].start == 10 && o.jobs[1].end == 211);
	vc.jobs[1].duration = 20;
	o = replay_lucid_vc(in);
	assert_true(o.jobs[1].end == 51);
	assert_true(o.jobs[0].end == 122);
	/* PAS off: no packing; J starts alone on a free GPU at full speed. */
	pas = {{0, false}};
	o = replay_lucid_vc(in);
	assert_true(o.jobs[0].end == 101 && o.jobs[1].end == 31);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drain_by_hand),
		cmocka_unit_test(test_drain_matches_loop),
		cmocka_unit_test(test_nodes),
		cmocka_unit_test(test_forecast),
		cmocka_unit_test(test_lookups),
		cmocka_unit_test(test_anchor_tables),
		cmocka_unit_test(test_profiler_scaling),
		cmocka_unit_test(test_vc_follows_scaling),
		cmocka_unit_test(test_packed_pair),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
