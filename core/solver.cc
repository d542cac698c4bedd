/*
 * solver.cc - LpProblem and its GLPK backend.
 *
 * GLPK (GPL-3.0-or-later, compatible with Tidal's GPL-2.0-or-later when
 * distributed as GPL-3) is used through its C API with terminal output
 * off and presolve on, so a bad problem is reported as a status rather
 * than a message on stdout.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/solver.h"

#ifdef TIDAL_HAVE_GLPK
#include <glpk.h>
#endif

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

const char *lp_status_name(LpStatus s)
{
	switch (s) {
	case LpStatus::Optimal:
		return "optimal";
	case LpStatus::Infeasible:
		return "infeasible";
	case LpStatus::Unbounded:
		return "unbounded";
	case LpStatus::Failed:
		return "failed";
	case LpStatus::NoBackend:
		return "no solver backend (built without GLPK)";
	}
	return "?";
}

#ifdef TIDAL_HAVE_GLPK

namespace {

int bound_type(double lo, double hi)
{
	bool has_lo = std::isfinite(lo), has_hi = std::isfinite(hi);
	if (has_lo && has_hi)
		return lo == hi ? GLP_FX : GLP_DB;
	if (has_lo)
		return GLP_LO;
	if (has_hi)
		return GLP_UP;
	return GLP_FR;
}

double finite_or_zero(double v) { return std::isfinite(v) ? v : 0; }

void load(glp_prob *lp, const LpProblem &p)
{
	glp_set_obj_dir(lp, p.sense == LpProblem::Sense::Maximize ? GLP_MAX
								   : GLP_MIN);
	if (!p.vars.empty())
		glp_add_cols(lp, (int)p.vars.size());
	for (size_t j = 0; j < p.vars.size(); j++) {
		const LpProblem::Var &v = p.vars[j];
		int c = (int)j + 1;
		glp_set_col_bnds(lp, c, bound_type(v.lo, v.hi),
				 finite_or_zero(v.lo), finite_or_zero(v.hi));
		glp_set_obj_coef(lp, c, v.cost);
		if (v.integer)
			glp_set_col_kind(lp, c, GLP_IV);
	}
	if (!p.rows.empty())
		glp_add_rows(lp, (int)p.rows.size());
	std::vector<int> idx(1);
	std::vector<double> val(1);
	for (size_t i = 0; i < p.rows.size(); i++) {
		const LpProblem::Row &r = p.rows[i];
		int row = (int)i + 1;
		glp_set_row_bnds(lp, row, bound_type(r.lo, r.hi),
				 finite_or_zero(r.lo), finite_or_zero(r.hi));
		idx.resize(1);
		val.resize(1);
		for (const auto &[col, a] : r.coefs) {
			idx.push_back(col + 1);
			val.push_back(a);
		}
		glp_set_mat_row(lp, row, (int)r.coefs.size(), idx.data(),
				val.data());
	}
}

LpStatus status_of(int st)
{
	switch (st) {
	case GLP_OPT:
		return LpStatus::Optimal;
	case GLP_NOFEAS:
		return LpStatus::Infeasible;
	case GLP_UNBND:
		return LpStatus::Unbounded;
	default:
		return LpStatus::Failed;
	}
}

} /* namespace */

LpResult solve_lp(const LpProblem &p)
{
	LpResult r;
	glp_prob *lp = glp_create_prob();
	load(lp, p);
	bool mip = false;
	for (const auto &v : p.vars)
		mip = mip || v.integer;
	glp_smcp sm;
	glp_init_smcp(&sm);
	sm.msg_lev = GLP_MSG_OFF;
	sm.presolve = GLP_ON;
	int rc = glp_simplex(lp, &sm);
	if (rc == GLP_ENOPFS || rc == GLP_ENODFS) {
		r.status = rc == GLP_ENOPFS ? LpStatus::Infeasible
					    : LpStatus::Unbounded;
	} else if (rc != 0) {
		r.status = LpStatus::Failed;
	} else if (!mip) {
		r.status = status_of(glp_get_status(lp));
		if (r.ok()) {
			r.objective = glp_get_obj_val(lp);
			for (size_t j = 0; j < p.vars.size(); j++)
				r.x.push_back(glp_get_col_prim(lp, (int)j + 1));
		}
	} else if (glp_get_status(lp) != GLP_OPT) {
		r.status = status_of(glp_get_status(lp));
	} else {
		glp_iocp io;
		glp_init_iocp(&io);
		io.msg_lev = GLP_MSG_OFF;
		rc = glp_intopt(lp, &io);
		int st = glp_mip_status(lp);
		r.status = rc == 0 && st == GLP_OPT ? LpStatus::Optimal
			   : st == GLP_NOFEAS	    ? LpStatus::Infeasible
						    : LpStatus::Failed;
		if (r.ok()) {
			r.objective = glp_mip_obj_val(lp);
			for (size_t j = 0; j < p.vars.size(); j++)
				r.x.push_back(glp_mip_col_val(lp, (int)j + 1));
		}
	}
	glp_delete_prob(lp);
	return r;
}

std::string lp_backend()
{
	return std::string("glpk ") + glp_version();
}

#else /* !TIDAL_HAVE_GLPK */

LpResult solve_lp(const LpProblem &)
{
	LpResult r;
	r.status = LpStatus::NoBackend;
	return r;
}

std::string lp_backend() { return "none"; }

#endif

} /* namespace tidal */
