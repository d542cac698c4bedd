/*
 * solver.h - the one LP/MILP interface of Tidal's optimising policies
 * (Themis finish-time fairness, Gavel/Shockwave allocations, ...).
 *
 * A problem is columns (variables with bounds, an objective coefficient and
 * an integrality flag) and rows (sparse linear combinations with bounds):
 *
 *   minimise / maximise   sum_j c_j x_j
 *   subject to            lo_i <= sum_j a_ij x_j <= hi_i
 *                         lo_j <= x_j <= hi_j,  x_j integer if asked
 *
 * Infinite bounds (+-HUGE_VAL) mean "free".  solve_lp() runs GLPK (simplex,
 * or branch-and-cut when a column is integer) through LinearProgram
 * (lp_glpk.h), the one GLPK layer; LpProblem is the plain-data form of a
 * problem for callers that build it up first.  Results are deterministic:
 * the same problem gives the same answer.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/solvers/lp_glpk.h"

namespace tidal {

class LpProblem {
public:
	enum class Sense : std::uint8_t { Minimize, Maximize };

	explicit LpProblem(Sense s = Sense::Minimize) : sense(s) {}

	/* RET: the new column's index. */
	int add_var(double lo, double hi, double cost, bool integer = false,
		    std::string name = "");
	/* Add LO <= sum coef * x[col] <= HI.  RET: the row's index. */
	int add_row(std::vector<std::pair<int, double>> coefs, double lo,
		    double hi, std::string name = "");

	struct Var {
		double lo, hi, cost;
		bool integer;
		std::string name;
	};
	struct Row {
		std::vector<std::pair<int, double>> coefs;
		double lo, hi;
		std::string name;
	};
	Sense sense;
	std::vector<Var> vars;
	std::vector<Row> rows;
};

struct LpResult {
	LpStatus status = LpStatus::NoSolution;
	double objective = 0;
	std::vector<double> x; /* one per column when Optimal */
	bool ok() const { return status == LpStatus::Optimal; }
};

/* Solve P.  Never throws; failures are in the status. */
LpResult solve_lp(const LpProblem &p, const LpOptions &opt = {});

/* The backend's name ("glpk <version>" or "none"). */
std::string lp_backend();

} /* namespace tidal */
