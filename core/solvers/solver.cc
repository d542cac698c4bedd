/*
 * solver.cc - LpProblem, solved through LinearProgram (lp_glpk.cc).
 *
 * GLPK (GPL-3.0-or-later, compatible with Tidal's GPL-2.0-or-later when
 * distributed as GPL-3) is the backend; lp_glpk.cc keeps its terminal output
 * off so a bad problem is reported as a status, not on stdout.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/solvers/solver.h"

#include <glpk.h>

namespace tidal {

int LpProblem::add_var(double lo, double hi, double cost, bool integer,
		       std::string name)
{
	vars.push_back({lo, hi, cost, integer, std::move(name)});
	return (int)vars.size() - 1;
}

int LpProblem::add_row(std::vector<std::pair<int, double>> coefs, double lo,
		       double hi, std::string name)
{
	rows.push_back({std::move(coefs), lo, hi, std::move(name)});
	return (int)rows.size() - 1;
}

LpResult solve_lp(const LpProblem &p, const LpOptions &opt)
{
	LinearProgram lp;
	lp.set_maximize(p.sense == LpProblem::Sense::Maximize);
	for (const LpProblem::Var &v : p.vars)
		lp.add_var(v.lo, v.hi, v.cost, v.integer);
	for (const LpProblem::Row &r : p.rows)
		lp.add_row(r.coefs, r.lo, r.hi);
	LpResult r;
	r.status = lp.solve(opt);
	if (r.ok()) {
		r.objective = lp.objective();
		for (int j = 0; j < lp.num_vars(); j++)
			r.x.push_back(lp.value(j));
	}
	return r;
}

std::string lp_backend()
{
	return std::string("glpk ") + glp_version();
}

} /* namespace tidal */
