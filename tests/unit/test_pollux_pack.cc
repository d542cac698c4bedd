/*
 * test_pollux_pack.cc - laying out Pollux jobs from their shapes: kept
 * rows stay, single-node jobs best-fit, distributed jobs on nodes no
 * other distributed job holds; layouts worked out by hand.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/pollux_pack.h"
#include "tests/unit/unit.h"

using namespace tidal;

static PolluxJobInput job(int maxr)
{
	PolluxJobInput j;
	j.speedup = [](int, int r) { return (double)r; };
	j.max_replicas = maxr;
	return j;
}

/* Three nodes of 4.  Job 0 keeps its distributed row (2 on node 0, 2 on
 * node 1); job 1 wants 3 on one node: best fit is node 2 (4 free) as
 * nodes 0 and 1 have only 2; job 2 wants 2 on one node: node 0 (2 free,
 * the first exact fit).  Job 3 then wants 2 over two nodes, but every
 * node with a free GPU but node 2 is held by job 0, and one node is not
 * enough, so there is no layout. */
static void test_pack_layout(void **state)
{
	(void)state;
	PolluxProblem p({ job(8), job(4), job(4), job(8) }, { 4, 4, 4 },
			{ 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 });
	std::vector<PolluxShape> s(4);
	s[0].kept = true;
	s[1] = { false, 3, false };
	s[2] = { false, 2, false };
	std::vector<int> x;
	assert_true(pollux_pack(p, s, x));
	std::vector<int> want = { 2, 2, 0, 0, 0, 3, 2, 0, 0, 0, 0, 0 };
	assert_true(x == want);
	s[3] = { false, 2, true };
	std::vector<int> y;
	assert_false(pollux_pack(p, s, y));
	assert_true(y.empty());
}

/* Distributed jobs of 5 and 3 on three nodes of 4: the first (largest
 * first) takes 4 on node 0 and 1 on node 1; the second has only node 2
 * left, one node, so no layout.  Job 0 with 4 over nodes and job 1 with 3
 * on one node: job 1 is placed first (best fit, the first node: 3 on
 * node 0), then job 0 over the most free nodes: 3 on node 1, 1 on
 * node 2. */
static void test_pack_distributed(void **state)
{
	(void)state;
	PolluxProblem p({ job(8), job(8) }, { 4, 4, 4 },
			std::vector<int>(6, 0));
	std::vector<PolluxShape> s = { { false, 5, true }, { false, 3, true } };
	std::vector<int> x;
	assert_false(pollux_pack(p, s, x));
	s = { { false, 4, true }, { false, 3, false } };
	assert_true(pollux_pack(p, s, x));
	std::vector<int> want = { 0, 3, 1, 3, 0, 0 };
	assert_true(x == want);
}

/* Six nodes of 4, job 0 kept on node 5 (1 GPU): 23 free GPUs for a
 * distributed job of 14, one of 8 and a single GPU, exactly.  Most free
 * first leaves 2 on a fourth node for the 14 and then too little for the
 * 8 whichever goes first; whole nodes first, the rest where it fits best
 * (node 5), leaves two whole nodes for the 8. */
static void test_pack_whole_nodes(void **state)
{
	(void)state;
	std::vector<int> base(4 * 6, 0);
	base[5] = 1;
	PolluxProblem p({ job(1), job(16), job(8), job(1) },
			{ 4, 4, 4, 4, 4, 4 }, base);
	std::vector<PolluxShape> s = { { true, 1, false },
				       { false, 14, true },
				       { false, 8, true },
				       { false, 1, false } };
	std::vector<int> x;
	assert_true(pollux_pack(p, s, x));
	std::vector<int> want = { 0, 0, 0, 0, 0, 1, 4, 4, 4, 0, 0, 2,
				  0, 0, 0, 4, 4, 0, 0, 0, 0, 0, 0, 1 };
	assert_true(x == want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pack_layout),
		cmocka_unit_test(test_pack_distributed),
		cmocka_unit_test(test_pack_whole_nodes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
