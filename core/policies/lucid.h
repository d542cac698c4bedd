/*
 * lucid.h - Lucid (ASPLOS'23) as a core policy: every new job is first
 * profiled for a short while on nodes lent to profiling, then scheduled
 * by its estimated size, packed beside a running job when their measured
 * GPU use allows (Lucid's packing rule, core/placement/packing.h).
 *
 *   profiler     a pending job that was never profiled and fits the
 *                profiler nodes (Lucid.ProfilerNodes) runs there first,
 *                Least-GPU-First, the queue stopping at the first job
 *                that does not fit.  After Lucid.ProfileTime (200 s) of
 *                running it is preempted (sched/tidal checkpoints and
 *                requeues it): its GPU utilisation and memory, as
 *                measured meanwhile (Job::gpu_util, gpu_mem_mb), are its
 *                profile, kept across slurmctld restarts (save_state).  A
 *                job shorter than that ends on the profiler.
 *   order        the other pending jobs by priority = estimated duration
 *                (Job::estimate: the time limit live, the trace's
 *                estimate in a replay) x GPUs, smaller first.
 *   sharing      Prescient Adaptive Sharing.  Lucid switches packing on
 *                while its forecast of submissions exceeds 2 jobs per
 *                10 minutes.  Lucid's forecast is a model trained on the
 *                site's history; this one is the observed rate of the
 *                last Lucid.SharingWindow (3000 s, Lucid's 5 bins), with
 *                Lucid.Sharing=always|never to fix it.
 *     on:        each job, in order, first looks for a running job to
 *                pack beside: the first (by start) that runs alone on
 *                shards of as many GPUs, whose GPU memory with the
 *                newcomer's stays below Lucid.GpuMemory, whose sharescore
 *                with the newcomer's is at most 2, and whose priority is
 *                at least half the newcomer's.  Else it starts on free
 *                GPUs; else it waits and later jobs go on (no blocking).
 *     off:       in order on free GPUs; the first that does not fit
 *                stops the queue (head-of-line blocking).
 *   sharescore   0, 1 or 2 from the measured GPU utilisation: below
 *                Lucid.ScoreBounds' first value 0, below its second 1,
 *                else 2.  Lucid's own labels come from an interpretable
 *                model over several counters; the default bounds (25,58)
 *                are the utilisation cuts that agree best with its 66
 *                profiled workloads (53 of them, single_data.csv).  A job
 *                with no measured utilisation never packs.
 *   running      never preempted, except at the end of profiling.
 *
 * Sharing needs Cluster::sharing (gres/shard): a job starts on shards,
 * so that a later one may pack beside it, where it fits one GPU per node.
 *
 * Parameters (prefix Lucid.): ProfilerNodes=<hostlist> (default none: no
 * profiling, and only jobs with a measured utilisation pack),
 * ProfileTime=1..86400 s, GpuMemory=MiB, MaxScore=0..4,
 * PriorityRatio=>0, ScoreBounds=a,b (percent), Sharing=auto|always|never,
 * SharingJobs=jobs per 10 minutes (2), SharingWindow=s (3000),
 * Placement=<scheme> (default best-fit, Lucid's consolidate placer).
 *
 * The lucid preset (sim/presets/lucid*.cc) is the anchor's own model, its
 * profiler cluster, forecast file and quirks included; it packs by the
 * same rule (core/placement/packing.h), and ranks and profiles jobs by
 * lucid_priority and lucid_profile_before, as this policy does.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <array>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/model/policy.h"
#include "core/placement/packing.h"
#include "core/placement/placement.h"

namespace tidal
{

struct LucidOptions {
	std::vector<std::string> profiler_nodes;
	double profile_time = 200;
	PackRules rules;
	std::array<double, 2> score_bounds{ 25, 58 };
	enum class Sharing : std::uint8_t { Auto, Always, Never };
	Sharing sharing = Sharing::Auto;
	double sharing_jobs = 2; /* per 600 s */
	double sharing_window = 3000;
	PlacementScheme placement = PlacementScheme::BestFit;
};

LucidOptions lucid_options(const Params &params);

/* The sharescore (0..2) of a GPU utilisation of UTIL percent. */
int lucid_score(double util, const LucidOptions &o);

/* Lucid's priority of a job of ESTIMATE seconds on GPUS GPUs: its
 * estimated GPU time, smaller first (a job of no GPU counts as one). */
double lucid_priority(double estimate, int gpus);
/* The profiler's order, Least-GPU-First (a stable sort keeps arrival
 * order among equals; the first job that does not fit stops the rest). */
bool lucid_profile_before(const Job &a, const Job &b);

/* What profiling measured of one job. */
struct LucidProfile {
	double util = 0;    /* percent; 0 = nothing measured */
	double mem_mb = 0;  /* per GPU */
	bool done = false;  /* left the profiler (or never needed it) */
	bool fixed = false; /* measured on the profiler: kept as it is, not
			     * overwritten by what it measures packed */
	/* When a snapshot last held the job; NaN: loaded, not seen yet.
	 * A requeued job is out of the snapshots while it completes, so a
	 * profile is forgotten only an hour after its job was last seen. */
	double seen = std::numeric_limits<double>::quiet_NaN();
};

class Lucid : public Policy
{
public:
	explicit Lucid(LucidOptions o) : opt_(std::move(o)) {}
	std::string name() const override { return "lucid"; }
	bool shares_gpus() const override { return true; }
	Plan decide(const Snapshot &snap) override;
	std::vector<std::string> save_state() const override;
	bool load_state(const std::string &line) override;
	std::uint64_t state_serial() const override { return serial_; }

	const LucidOptions &options() const { return opt_; }

private:
	friend class LucidRound;
	LucidOptions opt_;
	std::map<JobId, LucidProfile> profiles_;
	std::map<JobId, Time> submits_; /* seen within the sharing window */
	std::uint64_t serial_ = 0;
	bool told_unknown_ = false; /* ProfilerNodes names a node not there */
};

} /* namespace tidal */
