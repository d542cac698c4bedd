/*
 * shockwave.h - Shockwave (NSDI'23): plan the next R rounds by a Nash
 * social welfare program over the jobs' epoch progress, with
 * finish-time-fairness constraints (shockwave/MODEL.md 4.7).
 *
 *   each round: progress e_j (epochs) --> every 8 rounds, or when a job
 *   arrives or leaves: recalibrate epoch durations from measured
 *   throughput, estimate remaining time (Dirichlet over batch sizes),
 *   momentum-average each job's fair finish time F_j, and solve
 *     max  1/(J R) sum_j pi_j log((e_j + p_j) / E_j)  - k max_j left_j
 *     s.t. p_j ebar_j <= T N_j,  sum_j n_j N_j <= G R,  N_j <= R integer,
 *          T (now + R) + left_j / share <= rhomax F_j   (dropped, and pi
 *          reweighted, if infeasible)
 *   with log as a concave piecewise-linear function over the bases, then
 *   spread each job's N_j rounds over the plan, earliest first.
 *
 * The anchor solves a per-round MILP (s_j,r binaries, SOS2 log) with
 * Gurobi; its per-round variables only matter through N_j = sum_r s_j,r
 * and the per-round capacity, so the plan here solves for N_j (GLPK
 * branch and cut on J integers) and packs rounds itself.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "core/model/model.h"

namespace tidal {

struct ShockwaveConfig {
	int future_rounds = 20;
	double k = 1e-3, lambda = 12, rhomax = 1;
	std::vector<double> bases = {0, 0.2, 0.4, 0.6, 0.8, 1.0};
	double round = 120;
	int gpus = 32;
	double mip_gap = 1e-3, time_limit_s = 15;
	/* Upper bound on the relaxation weight pi_j = rho_j^lambda (or
	 * rho_j^100 for a job with less than a round left).  The anchor
	 * has none: its weights reach 1e30 and more, far past what a MILP
	 * solver resolves next to weights of 1 (Gurobi and GLPK alike),
	 * so what the other jobs get then depends on solver numerics and
	 * the MIP gap, not on the model.  The cap keeps the program
	 * well-scaled; the result is sensitive to it (see
	 * tests/sim/test_gavel.sh). */
	double priority_cap = 1e6;
	/* A solve stopped by time_limit_s with no solution keeps the plan
	 * it had (the live policy), rather than leaving only the
	 * work-conserving fill (the anchor). */
	bool keep_plan_on_limit = false;
};

struct ShockwaveJob {
	JobId id = 0;
	int gpus = 1;
	double submit = 0;
	double dataset = 0;             /* samples per epoch */
	std::vector<int> bs;            /* batch size per epoch (profile) */
	std::vector<double> prof;       /* profiled epoch durations, s */
	/* filled in by Shockwave */
	std::vector<double> dur;        /* calibrated durations */
	int epoch = 0;                  /* epochs done */
	std::map<long, std::pair<double, int>> timeline; /* round -> tput, bs */
	std::vector<std::pair<long, double>> ft; /* (round, finish time) */
};

/* What a live job that ran in the last round tells Shockwave: its
 * throughput (steps/s) and the batch of those steps.  Where its trainer
 * reports through a node agent (Job::measured), the reported steps/s and
 * global batch, which may differ from --train-batch (tidal-train with
 * TIDAL_BATCH); else 1 / iter_time and --train-batch (1 without). */
std::pair<double, int> shockwave_observation(const Job &j);

class Shockwave {
public:
	explicit Shockwave(const ShockwaveConfig &c) : cfg_(c) {}

	void add_job(ShockwaveJob j);
	void remove_job(JobId id);
	bool has_job(JobId id) const;
	/* The GPUs now (a live cluster's change as nodes come and go): a
	 * new count calls for a new plan. */
	void set_gpus(int gpus);
	/* Step 5 of a round: epochs done by the jobs of the last round. */
	void update_progress(const std::map<JobId, int> &epochs);
	void record_throughput(JobId id, long round, double tput, int bs);
	/* The jobs to run this round, in plan order. */
	std::vector<JobId> round_schedule();

	/* Dirichlet estimate of J's time left, seconds (MODEL.md 4.7). */
	double remaining(const ShockwaveJob &j) const;
	/* 0.9 x time-weighted mean of J's finish-time series + 0.1 x its
	 * latest value, weights up to the current round. */
	double momentum(const ShockwaveJob &j) const;
	long round_ptr() const { return round_ptr_; }

	std::vector<double> solve_seconds;
	long infeasible_solves = 0, limit_hits = 0;
	/* The last solve kept the plan before it (keep_plan_on_limit). */
	bool kept_last = false;

private:
	void calibrate(ShockwaveJob &j) const;
	void solve();

	ShockwaveConfig cfg_;
	std::vector<ShockwaveJob> jobs_; /* arrival order */
	long round_ptr_ = 0, updates_ = 0;
	bool resolve_ = true, reestimate_ = true;
	std::map<long, std::vector<JobId>> plan_;
};

} /* namespace tidal */
