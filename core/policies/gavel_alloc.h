/*
 * gavel_alloc.h - helpers shared by the Gavel allocation policies
 * (gavel_alloc.cc, gavel_ftf_allox.cc); the policies themselves are made
 * by name with make_gavel_allocator() (gavel_rounds.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <chrono>
#include <vector>

#include "core/policies/gavel_rounds.h"
#include "core/solvers/lp_glpk.h"

namespace tidal {

/* The analytic centre of {lower_j <= x_j <= 1, sum(sf_j x_j) <= cap}
 * with the barrier wx log x + wl log(x - lower) + log(1 - x) per job
 * and log(slack) for the capacity: where an interior-point solver ends on a
 * face of optimal solutions.  Shares with lower >= 1 are fixed at 1;
 * if the lower bounds use the whole capacity, RET: the lower bounds. */
struct GavelBarrier {
	double x = 1;     /* weight of log x (x >= 0) */
	double lower = 1; /* weight of log(x - lower) */
};
std::vector<double> gavel_center(const std::vector<double> &lower,
				 const std::vector<int> &sf, double cap,
				 const GavelBarrier &w = {});

/* One allocate()'s clock against its allocator's limit_s.  Its LPs go
 * through solve(); loops of them ask spent() between steps.  Either
 * sets the allocator's over_limit once the limit is reached. */
class SolveBudget
{
public:
	explicit SolveBudget(GavelAllocator &a)
	    : a_(a), t0_(std::chrono::steady_clock::now())
	{
	}
	/* LP solved in what is left.  RET: its status; NoSolution if no
	 * whole millisecond was left or the limit stopped it. */
	LpStatus solve(LinearProgram &lp, LpOptions opt = {});
	bool spent();
	double seconds() const;

private:
	GavelAllocator &a_;
	std::chrono::steady_clock::time_point t0_;
};

} /* namespace tidal */
