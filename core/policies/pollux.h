/*
 * pollux.h - the Pollux policy (OSDI'21, pollux.py PolluxPolicy): every
 * round, re-allocate GPUs to all active jobs to maximise the restart-
 * penalised power mean (p = -1) of their goodput speedups.
 *
 *   jobs (speedup model, max replicas, age, restarts, current nodes)
 *     -> sort by (attained service, arrival); base = current allocation
 *     -> each fitted job's speedup is relative to the fair share
 *        (ceil(GPUs / jobs) replicas on ceil(nodes / GPUs) nodes);
 *        an unfitted job's speedup is r / fair replicas
 *     -> PolluxProblem (pollux_problem.h)
 *     -> optimiser: "hybrid" (default: the local search of
 *        pollux_search.h; a short NSGA-II warm-started from its own last
 *        front and the search's result; the local search again from the
 *        GA's best; the lowest F1 applied), "search" (the local search
 *        alone), "ga" (the artifact's NSGA-II, pollux_ga.h, seeded,
 *        warm-started from its previous front) or "best" (search and the
 *        full GA, the lower F1 applied); Pollux.CompareGA runs the full
 *        GA beside the chosen optimiser, on its own chain and random
 *        stream (the applied allocations do not change), and reports both
 *     -> one node list per job (replicas in node order)
 *
 * The jobs' speedup models come from the caller (the goodput model is fed
 * by the job's own step times), so this is not a registry Policy over a
 * Snapshot: core Jobs carry no goodput model yet.
 *
 * Params: Pollux.Optimizer=hybrid|search|ga|best, Pollux.CompareGA,
 * Pollux.GaGenerations (100), Pollux.GaPopulation (100),
 * Pollux.HybridGenerations (10),
 * Pollux.SearchKicks (10), Pollux.SearchKickJobs (16),
 * Pollux.RelaxCandidates (1000), Pollux.RelaxStarts (2),
 * Pollux.RelaxJobs (64), Pollux.RestartPenalty (30: the seconds a restart
 * costs in the restart factor max(age - P restarts, 0) / (age + P), the
 * artifact's 30 s restart delay).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/profiles/goodput.h"
#include "core/model/model.h"
#include "core/model/params.h"
#include "core/policies/pollux_ga.h"
#include "core/policies/pollux_search.h"

namespace tidal
{

struct PolluxJobState {
	JobId id = 0;
	double submit = 0;
	double attained = 0; /* GPU-seconds */
	double age = 0;	     /* now - submit */
	int restarts = 0;
	/* Never started: its first start restarts nothing, so it is not
	 * penalised (the artifact penalises every change, and allocates
	 * only at intervals, when a new job is up to 60 s old). */
	bool fresh = false;
	int max_replicas = 1;
	/* Fewest replicas the job can run on (an elastic range's floor, a
	 * rigid job's size): fewer score a speedup of 0.  0: any. */
	int min_replicas = 0;
	std::optional<SpeedupFunction> speedup; /* none: not fitted yet */
	std::vector<int> alloc;			/* current node per replica */
};

/* What one round did, for reports and the GA comparison. */
struct PolluxRound {
	int jobs = 0;
	double f1 = 0;		/* applied solution */
	double f1_base = NAN;	/* the current allocation kept */
	double f1_search = NAN; /* the local search's, if run */
	double f1_hybrid = NAN; /* the short GA + polish, if run */
	double f1_ga = NAN;	/* the full GA's best, if run */
	long ga_evaluations = 0;
};

class PolluxPolicy
{
public:
	PolluxPolicy(const Params &params, std::uint64_t seed);

	/* IN: jobs (active; speedup bases are reset here), node_gpus.
	 * RET: the new node list of each job, in the order of JOBS. */
	std::vector<std::vector<int>>
	optimize(std::vector<PolluxJobState> &jobs,
		 const std::vector<int> &node_gpus,
		 PolluxRound *round = nullptr);

private:
	/* One warm-started GA: its random stream and last front (the
	 * artifact's _prev_states) with the jobs of its rows. */
	struct GaChain {
		explicit GaChain(std::uint64_t seed) : rng(seed) {}
		Rng rng;
		std::vector<std::vector<int>> front;
		std::vector<JobId> jobs;
	};
	GaResult run_ga(GaChain &chain, const PolluxProblem &prob,
			const std::vector<JobId> &ids, const GaOptions &opt,
			const std::vector<int> *extra);
	std::vector<int> hybrid(const PolluxProblem &prob,
				const std::vector<JobId> &ids,
				const std::vector<int> &searched,
				PolluxRound &rep);

	enum class Mode { hybrid, search, ga, best } mode_;
	bool compare_;
	double restart_s_ = 30;
	GaOptions ga_opt_, hybrid_opt_;
	SearchOptions search_opt_;
	GaChain chain_;	    /* the applied optimiser's GA */
	GaChain ref_chain_; /* the full GA for Pollux.CompareGA */
};

} /* namespace tidal */
