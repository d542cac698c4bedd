/*
 * placement.cc - placement schemes over a FreeMap.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/placement.h"

#include <algorithm>
#include <numeric>

#include "core/params.h"

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
}

std::optional<Placement> FreeMap::place(int gpus, PlacementScheme scheme,
					PlaceMode mode)
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
	if (p && mode == PlaceMode::Commit)
		take(*p);
	return p;
}

/* A share names a node of this map (or -1 under the count scheme) and a
 * non-negative count.  The same node may appear in several shares: their
 * sum must fit (k^2 over a placement's few shares). */
bool FreeMap::take(const Placement &p, PlaceMode mode)
{
	long sum = 0;
	for (const NodeShare &s : p) {
		if (s.gpus < 0 || s.node < -1 || s.node >= (int)free_.size())
			return false;
		sum += s.gpus;
		if (s.node < 0)
			continue;
		long on_node = 0;
		for (const NodeShare &o : p)
			if (o.node == s.node)
				on_node += o.gpus;
		if (on_node > free_[s.node])
			return false;
	}
	if (sum > free_total_)
		return false;
	if (mode == PlaceMode::Test)
		return true;
	for (const NodeShare &s : p)
		if (s.node >= 0)
			free_[s.node] -= s.gpus;
	free_total_ -= (int)sum;
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
			free_[s.node] += s.gpus;
		free_total_ += s.gpus;
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

/* Fewest nodes: a single node with the tightest fit if one exists; else the
 * emptiest nodes first, so the job spans as few nodes as possible, with the
 * last share on the tightest node that holds the remainder. */
std::optional<Placement> FreeMap::consolidated(int gpus) const
{
	int best = -1;
	for (int n = 0; n < (int)free_.size(); n++)
		if (free_[n] >= gpus && (best < 0 || free_[n] < free_[best]))
			best = n;
	if (best >= 0)
		return Placement{{best, gpus}};

	std::vector<int> order(free_.size());
	std::iota(order.begin(), order.end(), 0);
	std::stable_sort(order.begin(), order.end(),
			 [&](int a, int b) { return free_[a] > free_[b]; });
	Placement p;
	int left = gpus;
	std::vector<bool> used(free_.size(), false);
	for (int n : order) {
		if (left == 0 || free_[n] == 0)
			break;
		if (free_[n] >= left) {
			/* Tightest node for the remainder. */
			int tight = n;
			for (int m : order)
				if (!used[m] && free_[m] >= left &&
				    free_[m] < free_[tight])
					tight = m;
			p.push_back({tight, left});
			left = 0;
			break;
		}
		p.push_back({n, free_[n]});
		used[n] = true;
		left -= free_[n];
	}
	if (left > 0)
		return std::nullopt;
	return p;
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
