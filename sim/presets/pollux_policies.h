/*
 * pollux_policies.h - the Pollux preset's elastic policies: Pollux itself
 * (core/policies/pollux.h, fed by each job's learned goodput model) and
 * the artifact's Optimus+Oracle baseline.
 *
 * Both need the job dynamics' state (fitted throughput model, gradient
 * statistics, epoch, true throughput table), which core Jobs do not
 * carry, so they run here as preset hooks rather than registry policies.
 *
 * A policy returns, for each active job, its node list: one node index
 * per replica.  The preset compares it with the previous list (order
 * matters) and restarts the job where it changed.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <vector>

#include "core/model/model.h"
#include "core/policies/pollux.h"
#include "sim/presets/pollux_job.h"

namespace tidal::sim
{

using NodeList = std::vector<int>;

/* Pollux's JobInfo per active job (simulator.get_pollux_job_info): max
 * replicas min(max(2 x profiled, 1), 64, max batch / min local batch),
 * 1 for ncf; the job's speedup function if fitted. */
std::vector<NodeList>
pollux_decide(PolluxPolicy &policy,
	      const std::vector<const PolluxJob *> &active,
	      const std::vector<NodeList> &current, const Cluster &cluster,
	      double now, PolluxRound *round);

/* Optimus+Oracle (optimus.OptimusPolicy): one GPU per job in arrival
 * order, then each further GPU to the job whose remaining time
 * (t(r) - t(r+1)) x remaining iterations drops most, t from the true
 * throughput; allocations whose size is unchanged are kept, the others
 * filled, smallest first, from the node with the most free GPUs. */
std::vector<NodeList>
optimus_decide(const std::vector<const PolluxJob *> &active,
	       const std::vector<NodeList> &current, const Cluster &cluster);

} /* namespace tidal::sim */
