/*
 * antman.h - AntMan (OSDI'20) as a core policy: resource-guaranteed jobs
 * hold GPUs of their own, and opportunistic jobs (--best-effort, or a
 * trace's priority class 1) run on GPUs that are under-used, leaving them
 * (checkpointed) when a guaranteed job needs them.
 *
 *   order          guaranteed jobs first, then opportunistic ones; each
 *                  by submit time (FIFO), as the Muri simulator's AntMan.
 *   guaranteed     never preempted.  A pending job starts on GPUs that no
 *                  job holds (an elastic one on the most it can use, down
 *                  to its minimum), sharing them (gres/shard) with the
 *                  opportunistic jobs that may come.  When free GPUs do
 *                  not suffice, the GPUs that only opportunistic jobs
 *                  hold count as its own: those jobs are evicted
 *                  (Preempt; sched/tidal checkpoints and requeues them)
 *                  and it starts once they are gone.  A running elastic
 *                  job grows the same way; its restart takes whole GPUs,
 *                  so the opportunistic jobs on its own GPU leave first.
 *                  The first guaranteed job that cannot start reserves
 *                  the free GPUs of the node with the most of them (it
 *                  must fit on one node): later guaranteed jobs do not
 *                  take them, opportunistic ones may, until it evicts
 *                  them.
 *   opportunistic  all or nothing on the least-utilised GPUs under the
 *                  cap: free ones (utilisation 0), else a GPU that running
 *                  or starting jobs of the same width share, with a shard
 *                  to spare and utilisation under AntMan.UtilCap.  A job
 *                  whose GPU's guaranteed jobs alone reach the cap is
 *                  evicted: the GPU is no longer under-used.
 *
 * A job's GPU utilisation is its own (Job::gpu_util: a trace's, a
 * profile's, a measurement) or AntMan's defaults: 10% for a guaranteed
 * job, 90% for an opportunistic one (MODEL.md §4.2), so that one
 * opportunistic job joins a guaranteed one under the default cap of 0.8.
 *
 * Sharing needs Cluster::sharing (sched/tidal with gres/shard; a replay
 * has no limit).  Where a job cannot share, it runs alone.
 *
 * Parameters (prefix AntMan.): UtilCap=0..10 (default 0.8),
 * Placement=<scheme> (default consolidated).
 *
 * The muri preset's AntMan (sim/presets/muri_antman.cc) is the anchor's
 * own model: jobs never leave, opportunistic ones slow down beside their
 * neighbours, and utilisation is bookkept per GPU with the anchor's float
 * steps.  It serves jobs in the same order and picks opportunistic GPUs
 * by the same rule as this policy: antman_before, antman_default_util and
 * antman_least_utilised are both's.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <string>
#include <vector>

#include "core/model/policy.h"
#include "core/placement/placement.h"

namespace tidal
{

struct AntmanOptions {
	double util_cap = 0.8;
	PlacementScheme placement = PlacementScheme::Consolidated;
};

AntmanOptions antman_options(const Params &params);

/* Whether JOB is opportunistic: --best-effort, or priority class 1+. */
bool antman_opportunistic(const Job &job);
/* JOB's GPU utilisation, 0..1 (its own, else AntMan's default). */
double antman_util(const Job &job);
/* AntMan's default utilisation: 0.9 for an opportunistic job, 0.1 for a
 * guaranteed one (MODEL.md §4.2). */
double antman_default_util(bool opportunistic);
/* The order AntMan serves jobs in: guaranteed before opportunistic, each
 * by submit time, then input order (a strict weak order, for a stable
 * sort). */
bool antman_before(const Job &a, const Job &b);
/* Where N opportunistic jobs' worth go: the indices of the N least
 * utilised of UTIL (one per GPU, or per set of GPUs) strictly under CAP,
 * the lower index first among equals; none if fewer than N are under it
 * (all or nothing). */
std::vector<int> antman_least_utilised(const std::vector<double> &util,
				       int n, double cap);

class Antman : public Policy
{
public:
	explicit Antman(AntmanOptions o) : opt_(o) {}
	std::string name() const override { return "antman"; }
	bool shares_gpus() const override { return true; }
	Plan decide(const Snapshot &snap) override;

private:
	AntmanOptions opt_;
};

} /* namespace tidal */
