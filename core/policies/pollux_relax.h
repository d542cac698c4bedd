/*
 * pollux_relax.h - the K best shape vectors of Pollux's allocation
 * problem with placement relaxed away.
 *
 * F1 is a sum of per-job terms, and a term depends on the job's row only
 * through its shape (pollux_pack.h).  Dropping every constraint but the
 * cluster's GPU count leaves a knapsack: choose one shape per job, total
 * replicas at most the cluster's GPUs, minimising the sum of terms.  A
 * dynamic programme over (job, GPUs used) keeping the K best partial sums
 * dynamic programme over (job, GPUs used) solves it exactly, and a
 * recursive enumeration of the programme's paths (Jimenez and Marzal)
 * lists its solutions cheapest first, each next one on demand.
 *
 * The local search (pollux_search.cc) moves one or two jobs' shapes at a
 * time and stops where no such move pays; the GA wanders by mutation.  The
 * relaxation looks at every job at once: its best shape vectors that
 * pollux_pack can lay out are starting points far from where the local
 * search stopped, found without a random kick.  Its best value is also a
 * lower bound on F1's sum of terms.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <memory>
#include <vector>

#include "core/policies/pollux_pack.h"
#include "core/policies/pollux_problem.h"

namespace tidal
{

struct RelaxedShapes {
	double inverse_sum; /* sum of the terms (s_j + 1e-3)^-1 */
	std::vector<PolluxShape> shapes; /* one per job */
};

/* The relaxation's solutions of PROBLEM, cheapest first (ties in a
 * fixed order).  A job's shapes: empty, its current row if that still
 * fits its max_replicas ("kept"), r replicas on one node (r up to the
 * largest node), r >= 2 replicas over nodes (up to max_replicas and the
 * cluster's GPUs).  PROBLEM must outlive the enumerator. */
class RelaxEnum
{
public:
	explicit RelaxEnum(const PolluxProblem &problem);
	~RelaxEnum();
	/* OUT: the next solution.  RET: false when there are no more. */
	bool next(RelaxedShapes *out);

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
	int k_ = 0;
};

/* RET: the edges of RelaxEnum's graph for PROBLEM: what its first
 * solution costs in time, and in memory (about 32 bytes each). */
long pollux_relax_edges(const PolluxProblem &problem);

/* RET: the first K solutions of RelaxEnum. */
std::vector<RelaxedShapes> pollux_relax(const PolluxProblem &problem, int k);

} /* namespace tidal */
