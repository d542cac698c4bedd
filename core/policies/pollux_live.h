/*
 * pollux_live.h - Pollux (OSDI'21; pollux.h) as a registry policy, for
 * sched/tidal and the native replay: it learns each job's goodput model
 * from what the job's own trainer reports, and co-adapts every job's GPUs
 * and batch size.
 *
 * Every Pollux.Interval seconds (60: the artifact's scheduling interval),
 * and at once when a new job arrives or a node's GPUs change (a job that
 * ends leaves its GPUs to the next interval, as in the artifact; a job
 * briefly gone from the snapshot while Slurm requeues it for a resize is
 * still the same job):
 *
 *   observe   a running job whose trainer reported at its current size
 *             (Job::measured, run_world = alloc, run_batch known): one
 *             PerfSample per (nodes, replicas, local batch) with the step
 *             time step_time, of which sync_time is synchronisation, the
 *             latest kept; and its gradient statistics (grad_sqr,
 *             grad_var).  Observed at every call, not only at intervals.
 *   fit       fit_perf_params over a job's samples when one changed, as
 *             the preset's PolluxJob fits from the artifact's traces
 *   allocate  PolluxPolicy::optimize over the active jobs, in Pollux's
 *             order (attained service, then submission), with the
 *             restart penalty of each job's age and reallocations; max
 *             replicas: the elastic range's MAX (a rigid job's size),
 *             while exploring at most twice the most replicas measured
 *             (the artifact's rule), never below the floor; the floor (an
 *             elastic job's MIN, a rigid job's size) as a speedup of 0
 *             below it
 *   batch     a job with a model and --train-batch B0: the goodput-best
 *             global batch at its allocation, from B0 up to
 *             --train-max-batch, with no gradient accumulation
 *             (tidal-train has none); Decision::batch carries it
 *
 * Between re-allocations every job keeps its target: Keep where it runs
 * on it, Start or Resize towards it, Preempt or Hold when Pollux gave it
 * nothing.  A job without --train-batch, or whose trainer never reported,
 * is what the artifact calls unfitted: its speedup grows linearly with
 * its replicas and its batch is left alone.  In a replay, where no
 * trainer reports, every job is unfitted.
 *
 * The decisions carry Pollux's numbers for tidalctl explain: speedup
 * (goodput against the fair share), efficiency and throughput at the
 * chosen batch, the objective (the power mean, p = -1, of the speedups,
 * restart penalties included) of the allocation chosen and of keeping
 * the current one.  The search starts from the current allocation, so
 * the first is never below the second.
 *
 * Across a slurmctld restart (save_state) each job's samples, gradient
 * statistics and reallocations are kept; the targets are recomputed.
 *
 * Params: Pollux.Interval (60 s) and PolluxPolicy's (pollux.h), among
 * them Pollux.RestartPenalty (30 s: the artifact's restart delay; a resize
 * on a cluster with node agents costs what its ResizeStory shows).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/model/policy.h"
#include "core/policies/pollux.h"
#include "core/profiles/goodput.h"

namespace tidal
{

class PolluxLive : public Policy
{
public:
	explicit PolluxLive(const Params &p);
	std::string name() const override { return "pollux"; }
	Plan decide(const Snapshot &snap) override;
	std::vector<std::string> save_state() const override;
	bool load_state(const std::string &line) override;
	std::uint64_t state_serial() const override { return serial_; }

	/* What the policy knows of one job. */
	struct Model {
		std::vector<PerfSample> samples;
		std::optional<GradParams> grad;
		std::optional<PerfParams> perf; /* fitted on samples */
		bool refit = false;
		int restarts = 0;
		bool ran = false;	 /* seen running */
		double seen = 0;	 /* last in a snapshot */
		std::vector<int> target; /* node per replica; empty = none */
		bool placed = false;	 /* target set by an allocation */
		int batch = 0;		 /* chosen global batch; 0 = none */
		double speedup = 0, efficiency = 0, throughput = 0;
	};
	/* For the unit tests. */
	const Model *model(JobId id) const;
	const PolluxRound &last_round() const { return round_; }

private:
	void observe(const Job &j);
	bool must_allocate(const Snapshot &snap) const;
	void allocate(const Snapshot &snap);
	void decide_job(const Job &j, Model &m, Plan &plan, bool reasons) const;

	PolluxPolicy opt_;
	double interval_;
	double last_ = -1; /* time of the last allocation; < 0 = none */
	/* A model is forgotten when its job has been gone this long. */
	static constexpr double kForget = 600;
	std::vector<int> gpus_;	    /* each node's GPUs then */
	std::map<JobId, Model> m_;
	PolluxRound round_;
	std::uint64_t serial_ = 0;
};

} /* namespace tidal */
