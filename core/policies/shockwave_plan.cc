/*
 * shockwave_plan.cc - Shockwave's program (GLPK) and the plan it gives
 * for the next R rounds (shockwave.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>

#include "core/solvers/lp_glpk.h"
#include "core/policies/shockwave.h"

namespace tidal {

namespace {

struct Inputs {
	std::vector<double> rem, ebar, F, pi;
	double share = 1;
};

/* The program of shockwave.h.  RET: false if infeasible / no solution;
 * *N = rounds per job. */
bool solve_rounds(const std::vector<ShockwaveJob> &jobs, const Inputs &in,
		  const ShockwaveConfig &c, long round_ptr, bool fair,
		  std::vector<int> *N, bool *hit)
{
	size_t J = jobs.size();
	int R = c.future_rounds;
	LinearProgram lp;
	lp.set_maximize(true);
	int M = lp.add_var(0, kLpInf, -c.k);
	std::vector<std::pair<int, double>> cap;
	std::vector<int> nv(J);
	for (size_t j = 0; j < J; j++) {
		const ShockwaveJob &jb = jobs[j];
		double E = (double)jb.bs.size();
		nv[j] = lp.add_var(0, R, 0, true);
		cap.push_back({nv[j], (double)jb.gpus});
		int p = lp.add_var(0, std::max(0.0, E - jb.epoch));
		int u = lp.add_var(0, kLpInf);
		lp.add_row({{p, in.ebar[j]}, {nv[j], -c.round}}, -kLpInf, 0);
		std::vector<std::pair<int, double>> conv, sum;
		for (double b : c.bases) {
			double l = std::log(b > 0 ? b : 1e-6);
			int lam = lp.add_var(0, kLpInf,
					     in.pi[j] * l / ((double)J * R));
			conv.push_back({lam, b});
			sum.push_back({lam, 1});
		}
		conv.push_back({p, -1 / E});
		lp.add_row(conv, jb.epoch / E, jb.epoch / E);
		lp.add_row(sum, 1, 1);
		lp.add_row({{u, 1}, {p, in.ebar[j]}}, in.rem[j], kLpInf);
		lp.add_row({{M, 1}, {u, -1}}, 0, kLpInf);
		if (fair)
			lp.add_row({{u, 1 / in.share}}, -kLpInf,
				   c.rhomax * in.F[j] -
					   c.round * (double)(round_ptr + R));
	}
	lp.add_row(cap, -kLpInf, (double)c.gpus * R);
	LpOptions o;
	o.mip_gap = c.mip_gap;
	o.time_limit_s = c.time_limit_s;
	LpStatus st = lp.solve(o);
	*hit = *hit || lp.hit_time_limit();
	if (st != LpStatus::Optimal && st != LpStatus::Feasible)
		return false;
	N->assign(J, 0);
	for (size_t j = 0; j < J; j++)
		(*N)[j] = (int)std::lround(lp.value(nv[j]));
	return true;
}

} /* namespace */

void Shockwave::solve()
{
	std::map<long, std::vector<JobId>> before;
	before.swap(plan_);
	kept_last = false;
	size_t J = jobs_.size();
	if (J == 0)
		return;
	int R = cfg_.future_rounds;
	Inputs in;
	in.share = std::min(1.0, (double)cfg_.gpus / (double)J);
	for (ShockwaveJob &j : jobs_) {
		calibrate(j);
		double rem = remaining(j);
		int upto = std::min(j.epoch + 1, (int)j.dur.size());
		double s = 0;
		for (int e = 0; e < upto; e++)
			s += j.dur[e];
		in.rem.push_back(rem);
		in.ebar.push_back(upto > 0 ? s / upto : 1);
		if (reestimate_) {
			double done = 0;
			for (int e = 0; e < std::min(j.epoch, (int)j.dur.size()); e++)
				done += j.dur[e];
			j.ft.push_back({round_ptr_, j.submit + (done + rem) / in.share});
		}
	}
	reestimate_ = false;
	for (const ShockwaveJob &j : jobs_)
		in.F.push_back(momentum(j));
	in.pi.assign(J, 1);
	std::vector<int> N;
	bool hit = false;
	if (!solve_rounds(jobs_, in, cfg_, round_ptr_, true, &N, &hit)) {
		infeasible_solves++;
		for (size_t j = 0; j < J; j++) {
			double rho = (cfg_.round * round_ptr_ + in.rem[j] / in.share) /
				     in.F[j];
			if (rho > cfg_.rhomax)
				in.pi[j] = std::min(
					cfg_.priority_cap,
					std::pow(rho, in.rem[j] < cfg_.round
							      ? 100
							      : cfg_.lambda));
		}
		if (!solve_rounds(jobs_, in, cfg_, round_ptr_, false, &N,
				  &hit)) {
			N.assign(J, 0);
			if (hit && cfg_.keep_plan_on_limit && !before.empty()) {
				limit_hits++;
				plan_.swap(before);
				kept_last = true;
				return;
			}
		}
	}
	limit_hits += hit;

	/* Earliest rounds first, jobs ranked by weight per round wanted
	 * (the anchor's rank program minimises sum pi_j mean-round_j). */
	std::vector<size_t> order;
	for (size_t j = 0; j < J; j++)
		if (N[j] > 0)
			order.push_back(j);
	/* Jobs given every round first (they have no choice), then the
	 * rest by weight per round wanted, earliest rounds first. */
	std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
		if ((N[a] >= R) != (N[b] >= R))
			return N[a] >= R;
		return in.pi[a] / N[a] > in.pi[b] / N[b];
	});
	std::vector<int> free(R, cfg_.gpus);
	std::vector<std::vector<char>> s(J, std::vector<char>(R, 0));
	for (size_t j : order)
		for (int r = 0, got = 0; r < R && got < N[j]; r++)
			if (free[r] >= jobs_[j].gpus) {
				free[r] -= jobs_[j].gpus;
				s[j][r] = 1;
				got++;
			}
	/* Work-conserving fill: the rest by remaining time, longest first. */
	std::vector<size_t> by_rem(J);
	for (size_t j = 0; j < J; j++)
		by_rem[j] = j;
	std::stable_sort(by_rem.begin(), by_rem.end(),
			 [&](size_t a, size_t b) { return in.rem[a] > in.rem[b]; });
	for (int r = 0; r < R; r++) {
		std::vector<JobId> &ids = plan_[round_ptr_ + r];
		for (size_t j = 0; j < J; j++)
			if (s[j][r])
				ids.push_back(jobs_[j].id);
		for (size_t j : by_rem) {
			if (free[r] <= 0)
				break;
			if (!s[j][r] && jobs_[j].gpus <= free[r]) {
				ids.push_back(jobs_[j].id);
				free[r] -= jobs_[j].gpus;
			}
		}
	}
}

} /* namespace tidal */
