/*
 * pollux.cc - the Pollux policy: problem setup, optimiser choice, GA warm
 * start and the result as node lists.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/pollux.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

#include "core/policies/pollux_search.h"

namespace tidal
{

PolluxPolicy::PolluxPolicy(const Params &params, std::uint64_t seed)
    : rng_(seed)
{
	std::string o = params.get_choice("Pollux.Optimizer", "search",
					  { "search", "ga", "best" });
	use_ga_ = o == "ga";
	best_of_ = o == "best";
	compare_ = best_of_ || params.get_bool("Pollux.CompareGA", false);
	ga_opt_.generations =
		(int)params.get_long("Pollux.GaGenerations", 100, 1, 100000);
	ga_opt_.pop_size =
		(int)params.get_long("Pollux.GaPopulation", 100, 2, 100000);
	search_opt_.kicks =
		(int)params.get_long("Pollux.SearchKicks", 10, 0, 100000);
	search_opt_.kick_jobs =
		(int)params.get_long("Pollux.SearchKickJobs", 16, 0, 100000);
	search_opt_.seed = seed;
}

/* The previous front, its rows moved to the jobs' new positions (new jobs
 * get empty rows); the current allocation alone on the first call. */
std::vector<std::vector<int>>
PolluxPolicy::ga_init(const std::vector<JobId> &order,
		      const std::vector<int> &base, int nodes) const
{
	if (prev_front_.empty())
		return { base };
	std::map<JobId, int> was;
	for (size_t i = 0; i < prev_jobs_.size(); i++)
		was[prev_jobs_[i]] = (int)i;
	std::vector<std::vector<int>> out;
	for (const std::vector<int> &s : prev_front_) {
		std::vector<int> x(order.size() * nodes, 0);
		for (size_t j = 0; j < order.size(); j++) {
			auto it = was.find(order[j]);
			if (it == was.end())
				continue;
			std::copy(s.begin() + (size_t)it->second * nodes,
				  s.begin() + (size_t)(it->second + 1) * nodes,
				  x.begin() + j * nodes);
		}
		out.push_back(std::move(x));
	}
	return out;
}

std::vector<std::vector<int>>
PolluxPolicy::optimize(std::vector<PolluxJobState> &jobs,
		       const std::vector<int> &node_gpus, PolluxRound *round)
{
	int N = (int)node_gpus.size(), J = (int)jobs.size();
	int total = std::accumulate(node_gpus.begin(), node_gpus.end(), 0);
	std::vector<int> order(J);
	std::iota(order.begin(), order.end(), 0);
	std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
		if (jobs[a].attained != jobs[b].attained)
			return jobs[a].attained < jobs[b].attained;
		return jobs[a].submit < jobs[b].submit;
	});
	int fair_replicas = J ? (total + J - 1) / J : 1;
	int fair_nodes = (int)std::ceil((double)N / total);
	std::vector<PolluxJobInput> in;
	std::vector<int> base((size_t)J * N, 0);
	std::vector<JobId> ids;
	for (int k = 0; k < J; k++) {
		PolluxJobState &s = jobs[order[k]];
		ids.push_back(s.id);
		PolluxJobInput ji;
		ji.max_replicas = s.max_replicas;
		ji.restart_factor = std::max(s.age - 30.0 * s.restarts, 0.0) /
				    (s.age + 30.0);
		if (s.speedup) {
			s.speedup->set_base(fair_nodes, fair_replicas);
			SpeedupFunction *f = &*s.speedup;
			ji.speedup = [f](int n, int r) { return (*f)(n, r); };
		} else {
			double fr = fair_replicas;
			ji.speedup = [fr](int, int r) { return r / fr; };
		}
		in.push_back(std::move(ji));
		for (int n : s.alloc)
			base[(size_t)k * N + n]++;
	}
	PolluxProblem prob(std::move(in), node_gpus, base);
	PolluxRound rep;
	rep.jobs = J;
	std::vector<int> best;
	if (!use_ga_ || compare_) {
		best = pollux_search(prob, search_opt_);
		double f2;
		prob.evaluate(best.data(), &rep.f1_search, &f2);
	}
	if (use_ga_ || compare_) {
		GaResult ga = pollux_nsga2(prob, ga_init(ids, base, N), rng_,
					   ga_opt_);
		prev_front_ = ga.front;
		prev_jobs_ = ids;
		rep.f1_ga = ga.f1[ga.best];
		rep.ga_evaluations = ga.evaluations;
		if (use_ga_ || (best_of_ && rep.f1_ga < rep.f1_search))
			best = ga.front[ga.best];
	}
	if (!prob.feasible(best.data()))
		throw std::logic_error("pollux: the optimiser returned an "
				       "allocation that breaks a constraint");
	double f2;
	prob.evaluate(best.data(), &rep.f1, &f2);
	if (round)
		*round = rep;
	std::vector<std::vector<int>> out(J);
	for (int k = 0; k < J; k++)
		for (int n = 0; n < N; n++)
			out[order[k]].insert(out[order[k]].end(),
					     best[(size_t)k * N + n], n);
	return out;
}

} /* namespace tidal */
