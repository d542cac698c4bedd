/*
 * matching.cc - maximum-weight general matching through LEMON
 * (matching.h).  The only translation unit that includes LEMON: it is
 * compiled as C++17 (Makefile: $(LEMON_CXXFLAGS)).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/solvers/matching.h"

#include <lemon/list_graph.h>
#include <lemon/matching.h>

namespace tidal {

bool matcher_from_name(const std::string &name, Matcher *out)
{
	std::string s;
	for (char c : name)
		s += (char)std::tolower((unsigned char)c);
	if (s == "lemon")
		*out = Matcher::Lemon;
	else if (s == "anchor")
		*out = Matcher::Anchor;
	else
		return false;
	return true;
}

std::vector<int> lemon_matching(int n, const std::vector<WeightedEdge> &edges)
{
	lemon::ListGraph g;
	std::vector<lemon::ListGraph::Node> nodes;
	nodes.reserve(n);
	for (int i = 0; i < n; i++)
		nodes.push_back(g.addNode());
	lemon::ListGraph::EdgeMap<double> weight(g);
	for (const WeightedEdge &e : edges)
		weight[g.addEdge(nodes[e.u], nodes[e.v])] = e.w;
	lemon::MaxWeightedMatching<lemon::ListGraph,
				   lemon::ListGraph::EdgeMap<double>>
		mwm(g, weight);
	mwm.run();
	std::vector<int> mate(n, -1);
	for (int i = 0; i < n; i++) {
		lemon::ListGraph::Node m = mwm.mate(nodes[i]);
		if (m != lemon::INVALID)
			mate[i] = g.id(m);
	}
	return mate;
}

std::vector<int> max_weight_matching(int n,
				     const std::vector<WeightedEdge> &edges,
				     Matcher matcher)
{
	if (matcher == Matcher::Anchor)
		return anchor_matching(n, edges);
	return lemon_matching(n, edges);
}

double matching_weight(const std::vector<int> &mate,
		       const std::vector<WeightedEdge> &edges)
{
	double w = 0;
	for (const WeightedEdge &e : edges)
		if (mate[e.u] == e.v)
			w += e.w;
	return w;
}

} /* namespace tidal */
