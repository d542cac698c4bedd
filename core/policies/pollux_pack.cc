/*
 * pollux_pack.cc - lay out Pollux jobs from their shapes (pollux_pack.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/pollux_pack.h"

#include <algorithm>
#include <numeric>

namespace tidal
{

namespace
{

struct Packer {
	const PolluxProblem &p;
	const std::vector<PolluxShape> &shapes;
	int J, N;
	std::vector<int> S, freec;
	std::vector<char> owned; /* held by a distributed job */

	/* Kept rows first; false if they collide. */
	bool place_kept()
	{
		S.assign((size_t)J * N, 0);
		freec.resize(N);
		for (int n = 0; n < N; n++)
			freec[n] = p.cap(n);
		owned.assign(N, 0);
		for (int j = 0; j < J; j++) {
			if (!shapes[j].kept)
				continue;
			const int *b = p.base().data() + (size_t)j * N;
			int k = 0;
			for (int n = 0; n < N; n++)
				k += b[n] > 0;
			for (int n = 0; n < N; n++) {
				S[(size_t)j * N + n] = b[n];
				freec[n] -= b[n];
				if (freec[n] < 0)
					return false;
				if (k > 1 && b[n] > 0) {
					if (owned[n])
						return false;
					owned[n] = 1;
				}
			}
		}
		return true;
	}
	/* Best fit (least left over, then a node no distributed job can
	 * use anyway). */
	bool place_single(int j, int r)
	{
		int at = -1;
		for (int n = 0; n < N; n++) {
			if (freec[n] < r)
				continue;
			if (at < 0 || freec[n] < freec[at] ||
			    (freec[n] == freec[at] && owned[n] && !owned[at]))
				at = n;
		}
		if (at < 0)
			return false;
		S[(size_t)j * N + at] = r;
		freec[at] -= r;
		return true;
	}
	/* At least two nodes, at most 16.  Greedy: most free first.
	 * Otherwise whole free nodes while the rest needs a node's worth,
	 * then the rest on the node it fits best, so what is left over
	 * stays in one piece for the jobs still to come. */
	bool place_multi(int j, int r, bool greedy)
	{
		std::vector<int> nodes;
		for (int n = 0; n < N; n++)
			if (!owned[n] && freec[n] > 0)
				nodes.push_back(n);
		std::stable_sort(nodes.begin(), nodes.end(), [&](int a, int b) {
			return freec[a] > freec[b];
		});
		int left = r, used = 0;
		auto put = [&](int n, int take) {
			S[(size_t)j * N + n] = take;
			freec[n] -= take;
			owned[n] = 1;
			left -= take;
			used++;
		};
		size_t i = 0;
		if (!greedy) {
			for (; i < nodes.size() && used < 15 &&
			       freec[nodes[i]] <= left - (used ? 0 : 1);
			     i++)
				put(nodes[i], freec[nodes[i]]);
			int fit = -1;
			for (size_t k = i; k < nodes.size() && left > 0; k++)
				if (freec[nodes[k]] >= left &&
				    (fit < 0 || freec[nodes[k]] < freec[fit]))
					fit = nodes[k];
			if (fit >= 0 && used >= 1) {
				put(fit, left);
				return true;
			}
		}
		for (; i < nodes.size() && left > 0 && used < 16; i++) {
			int n = nodes[i];
			if (S[(size_t)j * N + n])
				continue;
			/* leave one replica for a second node */
			put(n, std::min(freec[n], used ? left : left - 1));
		}
		return left == 0 && used >= 2;
	}
	bool pack(bool multi_first, bool greedy)
	{
		if (!place_kept())
			return false;
		std::vector<int> order(J);
		std::iota(order.begin(), order.end(), 0);
		std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
			return shapes[a].replicas > shapes[b].replicas;
		});
		for (int pass = 0; pass < 2; pass++) {
			bool multi = (pass == 0) == multi_first;
			for (int j : order) {
				const PolluxShape &s = shapes[j];
				if (s.kept || s.replicas == 0 || s.multi != multi)
					continue;
				if (s.replicas > p.max_replicas(j))
					return false;
				if (!(multi ? place_multi(j, s.replicas, greedy)
					    : place_single(j, s.replicas)))
					return false;
			}
		}
		return true;
	}
};

} /* namespace */

bool pollux_pack(const PolluxProblem &problem,
		 const std::vector<PolluxShape> &shapes,
		 std::vector<int> &state)
{
	Packer pk{ problem, shapes, problem.jobs(), problem.nodes(), {}, {},
		   {} };
	for (bool greedy : { true, false })
		for (bool multi_first : { false, true })
			if (pk.pack(multi_first, greedy) &&
			    problem.feasible(pk.S.data())) {
				state = std::move(pk.S);
				return true;
			}
	return false;
}

} /* namespace tidal */
