/*
 * test_packing.cc - the packing rule on hand-made pairs: each limit at
 * and just past its edge (memory strictly below the cap, sharescore sum
 * up to 2, priority up to twice the host's), the first eligible host in
 * order, and the reason given for each refusal.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/placement/packing.h"
#include "tests/unit/unit.h"

using namespace tidal;

static bool has(const std::string &s, const char *part)
{
	return s.find(part) != std::string::npos;
}

static void test_limits(void **)
{
	PackRules r;
	PackView host{1, 10000, 1, 1000, true};
	PackView j{1, 14575, 1, 2000, true};
	assert_true(may_pack(j, host, r)); /* 24575 < 24576, 2 <= 2, 2000 <= 2000 */
	assert_string_equal(pack_refusal(j, host, r).c_str(), "");
	PackView mem = j;
	mem.gpu_mem_mb = 14576; /* exactly at the cap: refused (strict) */
	assert_false(may_pack(mem, host, r));
	assert_true(has(pack_refusal(mem, host, r), "not below 24576"));
	PackView score = j;
	score.score = 2;
	assert_false(may_pack(score, host, r));
	assert_true(has(pack_refusal(score, host, r), "sharescore 2 + 1"));
	PackView prio = j;
	prio.priority = 2000.5;
	assert_false(may_pack(prio, host, r));
	assert_true(has(pack_refusal(prio, host, r), "priority"));
	PackView gpus = j;
	gpus.gpus = 2;
	assert_true(has(pack_refusal(gpus, host, r), "holds 1 GPUs, not 2"));
	PackView shared = host;
	shared.exclusive = false;
	assert_false(may_pack(j, shared, r));
	assert_true(has(pack_refusal(j, shared, r), "already shares"));
}

static void test_first_target(void **)
{
	PackRules r;
	PackView j{2, 4000, 0, 500, true};
	std::vector<PackView> hosts = {
		{1, 1000, 0, 1000, true},  /* wrong size */
		{2, 1000, 0, 1000, false}, /* already shared */
		{2, 1000, 0, 200, true},   /* 500 > 2 x 200 */
		{2, 1000, 2, 1000, true},  /* first that fits: 0 + 2 <= 2 */
		{2, 1000, 0, 1000, true},
	};
	assert_int_equal(pack_target(j, hosts, r), 3);
	hosts.resize(3);
	assert_int_equal(pack_target(j, hosts, r), -1);
	r.priority_ratio = 3; /* now the third host takes it */
	assert_int_equal(pack_target(j, hosts, r), 2);
}

/* Running jobs by the GPUs they share: 1 and 3 (group 1), 4 alone (no
 * group), 5 alone on its shard (group 5); pending 2 in none. */
static void test_gpu_groups(void **)
{
	using namespace tidal::test;
	Cluster c = cluster(1, 4);
	std::vector<Job> jobs = { job(1, 1, 0, 10), job(2, 1, 0, 10),
				  job(3, 1, 0, 10), job(4, 1, 0, 10),
				  job(5, 1, 0, 10) };
	for (int i : { 0, 2, 3, 4 })
		jobs[i].state = JobState::Running;
	jobs[0].gpu_group = jobs[2].gpu_group = 1;
	jobs[4].gpu_group = 5;
	std::vector<std::vector<int>> g = gpu_groups(snapshot(c, jobs, 0));
	assert_true(g ==
		    (std::vector<std::vector<int>>{ { 0, 2 }, { 3 }, { 4 } }));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_first_target),
		cmocka_unit_test(test_gpu_groups),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
