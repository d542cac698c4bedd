/*
 * pollux_policies.cc - Pollux and Optimus+Oracle as the Pollux preset
 * runs them.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "sim/presets/pollux_policies.h"

#include <algorithm>
#include <cmath>

#include "core/placement/placement.h"

namespace tidal::sim
{

std::vector<NodeList>
pollux_decide(PolluxPolicy &policy,
	      const std::vector<const PolluxJob *> &active,
	      const std::vector<NodeList> &current, const Cluster &cluster,
	      double now, PolluxRound *round)
{
	std::vector<PolluxJobState> in;
	for (size_t k = 0; k < active.size(); k++) {
		const PolluxJob &j = *active[k];
		const PolluxApp &a = *j.app;
		PolluxJobState s;
		s.id = (JobId)k;
		s.submit = j.submit;
		s.attained = j.attained;
		s.age = now - j.submit;
		s.restarts = std::max(0, j.restarts);
		s.max_replicas =
			std::min({ std::max(2 * j.max_profiled_replicas(), 1),
				   64, a.max_batch_size / a.min_local_bsz });
		if (a.name == "ncf")
			s.max_replicas = 1;
		s.speedup = j.speedup_fn();
		s.alloc = current[k];
		in.push_back(std::move(s));
	}
	std::vector<int> gpus;
	for (const Node &n : cluster.nodes)
		gpus.push_back(n.gpus);
	return policy.optimize(in, gpus, round);
}

namespace
{

int ceil_eps(double v)
{
	return (int)std::ceil(v - 1e-8);
}

/* Optimus's predicted time per iteration at R replicas on blocks of
 * GPUS_PER_NODE, from the application's true throughput. */
double iteration_time(const PolluxJob &j, int r, int gpus_per_node)
{
	const PolluxApp &a = *j.app;
	std::vector<int> placement;
	for (int left = r; left > 0; left -= gpus_per_node)
		placement.push_back(std::min(left, gpus_per_node));
	int local = ceil_eps((double)j.target_batch / r);
	int accum = ceil_eps((double)local / a.max_local_bsz) - 1;
	if (r == 1)
		accum = std::max(1, accum);
	int atomic = ceil_eps((double)local / (accum + 1));
	atomic = std::min(atomic,
			  (int)((double)a.max_batch_size / (r * (accum + 1))));
	StepTime t = a.throughput(placement, atomic);
	return t.step + (t.step - t.sync) * accum;
}

double remaining_iterations(const PolluxJob &j)
{
	const PolluxApp &a = *j.app;
	int last = a.completion_epoch();
	if (j.epoch >= last)
		return 1;
	return a.iteration(j.target_batch, last) -
	       a.iteration(j.target_batch, j.epoch);
}

} /* namespace */

std::vector<NodeList>
optimus_decide(const std::vector<const PolluxJob *> &active,
	       const std::vector<NodeList> &current, const Cluster &cluster)
{
	size_t J = active.size();
	int left = cluster.total_gpus(), per_node = cluster.max_gpus_per_node();
	std::vector<int> reps(J, 0), maxr(J);
	std::vector<double> rem(J), gain(J, 0.0);
	auto gain_of = [&](size_t k) {
		if (reps[k] + 1 > maxr[k] || left == 0 || reps[k] == 0)
			return 0.0;
		const PolluxJob &j = *active[k];
		return (iteration_time(j, reps[k], per_node) -
			iteration_time(j, reps[k] + 1, per_node)) *
		       rem[k];
	};
	for (size_t k = 0; k < J; k++) {
		const PolluxJob &j = *active[k];
		maxr[k] =
			j.app->name == "ncf"
				? 1
				: (int)(j.target_batch / j.app->min_local_bsz);
		rem[k] = remaining_iterations(j);
		if (left > 0) {
			reps[k] = 1;
			left--;
		}
	}
	for (size_t k = 0; k < J; k++)
		gain[k] = gain_of(k);
	while (left > 0) {
		size_t best = 0;
		for (size_t k = 1; k < J; k++)
			if (gain[k] > gain[best])
				best = k;
		if (J == 0 || gain[best] <= 0)
			break;
		reps[best]++;
		left--;
		gain[best] = gain_of(best);
	}
	/* placement: unchanged sizes keep their nodes */
	FreeMap free(cluster);
	std::vector<NodeList> out(J);
	std::vector<size_t> todo;
	for (size_t k = 0; k < J; k++) {
		if (reps[k] > 0 && (int)current[k].size() == reps[k]) {
			out[k] = current[k];
			Placement p;
			for (int n : current[k])
				p.push_back({ n, 1 });
			free.take(p);
		} else if (reps[k] > 0) {
			todo.push_back(k);
		}
	}
	std::stable_sort(todo.begin(), todo.end(),
			 [&](size_t a, size_t b) { return reps[a] < reps[b]; });
	for (size_t k : todo) {
		auto p = free.place(reps[k], PlacementScheme::MostFree);
		if (!p)
			continue;
		for (const NodeShare &s : *p)
			out[k].insert(out[k].end(), s.gpus, s.node);
	}
	return out;
}

} /* namespace tidal::sim */
