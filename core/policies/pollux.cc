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
    : chain_(seed), ref_chain_(seed)
{
	std::string o = params.get_choice("Pollux.Optimizer", "hybrid",
					  { "hybrid", "search", "ga", "best" });
	mode_ = o == "search" ? Mode::search
		: o == "ga"   ? Mode::ga
		: o == "best" ? Mode::best
			      : Mode::hybrid;
	compare_ = params.get_bool("Pollux.CompareGA", false);
	restart_s_ = params.get_double("Pollux.RestartPenalty", 30, 0, 86400);
	ga_opt_.generations =
		(int)params.get_long("Pollux.GaGenerations", 100, 1, 100000);
	ga_opt_.pop_size =
		(int)params.get_long("Pollux.GaPopulation", 100, 2, 100000);
	hybrid_opt_ = ga_opt_;
	hybrid_opt_.generations =
		(int)params.get_long("Pollux.HybridGenerations", 10, 1, 100000);
	search_opt_.kicks =
		(int)params.get_long("Pollux.SearchKicks", 10, 0, 100000);
	search_opt_.kick_jobs =
		(int)params.get_long("Pollux.SearchKickJobs", 16, 0, 100000);
	search_opt_.relax_k =
		(int)params.get_long("Pollux.RelaxCandidates", 1000, 0, 10000000);
	search_opt_.relax_starts =
		(int)params.get_long("Pollux.RelaxStarts", 2, 0, 100000);
	search_opt_.relax_jobs =
		(int)params.get_long("Pollux.RelaxJobs", 64, 0, 100000);
	search_opt_.seed = seed;
}

/* Run the GA of CHAIN from its previous front, its rows moved to the
 * jobs' new positions (new jobs get empty rows), or from the current
 * allocation alone on the first call; EXTRA, if given, joins the initial
 * population.  The final front becomes the chain's. */
GaResult PolluxPolicy::run_ga(GaChain &chain, const PolluxProblem &prob,
			      const std::vector<JobId> &ids,
			      const GaOptions &opt,
			      const std::vector<int> *extra)
{
	int N = prob.nodes();
	std::vector<std::vector<int>> init;
	std::map<JobId, int> was;
	for (size_t i = 0; i < chain.jobs.size(); i++)
		was[chain.jobs[i]] = (int)i;
	for (const std::vector<int> &s : chain.front) {
		std::vector<int> x(ids.size() * N, 0);
		for (size_t j = 0; j < ids.size(); j++) {
			auto it = was.find(ids[j]);
			if (it == was.end())
				continue;
			std::copy(s.begin() + (size_t)it->second * N,
				  s.begin() + (size_t)(it->second + 1) * N,
				  x.begin() + j * N);
		}
		init.push_back(std::move(x));
	}
	if (init.empty())
		init.push_back(prob.base());
	if (extra)
		init.push_back(*extra);
	GaResult ga = pollux_nsga2(prob, std::move(init), chain.rng, opt);
	chain.front = ga.front;
	chain.jobs = ids;
	return ga;
}

/* The hybrid's second half: a short GA that also starts from SEARCHED
 * (so its best is never worse), then the local search from the GA's
 * best, which moves it to a local optimum of the search's moves. */
std::vector<int> PolluxPolicy::hybrid(const PolluxProblem &prob,
				      const std::vector<JobId> &ids,
				      const std::vector<int> &searched,
				      PolluxRound &rep)
{
	GaResult ga = run_ga(chain_, prob, ids, hybrid_opt_, &searched);
	rep.ga_evaluations += ga.evaluations;
	std::vector<int> x = pollux_polish(prob, ga.front[ga.best]);
	double f2;
	prob.evaluate(x.data(), &rep.f1_hybrid, &f2);
	return x;
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
		ji.restart_factor =
			s.fresh ? 1.0
				: std::max(s.age - restart_s_ * s.restarts,
					   0.0) /
					  (s.age + restart_s_);
		if (s.speedup) {
			s.speedup->set_base(fair_nodes, fair_replicas);
			SpeedupFunction *f = &*s.speedup;
			ji.speedup = [f](int n, int r) { return (*f)(n, r); };
		} else {
			double fr = fair_replicas;
			ji.speedup = [fr](int, int r) { return r / fr; };
		}
		if (s.min_replicas > 1) {
			int lo = s.min_replicas;
			ji.speedup = [lo, f = std::move(ji.speedup)](int n,
								     int r) {
				return r < lo ? 0.0 : f(n, r);
			};
		}
		in.push_back(std::move(ji));
		for (int n : s.alloc)
			base[(size_t)k * N + n]++;
	}
	PolluxProblem prob(std::move(in), node_gpus, base);
	PolluxRound rep;
	rep.jobs = J;
	std::vector<int> best;
	double f2;
	/* Keeping the allocation is a choice only where it still fits: not
	 * for a job now over its cap (limits lowered it) or a node holding
	 * more than it has now.  Then there is no objective_keep, rather
	 * than one no allocation can reach. */
	if (prob.feasible(prob.base().data()))
		prob.evaluate(prob.base().data(), &rep.f1_base, &f2);
	if (mode_ != Mode::ga) {
		best = pollux_search(prob, search_opt_);
		prob.evaluate(best.data(), &rep.f1_search, &f2);
	}
	if (mode_ == Mode::hybrid) {
		std::vector<int> h = hybrid(prob, ids, best, rep);
		if (rep.f1_hybrid < rep.f1_search)
			best = std::move(h);
	}
	bool full_ga = mode_ == Mode::ga || mode_ == Mode::best;
	if (full_ga || compare_) {
		GaResult ga = run_ga(full_ga ? chain_ : ref_chain_, prob, ids,
				     ga_opt_, nullptr);
		rep.f1_ga = ga.f1[ga.best];
		rep.ga_evaluations += ga.evaluations;
		if (mode_ == Mode::ga ||
		    (mode_ == Mode::best && rep.f1_ga < rep.f1_search))
			best = ga.front[ga.best];
	}
	if (!prob.feasible(best.data()))
		throw std::logic_error("pollux: the optimiser returned an "
				       "allocation that breaks a constraint");
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
