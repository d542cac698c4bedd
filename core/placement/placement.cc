/*
 * placement.cc - placement schemes over a FreeMap.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/placement/placement.h"

#include <algorithm>
#include <bit>
#include <numeric>

#include "core/model/params.h"

namespace tidal {

static const struct {
	PlacementScheme scheme;
	const char *name;
} scheme_names[] = {
	{PlacementScheme::Consolidated, "consolidated"},
	{PlacementScheme::SwitchAware, "switch-aware"},
	{PlacementScheme::FirstFit, "first-fit"},
	{PlacementScheme::BestFit, "best-fit"},
	{PlacementScheme::Count, "count"},
	{PlacementScheme::MostFree, "most-free"},
};

bool placement_scheme_from_name(const std::string &name, PlacementScheme *out)
{
	for (const auto &s : scheme_names)
		if (lower(name) == s.name) {
			*out = s.scheme;
			return true;
		}
	return false;
}

const char *placement_scheme_name(PlacementScheme s)
{
	for (const auto &n : scheme_names)
		if (n.scheme == s)
			return n.name;
	return "?";
}

FreeMap::FreeMap(const Cluster &cluster) : cluster_(cluster)
{
	total_ = cluster.total_gpus();
	per_node_ = cluster.max_gpus_per_node();
	reset();
}

void FreeMap::reset()
{
	free_.clear();
	for (const Node &n : cluster_.nodes)
		free_.push_back(n.gpus);
	free_total_ = total_;
	words_ = ((int)free_.size() + 63) / 64;
	by_free_.assign((size_t)(per_node_ + 1) * words_, 0);
	for (int n = 0; n < (int)free_.size(); n++)
		by_free_[(size_t)free_[n] * words_ + n / 64] |= 1ull << (n % 64);
}

void FreeMap::assign(const FreeMap &o)
{
	free_.assign(o.free_.begin(), o.free_.end());
	by_free_.assign(o.by_free_.begin(), o.by_free_.end());
	free_total_ = o.free_total_;
	total_ = o.total_;
	per_node_ = o.per_node_;
	words_ = o.words_;
}

void FreeMap::set_free(int node, int gpus)
{
	std::uint64_t bit = 1ull << (node % 64);
	by_free_[(size_t)free_[node] * words_ + node / 64] &= ~bit;
	by_free_[(size_t)gpus * words_ + node / 64] |= bit;
	free_[node] = gpus;
}

int FreeMap::next_with(int free, int from) const
{
	if (free < 0 || free > per_node_ || from >= (int)free_.size())
		return -1;
	const std::uint64_t *row = &by_free_[(size_t)free * words_];
	int w = from / 64;
	std::uint64_t bits = row[w] & (~0ull << (from % 64));
	for (;;) {
		if (bits)
			return w * 64 + std::countr_zero(bits);
		if (++w == words_)
			return -1;
		bits = row[w];
	}
}

std::optional<Placement> FreeMap::place(int gpus, PlacementScheme scheme,
					PlaceMode mode)
{
	std::optional<Placement> p = fit(gpus, scheme);
	if (p && mode == PlaceMode::Commit)
		take(*p);
	return p;
}

std::optional<Placement> FreeMap::fit(int gpus, PlacementScheme scheme) const
{
	if (gpus <= 0 || gpus > free_total_)
		return std::nullopt;
	std::optional<Placement> p;
	switch (scheme) {
	case PlacementScheme::Count:
		p = Placement{{-1, gpus}};
		break;
	case PlacementScheme::Consolidated:
		p = consolidated(gpus);
		break;
	case PlacementScheme::SwitchAware:
		p = switch_aware(gpus);
		break;
	case PlacementScheme::FirstFit:
		p = first_fit(gpus);
		break;
	case PlacementScheme::BestFit:
		p = best_fit(gpus);
		break;
	case PlacementScheme::MostFree:
		p = most_free(gpus);
		break;
	}
	return p;
}

bool FreeMap::fits(const Placement &p) const
{
	long sum = 0;
	for (size_t i = 0; i < p.size(); i++) {
		const NodeShare &s = p[i];
		if (s.gpus < 0 || s.node < -1 || s.node >= (int)free_.size())
			return false;
		sum += s.gpus;
		if (s.node < 0)
			continue;
		long on_node = s.gpus; /* shares of one node add up */
		for (size_t k = 0; k < i; k++)
			if (p[k].node == s.node)
				on_node += p[k].gpus;
		if (free_[s.node] < on_node)
			return false;
	}
	return sum <= free_total_;
}

bool FreeMap::take(const Placement &p, PlaceMode mode)
{
	if (!fits(p))
		return false;
	if (mode == PlaceMode::Test)
		return true;
	for (const NodeShare &s : p) {
		if (s.node >= 0)
			set_free(s.node, free_[s.node] - s.gpus);
		free_total_ -= s.gpus;
	}
	return true;
}

/* Give back what take() or place() took; shares naming no node of this
 * map are ignored. */
void FreeMap::release(const Placement &p)
{
	for (const NodeShare &s : p) {
		if (s.node >= (int)free_.size() || s.node < -1)
			continue;
		if (s.node >= 0)
			set_free(s.node, free_[s.node] + s.gpus);
		free_total_ += s.gpus;
	}
}

void FreeMap::take_free_part(const Placement &p)
{
	for (const NodeShare &s : p) {
		if (s.node >= (int)free_.size() || s.node < -1 || s.gpus <= 0)
			continue;
		int g = std::min(s.gpus, s.node >= 0 ? free_[s.node]
						    : free_total_);
		if (s.node >= 0)
			set_free(s.node, free_[s.node] - g);
		free_total_ -= g;
	}
}

std::optional<Placement> FreeMap::fill(const std::vector<int> &nodes,
				       int gpus) const
{
	Placement p;
	for (int n : nodes) {
		if (gpus == 0)
			break;
		/* A node listed twice (two switches name it) is used once. */
		if (std::any_of(p.begin(), p.end(),
				[n](const NodeShare &s) { return s.node == n; }))
			continue;
		int take = std::min(gpus, free_[n]);
		if (take > 0) {
			p.push_back({n, take});
			gpus -= take;
		}
	}
	if (gpus > 0)
		return std::nullopt;
	return p;
}

/* Fewest nodes: a single node with the tightest fit if one exists (the
 * lowest-index node of the smallest free count that holds the job); else
 * the emptiest nodes first (by free count, then index), so the job spans
 * as few nodes as possible, with the last share on the tightest node that
 * holds the remainder. */
std::optional<Placement> FreeMap::consolidated(int gpus) const
{
	for (int c = gpus; c <= per_node_; c++) {
		int n = next_with(c, 0);
		if (n >= 0)
			return Placement{{n, gpus}};
	}
	Placement p;
	int left = gpus;
	for (int c = per_node_; c > 0; c--) {
		for (int n = next_with(c, 0); n >= 0; n = next_with(c, n + 1)) {
			if (c < left) {
				p.push_back({n, c});
				left -= c;
				continue;
			}
			/* Tightest node for the remainder: every node with
			 * fewer free GPUs is unused, and N comes first among
			 * those with C. */
			for (int t = left; t < c; t++) {
				int m = next_with(t, 0);
				if (m >= 0) {
					n = m;
					break;
				}
			}
			p.push_back({n, left});
			return p;
		}
	}
	return std::nullopt;
}

/* Fewest leaf switches: try each switch alone (consolidated inside it,
 * tightest switch first); else spread over switches by free count. */
std::optional<Placement> FreeMap::switch_aware(int gpus) const
{
	if (cluster_.switches.empty())
		return consolidated(gpus);
	std::vector<int> leaves;
	std::vector<int> sw_free(cluster_.switches.size(), 0);
	for (int s = 0; s < (int)cluster_.switches.size(); s++) {
		if (cluster_.switches[s].level != 0)
			continue;
		leaves.push_back(s);
		for (int n : cluster_.switches[s].nodes)
			sw_free[s] += free_[n];
	}
	std::stable_sort(leaves.begin(), leaves.end(),
			 [&](int a, int b) { return sw_free[a] < sw_free[b]; });
	for (int s : leaves) {
		if (sw_free[s] < gpus)
			continue;
		std::vector<int> nodes = cluster_.switches[s].nodes;
		int best = -1;
		for (int n : nodes)
			if (free_[n] >= gpus &&
			    (best < 0 || free_[n] < free_[best]))
				best = n;
		if (best >= 0)
			return Placement{{best, gpus}};
		std::stable_sort(nodes.begin(), nodes.end(), [&](int a, int b) {
			return free_[a] > free_[b];
		});
		return fill(nodes, gpus);
	}
	std::stable_sort(leaves.begin(), leaves.end(),
			 [&](int a, int b) { return sw_free[a] > sw_free[b]; });
	std::vector<int> nodes;
	std::vector<bool> listed(free_.size(), false);
	for (int s : leaves) {
		std::vector<int> ns = cluster_.switches[s].nodes;
		std::stable_sort(ns.begin(), ns.end(), [&](int a, int b) {
			return free_[a] > free_[b];
		});
		for (int n : ns)
			if (!listed[n]) {
				listed[n] = true;
				nodes.push_back(n);
			}
	}
	/* Nodes under no leaf switch (a partial topology.conf) come last. */
	std::vector<int> rest;
	for (int n = 0; n < (int)free_.size(); n++)
		if (!listed[n])
			rest.push_back(n);
	std::stable_sort(rest.begin(), rest.end(),
			 [&](int a, int b) { return free_[a] > free_[b]; });
	nodes.insert(nodes.end(), rest.begin(), rest.end());
	return fill(nodes, gpus);
}

/* Yarn (Muri's ms_yarn_placement, GPU dimension): narrow jobs take the first
 * node with room; wide jobs take whole free nodes in index order plus one
 * node for the remainder. */
std::optional<Placement> FreeMap::first_fit(int gpus) const
{
	if (gpus <= per_node_) {
		for (int n = 0; n < (int)free_.size(); n++)
			if (free_[n] >= gpus)
				return Placement{{n, gpus}};
		return std::nullopt;
	}
	int whole = gpus / per_node_, rest = gpus % per_node_;
	Placement p;
	std::vector<bool> used(free_.size(), false);
	for (int n = 0; n < (int)free_.size() && whole > 0; n++)
		if (free_[n] == cluster_.nodes[n].gpus &&
		    free_[n] == per_node_) {
			p.push_back({n, per_node_});
			used[n] = true;
			whole--;
		}
	if (whole > 0)
		return std::nullopt;
	if (rest > 0) {
		int n = 0;
		while (n < (int)free_.size() && (used[n] || free_[n] < rest))
			n++;
		if (n == (int)free_.size())
			return std::nullopt;
		p.push_back({n, rest});
	}
	return p;
}

/* Lucid's consolidate placer (MODEL.md §3). */
std::optional<Placement> FreeMap::best_fit(int gpus) const
{
	std::vector<int> avail;
	for (int n = 0; n < (int)free_.size(); n++)
		if (free_[n] > 0)
			avail.push_back(n);
	if (gpus <= per_node_) {
		std::stable_sort(avail.begin(), avail.end(), [&](int a, int b) {
			return free_[a] < free_[b];
		});
		for (int n : avail)
			if (free_[n] >= gpus)
				return Placement{{n, gpus}};
		return std::nullopt;
	}
	std::stable_sort(avail.begin(), avail.end(),
			 [&](int a, int b) { return free_[a] > free_[b]; });
	int parts = gpus / per_node_ + (gpus % per_node_ ? 1 : 0);
	int rest = gpus % per_node_;
	Placement p;
	for (int n : avail) {
		if (free_[n] == per_node_ && (parts > 1 || rest == 0)) {
			p.push_back({n, per_node_});
			if (--parts == 0)
				return p;
		} else if (rest && parts == 1 && free_[n] >= rest) {
			p.push_back({n, rest});
			return p;
		} else {
			return std::nullopt;
		}
	}
	return std::nullopt;
}

/* The Pollux artifact's Tiresias: take min(free, left) from the node with
 * the most free GPUs (the first such node on ties), until done. */
std::optional<Placement> FreeMap::most_free(int gpus) const
{
	std::vector<int> f = free_;
	Placement p;
	while (gpus > 0) {
		int best = -1;
		for (int n = 0; n < (int)f.size(); n++)
			if (f[n] > 0 && (best < 0 || f[n] > f[best]))
				best = n;
		if (best < 0)
			return std::nullopt;
		int take = std::min(f[best], gpus);
		p.push_back({best, take});
		f[best] -= take;
		gpus -= take;
	}
	return p;
}

} /* namespace tidal */
