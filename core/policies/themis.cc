/*
 * themis.cc - finish-time fair shares: bisection for the worst rho, one
 * LP for the shares.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/themis.h"

#include <algorithm>
#include <cmath>

namespace tidal {

namespace {

/* The least share that keeps JOB's rho <= T (may exceed 1). */
double lower(const FtfJob &j, double t)
{
	double d = j.isolated * t - j.elapsed;
	return d > 0 ? j.work / d : INFINITY;
}

double demand(const std::vector<FtfJob> &jobs, double t)
{
	double s = 0;
	for (const FtfJob &j : jobs)
		s += (double)j.gpus * lower(j, t);
	return s;
}

} /* namespace */

FtfShares themis_shares(const std::vector<FtfJob> &jobs, int cluster_gpus)
{
	FtfShares r;
	if (jobs.empty())
		return r;
	double lo = 0;
	for (const FtfJob &j : jobs)
		lo = std::max(lo, (j.elapsed + j.work) / j.isolated);
	double cap = cluster_gpus, hi = lo;
	if (demand(jobs, lo) > cap) {
		double step = std::max(lo, 1.0);
		hi = lo + step;
		while (demand(jobs, hi) > cap)
			hi += (step *= 2);
		for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
			double mid = 0.5 * (lo + hi);
			(demand(jobs, mid) > cap ? lo : hi) = mid;
		}
	}
	r.rho = hi;
	LpProblem p(LpProblem::Sense::Maximize);
	std::vector<double> l(jobs.size());
	std::vector<std::pair<int, double>> cap_row;
	for (size_t i = 0; i < jobs.size(); i++) {
		l[i] = std::min(1.0, lower(jobs[i], hi));
		p.add_var(l[i], 1, 0);
		cap_row.emplace_back((int)i, (double)jobs[i].gpus);
	}
	int s = p.add_var(0, 1, 1);
	for (size_t i = 0; i < jobs.size(); i++)
		p.add_row({{(int)i, 1}, {s, -(1 - l[i])}}, l[i], HUGE_VAL);
	p.add_row(cap_row, -HUGE_VAL, cap);
	LpResult lp = solve_lp(p);
	r.status = lp.status;
	if (lp.ok())
		r.x.assign(lp.x.begin(), lp.x.begin() + (long)jobs.size());
	else
		r.x = l;
	return r;
}

} /* namespace tidal */
