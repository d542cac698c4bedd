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
 *     -> optimiser: "search" (pollux_search.h, default), "ga" (the
 *        artifact's NSGA-II, pollux_ga.h, seeded, warm-started from its
 *        previous front) or "best" (both, the lower F1 applied: never
 *        worse than the GA, at the GA's cost); Pollux.CompareGA runs
 *        both and reports both
 *     -> one node list per job (replicas in node order)
 *
 * The jobs' speedup models come from the caller (the goodput model is fed
 * by the job's own step times), so this is not a registry Policy over a
 * Snapshot: core Jobs carry no goodput model yet.
 *
 * Params: Pollux.Optimizer=search|ga|best, Pollux.CompareGA=yes|no,
 * Pollux.GaGenerations (100), Pollux.GaPopulation (100),
 * Pollux.SearchKicks (10), Pollux.SearchKickJobs (16).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/goodput.h"
#include "core/model.h"
#include "core/params.h"
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
	int max_replicas = 1;
	std::optional<SpeedupFunction> speedup; /* none: not fitted yet */
	std::vector<int> alloc;			/* current node per replica */
};

/* What one round did, for reports and the GA comparison. */
struct PolluxRound {
	int jobs = 0;
	double f1 = 0;		/* applied solution */
	double f1_search = NAN; /* the local search's, if run */
	double f1_ga = NAN;	/* the GA's best, if run */
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
	std::vector<std::vector<int>> ga_init(const std::vector<JobId> &order,
					      const std::vector<int> &base,
					      int nodes) const;

	bool use_ga_, best_of_, compare_;
	GaOptions ga_opt_;
	SearchOptions search_opt_;
	Rng rng_;
	/* The GA's last front, for its warm start (artifact: _prev_states). */
	std::vector<std::vector<int>> prev_front_;
	std::vector<JobId> prev_jobs_;
};

} /* namespace tidal */
