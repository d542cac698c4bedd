/*
 * pollux_pack.h - place Pollux jobs given only their shapes.
 *
 * Pollux's objective sees a job's row only through its shape: how many
 * replicas, whether it spans nodes, and whether the row is the current
 * one (no restart penalty).  So a job that restarts anyway may go to any
 * nodes that fit its shape.  pollux_pack() lays out a whole state from
 * the shapes alone: jobs marked "kept" stay on their current rows; the
 * others are packed around them (single-node jobs best-fit, largest
 * first; distributed jobs over the nodes no other distributed job holds,
 * most free first).  It is a heuristic: false means it found no layout,
 * not that none exists.  The local search (pollux_search.cc) uses it for
 * moves that rearrange every restarting job at once.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <vector>

#include "core/policies/pollux_problem.h"

namespace tidal
{

struct PolluxShape {
	bool kept = false; /* on the current (base) row; the rest ignored */
	int replicas = 0;
	bool multi = false; /* on at least two nodes (replicas >= 2) */
};

/* IN: problem, SHAPES (one per job).  OUT: STATE (jobs x nodes), set
 * only on success.  RET: true if a feasible layout was found. */
bool pollux_pack(const PolluxProblem &problem,
		 const std::vector<PolluxShape> &shapes,
		 std::vector<int> &state);

} /* namespace tidal */
