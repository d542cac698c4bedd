/*
 * lp_glpk.cc - LinearProgram on GLPK: simplex for pure LPs, branch and
 * cut (glp_intopt) when any variable is integer.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/solvers/lp_glpk.h"

#include <chrono>
#include <climits>
#include <cmath>

#include <glpk.h>

namespace tidal {

const char *lp_status_name(LpStatus s)
{
	switch (s) {
	case LpStatus::Optimal:
		return "optimal";
	case LpStatus::Feasible:
		return "feasible";
	case LpStatus::Infeasible:
		return "infeasible";
	case LpStatus::Unbounded:
		return "unbounded";
	case LpStatus::NoSolution:
		return "no solution";
	}
	return "?";
}

int LinearProgram::add_var(double lo, double hi, double obj, bool integer)
{
	vars_.push_back({lo, hi, obj, integer});
	return (int)vars_.size() - 1;
}

int LinearProgram::add_row(const std::vector<std::pair<int, double>> &coefs,
			   double lo, double hi)
{
	rows_.push_back({coefs, lo, hi});
	return (int)rows_.size() - 1;
}

/* GLPK's bound type for LO <= v <= HI. */
static int bound_type(double lo, double hi)
{
	bool has_lo = std::isfinite(lo), has_hi = std::isfinite(hi);
	if (has_lo && has_hi)
		return lo == hi ? GLP_FX : GLP_DB;
	if (has_lo)
		return GLP_LO;
	return has_hi ? GLP_UP : GLP_FR;
}

static double fin(double v) { return std::isfinite(v) ? v : 0; }

static glp_prob *build(const std::vector<std::pair<double, double>> &vb,
		       const std::vector<double> &obj,
		       const std::vector<bool> &integer, bool maximize)
{
	glp_prob *p = glp_create_prob();
	glp_set_obj_dir(p, maximize ? GLP_MAX : GLP_MIN);
	if (!vb.empty())
		glp_add_cols(p, (int)vb.size());
	for (size_t j = 0; j < vb.size(); j++) {
		int c = (int)j + 1;
		glp_set_col_bnds(p, c, bound_type(vb[j].first, vb[j].second),
				 fin(vb[j].first), fin(vb[j].second));
		glp_set_obj_coef(p, c, obj[j]);
		if (integer[j])
			glp_set_col_kind(p, c, GLP_IV);
	}
	return p;
}

/* Simplex on P.  RET: the status; *HIT: the time limit stopped it. */
static LpStatus run_simplex(glp_prob *p, const LpOptions &opt, int tm,
			    bool *hit)
{
	glp_smcp parm;
	glp_init_smcp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	parm.presolve = opt.presolve ? GLP_ON : GLP_OFF;
	parm.tm_lim = tm;
	int ret = glp_simplex(p, &parm);
	int s = glp_get_status(p);
	*hit = ret == GLP_ETMLIM;
	if (ret == GLP_ENOPFS || s == GLP_NOFEAS)
		return LpStatus::Infeasible;
	if (s == GLP_INFEAS)
		return *hit ? LpStatus::NoSolution : LpStatus::Infeasible;
	if (ret == GLP_ENODFS || s == GLP_UNBND)
		return LpStatus::Unbounded;
	if (s == GLP_OPT)
		return LpStatus::Optimal;
	return s == GLP_FEAS ? LpStatus::Feasible : LpStatus::NoSolution;
}

/* The interior-point method on P (no presolve in GLPK's ipm). */
static LpStatus run_interior(glp_prob *p)
{
	glp_iptcp parm;
	glp_init_iptcp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	int ret = glp_interior(p, &parm);
	int s = glp_ipt_status(p);
	if (ret == GLP_EFAIL && glp_get_num_rows(p) == 0)
		return LpStatus::NoSolution;
	if (s == GLP_OPT)
		return LpStatus::Optimal;
	if (s == GLP_NOFEAS || s == GLP_INFEAS)
		return LpStatus::Infeasible;
	return LpStatus::NoSolution;
}

/* Branch and cut on P (GLPK's own presolve: intopt needs an LP basis
 * without it). */
static LpStatus run_intopt(glp_prob *p, const LpOptions &opt, int tm,
			   bool *hit)
{
	glp_iocp parm;
	glp_init_iocp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	parm.presolve = GLP_ON;
	parm.tm_lim = tm;
	if (opt.mip_gap > 0)
		parm.mip_gap = opt.mip_gap;
	int ret = glp_intopt(p, &parm);
	int s = glp_mip_status(p);
	*hit = ret == GLP_ETMLIM;
	if (s == GLP_OPT)
		return LpStatus::Optimal;
	if (s == GLP_FEAS)
		return LpStatus::Feasible;
	if (s == GLP_NOFEAS || ret == GLP_ENOPFS)
		return LpStatus::Infeasible;
	return ret == GLP_ENODFS ? LpStatus::Unbounded : LpStatus::NoSolution;
}

LpStatus LinearProgram::solve(const LpOptions &opt)
{
	auto t0 = std::chrono::steady_clock::now();
	glp_term_out(GLP_OFF);
	std::vector<std::pair<double, double>> vb;
	std::vector<double> obj;
	std::vector<bool> integer;
	bool mip = false;
	for (const Var &v : vars_) {
		vb.push_back({v.lo, v.hi});
		obj.push_back(v.obj);
		integer.push_back(v.integer);
		mip = mip || v.integer;
	}
	glp_prob *p = build(vb, obj, integer, maximize_);
	if (!rows_.empty())
		glp_add_rows(p, (int)rows_.size());
	std::vector<int> idx;
	std::vector<double> val;
	for (size_t i = 0; i < rows_.size(); i++) {
		const Row &r = rows_[i];
		int ri = (int)i + 1;
		glp_set_row_bnds(p, ri, bound_type(r.lo, r.hi), fin(r.lo),
				 fin(r.hi));
		idx.assign(1, 0);
		val.assign(1, 0);
		for (auto &[j, a] : r.coefs) {
			idx.push_back(j + 1);
			val.push_back(a);
		}
		glp_set_mat_row(p, ri, (int)r.coefs.size(), idx.data(),
				val.data());
	}
	int tm = opt.time_limit_s > 0 ? (int)(opt.time_limit_s * 1000) : INT_MAX;
	bool ipm = opt.interior && !mip;
	hit_limit_ = false;
	LpStatus st = mip   ? run_intopt(p, opt, tm, &hit_limit_)
		      : ipm ? run_interior(p)
			    : run_simplex(p, opt, tm, &hit_limit_);
	obj_ = mip   ? glp_mip_obj_val(p)
	       : ipm ? glp_ipt_obj_val(p)
		     : glp_get_obj_val(p);
	x_.resize(vars_.size());
	for (size_t j = 0; j < vars_.size(); j++)
		x_[j] = mip   ? glp_mip_col_val(p, (int)j + 1)
			: ipm ? glp_ipt_col_prim(p, (int)j + 1)
			      : glp_get_col_prim(p, (int)j + 1);
	glp_delete_prob(p);
	seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() -
						 t0)
			   .count();
	return st;
}

} /* namespace tidal */
