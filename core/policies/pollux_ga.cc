/*
 * pollux_ga.cc - NSGA-II as pymoo 0.4.2 runs it for Pollux.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/pollux_ga.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

namespace tidal
{

namespace
{

using State = std::vector<int>;

struct Indiv {
	State x;
	double f1 = 0, f2 = 0;
	int rank = 0;
	double crowd = 0;
};

/* 1: a dominates b, -1: b dominates a, 0: neither. */
int relation(const Indiv &a, const Indiv &b)
{
	bool a_better = a.f1 < b.f1 || a.f2 < b.f2;
	bool b_better = b.f1 < a.f1 || b.f2 < a.f2;
	if (a_better && !b_better)
		return 1;
	if (b_better && !a_better)
		return -1;
	return 0;
}

/* Fronts of two objectives: points in (f1, f2) order join the first
 * front whose last member does not dominate them. */
std::vector<std::vector<int>> fronts_of(const std::vector<Indiv> &pop)
{
	std::vector<int> idx(pop.size());
	std::iota(idx.begin(), idx.end(), 0);
	std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) {
		if (pop[a].f1 != pop[b].f1)
			return pop[a].f1 < pop[b].f1;
		return pop[a].f2 < pop[b].f2;
	});
	std::vector<std::vector<int>> fronts;
	for (int i : idx) {
		size_t k = 0;
		while (k < fronts.size() &&
		       relation(pop[fronts[k].back()], pop[i]) == 1)
			k++;
		if (k == fronts.size())
			fronts.emplace_back();
		fronts[k].push_back(i);
	}
	for (auto &f : fronts) /* population order inside a front */
		std::sort(f.begin(), f.end());
	return fronts;
}

/* pymoo calc_crowding_distance: duplicates (in F) get 0, the extremes
 * infinity, others the normalised gap between neighbours, averaged. */
std::vector<double> crowding(const std::vector<Indiv> &pop,
			     const std::vector<int> &front)
{
	size_t n = front.size();
	std::vector<double> cd(n, 0.0);
	if (n <= 2)
		return std::vector<double>(n, INFINITY);
	std::vector<int> uniq;
	for (size_t i = 0; i < n; i++) {
		bool dup = false;
		for (size_t k = 0; k < i && !dup; k++)
			dup = pop[front[k]].f1 == pop[front[i]].f1 &&
			      pop[front[k]].f2 == pop[front[i]].f2;
		if (!dup)
			uniq.push_back((int)i);
	}
	for (int obj = 0; obj < 2; obj++) {
		auto f = [&](int i) {
			const Indiv &v = pop[front[i]];
			return obj ? v.f2 : v.f1;
		};
		std::vector<int> s = uniq;
		std::stable_sort(s.begin(), s.end(),
				 [&](int a, int b) { return f(a) < f(b); });
		double norm = f(s.back()) - f(s.front());
		for (size_t k = 0; k < s.size(); k++) {
			double prev = k ? f(s[k - 1]) : -INFINITY;
			double next = k + 1 < s.size() ? f(s[k + 1]) : INFINITY;
			double d = norm > 0 ? (f(s[k]) - prev) / norm +
						      (next - f(s[k])) / norm
					    : 0.0;
			cd[s[k]] += d / 2;
		}
	}
	return cd;
}

/* Rank and crowding survival to N, ties in crowding broken at random. */
std::vector<Indiv> survive(std::vector<Indiv> pop, size_t n, Rng &rng)
{
	std::vector<Indiv> out;
	std::vector<std::vector<int>> fronts = fronts_of(pop);
	for (size_t rank = 0; rank < fronts.size() && out.size() < n; rank++) {
		const std::vector<int> &front = fronts[rank];
		std::vector<double> cd = crowding(pop, front);
		std::vector<int> order(front.size());
		std::iota(order.begin(), order.end(), 0);
		if (out.size() + front.size() > n) {
			for (size_t i = order.size(); i-- > 1;)
				std::swap(order[i],
					  order[rng.below((int)i + 1)]);
			std::stable_sort(
				order.begin(), order.end(),
				[&](int a, int b) { return cd[a] > cd[b]; });
			order.resize(n - out.size());
		}
		for (int i : order) {
			Indiv v = pop[front[i]];
			v.rank = (int)rank;
			v.crowd = cd[i];
			out.push_back(std::move(v));
		}
	}
	return out;
}

struct Ga {
	const PolluxProblem &p;
	Rng &rng;
	const GaOptions &opt;
	long evaluations = 0;

	void evaluate(Indiv &v)
	{
		p.evaluate(v.x.data(), &v.f1, &v.f2);
		evaluations++;
	}
	int tournament(const std::vector<Indiv> &pop, int a, int b);
	std::vector<int> select(const std::vector<Indiv> &pop, int n);
	void crossover(State &a, State &b);
	void mutate(State &x);
	std::vector<Indiv> offspring(const std::vector<Indiv> &pop);
};

int Ga::tournament(const std::vector<Indiv> &pop, int a, int b)
{
	int rel = relation(pop[a], pop[b]);
	if (rel == 1)
		return a;
	if (rel == -1)
		return b;
	if (pop[a].crowd > pop[b].crowd)
		return a;
	if (pop[b].crowd > pop[a].crowd)
		return b;
	return rng.uniform() < 0.5 ? a : b;
}

/* N winners of binary tournaments over concatenated permutations. */
std::vector<int> Ga::select(const std::vector<Indiv> &pop, int n)
{
	std::vector<int> perm;
	int len = (int)pop.size();
	while ((int)perm.size() < 2 * n) {
		std::vector<int> p(len);
		std::iota(p.begin(), p.end(), 0);
		for (int i = len - 1; i > 0; i--)
			std::swap(p[i], p[rng.below(i + 1)]);
		perm.insert(perm.end(), p.begin(), p.end());
	}
	std::vector<int> out(n);
	for (int i = 0; i < n; i++)
		out[i] = tournament(pop, perm[2 * i], perm[2 * i + 1]);
	return out;
}

/* Single point over jobs: rows before the cut are swapped. */
void Ga::crossover(State &a, State &b)
{
	int cut = rng.below(p.jobs());
	bool apply = rng.uniform() < opt.crossover_prob;
	if (!apply)
		return;
	for (size_t i = 0; i < (size_t)cut * p.nodes(); i++)
		std::swap(a[i], b[i]);
}

void Ga::mutate(State &x)
{
	int J = p.jobs(), N = p.nodes();
	const std::vector<int> &base = p.base();
	for (int j = 0; j < J; j++) /* (1) back to the current allocation */
		if (rng.uniform() < 0.1)
			std::copy(base.begin() + (size_t)j * N,
				  base.begin() + (size_t)(j + 1) * N,
				  x.begin() + (size_t)j * N);
	for (int j = 0; j < J; j++) { /* (2) zero some elements */
		double prob = rng.uniform() < 0.1 ? 0.1 : 0.0;
		for (int n = 0; n < N; n++)
			if (rng.uniform() < prob)
				x[(size_t)j * N + n] = 0;
	}
	/* (3) raise elements on nodes with a free GPU */
	std::vector<char> freen(N);
	int nfree = 0;
	for (int n = 0; n < N; n++) {
		int used = 0;
		for (int j = 0; j < J; j++)
			used += x[(size_t)j * N + n];
		freen[n] = p.cap(n) - used >= 1;
		nfree += freen[n];
	}
	double p1 = 1.0 / std::max(nfree, 1);
	for (int j = 0; j < J; j++) {
		int *row = x.data() + (size_t)j * N;
		int mine = 0;
		for (int n = 0; n < N; n++)
			mine += row[n] > 0 && freen[n];
		double p2 = 1.0 / std::max(mine, 1);
		for (int n = 0; n < N; n++) {
			double a = freen[n] ? p1 : 0.0;
			double b = row[n] > 0 && freen[n] ? p2 : 0.0;
			bool m = rng.uniform() < a + b - a * b;
			int r = row[n] + rng.below(p.cap(n) - row[n] + 1);
			if (m)
				row[n] = r;
		}
	}
}

std::vector<Indiv> Ga::offspring(const std::vector<Indiv> &pop)
{
	std::set<State> seen;
	for (const Indiv &v : pop)
		seen.insert(v.x);
	std::vector<Indiv> off;
	int want = opt.pop_size;
	for (int round = 0; (int)off.size() < want && round <= 100; round++) {
		int left = want - (int)off.size();
		int matings = (left + 1) / 2;
		std::vector<int> par = select(pop, 2 * matings);
		std::vector<State> kids(2 * (size_t)matings);
		for (int m = 0; m < matings; m++) {
			kids[m] = pop[par[2 * m]].x;
			kids[matings + m] = pop[par[2 * m + 1]].x;
			crossover(kids[m], kids[matings + m]);
		}
		std::vector<State> fresh;
		for (State &k : kids) {
			mutate(k);
			p.repair(k.data(), rng);
			if (seen.insert(k).second)
				fresh.push_back(std::move(k));
		}
		if ((int)fresh.size() > left) {
			for (size_t i = fresh.size(); i-- > 1;)
				std::swap(fresh[i],
					  fresh[rng.below((int)i + 1)]);
			for (size_t i = left; i < fresh.size(); i++)
				seen.erase(fresh[i]);
			fresh.resize(left);
		}
		for (State &k : fresh) {
			Indiv v;
			v.x = std::move(k);
			evaluate(v);
			off.push_back(std::move(v));
		}
	}
	return off;
}

} /* namespace */

GaResult pollux_nsga2(const PolluxProblem &problem,
		      std::vector<std::vector<int>> init, Rng &rng,
		      const GaOptions &opt)
{
	Ga ga{ problem, rng, opt };
	std::vector<Indiv> pop;
	std::set<State> seen;
	for (State &x : init) {
		problem.repair(x.data(), rng);
		if (!seen.insert(x).second)
			continue;
		Indiv v;
		v.x = std::move(x);
		ga.evaluate(v);
		pop.push_back(std::move(v));
	}
	pop = survive(std::move(pop), pop.size(), rng);
	for (int gen = 1; gen < opt.generations; gen++) {
		std::vector<Indiv> off = ga.offspring(pop);
		pop.insert(pop.end(), std::make_move_iterator(off.begin()),
			   std::make_move_iterator(off.end()));
		pop = survive(std::move(pop), (size_t)opt.pop_size, rng);
	}
	GaResult res;
	res.evaluations = ga.evaluations;
	std::vector<std::vector<int>> fr = fronts_of(pop);
	for (int i : fr[0]) {
		res.front.push_back(pop[i].x);
		res.f1.push_back(pop[i].f1);
		res.f2.push_back(pop[i].f2);
	}
	res.best = (int)(std::min_element(res.f1.begin(), res.f1.end()) -
			 res.f1.begin());
	return res;
}

} /* namespace tidal */
