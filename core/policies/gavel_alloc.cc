/*
 * gavel_alloc.cc - allocation policies for Gavel's round mechanism
 * (shockwave/MODEL.md section 4): Gandiva-fair, FIFO, max-min fairness,
 * finish-time fairness (Themis), minimum total duration, maximum sum
 * throughput and AlloX.
 *
 * The LP policies solve their LPs with GLPK (lp_glpk.h).  Their optima
 * are often not unique (max-min fixes only the smallest share; a
 * feasibility LP has no objective at all), and the anchor's interior-
 * point solvers (ECOS, Gurobi barrier) return a point near the analytic
 * centre of the optimal face, not a vertex.  So after the LP fixes the
 * optimal value, gavel_center() computes that centre: the jobs' shares
 * between their lower bound and 1 under the GPU capacity.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include "core/solvers/lp_glpk.h"
#include "core/solvers/lsap.h"
#include "core/policies/gavel_alloc.h"

namespace tidal {

/* --- the analytic centre of {l <= x <= 1, sum(sf x) <= C} --- */

/* Root of d/dx [wx log x + wl log(x - l) + log(1 - x)] = mu sf on (l, 1). */
static double center_share(double l, double sf, double mu,
			   const GavelBarrier &w)
{
	double lo = l, hi = 1;
	for (int it = 0; it < 100 && hi - lo > 1e-15; it++) {
		double x = (lo + hi) / 2;
		double g = w.x / x + w.lower / (x - l) - 1 / (1 - x) - mu * sf;
		if (g > 0)
			lo = x;
		else
			hi = x;
	}
	return (lo + hi) / 2;
}

std::vector<double> gavel_center(const std::vector<double> &lower,
				 const std::vector<int> &sf, double cap,
				 const GavelBarrier &w)
{
	size_t n = lower.size();
	std::vector<double> x(n);
	double need = 0;
	std::vector<size_t> free;
	for (size_t j = 0; j < n; j++) {
		double l = std::max(0.0, lower[j]);
		if (l >= 1 - 1e-12) {
			x[j] = std::min(l, 1.0);
		} else {
			x[j] = l;
			free.push_back(j);
		}
		need += sf[j] * x[j];
	}
	if (free.empty() || need >= cap * (1 - 1e-9))
		return x; /* the capacity pins every share at its bound */
	/* Slack s = C - sum(sf x(mu)) rises with mu; solve s(mu) = 1/mu. */
	double fixed = 0;
	std::vector<char> is_free(n, 0);
	for (size_t j : free)
		is_free[j] = 1;
	for (size_t j = 0; j < n; j++)
		if (!is_free[j])
			fixed += sf[j] * x[j];
	auto slack = [&](double mu) {
		double used = fixed;
		for (size_t j : free)
			used += sf[j] * center_share(std::max(0.0, lower[j]),
						     sf[j], mu, w);
		return cap - used;
	};
	double lo = -30, hi = 30; /* log(mu) */
	for (int it = 0; it < 80; it++) {
		double m = (lo + hi) / 2, mu = std::exp(m);
		if (slack(mu) - 1 / mu > 0)
			hi = m;
		else
			lo = m;
	}
	double mu = std::exp((lo + hi) / 2);
	for (size_t j : free)
		x[j] = center_share(std::max(0.0, lower[j]), sf[j], mu, w);
	return x;
}

double SolveBudget::seconds() const
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() -
					     t0_)
		.count();
}

bool SolveBudget::spent()
{
	if (a_.limit_s > 0 && seconds() >= a_.limit_s)
		a_.over_limit = true;
	return a_.over_limit;
}

LpStatus SolveBudget::solve(LinearProgram &lp, LpOptions opt)
{
	if (a_.limit_s > 0) {
		double left_ms = std::floor((a_.limit_s - seconds()) * 1000);
		if (a_.over_limit || left_ms < 1) {
			a_.over_limit = true;
			return LpStatus::NoSolution;
		}
		opt.time_limit_s = left_ms / 1000;
	}
	LpStatus st = lp.solve(opt);
	if (lp.hit_time_limit()) {
		a_.over_limit = true;
		return LpStatus::NoSolution;
	}
	return st;
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() -
					     t0)
		.count();
}

std::map<JobId, double> to_map(const std::vector<GavelJob> &jobs,
			       const std::vector<double> &x)
{
	std::map<JobId, double> out;
	for (size_t i = 0; i < jobs.size(); i++)
		out[jobs[i].id] = std::clamp(x[i], 0.0, 1.0);
	return out;
}

/* The base constraints (B) over share variables 0..m-1. */
void base_lp(LinearProgram &lp, const std::vector<GavelJob> &jobs, int gpus)
{
	std::vector<std::pair<int, double>> cap;
	for (size_t i = 0; i < jobs.size(); i++) {
		int v = lp.add_var(0, 1);
		cap.push_back({v, (double)jobs[i].sf});
	}
	lp.add_row(cap, -kLpInf, gpus);
}

std::vector<int> sfs(const std::vector<GavelJob> &jobs)
{
	std::vector<int> s;
	for (const GavelJob &j : jobs)
		s.push_back(j.sf);
	return s;
}

/* Gandiva-fair as Gavel runs it: an equal share of the cluster. */
class GandivaFair : public GavelAllocator {
public:
	std::map<JobId, double> allocate(const std::vector<GavelJob> &jobs,
					 int gpus, double now) override
	{
		std::map<JobId, double> out;
		double share = std::min(1.0, (double)gpus / (double)jobs.size());
		for (const GavelJob &j : jobs)
			out[j.id] = share;
		solve_seconds.push_back(0);
		return out;
	}
};

/* FIFO ("base" mode, Gavel's policies/fifo.py FIFOPolicy): jobs in id
 * order take whole workers until the head does not fit; placed jobs keep
 * their place.  As in the anchor, the walk over the placed jobs (in id
 * order) hands each finished job's place to the queue's head at once,
 * checked against the GPUs counted so far (those of the placed jobs
 * with smaller ids), not against the whole cluster: the head can be
 * placed although the placed jobs then need more GPUs than there are.
 * Selection (skip what does not fit) then leaves some placed job out of
 * the round. */
class GavelFifo : public GavelAllocator {
public:
	bool skip_zero_priority() const override { return true; }
	std::map<JobId, double> allocate(const std::vector<GavelJob> &jobs,
					 int gpus, double now) override
	{
		std::map<JobId, const GavelJob *> by_id;
		for (const GavelJob &j : jobs)
			by_id[j.id] = &j;
		std::vector<const GavelJob *> queue; /* unplaced, by id */
		for (auto &[id, j] : by_id)
			if (!placed_.count(id))
				queue.push_back(j);
		size_t head = 0;
		int free = gpus;
		std::vector<JobId> placed(placed_.begin(), placed_.end());
		for (JobId id : placed) {
			auto it = by_id.find(id);
			if (it != by_id.end()) {
				free -= it->second->sf;
				continue;
			}
			/* finished: its place goes to the head, if it fits
			 * in what has been counted so far */
			if (head < queue.size() && queue[head]->sf <= free &&
			    queue[head]->tput > 0) {
				placed_.insert(queue[head]->id);
				free -= queue[head]->sf;
				head++;
			}
			placed_.erase(id);
		}
		while (free > 0 && head < queue.size()) {
			const GavelJob *j = queue[head++];
			if (j->sf > free)
				break;
			if (j->tput > 0) {
				placed_.insert(j->id);
				free -= j->sf;
			}
		}
		std::map<JobId, double> out;
		for (const GavelJob &j : jobs)
			out[j.id] = placed_.count(j.id) ? 1.0 : 0.0;
		solve_seconds.push_back(0);
		return out;
	}

private:
	std::set<JobId> placed_;
};

/* Max-min fairness of GPU shares: max t, t <= sf_j x_j, plus (B). */
class MaxMinFairness : public GavelAllocator {
public:
	std::map<JobId, double> allocate(const std::vector<GavelJob> &jobs,
					 int gpus, double now) override
	{
		auto t0 = std::chrono::steady_clock::now();
		SolveBudget budget(*this);
		LinearProgram lp;
		base_lp(lp, jobs, gpus);
		int t = lp.add_var(0, kLpInf, 1);
		for (size_t i = 0; i < jobs.size(); i++)
			lp.add_row({{t, 1.0}, {(int)i, -(double)jobs[i].sf}},
				   -kLpInf, 0);
		lp.set_maximize(true);
		double tstar = 0;
		if (budget.solve(lp) == LpStatus::Optimal)
			tstar = lp.value(t);
		if (over_limit) {
			solve_seconds.push_back(seconds_since(t0));
			return {};
		}
		std::vector<double> lower;
		for (const GavelJob &j : jobs)
			lower.push_back(tstar / j.sf * (1 - 1e-12));
		auto x = gavel_center(lower, sfs(jobs), gpus);
		solve_seconds.push_back(seconds_since(t0));
		return to_map(jobs, x);
	}
};

/* Max sum throughput: max sum tput_j x_j, plus (B).  Jobs alike (same
 * throughput and size) are tied; an interior-point solver splits a tie
 * evenly, so the vertex GLPK returns is averaged over each tie. */
class MaxSumThroughput : public GavelAllocator {
public:
	std::map<JobId, double> allocate(const std::vector<GavelJob> &jobs,
					 int gpus, double now) override
	{
		auto t0 = std::chrono::steady_clock::now();
		SolveBudget budget(*this);
		LinearProgram lp;
		base_lp(lp, jobs, gpus);
		for (size_t i = 0; i < jobs.size(); i++)
			lp.set_objective((int)i, jobs[i].tput);
		lp.set_maximize(true);
		std::vector<double> x(jobs.size(), 0);
		if (budget.solve(lp) == LpStatus::Optimal)
			for (size_t i = 0; i < jobs.size(); i++)
				x[i] = lp.value((int)i);
		std::map<std::pair<double, int>, std::pair<double, int>> tie;
		for (size_t i = 0; i < jobs.size(); i++) {
			auto &t = tie[{jobs[i].tput, jobs[i].sf}];
			t.first += x[i];
			t.second++;
		}
		for (size_t i = 0; i < jobs.size(); i++) {
			auto &t = tie[{jobs[i].tput, jobs[i].sf}];
			x[i] = t.first / t.second;
		}
		solve_seconds.push_back(seconds_since(t0));
		return to_map(jobs, x);
	}
};

/* Minimum total duration: bisect the horizon T over the feasibility LP
 * tput_j x_j >= rem_j / T plus (B). */
class MinTotalDuration : public GavelAllocator {
public:
	std::map<JobId, double> allocate(const std::vector<GavelJob> &jobs,
					 int gpus, double now) override
	{
		auto t0 = std::chrono::steady_clock::now();
		SolveBudget budget(*this);
		double lo = 100, hi = 1e6, best = -1;
		for (int tries = 0; best < 0 && tries < 12 && !budget.spent();
		     tries++) {
			while (1.05 * lo < hi && !budget.spent()) {
				double T = (lo + hi) / 2;
				if (feasible(jobs, gpus, T, budget)) {
					best = T;
					hi = T;
				} else {
					lo = T;
				}
			}
			if (best < 0) {
				lo = hi;
				hi = 10 * hi;
			}
		}
		if (over_limit) {
			solve_seconds.push_back(seconds_since(t0));
			return {};
		}
		std::vector<double> lower;
		for (const GavelJob &j : jobs)
			lower.push_back(best < 0 ? 0
						 : j.remaining / (best * j.tput));
		auto x = gavel_center(lower, sfs(jobs), gpus);
		solve_seconds.push_back(seconds_since(t0));
		return to_map(jobs, x);
	}

private:
	static bool feasible(const std::vector<GavelJob> &jobs, int gpus,
			     double T, SolveBudget &budget)
	{
		LinearProgram lp;
		base_lp(lp, jobs, gpus);
		for (size_t i = 0; i < jobs.size(); i++)
			lp.add_row({{(int)i, jobs[i].tput}},
				   jobs[i].remaining / T, kLpInf);
		return budget.solve(lp) == LpStatus::Optimal;
	}
};

} /* namespace */

std::unique_ptr<GavelAllocator> make_finish_time_fairness();
std::unique_ptr<GavelAllocator> make_allox(const Params &params);

bool is_gavel_allocator(const std::string &name)
{
	static const char *names[] = {
		"gandiva-fair", "fifo", "max-min-fairness",
		"max-sum-throughput", "min-total-duration",
		"finish-time-fairness", "allox",
	};
	for (const char *n : names)
		if (name == n)
			return true;
	return false;
}

std::unique_ptr<GavelAllocator> make_gavel_allocator(const std::string &name,
						     const Params &params,
						     std::string *err)
{
	if (name == "gandiva-fair")
		return std::make_unique<GandivaFair>();
	if (name == "fifo")
		return std::make_unique<GavelFifo>();
	if (name == "max-min-fairness")
		return std::make_unique<MaxMinFairness>();
	if (name == "max-sum-throughput")
		return std::make_unique<MaxSumThroughput>();
	if (name == "min-total-duration")
		return std::make_unique<MinTotalDuration>();
	if (name == "finish-time-fairness")
		return make_finish_time_fairness();
	if (name == "allox")
		return make_allox(params);
	*err = "unknown Gavel allocation policy '" + name + "'";
	return nullptr;
}

} /* namespace tidal */
