/*
 * lp_glpk.h - a small LP/MILP model solved in process by GLPK
 * (GPL-compatible, so it may run inside slurmctld).
 *
 *   LinearProgram lp;                       // minimise by default
 *   int x = lp.add_var(0, 1, 3.0);          // 0 <= x <= 1, cost 3
 *   lp.add_row({{x, 1.0}, {y, 2.0}}, -kInf, 4);   // x + 2y <= 4
 *   lp.set_maximize(true);
 *   LpStatus st = lp.solve({.time_limit_s = 15, .mip_gap = 1e-3});
 *   double v = lp.value(x);
 *
 * The model is kept in plain vectors and handed to GLPK only inside
 * solve(), so a LinearProgram can be copied, changed and solved again.
 * GLPK's terminal output is switched off; nothing here throws.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace tidal {

inline constexpr double kLpInf = std::numeric_limits<double>::infinity();

enum class LpStatus {
	Optimal,    /* proven optimal (MIP: within mip_gap) */
	Feasible,   /* a solution, not proven optimal (time limit hit) */
	Infeasible,
	Unbounded,
	NoSolution, /* time limit or solver failure before any solution */
};
const char *lp_status_name(LpStatus s);

struct LpOptions {
	double time_limit_s = 0; /* 0 = none */
	double mip_gap = 0;      /* relative; 0 = GLPK's default (exact) */
	bool presolve = true;
	/* Pure LPs: GLPK's interior-point method instead of simplex; its
	 * answer lies inside a face of optima, not at a vertex. */
	bool interior = false;
};

class LinearProgram {
public:
	/* A variable LO <= x <= HI (either may be +-kLpInf) with objective
	 * coefficient OBJ.  RET: its index. */
	int add_var(double lo, double hi, double obj = 0, bool integer = false);
	/* LO <= sum(coef * x) <= HI.  RET: the row's index. */
	int add_row(const std::vector<std::pair<int, double>> &coefs, double lo,
		    double hi);
	void set_objective(int var, double coef) { vars_[var].obj = coef; }
	void set_maximize(bool max) { maximize_ = max; }
	int num_vars() const { return (int)vars_.size(); }

	/* RET: the status; values are valid for Optimal and Feasible. */
	LpStatus solve(const LpOptions &opt = {});
	double value(int var) const { return x_[var]; }
	double objective() const { return obj_; }
	/* Wall seconds of the last solve, and whether its limit bound. */
	double seconds() const { return seconds_; }
	bool hit_time_limit() const { return hit_limit_; }

private:
	struct Var {
		double lo, hi, obj;
		bool integer;
	};
	struct Row {
		std::vector<std::pair<int, double>> coefs;
		double lo, hi;
	};
	std::vector<Var> vars_;
	std::vector<Row> rows_;
	bool maximize_ = false;
	std::vector<double> x_;
	double obj_ = 0, seconds_ = 0;
	bool hit_limit_ = false;
};

} /* namespace tidal */
