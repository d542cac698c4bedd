/*
 * matching_blossom.cc - the Muri simulator's weighted blossom matcher
 * (matching.h, Matcher::Anchor), for reproducing its tie-breaking.
 *
 * This is the O(n^3) primal-dual blossom algorithm in the form of the
 * classic "UOJ #81" template, with the Muri simulator's details:
 *
 *   - vertices are 1..n, blossoms n+1.. (a freed blossom id is reused);
 *   - every label starts at the largest edge weight;
 *   - an edge is tight when its slack lab[u] + lab[v] - 2w is <= 0, with
 *     no tolerance; a phase ends (no augmenting path) when an S-vertex's
 *     label is <= the dual step d or within rel 1e-5 of it (my_cmp), so a
 *     near-tie can stop the search one augmentation early;
 *   - blossom members are queued breadth-first through nested blossoms;
 *   - the weight of the directed pair (u, v) is kept as given, so the two
 *     directions may differ in the last bit, as the anchor's do.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "core/solvers/matching.h"

namespace tidal {

namespace {

/* math.isclose(x, y, rel_tol=1e-5) then x > y: the anchor's my_cmp. */
int my_cmp(double x, double y)
{
	if (x == y)
		return 0;
	double d = std::fabs(x - y);
	if (d <= 1e-5 * std::fabs(x) || d <= 1e-5 * std::fabs(y))
		return 0;
	return x > y ? 1 : 0;
}

struct Edge {
	int u = 0, v = 0;
	double w = 0;
};

class Blossom {
public:
	Blossom(int n, const std::vector<WeightedEdge> &edges);
	std::vector<int> run();

private:
	Edge &e(int u, int v) { return g_[(size_t)u * cap_ + v]; }
	int &from(int b, int x) { return from_[(size_t)b * cap_ + x]; }
	double dist(const Edge &x) const
	{
		return lab_[x.u] + lab_[x.v] - x.w * 2.0;
	}
	void update_slack(int u, int x);
	void set_slack(int x);
	void q_push(int x);
	void set_st(int x, int b);
	int get_pr(int b, int xr);
	void set_match(int u, int v);
	void augment(int u, int v);
	int get_lca(int u, int v);
	void add_blossom(int u, int lca, int v);
	void expand_blossom(int b);
	bool on_found_edge(Edge x);
	bool matching();

	int n_, nx_, cap_, t_ = 0;
	std::vector<Edge> g_;
	std::vector<int> from_, match_, st_, s_, slack_, pa_, vis_;
	std::vector<double> lab_;
	std::vector<std::vector<int>> flower_;
	std::deque<int> q_;
	bool any_edge_ = false;
};

Blossom::Blossom(int n, const std::vector<WeightedEdge> &edges)
	: n_(n), nx_(n), cap_(2 * n + 2), g_((size_t)cap_ * cap_),
	  from_((size_t)cap_ * cap_, 0), match_(cap_, 0), st_(cap_, 0),
	  s_(cap_, -1), slack_(cap_, 0), pa_(cap_, 0), vis_(cap_, 0),
	  lab_(cap_, 0), flower_(cap_)
{
	for (int u = 0; u <= n; u++) {
		for (int v = 0; v <= n; v++)
			e(u, v) = {u, v, 0};
		st_[u] = u;
		from(u, u) = u;
	}
	bool reverse_given[2] = {false, false};
	for (const WeightedEdge &x : edges)
		reverse_given[x.u > x.v] = true;
	for (const WeightedEdge &x : edges) {
		if (!(x.w > 0))
			continue;
		e(x.u + 1, x.v + 1).w = x.w;
		/* an undirected list: mirror it */
		if (!(reverse_given[0] && reverse_given[1]))
			e(x.v + 1, x.u + 1).w = x.w;
		any_edge_ = true;
	}
	double w_max = 0;
	for (int u = 1; u <= n; u++)
		for (int v = 1; v <= n; v++)
			w_max = std::max(w_max, e(u, v).w);
	for (int u = 0; u <= n; u++)
		lab_[u] = w_max;
}

void Blossom::update_slack(int u, int x)
{
	if (!slack_[x] || dist(e(u, x)) < dist(e(slack_[x], x)))
		slack_[x] = u;
}

void Blossom::set_slack(int x)
{
	slack_[x] = 0;
	for (int u = 1; u <= n_; u++)
		if (e(u, x).w > 0 && st_[u] != x && s_[st_[u]] == 0)
			update_slack(u, x);
}

/* X, or the vertices of blossom X breadth-first through nested ones. */
void Blossom::q_push(int x)
{
	std::deque<int> pend{x};
	while (!pend.empty()) {
		int y = pend.front();
		pend.pop_front();
		if (y <= n_)
			q_.push_back(y);
		else
			for (int i : flower_[y])
				pend.push_back(i);
	}
}

void Blossom::set_st(int x, int b)
{
	st_[x] = b;
	if (x <= n_)
		return;
	for (int i : flower_[x])
		set_st(i, b);
}

/* Position of XR in blossom B, after turning the cycle round so that the
 * path from the base to XR has even length. */
int Blossom::get_pr(int b, int xr)
{
	std::vector<int> &f = flower_[b];
	int pr = 0;
	while (f[pr] != xr)
		pr++;
	if (pr % 2 == 1) {
		std::reverse(f.begin() + 1, f.end());
		return (int)f.size() - pr;
	}
	return pr;
}

void Blossom::set_match(int u, int v)
{
	match_[u] = e(u, v).v;
	if (u <= n_)
		return;
	Edge x = e(u, v);
	int xr = from(u, x.u), pr = get_pr(u, xr);
	std::vector<std::pair<int, int>> sub;
	for (int i = 0; i < pr; i++)
		sub.push_back({flower_[u][i], flower_[u][i ^ 1]});
	std::vector<int> &f = flower_[u];
	std::rotate(f.begin(), f.begin() + pr, f.end());
	for (auto [a, b] : sub)
		set_match(a, b);
	set_match(xr, v);
}

void Blossom::augment(int u, int v)
{
	for (;;) {
		int xnv = st_[match_[u]];
		set_match(u, v);
		if (!xnv)
			return;
		set_match(xnv, st_[pa_[xnv]]);
		u = st_[pa_[xnv]];
		v = xnv;
	}
}

int Blossom::get_lca(int u, int v)
{
	for (++t_; u || v; std::swap(u, v)) {
		if (!u)
			continue;
		if (vis_[u] == t_)
			return u;
		vis_[u] = t_;
		u = st_[match_[u]];
		if (u)
			u = st_[pa_[u]];
	}
	return 0;
}

void Blossom::add_blossom(int u, int lca, int v)
{
	int b = n_ + 1;
	while (b <= nx_ && st_[b])
		b++;
	if (b > nx_) {
		nx_++; /* fresh ids: rows and columns are still zero */
		st_[b] = b;
	}
	lab_[b] = 0;
	s_[b] = 0;
	match_[b] = match_[lca];
	flower_[b] = {lca};
	for (int x = u; x != lca;) {
		flower_[b].push_back(x);
		int y = st_[match_[x]];
		flower_[b].push_back(y);
		q_push(y);
		x = st_[pa_[y]];
	}
	std::reverse(flower_[b].begin() + 1, flower_[b].end());
	for (int x = v; x != lca;) {
		flower_[b].push_back(x);
		int y = st_[match_[x]];
		flower_[b].push_back(y);
		q_push(y);
		x = st_[pa_[y]];
	}
	set_st(b, b);
	for (int x = 1; x <= nx_; x++) {
		e(b, x).w = 0;
		e(x, b).w = 0;
	}
	for (int x = 1; x <= n_; x++)
		from(b, x) = 0;
	for (int xs : flower_[b]) {
		for (int x = 1; x <= nx_; x++)
			if (my_cmp(e(b, x).w, 0) == 0 ||
			    dist(e(xs, x)) < dist(e(b, x))) {
				e(b, x) = e(xs, x);
				e(x, b) = e(x, xs);
			}
		for (int x = 1; x <= n_; x++)
			if (from(xs, x))
				from(b, x) = xs;
	}
	set_slack(b);
}

void Blossom::expand_blossom(int b)
{
	for (int i : flower_[b])
		set_st(i, i);
	int xr = from(b, e(b, pa_[b]).u), pr = get_pr(b, xr);
	for (int i = 0; i < pr; i += 2) {
		int xs = flower_[b][i], xns = flower_[b][i + 1];
		pa_[xs] = e(xns, xs).u;
		s_[xs] = 1;
		s_[xns] = 0;
		slack_[xs] = 0;
		set_slack(xns);
		q_push(xns);
	}
	s_[xr] = 1;
	pa_[xr] = pa_[b];
	for (size_t i = pr + 1; i < flower_[b].size(); i++) {
		int xs = flower_[b][i];
		s_[xs] = -1;
		set_slack(xs);
	}
	st_[b] = 0;
}

bool Blossom::on_found_edge(Edge x)
{
	int u = st_[x.u], v = st_[x.v];
	if (s_[v] == -1) {
		pa_[v] = x.u;
		s_[v] = 1;
		int nu = st_[match_[v]];
		slack_[v] = 0;
		slack_[nu] = 0;
		s_[nu] = 0;
		q_push(nu);
	} else if (s_[v] == 0) {
		int lca = get_lca(u, v);
		if (!lca) {
			augment(u, v);
			augment(v, u);
			return true;
		}
		add_blossom(u, lca, v);
	}
	return false;
}

/* One augmentation; false when none is left (or the labels say stop). */
bool Blossom::matching()
{
	std::fill(s_.begin(), s_.end(), -1);
	std::fill(slack_.begin(), slack_.end(), 0);
	q_.clear();
	for (int x = 1; x <= nx_; x++)
		if (st_[x] == x && match_[x] <= 0) {
			pa_[x] = 0;
			s_[x] = 0;
			q_push(x);
		}
	if (q_.empty())
		return false;
	for (;;) {
		while (!q_.empty()) {
			int u = q_.front();
			q_.pop_front();
			if (s_[st_[u]] == 1)
				continue;
			for (int v = 1; v <= n_; v++) {
				if (!(e(u, v).w > 0) || st_[u] == st_[v])
					continue;
				if (my_cmp(dist(e(u, v)), 0.0) == 0) {
					if (on_found_edge(e(u, v)))
						return true;
				} else {
					update_slack(u, st_[v]);
				}
			}
		}
		double d = std::numeric_limits<double>::infinity();
		for (int b = n_ + 1; b <= nx_; b++)
			if (st_[b] == b && s_[b] == 1)
				d = std::min(d, lab_[b] / 2.0);
		for (int x = 1; x <= nx_; x++) {
			if (st_[x] != x || !slack_[x])
				continue;
			if (s_[x] == -1)
				d = std::min(d, dist(e(slack_[x], x)));
			else if (s_[x] == 0)
				d = std::min(d, dist(e(slack_[x], x)) / 2.0);
		}
		for (int u = 1; u <= n_; u++) {
			if (s_[st_[u]] == 0) {
				if (my_cmp(lab_[u], d) <= 0)
					return false;
				lab_[u] -= d;
			} else if (s_[st_[u]] == 1) {
				lab_[u] += d;
			}
		}
		for (int b = n_ + 1; b <= nx_; b++) {
			if (st_[b] != b)
				continue;
			if (s_[b] == 0)
				lab_[b] += d * 2;
			else if (s_[b] == 1)
				lab_[b] -= d * 2;
		}
		q_.clear();
		for (int x = 1; x <= nx_; x++)
			if (st_[x] == x && slack_[x] && st_[slack_[x]] != x &&
			    my_cmp(dist(e(slack_[x], x)), 0) == 0)
				if (on_found_edge(e(slack_[x], x)))
					return true;
		for (int b = n_ + 1; b <= nx_; b++)
			if (st_[b] == b && s_[b] == 1 && my_cmp(lab_[b], 0) == 0)
				expand_blossom(b);
	}
}

std::vector<int> Blossom::run()
{
	if (any_edge_)
		while (matching())
			;
	std::vector<int> mate(n_, -1);
	for (int u = 1; u <= n_; u++) {
		int v = match_[u];
		if (v > 0 && match_[v] == u)
			mate[u - 1] = v - 1;
	}
	return mate;
}

} /* namespace */

std::vector<int> anchor_matching(int n, const std::vector<WeightedEdge> &edges)
{
	if (n == 0)
		return {};
	Blossom b(n, edges);
	return b.run();
}

} /* namespace tidal */
