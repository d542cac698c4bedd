/*
 * pollux_relax.cc - the GPU-count relaxation's shape vectors, cheapest
 * first (pollux_relax.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/pollux_relax.h"

#include <algorithm>
#include <memory>

namespace tidal
{

namespace
{

struct Option {
	double term;
	int gpus;
	PolluxShape shape;
};

std::vector<Option> options(const PolluxProblem &p, int j, int total)
{
	int N = p.nodes(), maxr = p.max_replicas(j), maxcap = 0;
	for (int n = 0; n < N; n++)
		maxcap = std::max(maxcap, p.cap(n));
	const int *base = p.base().data() + (size_t)j * N;
	int bnodes = 0, breps = 0;
	for (int n = 0; n < N; n++)
		if (base[n]) {
			bnodes++;
			breps += base[n];
		}
	auto term = [&](int nodes, int r, bool kept) {
		return 1.0 / (p.scaled(j, nodes, r, kept) + 1e-3);
	};
	std::vector<Option> o;
	o.push_back({ term(0, 0, bnodes == 0), 0, { bnodes == 0, 0, false } });
	if (breps > 0 && breps <= maxr)
		o.push_back({ term(bnodes, breps, true),
			      breps,
			      { true, breps, bnodes > 1 } });
	for (int r = 1; r <= std::min(maxr, maxcap); r++)
		o.push_back({ term(1, r, false), r, { false, r, false } });
	for (int r = 2; r <= std::min(maxr, total); r++)
		o.push_back({ term(2, r, false), r, { false, r, true } });
	return o;
}

/* The relaxation as a layered graph: node (j, g) is "jobs 0..j use g
 * GPUs", an edge from (j - 1, g - gpus) to (j, g) is one of job j's
 * options, and a sink joins every (J - 1, g).  Its paths from the source
 * (-1, 0) to the sink, cheapest first, are the relaxation's solutions in
 * order; Jimenez and Marzal's recursive enumeration finds the next one on
 * demand, touching only the nodes on the previous path. */
struct Enumerator {
	struct Edge {
		int from; /* node index, -1 for the source */
		int opt;  /* job's option, -1 for a sink edge */
		double term;
	};
	struct Path {
		double cost;
		int edge; /* into the node's edges */
		int k;	  /* which path of the edge's from-node */
	};
	struct Node {
		bool ready = false;
		std::vector<Edge> edges;
		std::vector<Path> paths, heap;
	};
	const std::vector<std::vector<Option>> &opts;
	int J, G;
	std::vector<Node> nodes; /* (j, g) at j * (G + 1) + g; the sink last */

	Enumerator(const std::vector<std::vector<Option>> &o, int total)
	    : opts(o), J((int)o.size()), G(total),
	      nodes((size_t)J * (total + 1) + 1)
	{
	}
	int sink() const { return (int)nodes.size() - 1; }
	static bool worse(const Path &a, const Path &b)
	{
		if (a.cost != b.cost)
			return a.cost > b.cost;
		if (a.edge != b.edge)
			return a.edge > b.edge;
		return a.k > b.k;
	}
	/* Cost of the K-th cheapest path to node V (the source is -1), or
	 * false if there are fewer.  NODES never grows, so a reference to a
	 * node stays valid across the recursion. */
	bool cost(int v, int k, double *c)
	{
		if (v < 0) {
			*c = 0;
			return k == 0;
		}
		Node &n = nodes[v];
		if (!n.ready)
			init(v);
		while ((int)n.paths.size() <= k) {
			if (!n.paths.empty()) { /* the last one's successor */
				Path last = n.paths.back();
				const Edge &e = n.edges[last.edge];
				double pc;
				if (cost(e.from, last.k + 1, &pc)) {
					n.heap.push_back({ pc + e.term, last.edge,
							   last.k + 1 });
					std::push_heap(n.heap.begin(), n.heap.end(),
						       worse);
				}
			}
			if (n.heap.empty())
				return false;
			std::pop_heap(n.heap.begin(), n.heap.end(), worse);
			n.paths.push_back(n.heap.back());
			n.heap.pop_back();
		}
		*c = n.paths[k].cost;
		return true;
	}
	void init(int v)
	{
		nodes[v].ready = true;
		std::vector<Edge> edges;
		if (v == sink()) {
			for (int g = 0; g <= G; g++)
				edges.push_back({ (J - 1) * (G + 1) + g, -1, 0.0 });
		} else {
			int j = v / (G + 1), g = v % (G + 1);
			for (int o = 0; o < (int)opts[j].size(); o++) {
				int from = g - opts[j][o].gpus;
				if (from < 0 || (j == 0 && from != 0))
					continue;
				edges.push_back({ j ? (j - 1) * (G + 1) + from : -1,
						  o, opts[j][o].term });
			}
		}
		std::vector<Path> heap;
		for (int e = 0; e < (int)edges.size(); e++) {
			double pc;
			if (cost(edges[e].from, 0, &pc))
				heap.push_back({ pc + edges[e].term, e, 0 });
		}
		std::make_heap(heap.begin(), heap.end(), worse);
		nodes[v].edges = std::move(edges);
		nodes[v].heap = std::move(heap);
	}
	/* The shapes of the sink's K-th path (which must exist). */
	std::vector<PolluxShape> shapes(int k)
	{
		std::vector<PolluxShape> out(J);
		int v = sink();
		while (v >= 0) {
			const Path &p = nodes[v].paths[k];
			const Edge &e = nodes[v].edges[p.edge];
			if (e.opt >= 0)
				out[v / (G + 1)] = opts[v / (G + 1)][e.opt].shape;
			v = e.from;
			k = p.k;
		}
		return out;
	}
};

} /* namespace */

struct RelaxEnum::Impl {
	std::vector<std::vector<Option>> opts;
	std::unique_ptr<Enumerator> en;
};

RelaxEnum::RelaxEnum(const PolluxProblem &p) : impl_(new Impl)
{
	int J = p.jobs(), N = p.nodes(), total = 0;
	for (int n = 0; n < N; n++)
		total += p.cap(n);
	impl_->opts.resize(J);
	for (int j = 0; j < J; j++)
		impl_->opts[j] = options(p, j, total);
	if (J)
		impl_->en = std::make_unique<Enumerator>(impl_->opts, total);
}

RelaxEnum::~RelaxEnum() = default;

bool RelaxEnum::next(RelaxedShapes *out)
{
	Enumerator *en = impl_->en.get();
	if (!en) { /* no jobs: one empty solution */
		if (k_++)
			return false;
		*out = { 0.0, {} };
		return true;
	}
	double c;
	if (!en->cost(en->sink(), k_, &c))
		return false;
	*out = { c, en->shapes(k_) };
	k_++;
	return true;
}

long pollux_relax_edges(const PolluxProblem &p)
{
	int N = p.nodes(), total = 0, maxcap = 0;
	for (int n = 0; n < N; n++) {
		total += p.cap(n);
		maxcap = std::max(maxcap, p.cap(n));
	}
	long options = 0;
	for (int j = 0; j < p.jobs(); j++) {
		int maxr = p.max_replicas(j);
		options += 2 + std::min(maxr, maxcap) +
			   std::max(0, std::min(maxr, total) - 1);
	}
	return options * (total + 1) + total + 1;
}

std::vector<RelaxedShapes> pollux_relax(const PolluxProblem &p, int k)
{
	RelaxEnum e(p);
	std::vector<RelaxedShapes> out;
	RelaxedShapes r;
	while ((int)out.size() < k && e.next(&r))
		out.push_back(std::move(r));
	return out;
}

} /* namespace tidal */
