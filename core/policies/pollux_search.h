/*
 * pollux_search.h - Tidal's optimiser for Pollux's allocation problem
 * (pollux_problem.h): a deterministic best-improvement local search over
 * one job's row at a time, in place of the artifact's NSGA-II.
 *
 * F1 = -J / sum_j 1 / (s_j + 1e-3), so minimising F1 is minimising a sum
 * of per-job terms that depend only on the job's row: its replica count,
 * whether it spans nodes (the goodput model sees only nodes > 1), and
 * whether it equals the current row (no restart penalty).  Moves, for each
 * job against the others' rows:
 *
 *   drop        the row becomes empty;
 *   keep        back to the current allocation, if it still fits;
 *   local r     r replicas on the best-fitting node;
 *   spread r    r replicas over nodes no other distributed job uses;
 *   +1 / -1     one replica more or less on one node;
 *   take        r replicas on node n (or the row plus some on n), taking
 *               the missing GPUs from the jobs on n that lose least.
 *
 * Runs from the current allocation, from the empty one and from the
 * first layouts pollux_pack finds for the best solutions of the GPU-count
 * relaxation (pollux_relax.h); the best result wins; then, for small
 * problems, perturbs it (the GA's mutation) and searches again a few
 * times, keeping improvements.  Deterministic
 * for a seed.  Every state visited satisfies the constraints, so repair
 * leaves the result unchanged.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <vector>

#include "core/policies/pollux_problem.h"

namespace tidal
{

struct SearchOptions {
	/* Iterated local search: perturb the best state this many times
	 * (the GA's mutation, then repair) and search again, keeping any
	 * improvement.  Only for problems of at most kick_jobs jobs; with
	 * J jobs, kicks x max(1, kick_jobs / J) times. */
	int kicks = 10;
	int kick_jobs = 16;
	/* For problems of at most relax_jobs jobs: search from the first
	 * relax_starts of the relax_k best solutions of the GPU-count
	 * relaxation (pollux_relax.h) that pollux_pack can lay out. */
	int relax_k = 1000;
	int relax_starts = 2;
	int relax_jobs = 64;
	/* ... and whose relaxation graph has at most this many edges (its
	 * first solution's time and memory grow with them, 32 bytes each:
	 * 64 GPUs x 31 jobs is 140,000; 512 GPUs x 64 jobs of up to 64
	 * replicas would be 2.4 M). */
	long relax_edges = 1000000;
	std::uint64_t seed = 1;
};

struct SearchStats {
	int passes = 0;
	int moves = 0;
};

/* RET: a feasible state (jobs x nodes) with the lowest F1 found. */
std::vector<int> pollux_search(const PolluxProblem &problem,
			       const SearchOptions &opt = {},
			       SearchStats *stats = nullptr);

/* The local search alone (no restarts, no kicks) from START, a feasible
 * state: used to polish another optimiser's result.
 * RET: a feasible state no worse than START. */
std::vector<int> pollux_polish(const PolluxProblem &problem,
			       std::vector<int> start);

} /* namespace tidal */
