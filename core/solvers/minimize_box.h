/*
 * minimize_box.h - smooth minimisation under box bounds: a projected
 * limited-memory BFGS, the stand-in for scipy's L-BFGS-B that Pollux's
 * throughput-model fit uses.
 *
 * Each iteration fixes the variables that sit on a bound with the gradient
 * pushing outwards, takes the L-BFGS direction (two-loop recursion, 10
 * pairs) in the others, and searches along the projected path
 * x(t) = P(x + t d) with an Armijo test.  Stops like L-BFGS-B: projected
 * gradient max-norm <= pgtol, relative decrease
 * (f_k - f_k+1) / max(|f_k|, |f_k+1|, 1) <= ftol, or maxiter.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <functional>
#include <vector>

namespace tidal
{

struct MinimizeOptions {
	double pgtol = 1e-5;
	double ftol = 2.220446049250313e-09; /* scipy's factr 1e7 x eps */
	int maxiter = 15000;
	int memory = 10;
	/* Times the memory is dropped and the search resumed when it stalls
	 * (non-smooth losses: an RMSE that reaches 0 has a kink there). */
	int restarts = 0;
};

struct MinimizeResult {
	double value = 0;
	int iterations = 0;
	int evaluations = 0;
	bool converged = false;
};

/* Value at X; fills *grad (same size as X). */
using Objective = std::function<double(const std::vector<double> &x,
				       std::vector<double> *grad)>;

/* IN: f, x (start; clipped into the box), lo/hi (lo[i] == hi[i] pins x[i];
 *     use +-HUGE_VAL for no bound).
 * OUT: x = the minimiser found.  RET: value, counts, convergence. */
MinimizeResult minimize_box(const Objective &f, std::vector<double> &x,
			    const std::vector<double> &lo,
			    const std::vector<double> &hi,
			    const MinimizeOptions &opt = {});

} /* namespace tidal */
