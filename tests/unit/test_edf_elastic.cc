/*
 * test_edf_elastic.cc - slot arithmetic, the free-GPU timeline, the
 * ElasticFlow overhead estimate, and elastic EDF plans worked out by hand.
 *
 * The plans use a 4-GPU cluster, a 10 s slot and a linear model
 * (1, 2, 4 GPUs -> 1, 2, 4 iterations/s).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/placement/free_timeline.h"
#include "core/policies/edf_elastic.h"

#include "tests/unit/unit.h"

using namespace tidal;

static void test_align(void **)
{
	assert_int_equal(align_to_slot(0, 0, 240), 0);
	assert_int_equal(align_to_slot(0, 1, 240), 240);
	assert_int_equal(align_to_slot(100, 340, 240), 340);
	assert_int_equal(align_to_slot(100, 341, 240), 580);
	/* t < s: still a ceiling, as Python's // and % make it. */
	assert_int_equal(align_to_slot(100, 50, 240), 100);
	assert_int_equal(align_to_slot(100, -200, 240), -140);
}

static void test_overhead(void **)
{
	assert_true(elastic_overhead(1, false, false, 128) == 4);
	assert_true(elastic_overhead(8, false, false, 128) == 10);
	assert_true(elastic_overhead(64, false, false, 128) == 16);
	assert_true(elastic_overhead(8, true, false, 128) == 37);
	assert_true(elastic_overhead(8, true, true, 128) == 2);
	assert_true(elastic_overhead(8, false, true, 256) == 7);
	assert_true(elastic_overhead(1, true, false, 256) == 7 + 47 + 2);
}

static std::map<SlotTime, int> M(std::initializer_list<std::pair<const SlotTime, int>> l)
{
	return std::map<SlotTime, int>(l);
}

static void test_timeline(void **)
{
	FreeTimeline f(0, 4);
	f.set(10, 4);
	f.set(20, 2);
	f.set(30, 2);
	f.set(40, 4);
	assert_int_equal(f.value_at(25, 9), 2);
	assert_int_equal(f.value_at(-1, 9), 9);
	assert_int_equal(f.value_before(20, 9), 4);
	assert_int_equal(f.value_before(0, 9), 9);
	f.merge();
	assert_true(f.keys() == M({{0, 4}, {20, 2}, {40, 4}}));
}

static ThroughputRow linear()
{
	ThroughputRow r;
	r.gpus = {1, 2, 4};
	r.tput = {1, 2, 4};
	r.nan = {false, false, false};
	return r;
}

/* An empty cluster: 40 iterations on 4 GPUs end at 10; the GPUs come
 * back at align(0, 10) = 10. */
static void test_plan_alone(void **)
{
	ThroughputRow r = linear();
	FreeTimeline f(0, 4);
	EdfPlan p = edf_plan_job({&r, 4, 40, 10}, 0, 10, 4, f);
	assert_int_equal(p.gpus_now, 4);
	assert_int_equal(p.end, 10);
	assert_true(p.meets_deadline);
	assert_true(f.keys() == M({{0, 0}, {10, 4}}));
}

/* Behind it, a 2-GPU job (max_gpu 2) waits until 10, then needs
 * 20 / 2 = 10 s: ends at 20, late for a deadline of 15. */
static void test_plan_waits(void **)
{
	ThroughputRow r = linear();
	FreeTimeline f(0, 4);
	edf_plan_job({&r, 4, 40, 10}, 0, 10, 4, f);
	EdfPlan p = edf_plan_job({&r, 2, 20, 15}, 0, 10, 4, f);
	assert_int_equal(p.gpus_now, 0);
	assert_int_equal(p.end, 20);
	assert_false(p.meets_deadline);
	assert_true(f.keys() == M({{0, 0}, {10, 2}, {20, 4}}));
}

/* 3 GPUs free until 10: base 4 does not fit, the largest level <= 3 is 2:
 * 20 iterations by 10, then 4 GPUs: 10 / 4 = 2.5 s -> ceil 13. */
static void test_plan_partial(void **)
{
	ThroughputRow r = linear();
	FreeTimeline f(0, 3);
	f.set(10, 4);
	EdfPlan p = edf_plan_job({&r, 4, 30, 100}, 0, 10, 4, f);
	assert_int_equal(p.gpus_now, 2);
	assert_int_equal(p.end, 13);
	assert_true(p.meets_deadline);
	assert_true(f.keys() == M({{0, 1}, {10, 0}, {20, 4}}));
}

/* The artifact's release quirk: the job ends at 3 (not a key), so its GPUs
 * "come back" at align(0, 3) = 10 with the free count it saw (2), which
 * overwrites the existing key 10 (4 free). */
static void test_plan_release_quirk(void **)
{
	ThroughputRow r = linear();
	FreeTimeline f(0, 2);
	f.set(10, 4);
	EdfPlan p = edf_plan_job({&r, 4, 5, 100}, 0, 10, 4, f);
	assert_int_equal(p.gpus_now, 2);
	assert_int_equal(p.end, 3);
	assert_true(f.keys() == M({{0, 0}, {10, 2}}));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_align),
		cmocka_unit_test(test_overhead),
		cmocka_unit_test(test_timeline),
		cmocka_unit_test(test_plan_alone),
		cmocka_unit_test(test_plan_waits),
		cmocka_unit_test(test_plan_partial),
		cmocka_unit_test(test_plan_release_quirk),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
