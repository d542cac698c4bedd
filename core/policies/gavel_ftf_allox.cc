/*
 * gavel_ftf_allox.cc - the two stateful Gavel allocation policies:
 *
 *   finish-time-fairness (Themis, as Gavel's FinishTimeFairness): each
 *     job's finish-time ratio rho_j = (since_start + rem / (tput x)) /
 *     (isolated time so far + rem / iso); minimise the largest rho.
 *     rho_j falls as x_j grows, so the optimum is found by bisecting rho
 *     over the feasibility LP  x_j >= x_j(rho), sum(sf x) <= G, x <= 1.
 *   allox (AlloX, alpha = 0.2): the oldest unallocated jobs are given a
 *     position on a free worker by a min-cost assignment whose cost is
 *     the job's completion time in that position; the first job of each
 *     worker runs.  Ties follow SciPy's assignment (lsap.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "core/solvers/lp_glpk.h"
#include "core/solvers/lsap.h"
#include "core/policies/gavel_alloc.h"

namespace tidal {

namespace {

/* Job j's ratio is (a_j + b_j / x_j) / d_j. */
struct FtfTerms {
	std::vector<double> a, b, d;
	std::vector<int> sf;

	/* x_j(rho): the least shares that keep every ratio at RHO. */
	bool shares(double rho, std::vector<double> *x) const
	{
		for (size_t i = 0; i < a.size(); i++) {
			double den = rho * d[i] - a[i];
			if (den <= 0)
				return false;
			(*x)[i] = b[i] / den;
		}
		return true;
	}
	/* The feasibility LP: x_j(rho) <= x_j <= 1, sum(sf x) <= G. */
	bool feasible(double rho, int gpus, SolveBudget &budget) const
	{
		std::vector<double> x(a.size());
		if (!shares(rho, &x))
			return false;
		LinearProgram lp;
		std::vector<std::pair<int, double>> cap;
		for (size_t i = 0; i < a.size(); i++) {
			if (x[i] > 1)
				return false;
			cap.push_back({lp.add_var(x[i], 1), (double)sf[i]});
		}
		lp.add_row(cap, -kLpInf, gpus);
		return budget.solve(lp) == LpStatus::Optimal;
	}
	/* The least worst ratio, by bisection. */
	double min_max_ratio(int gpus, SolveBudget &budget) const
	{
		double lo = 0;
		for (size_t i = 0; i < a.size(); i++)
			lo = std::max(lo, a[i] / d[i]);
		double hi = std::max(1.0, 2 * lo);
		for (int k = 0;
		     k < 60 && !budget.spent() && !feasible(hi, gpus, budget);
		     k++)
			hi *= 2;
		for (int k = 0;
		     k < 60 && hi - lo > 1e-10 * hi && !budget.spent(); k++) {
			double mid = (lo + hi) / 2;
			(feasible(mid, gpus, budget) ? hi : lo) = mid;
		}
		return hi;
	}
};

class FinishTimeFairness : public GavelAllocator {
public:
	std::map<JobId, double> allocate(const std::vector<GavelJob> &jobs,
					 int gpus, double now) override;
	std::vector<std::string> save() const override;
	bool load(const std::string &line) override;

private:
	FtfTerms terms(const std::vector<GavelJob> &jobs, int gpus);

	struct Prev {
		double rem, iso;
	};
	std::map<JobId, double> cum_iso_; /* isolated time so far */
	std::map<JobId, Prev> prev_;
};

/* Isolated time so far grows by the steps done since the last call at
 * the isolated throughput of then (Gavel's bookkeeping). */
FtfTerms FinishTimeFairness::terms(const std::vector<GavelJob> &jobs,
				   int gpus)
{
	size_t m = jobs.size();
	FtfTerms t;
	std::map<JobId, Prev> next;
	for (const GavelJob &j : jobs) {
		double &c = cum_iso_[j.id];
		auto p = prev_.find(j.id);
		if (p != prev_.end() && p->second.iso > 0)
			c += (p->second.rem - j.remaining) / p->second.iso;
		double iso = j.tput * std::min(1.0, gpus / ((double)m * j.sf));
		next[j.id] = {j.remaining, iso};
		t.a.push_back(j.since_start);
		t.b.push_back(j.remaining / j.tput);
		t.d.push_back(c + j.remaining / iso);
		t.sf.push_back(j.sf);
	}
	prev_ = next;
	for (auto it = cum_iso_.begin(); it != cum_iso_.end();)
		it = next.count(it->first) ? std::next(it) : cum_iso_.erase(it);
	return t;
}

std::map<JobId, double>
FinishTimeFairness::allocate(const std::vector<GavelJob> &jobs, int gpus,
			     double now)
{
	auto t0 = std::chrono::steady_clock::now();
	SolveBudget budget(*this);
	FtfTerms t = terms(jobs, gpus);
	std::vector<double> lower(jobs.size(), 0);
	t.shares(t.min_max_ratio(gpus, budget), &lower);
	if (over_limit) {
		solve_seconds.push_back(budget.seconds());
		return {};
	}
	/* t >= (a + rem s)/d with s >= 1/(tput x) (a rotated cone):
	 * eliminating s leaves 2 log(x - lower) - log x, which cancels
	 * the log x of x >= 0. */
	GavelBarrier w;
	w.x = 0;
	w.lower = 2;
	std::vector<double> x = gavel_center(lower, t.sf, gpus, w);
	solve_seconds.push_back(
		std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
			.count());
	std::map<JobId, double> out;
	for (size_t i = 0; i < jobs.size(); i++)
		out[jobs[i].id] = std::clamp(x[i], 0.0, 1.0);
	return out;
}

std::vector<std::string> FinishTimeFairness::save() const
{
	std::vector<std::string> out;
	char buf[160];
	for (auto &[id, c] : cum_iso_) {
		std::snprintf(buf, sizeof(buf), "ftf cum %llu %.17g",
			      (unsigned long long)id, c);
		out.push_back(buf);
	}
	for (auto &[id, p] : prev_) {
		std::snprintf(buf, sizeof(buf), "ftf prev %llu %.17g %.17g",
			      (unsigned long long)id, p.rem, p.iso);
		out.push_back(buf);
	}
	return out;
}

bool FinishTimeFairness::load(const std::string &line)
{
	unsigned long long id;
	double a, b;
	int n = 0;
	if (std::sscanf(line.c_str(), "ftf cum %llu %lg%n", &id, &a, &n) == 2 &&
	    !line[n] && std::isfinite(a)) {
		cum_iso_[id] = a;
		return true;
	}
	if (std::sscanf(line.c_str(), "ftf prev %llu %lg %lg%n", &id, &a, &b,
			&n) == 3 &&
	    !line[n] && std::isfinite(a) && std::isfinite(b)) {
		prev_[id] = { a, b };
		return true;
	}
	return false;
}

class Allox : public GavelAllocator {
public:
	Allox(double alpha, std::uint64_t seed) : alpha_(alpha), seed_(seed) {}
	std::map<JobId, double> allocate(const std::vector<GavelJob> &jobs,
					 int gpus, double now) override;
	std::vector<std::string> save() const override;
	bool load(const std::string &line) override;

private:
	double alpha_;
	std::uint64_t seed_; /* 0: SciPy's column order */
	std::uint64_t calls_ = 0;
	std::map<JobId, double> prev_;
};

std::map<JobId, double> Allox::allocate(const std::vector<GavelJob> &jobs,
					int gpus, double now)
{
	auto t0 = std::chrono::steady_clock::now();
	SolveBudget budget(*this);
	int n = gpus;
	std::vector<const GavelJob *> pool;
	for (const GavelJob &j : jobs) {
		auto p = prev_.find(j.id);
		if (p != prev_.end() && p->second == 1.0)
			n--; /* already holds a whole worker */
		else
			pool.push_back(&j);
	}
	std::stable_sort(pool.begin(), pool.end(),
			 [](const GavelJob *x, const GavelJob *y) {
				 return x->since_start > y->since_start;
			 });
	size_t keep = std::max((size_t)std::max(0, (int)(alpha_ * pool.size())),
			       (size_t)std::max(n, 0));
	pool.resize(std::min(keep, pool.size()));
	int rows = (int)pool.size(), cols = std::max(n, 0) * rows;
	/* Equal costs abound (identical workers, alike jobs); which one the
	 * solver takes is an implementation detail (SciPy versions differ),
	 * so a seed may shuffle the column order to show the spread. */
	std::vector<int> perm(cols); /* solver column -> k * n + worker */
	for (int c = 0; c < cols; c++)
		perm[c] = c;
	if (seed_ != 0) {
		std::mt19937_64 rng(seed_ * 1000003 + calls_++);
		std::shuffle(perm.begin(), perm.end(), rng);
	}
	std::vector<double> q((size_t)rows * cols);
	for (int i = 0; i < rows; i++) {
		double tput = pool[i]->tput > 0 ? pool[i]->tput : 1e-10;
		for (int c = 0; c < cols; c++)
			q[(size_t)i * cols + c] =
				(perm[c] / n + 1) * pool[i]->remaining / tput +
				pool[i]->since_start;
	}
	std::vector<int> col = rows > 0 && cols > 0
				       ? linear_sum_assignment(q, rows, cols)
				       : std::vector<int>();
	if (budget.spent()) { /* the answer is dropped: prev_ stays */
		solve_seconds.push_back(budget.seconds());
		return prev_;
	}
	std::map<JobId, double> out;
	for (const GavelJob &j : jobs) {
		auto p = prev_.find(j.id);
		out[j.id] = p == prev_.end() ? 0 : p->second;
	}
	/* On each worker the job placed last in the cost order runs. */
	std::map<int, std::pair<int, int>> first; /* worker -> (k, row) */
	for (int i = 0; i < (int)col.size(); i++) {
		int w = perm[col[i]] % n, k = perm[col[i]] / n;
		auto f = first.find(w);
		if (f == first.end() || k > f->second.first)
			first[w] = {k, i};
	}
	for (auto &[w, kr] : first)
		out[pool[kr.second]->id] = 1.0 / pool[kr.second]->sf;
	prev_ = out;
	solve_seconds.push_back(
		std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
			.count());
	return out;
}

std::vector<std::string> Allox::save() const
{
	std::vector<std::string> out = { "allox calls " +
					 std::to_string(calls_) };
	char buf[160];
	for (auto &[id, a] : prev_) {
		std::snprintf(buf, sizeof(buf), "allox prev %llu %.17g",
			      (unsigned long long)id, a);
		out.push_back(buf);
	}
	return out;
}

bool Allox::load(const std::string &line)
{
	unsigned long long id, calls;
	double a;
	int n = 0;
	if (std::sscanf(line.c_str(), "allox calls %llu%n", &calls, &n) == 1 &&
	    !line[n]) {
		calls_ = calls;
		return true;
	}
	if (std::sscanf(line.c_str(), "allox prev %llu %lg%n", &id, &a, &n) ==
		    2 &&
	    !line[n] && std::isfinite(a)) {
		prev_[id] = a;
		return true;
	}
	return false;
}

} /* namespace */

std::unique_ptr<GavelAllocator> make_finish_time_fairness()
{
	return std::make_unique<FinishTimeFairness>();
}

std::unique_ptr<GavelAllocator> make_allox(const Params &params)
{
	double alpha = params.get_double("Allox.Alpha", 0.2, 0, 1);
	long seed = params.get_long("Allox.Seed", 0, 0, 1L << 40);
	return std::make_unique<Allox>(alpha, (std::uint64_t)seed);
}

} /* namespace tidal */
