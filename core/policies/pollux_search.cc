/*
 * pollux_search.cc - local search for Pollux's allocation problem.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/pollux_search.h"

#include <algorithm>
#include <numeric>

namespace tidal {

namespace {

using Row = std::vector<int>;

struct Move {
	double delta = 0;
	int job = -1;
	Row row;
	std::vector<std::pair<int, Row>> victims;
};

struct Search {
	const PolluxProblem &p;
	int J, N;
	std::vector<int> S, used, owner; /* owner: distributed job or -1 */
	std::vector<double> val;
	SearchStats st;

	Search(const PolluxProblem &prob, std::vector<int> s)
		: p(prob), J(prob.jobs()), N(prob.nodes()), S(std::move(s))
	{
		used.assign(N, 0);
		owner.assign(N, -1);
		val.assign(J, 0);
		for (int j = 0; j < J; j++) {
			Row r(S.begin() + (size_t)j * N,
			      S.begin() + (size_t)(j + 1) * N);
			place(j, r, +1);
			val[j] = value(j, r);
		}
	}

	static bool multi(const Row &r)
	{
		int k = 0;
		for (int v : r)
			k += v > 0;
		return k > 1;
	}
	double value(int j, const Row &r) const
	{
		int k = 0, rep = 0;
		for (int v : r)
			if (v) {
				k++;
				rep += v;
			}
		return 1.0 / (p.scaled(j, k, rep, p.row_is_base(r.data(), j)) +
			      1e-3);
	}
	/* Add (SIGN +1) or remove (-1) row R of job J from the books. */
	void place(int j, const Row &r, int sign)
	{
		bool m = multi(r);
		for (int n = 0; n < N; n++) {
			used[n] += sign * r[n];
			if (m && r[n] > 0)
				owner[n] = sign > 0 ? j : -1;
		}
	}
	Row row(int j) const
	{
		return Row(S.begin() + (size_t)j * N,
			   S.begin() + (size_t)(j + 1) * N);
	}
	void set_row(int j, const Row &r)
	{
		place(j, row(j), -1);
		place(j, r, +1);
		std::copy(r.begin(), r.end(), S.begin() + (size_t)j * N);
		val[j] = value(j, r);
	}
	bool eligible(int j, const Row &r) const
	{
		if (!multi(r))
			return true;
		for (int n = 0; n < N; n++)
			if (r[n] > 0 && owner[n] != -1 && owner[n] != j)
				return false;
		return true;
	}

	void consider(Move &best, int j, const Row &r, double extra = 0,
		      std::vector<std::pair<int, Row>> *victims = nullptr)
	{
		double d = value(j, r) - val[j] + extra;
		if (d < best.delta) {
			best.delta = d;
			best.job = j;
			best.row = r;
			best.victims.clear();
			if (victims)
				best.victims = *victims;
		}
	}
	void plain_moves(int j, const std::vector<int> &freecap, Move &best);
	void spread_moves(int j, const std::vector<int> &freecap, Move &best);
	void take_moves(int j, const std::vector<int> &freecap, Move &best);
	void take(int j, int n, const Row &r, const std::vector<int> &freecap,
		  Move &best);
	bool improve(int j);
	void run();
};

/* drop, keep, local r, +1 / -1. */
void Search::plain_moves(int j, const std::vector<int> &freecap, Move &best)
{
	int maxr = p.max_replicas(j);
	Row cur = row(j);
	consider(best, j, Row(N, 0));
	Row base(p.base().begin() + (size_t)j * N,
		 p.base().begin() + (size_t)(j + 1) * N);
	bool fits = std::accumulate(base.begin(), base.end(), 0) <= maxr;
	for (int n = 0; n < N; n++)
		fits = fits && base[n] <= freecap[n];
	if (fits && base != cur && eligible(j, base))
		consider(best, j, base);
	for (int r = 1; r <= maxr; r++) {
		int at = -1;
		for (int n = 0; n < N; n++)
			if (freecap[n] >= r && (at < 0 || freecap[n] < freecap[at]))
				at = n;
		if (at < 0)
			break;
		Row nr(N, 0);
		nr[at] = r;
		if (nr != cur)
			consider(best, j, nr);
	}
	int reps = std::accumulate(cur.begin(), cur.end(), 0);
	for (int n = 0; n < N; n++) {
		if (cur[n] < freecap[n] && reps < maxr) {
			Row nr = cur;
			nr[n]++;
			if (eligible(j, nr))
				consider(best, j, nr);
		}
		if (cur[n] > 0) {
			Row nr = cur;
			nr[n]--;
			consider(best, j, nr);
		}
	}
}

/* r replicas over the eligible nodes with the most free GPUs (the model
 * sees only nodes > 1, so which nodes does not matter). */
void Search::spread_moves(int j, const std::vector<int> &freecap, Move &best)
{
	std::vector<int> nodes;
	for (int n = 0; n < N; n++)
		if (freecap[n] > 0 && (owner[n] == -1 || owner[n] == j))
			nodes.push_back(n);
	std::stable_sort(nodes.begin(), nodes.end(), [&](int a, int b) {
		return freecap[a] > freecap[b];
	});
	if (nodes.size() < 2)
		return;
	Row cur = row(j);
	for (int r = freecap[nodes[0]] + 1; r <= p.max_replicas(j); r++) {
		Row nr(N, 0);
		int left = r;
		for (int n : nodes) {
			nr[n] = std::min(left, freecap[n]);
			left -= nr[n];
			if (!left)
				break;
		}
		if (left)
			break;
		if (nr != cur)
			consider(best, j, nr);
	}
}

/* Row R for job J needs more on node N than is free: take the missing
 * GPUs one at a time from the job on N whose term grows least. */
void Search::take(int j, int n, const Row &r, const std::vector<int> &freecap,
		  Move &best)
{
	int deficit = r[n] - freecap[n];
	std::vector<std::pair<int, Row>> victims;
	double extra = 0;
	for (; deficit > 0; deficit--) {
		int who = -1;
		double cost = 0;
		Row pick;
		for (int i = 0; i < J; i++) {
			if (i == j || S[(size_t)i * N + n] == 0)
				continue;
			auto it = std::find_if(victims.begin(), victims.end(),
					       [&](auto &v) { return v.first == i; });
			Row vr = it != victims.end() ? it->second : row(i);
			if (vr[n] == 0)
				continue;
			double before = value(i, vr);
			vr[n]--;
			double c = value(i, vr) - before;
			if (who < 0 || c < cost) {
				who = i;
				cost = c;
				pick = vr;
			}
		}
		if (who < 0)
			return;
		extra += cost;
		auto it = std::find_if(victims.begin(), victims.end(),
				       [&](auto &v) { return v.first == who; });
		if (it != victims.end())
			it->second = pick;
		else
			victims.emplace_back(who, pick);
	}
	consider(best, j, r, extra, &victims);
}

void Search::take_moves(int j, const std::vector<int> &freecap, Move &best)
{
	int maxr = p.max_replicas(j);
	Row cur = row(j);
	int reps = std::accumulate(cur.begin(), cur.end(), 0);
	for (int n = 0; n < N; n++) {
		for (int r = freecap[n] + 1; r <= std::min(p.cap(n), maxr); r++) {
			Row nr(N, 0);
			nr[n] = r;
			take(j, n, nr, freecap, best);
		}
		for (int d = 1; cur[n] + d <= p.cap(n) && reps + d <= maxr; d++) {
			if (cur[n] + d <= freecap[n])
				continue;
			Row nr = cur;
			nr[n] += d;
			if (eligible(j, nr))
				take(j, n, nr, freecap, best);
		}
	}
}

bool Search::improve(int j)
{
	std::vector<int> freecap(N);
	for (int n = 0; n < N; n++)
		freecap[n] = p.cap(n) - used[n] + S[(size_t)j * N + n];
	Move best;
	best.delta = -1e-12 * std::max(1.0, std::accumulate(val.begin(),
							   val.end(), 0.0));
	plain_moves(j, freecap, best);
	spread_moves(j, freecap, best);
	take_moves(j, freecap, best);
	if (best.job < 0)
		return false;
	for (auto &[i, r] : best.victims)
		set_row(i, r);
	set_row(j, best.row);
	st.moves++;
	return true;
}

void Search::run()
{
	for (st.passes = 0; st.passes < 200;) {
		st.passes++;
		bool any = false;
		for (int j = 0; j < J; j++)
			any |= improve(j);
		if (!any)
			break;
	}
}

} /* namespace */

std::vector<int> pollux_search(const PolluxProblem &problem,
			       SearchStats *stats)
{
	std::vector<int> base = problem.base();
	if (!problem.feasible(base.data())) {
		Rng rng(0);
		problem.repair(base.data(), rng);
	}
	Search a(problem, base);
	a.run();
	Search b(problem, std::vector<int>(base.size(), 0));
	b.run();
	double fa = problem.inverse_sum(a.S.data());
	double fb = problem.inverse_sum(b.S.data());
	Search &w = fb < fa ? b : a;
	if (stats) {
		stats->passes = a.st.passes + b.st.passes;
		stats->moves = a.st.moves + b.st.moves;
	}
	return w.S;
}

} /* namespace tidal */
