/*
 * themis.h - Themis finish-time fairness (NSDI'20) as ElasticFlow's
 * baseline uses it: each job j gets a fraction x_j in [0, 1] of its
 * requested GPUs g_j, with sum x_j g_j <= cluster, minimising the worst
 * finish-time fairness
 *
 *   rho_j(x_j) = (elapsed_j + work_j / x_j) / isolated_j
 *
 * (elapsed: time since submission; work: remaining run time at g_j GPUs;
 * isolated: the time it would take with a 1/N share of the cluster).
 *
 * rho_j is convex and falling in x_j, so the optimum t* is the smallest t
 * with sum_j g_j L_j(t) <= cluster, L_j(t) = work_j / (isolated_j t -
 * elapsed_j) <= 1; it is found by bisection.  Among the optimal shares,
 * an LP (core/solvers/solver.h) picks the one that moves every job the same
 * fraction s of the way from its lower bound L_j(t*) towards 1, s as large
 * as the cluster allows: a deterministic, symmetric choice (the anchor's
 * interior-point solver returns some interior point of the same face).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <vector>

#include "core/solvers/solver.h"

namespace tidal {

struct FtfJob {
	double elapsed = 0;  /* now - submit, s */
	double work = 0;     /* remaining time at the requested GPUs, s */
	double isolated = 0; /* finish time with the fair 1/N share, s */
	int gpus = 1;
};

struct FtfShares {
	double rho = 0;          /* the optimal worst rho */
	std::vector<double> x;   /* one per job */
	LpStatus status = LpStatus::Optimal;
};

FtfShares themis_shares(const std::vector<FtfJob> &jobs, int cluster_gpus);

} /* namespace tidal */
