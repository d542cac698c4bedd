/*
 * matching.h - maximum-weight matching on a general graph.
 *
 * Muri groups jobs by repeatedly pairing the packings whose interleaving
 * uses resources best: a maximum-weight (not maximum-cardinality) matching
 * on a general graph.  Two matchers:
 *
 *   Lemon   LEMON's MaxWeightedMatching (the default).  LEMON 1.3 compiles
 *           only as C++17, so it lives alone in matching.cc, built with
 *           $(LEMON_CXXFLAGS); this header stays C++17-clean.
 *   Anchor  the O(n^3) weighted blossom of the Muri simulator (matching.py,
 *           a "UOJ #81"-style template), written from its description:
 *           labels start at the largest weight, vertices are scanned in
 *           ascending order, and weights are compared with the anchor's
 *           tolerance (rel 1e-5).  Among matchings of equal weight it picks
 *           the one the anchor picks, which a library does not promise.
 *
 * Both return MATE: mate[v] is v's partner, or -1 if v is unmatched.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <string>
#include <vector>

namespace tidal {

struct WeightedEdge {
	int u = 0, v = 0;
	double w = 0;
};

enum class Matcher : unsigned char { Lemon, Anchor };

/* Parse "lemon" / "anchor"; false if NAME is neither. */
bool matcher_from_name(const std::string &name, Matcher *out);

/* Maximum-weight matching of the N vertices 0..N-1 over EDGES (u != v,
 * w > 0), each pair listed once.  The Anchor matcher also takes a list
 * with both directions of every pair (u > v entries present), keeping each
 * direction's own weight as the anchor does; LEMON needs one per pair. */
std::vector<int> max_weight_matching(int n,
				     const std::vector<WeightedEdge> &edges,
				     Matcher matcher = Matcher::Lemon);

std::vector<int> lemon_matching(int n, const std::vector<WeightedEdge> &edges);
std::vector<int> anchor_matching(int n, const std::vector<WeightedEdge> &edges);

/* Total weight of MATE over EDGES. */
double matching_weight(const std::vector<int> &mate,
		       const std::vector<WeightedEdge> &edges);

} /* namespace tidal */
