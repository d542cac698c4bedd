/*
 * test_shockwave.cc - Shockwave's estimates on hand-worked cases and a
 * small plan that must respect the GPU capacity in every round.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>
#include <set>

#include "core/policies/shockwave.h"
#include "tests/unit/unit.h"

using namespace tidal;

static ShockwaveJob sj(JobId id, int gpus, std::vector<int> bs,
		       std::vector<double> prof)
{
	ShockwaveJob j;
	j.id = id;
	j.gpus = gpus;
	j.dataset = 1000;
	j.bs = std::move(bs);
	j.prof = std::move(prof);
	j.dur = j.prof;
	return j;
}

/* bs 10 10 20 20, durations 10 10 5 5, one epoch done.  Prior 2 per
 * size, posterior 10: 4, 20: 2 of 6; r10 = 4 * 4/6 - 2 (two epochs of
 * 10 seen) = 2/3, r20 = 4/3; infl = max(int(2 + 1), 3) = 3; rem = 2/3 *
 * 10 + 4/3 * 5 = 13.33.  A finished job has 1.0 left. */
static void test_remaining(void **)
{
	Shockwave sw({});
	ShockwaveJob j = sj(1, 1, {10, 10, 20, 20}, {10, 10, 5, 5});
	j.epoch = 1;
	assert_true(std::fabs(sw.remaining(j) - 40.0 / 3) < 1e-9);
	j.epoch = 4;
	assert_true(sw.remaining(j) == 1.0);
}

/* Series (0, 100), (2, 200) seen at round 4: weights 2/4 and 2/4, mean
 * 150, F = 0.9 * 150 + 0.1 * 200 = 155. */
static void test_momentum(void **)
{
	Shockwave sw({});
	for (int i = 0; i < 4; i++)
		sw.update_progress({});
	assert_int_equal((int)sw.round_ptr(), 4);
	ShockwaveJob j = sj(1, 1, {10}, {10});
	j.ft = {{0, 100}, {2, 200}};
	assert_true(std::fabs(sw.momentum(j) - 155) < 1e-9);
}

/* Three jobs of 1, 2 and 1 GPUs on 2 GPUs over 4 planned rounds: every
 * round's jobs fit, and all GPUs are used (work-conserving fill). */
static void test_plan_capacity(void **)
{
	ShockwaveConfig c;
	c.gpus = 2;
	c.future_rounds = 4;
	c.round = 120;
	Shockwave sw(c);
	sw.add_job(sj(0, 1, std::vector<int>(10, 32), std::vector<double>(10, 100)));
	sw.add_job(sj(1, 2, std::vector<int>(5, 32), std::vector<double>(5, 300)));
	sw.add_job(sj(2, 1, std::vector<int>(20, 32), std::vector<double>(20, 50)));
	std::map<JobId, int> gpus = {{0, 1}, {1, 2}, {2, 1}};
	for (int r = 0; r < 4; r++) {
		auto ids = sw.round_schedule();
		int used = 0;
		for (JobId id : ids)
			used += gpus[id];
		assert_int_equal(used, 2);
		sw.update_progress({});
	}
	assert_true(sw.solve_seconds.size() >= 1);
}

/* What a live job tells Shockwave: its trainer's reported steps/s and
 * batch where it reports, else its speed and --train-batch. */
static void test_observation(void **)
{
	Job j;
	j.iter_time = 0.5;
	j.batch = 64;
	assert_true(shockwave_observation(j) == std::make_pair(2.0, 64));
	j.batch = 0;
	assert_true(shockwave_observation(j) == std::make_pair(2.0, 1));
	j.measured = true;
	j.step_time = 0.25;
	j.run_batch = 256;
	assert_true(shockwave_observation(j) == std::make_pair(4.0, 256));
	j.run_batch = 0; /* reported, but not its batch: as before */
	assert_true(shockwave_observation(j) == std::make_pair(2.0, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_observation),
		cmocka_unit_test(test_remaining),
		cmocka_unit_test(test_momentum),
		cmocka_unit_test(test_plan_capacity),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
