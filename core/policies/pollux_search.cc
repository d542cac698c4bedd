/*
 * pollux_search.cc - local search for Pollux's allocation problem.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/pollux_search.h"

#include "core/policies/pollux_pack.h"
#include "core/policies/pollux_relax.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tidal
{

namespace
{

using Row = std::vector<int>;

/* Rows to set, in order (victims shrink, the job moves, victims move). */
struct Move {
	double delta = 0;
	std::vector<std::pair<int, Row>> steps;
};

/* Relocation attempts per job and pass. */
const size_t kRelocations = 4;

/* Greedy eviction from one node: after d steps, the victims' rows and
 * the total growth of their terms. */
struct Eviction {
	bool stuck = false;
	std::vector<double> cost{ 0.0 };
	std::vector<std::vector<std::pair<int, Row>>> victims{ {} };
};

struct Search {
	const PolluxProblem &p;
	int J, N;
	std::vector<int> S, used, owner; /* owner: distributed job or -1 */
	std::vector<int> knodes;	 /* nodes per job */
	std::vector<double> val;
	SearchStats st;

	Search(const PolluxProblem &prob, std::vector<int> s)
	    : p(prob), J(prob.jobs()), N(prob.nodes()), S(std::move(s))
	{
		used.assign(N, 0);
		owner.assign(N, -1);
		val.assign(J, 0);
		knodes.assign(J, 0);
		for (int j = 0; j < J; j++) {
			Row r(S.begin() + (size_t)j * N,
			      S.begin() + (size_t)(j + 1) * N);
			place(j, r, +1);
			val[j] = value(j, r);
			for (int v : r)
				knodes[j] += v > 0;
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
		return 1.0 /
		       (p.scaled(j, k, rep, p.row_is_base(r.data(), j)) + 1e-3);
	}
	/* Add (SIGN +1) or remove (-1) row R of job J from the GPU counts;
	 * owners are recomputed by set_row once the rows are in place. */
	void place(int j, const Row &r, int sign)
	{
		bool m = multi(r);
		for (int n = 0; n < N; n++) {
			used[n] += sign * r[n];
			if (m && r[n] > 0 && sign > 0)
				owner[n] = j;
		}
	}
	void recompute_owner(int n)
	{
		owner[n] = -1;
		for (int i = 0; i < J; i++)
			if (knodes[i] > 1 && S[(size_t)i * N + n])
				owner[n] = i;
	}
	Row row(int j) const
	{
		return Row(S.begin() + (size_t)j * N,
			   S.begin() + (size_t)(j + 1) * N);
	}
	void set_row(int j, const Row &r)
	{
		Row old = row(j);
		bool was = multi(old), now = multi(r);
		place(j, old, -1);
		std::copy(r.begin(), r.end(), S.begin() + (size_t)j * N);
		knodes[j] = 0;
		for (int v : r)
			knodes[j] += v > 0;
		for (int n = 0; n < N; n++) {
			used[n] += r[n];
			if ((was && old[n]) || (now && r[n]))
				recompute_owner(n);
		}
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
		      const std::vector<std::pair<int, Row>> *victims = nullptr)
	{
		double d = value(j, r) - val[j] + extra;
		if (d < best.delta) {
			best.delta = d;
			best.steps.clear();
			if (victims)
				best.steps = *victims;
			best.steps.emplace_back(j, r);
		}
	}
	void relocate(int j, const Row &r,
		      const std::vector<std::pair<int, Row>> &victims,
		      Move &best);
	void plain_moves(int j, const std::vector<int> &freecap, Move &best);
	void spread_moves(int j, const std::vector<int> &freecap, Move &best);
	void take_moves(int j, const std::vector<int> &freecap, Move &best);
	void take_options(int j, const std::vector<int> &freecap, Move &best);
	void restore(int j, const std::vector<int> &freecap, Move &best);
	struct Pending {
		double gain;
		Row row;
		std::vector<std::pair<int, Row>> victims;
	};
	std::vector<Pending> pending;
	void take(int j, int n, const Row &r, const std::vector<int> &freecap,
		  Eviction &ev, Move &best);
	bool evict(int j, int n, int d, Eviction &e);
	bool owners_leave(int j, const Row &r,
			  const std::vector<std::pair<int, Row>> &victims) const;
	bool improve(int j);
	double unkept(int j, int r, bool m) const
	{
		return 1.0 / (p.scaled(j, m ? 2 : 1, r, false) + 1e-3);
	}
	double threshold() const
	{
		return -1e-12 *
		       std::max(1.0, std::accumulate(val.begin(), val.end(), 0.0));
	}
	bool reshape(int j);
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
			if (freecap[n] >= r &&
			    (at < 0 || freecap[n] < freecap[at]))
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
	std::stable_sort(nodes.begin(), nodes.end(),
			 [&](int a, int b) { return freecap[a] > freecap[b]; });
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

/* A multi-node row R for job J: the owners of its nodes must be J or be
 * among VICTIMS, leaving those nodes (not keeping a multi-node row that
 * still uses them).  A single-node row is never blocked. */
bool Search::owners_leave(int j, const Row &r,
			  const std::vector<std::pair<int, Row>> &victims) const
{
	if (!multi(r))
		return true;
	for (int m = 0; m < N; m++) {
		if (!r[m] || owner[m] < 0 || owner[m] == j)
			continue;
		auto it = std::find_if(victims.begin(), victims.end(),
				       [&](auto &v) { return v.first == owner[m]; });
		if (it == victims.end() ||
		    (it->second[m] > 0 && multi(it->second)))
			return false;
	}
	return true;
}

/* Row R for job J needs more on node N than is free: take the missing
 * GPUs one at a time from the job on N whose term grows least. */
/* Extend E, the greedy eviction sequence on node N (each step takes one
 * GPU from the job on N whose term grows least), to D steps.  The
 * sequence does not depend on what J will do with the GPUs, so one per
 * node serves every take move of J.  RET: false if N runs out. */
bool Search::evict(int j, int n, int d, Eviction &e)
{
	while ((int)e.cost.size() <= d) {
		if (e.stuck)
			return false;
		const auto &vs = e.victims.back();
		int who = -1;
		double cost = 0;
		Row pick;
		for (int i = 0; i < J; i++) {
			if (i == j || S[(size_t)i * N + n] == 0)
				continue;
			auto it = std::find_if(
				vs.begin(), vs.end(),
				[&](auto &v) { return v.first == i; });
			Row vr = it != vs.end() ? it->second : row(i);
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
		if (who < 0) {
			e.stuck = true;
			return false;
		}
		auto nv = vs;
		auto it = std::find_if(nv.begin(), nv.end(),
				       [&](auto &v) { return v.first == who; });
		if (it != nv.end())
			it->second = pick;
		else
			nv.emplace_back(who, pick);
		e.cost.push_back(e.cost.back() + cost);
		e.victims.push_back(std::move(nv));
	}
	return true;
}

/* Row R for job J needs more on node N than is free: take the missing
 * GPUs by the node's eviction sequence. */
void Search::take(int j, int n, const Row &r, const std::vector<int> &freecap,
		  Eviction &ev, Move &best)
{
	int deficit = r[n] - freecap[n];
	if (!evict(j, n, deficit, ev))
		return;
	const std::vector<std::pair<int, Row>> &victims = ev.victims[deficit];
	double extra = ev.cost[deficit];
	if (!owners_leave(j, r, victims))
		return;
	if (value(j, r) - val[j] + extra < best.delta)
		consider(best, j, r, extra, &victims);
	else if (value(j, r) < val[j])
		pending.push_back({ value(j, r) - val[j], r, victims });
}

/* The take alone does not pay: let each victim then make its best plain
 * move (e.g. onto the GPUs job J left), and judge the whole. */
void Search::relocate(int j, const Row &r,
		      const std::vector<std::pair<int, Row>> &victims,
		      Move &best)
{
	std::vector<std::pair<int, Row>> saved, steps = victims;
	double before = val[j];
	saved.emplace_back(j, row(j));
	for (auto &[i, vr] : victims) {
		saved.emplace_back(i, row(i));
		before += val[i];
	}
	for (auto &[i, vr] : victims)
		set_row(i, vr);
	set_row(j, r);
	steps.emplace_back(j, r);
	std::vector<int> freecap(N);
	for (auto &[i, vr] : victims) {
		for (int n = 0; n < N; n++)
			freecap[n] = p.cap(n) - used[n] + S[(size_t)i * N + n];
		Move m;
		plain_moves(i, freecap, m);
		if (!m.steps.empty()) {
			set_row(i, m.steps.back().second);
			steps.push_back(m.steps.back());
		}
	}
	double after = val[j];
	for (auto &[i, vr] : victims)
		after += val[i];
	for (size_t k = saved.size(); k-- > 0;)
		set_row(saved[k].first, saved[k].second);
	if (after - before < best.delta) {
		best.delta = after - before;
		best.steps = steps;
	}
}

/* Takes that pay for J but not with the victims left where they are:
 * the few best for J are tried with relocation (costly, so capped). */
void Search::take_moves(int j, const std::vector<int> &freecap, Move &best)
{
	pending.clear();
	take_options(j, freecap, best);
	restore(j, freecap, best);
	std::stable_sort(pending.begin(), pending.end(),
			 [](const Pending &a, const Pending &b) {
				 return a.gain < b.gain;
			 });
	for (size_t k = 0; k < pending.size() && k < kRelocations; k++)
		relocate(j, pending[k].row, pending[k].victims, best);
}

/* Back to the current allocation (no restart penalty), evicting what
 * now sits in its way on every node, by each node's eviction sequence. */
void Search::restore(int j, const std::vector<int> &freecap, Move &best)
{
	Row base(p.base().begin() + (size_t)j * N,
		 p.base().begin() + (size_t)(j + 1) * N);
	if (base == row(j) ||
	    std::accumulate(base.begin(), base.end(), 0) > p.max_replicas(j))
		return;
	std::vector<std::pair<int, Row>> victims;
	bool any = false;
	for (int n = 0; n < N; n++) {
		int d = base[n] - freecap[n];
		if (d <= 0)
			continue;
		any = true;
		Eviction ev;
		if (!evict(j, n, d, ev))
			return;
		for (auto &victim : ev.victims[d]) {
			/* Not a structured binding: clang 14 cannot capture one. */
			const int i = victim.first;
			auto same = [i](auto &v) { return v.first == i; };
			auto it = std::find_if(victims.begin(), victims.end(),
					       same);
			if (it == victims.end())
				victims.emplace_back(i, row(i));
			it = std::find_if(victims.begin(), victims.end(), same);
			it->second[n] = victim.second[n];
		}
	}
	if (!any)
		return;
	double extra = 0;
	for (auto &[i, vr] : victims)
		extra += value(i, vr) - val[i];
	if (!owners_leave(j, base, victims))
		return;
	if (value(j, base) - val[j] + extra < best.delta)
		consider(best, j, base, extra, &victims);
	else
		pending.push_back({ -INFINITY, base, victims });
}

void Search::take_options(int j, const std::vector<int> &freecap, Move &best)
{
	int maxr = p.max_replicas(j);
	Row cur = row(j);
	int reps = std::accumulate(cur.begin(), cur.end(), 0);
	for (int n = 0; n < N; n++) {
		Eviction ev;
		for (int r = freecap[n] + 1; r <= std::min(p.cap(n), maxr);
		     r++) {
			Row nr(N, 0);
			nr[n] = r;
			take(j, n, nr, freecap, ev, best);
		}
		for (int d = 1; cur[n] + d <= p.cap(n) && reps + d <= maxr;
		     d++) {
			if (cur[n] + d <= freecap[n])
				continue;
			Row nr = cur;
			nr[n] += d;
			take(j, n, nr, freecap, ev, best);
		}
	}
}

bool Search::improve(int j)
{
	std::vector<int> freecap(N);
	for (int n = 0; n < N; n++)
		freecap[n] = p.cap(n) - used[n] + S[(size_t)j * N + n];
	Move best;
	best.delta = threshold();
	plain_moves(j, freecap, best);
	spread_moves(j, freecap, best);
	take_moves(j, freecap, best);
	if (best.steps.empty())
		return false;
	for (auto &[i, r] : best.steps)
		set_row(i, r);
	st.moves++;
	return true;
}

/* Shape moves: job J takes another shape, alone or with one other job
 * taking another shape (or giving up its current row), and every job
 * that restarts is laid out again by pollux_pack.  This finds the
 * rearrangements that row moves reach only through several worse
 * states: a job back on its current row once the others make way, two
 * jobs trading places.  Candidates are tried best first, at most
 * kShapeTries layouts per job.  RET: true if a move was applied. */
bool Search::reshape(int j)
{
	const int kShapeTries = 24, kShapesPerJob = 8;
	struct Cand {
		double delta;
		PolluxShape x;
		int i = -1;
		PolluxShape y;
	};
	std::vector<PolluxShape> cur(J);
	for (int i = 0; i < J; i++) {
		const int *r = S.data() + (size_t)i * N;
		cur[i].kept = p.row_is_base(r, i);
		cur[i].replicas = std::accumulate(r, r + N, 0);
		cur[i].multi = knodes[i] > 1;
	}
	int maxcap = 0;
	for (int n = 0; n < N; n++)
		maxcap = std::max(maxcap, p.cap(n));
	auto options = [&](int i, int upto, std::vector<Cand> &out) {
		for (int r = 0; r <= upto; r++)
			for (bool m : { false, true })
				if (m ? r >= 2 : r <= maxcap)
					out.push_back({ unkept(i, r, m) - val[i],
							{ false, r, m },
							-1,
							{} });
	};
	double thresh = threshold();
	int total = 0, used_all = 0; /* cheap test before a layout */
	for (int n = 0; n < N; n++)
		total += p.cap(n);
	for (int i = 0; i < J; i++)
		used_all += cur[i].replicas;
	std::vector<Cand> mine, cands;
	options(j, p.max_replicas(j), mine);
	if (!cur[j].kept) /* back on its row, if the others make way */
		mine.push_back({ value(j, Row(p.base().begin() + (size_t)j * N,
					      p.base().begin() +
						      (size_t)(j + 1) * N)) -
					 val[j],
				 { true,
				   std::accumulate(p.base().begin() + (size_t)j * N,
						   p.base().begin() +
							   (size_t)(j + 1) * N,
						   0),
				   false },
				 -1,
				 {} });
	std::vector<std::vector<Cand>> theirs(J);
	for (int i = 0; i < J; i++) /* their shapes, best first */
		if (i != j) {
			options(i, p.max_replicas(i), theirs[i]);
			std::sort(theirs[i].begin(), theirs[i].end(),
				  [](const Cand &a, const Cand &b) {
					  return a.delta < b.delta;
				  });
		}
	std::stable_sort(mine.begin(), mine.end(),
			 [](const Cand &a, const Cand &b) {
				 return a.delta < b.delta;
			 });
	for (size_t k = 0; k < mine.size() && k < (size_t)kShapesPerJob &&
			   mine[k].delta < 0;
	     k++) {
		int room = total - used_all + cur[j].replicas - mine[k].x.replicas;
		if (mine[k].delta < thresh && room >= 0)
			cands.push_back(mine[k]);
		for (int i = 0; i < J; i++) {
			if (i == j)
				continue;
			for (Cand &c : theirs[i]) {
				if (mine[k].delta + c.delta >= thresh)
					break;
				if (c.x.replicas - cur[i].replicas > room)
					continue;
				cands.push_back({ mine[k].delta + c.delta,
						  mine[k].x, i, c.x });
			}
		}
	}
	std::stable_sort(cands.begin(), cands.end(),
			 [](const Cand &a, const Cand &b) {
				 return a.delta < b.delta;
			 });
	for (size_t k = 0; k < cands.size() && k < (size_t)kShapeTries; k++) {
		std::vector<PolluxShape> shapes = cur;
		shapes[j] = cands[k].x;
		if (cands[k].i >= 0)
			shapes[cands[k].i] = cands[k].y;
		std::vector<int> x;
		if (!pollux_pack(p, shapes, x))
			continue;
		double delta = 0;
		for (int i = 0; i < J; i++)
			delta += value(i, Row(x.begin() + (size_t)i * N,
					      x.begin() + (size_t)(i + 1) * N)) -
				 val[i];
		if (delta >= thresh)
			continue;
		for (int i = 0; i < J; i++)
			set_row(i, Row(x.begin() + (size_t)i * N,
				       x.begin() + (size_t)(i + 1) * N));
		st.moves++;
		return true;
	}
	return false;
}

/* Row moves to a local optimum, then shape moves; again while a shape
 * move pays. */
void Search::run()
{
	for (st.passes = 0; st.passes < 200;) {
		st.passes++;
		bool any = false;
		for (int j = 0; j < J; j++)
			any |= improve(j);
		if (any)
			continue;
		for (int j = 0; j < J && !any; j++)
			any = reshape(j);
		if (!any)
			break;
	}
}

} /* namespace */

/* The GA's mutation (pollux_ga.cc), as a kick. */
static void kick(const PolluxProblem &p, std::vector<int> &x, Rng &rng)
{
	int J = p.jobs(), N = p.nodes();
	const std::vector<int> &base = p.base();
	for (int j = 0; j < J; j++) {
		if (rng.uniform() < 0.1)
			std::copy(base.begin() + (size_t)j * N,
				  base.begin() + (size_t)(j + 1) * N,
				  x.begin() + (size_t)j * N);
		if (rng.uniform() < 0.1)
			for (int n = 0; n < N; n++)
				if (rng.uniform() < 0.1)
					x[(size_t)j * N + n] = 0;
	}
	std::vector<int> freec(N);
	int nfree = 0;
	for (int n = 0; n < N; n++) {
		int used = 0;
		for (int j = 0; j < J; j++)
			used += x[(size_t)j * N + n];
		freec[n] = p.cap(n) - used >= 1;
		nfree += freec[n];
	}
	double p1 = 1.0 / std::max(nfree, 1);
	for (int j = 0; j < J; j++) {
		int *row = x.data() + (size_t)j * N, mine = 0;
		for (int n = 0; n < N; n++)
			mine += row[n] > 0 && freec[n];
		double p2 = 1.0 / std::max(mine, 1);
		for (int n = 0; n < N; n++) {
			double a = freec[n] ? p1 : 0.0;
			double b = row[n] > 0 && freec[n] ? p2 : 0.0;
			if (rng.uniform() < a + b - a * b)
				row[n] += rng.below(p.cap(n) - row[n] + 1);
		}
	}
	p.repair(x.data(), rng);
}

std::vector<int> pollux_polish(const PolluxProblem &problem,
			       std::vector<int> start)
{
	Search s(problem, std::move(start));
	s.run();
	return s.S;
}

std::vector<int> pollux_search(const PolluxProblem &problem,
			       const SearchOptions &opt, SearchStats *stats)
{
	std::vector<int> base = problem.base();
	Rng rng(opt.seed);
	if (!problem.feasible(base.data()))
		problem.repair(base.data(), rng);
	SearchStats st;
	auto search = [&](std::vector<int> start) {
		Search s(problem, std::move(start));
		s.run();
		st.passes += s.st.passes;
		st.moves += s.st.moves;
		return s.S;
	};
	std::vector<int> best = search(base);
	double fbest = problem.inverse_sum(best.data());
	std::vector<int> b = search(std::vector<int>(base.size(), 0));
	double fb = problem.inverse_sum(b.data());
	if (fb < fbest) {
		best = b;
		fbest = fb;
	}
	int J = std::max(problem.jobs(), 1);
	if (J <= opt.relax_jobs &&
	    pollux_relax_edges(problem) <= opt.relax_edges) {
		int started = 0;
		RelaxEnum en(problem);
		RelaxedShapes r;
		for (int k = 0; k < opt.relax_k && started < opt.relax_starts &&
				en.next(&r);
		     k++) {
			std::vector<int> x;
			if (!pollux_pack(problem, r.shapes, x))
				continue;
			started++;
			x = search(x);
			double fx = problem.inverse_sum(x.data());
			if (fx < fbest * (1 - 1e-12)) {
				best = x;
				fbest = fx;
			}
		}
	}
	/* a search costs about J^2: small problems get more kicks */
	int kicks = J <= opt.kick_jobs
			    ? opt.kicks * std::max(1, opt.kick_jobs / J)
			    : 0;
	for (int k = 0; k < kicks; k++) {
		std::vector<int> x = best;
		kick(problem, x, rng);
		x = search(x);
		double fx = problem.inverse_sum(x.data());
		if (fx < fbest * (1 - 1e-12)) {
			best = x;
			fbest = fx;
		}
	}
	if (stats)
		*stats = st;
	return best;
}

} /* namespace tidal */
