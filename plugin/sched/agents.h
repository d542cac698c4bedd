/*
 * agents.h - the registry of node agents (tidald) inside sched/tidal, for
 * the C++ side (ctl_engine.cc's records).  The C side uses bridge.h's
 * tidal_agent_* functions.  plugin/sched/agents/ has the whole story
 * (registry.h says which file holds what).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "proto/messages.h"

namespace tidal::plugin
{

/* Agent columns of NODE's `show nodes` record: Agent, HeartbeatAge,
 * CkptFree, HCAs, TopoGPUs, NUMA. */
void agent_node_fields(const std::string &node, wire::CtlRecord &rec,
		       double now);
/* JOB's checkpoint and resize story for `show job` / `explain`; the live
 * metrics its agent reports (step, it/s, loss) when FULL. */
void agent_job_fields(std::uint32_t job, wire::CtlRecord &rec, bool full);

/* What JOB's launcher last reported through its agent (heartbeats), for
 * the policies: the step reached, iterations/s at the current size and the
 * per-iteration stage times in seconds (data/CPU, compute, communication);
 * the global batch (0 unknown), AdaScale's progress in steps of the
 * initial batch and Pollux's gradient statistics (NaN unknown;
 * tidal-train(1)); its GPU utilisation (percent) and memory (MiB), NaN
 * unknown. */
struct JobProgress {
	double step = 0;
	double it_s = 0;
	double stages[3] = {0, 0, 0};
	std::int64_t batch = 0;
	std::int64_t world = 0; /* the trainer's world size */
	double progress = NAN, grad_sqr = NAN, grad_var = NAN;
	double gpu_util = NAN, gpu_mem_mb = NAN;
};
/* RET true with *P when JOB's last report is running and at most MAX_AGE
 * seconds old at NOW. */
bool agent_job_progress(std::uint32_t job, double now, double max_age,
			JobProgress *p);

/* How ckpt_where (agents/node_ops.cc) learns a job's owner: LOOKUP(job)
 * RET its uid, -1 if unknown.  The engine registers it (engine.cc), so
 * that the agents' code never calls into the engine: calls go engine ->
 * agents only, as the locks are taken.  Called with no lock of the
 * registry held. */
void agent_set_owner_lookup(std::int64_t (*lookup)(std::uint32_t job));
/* The same for job_plan: LOOKUP(job) RET the global batch the policy's
 * last decision chose for it (0 for none), the jobs that share its GPU,
 * itself included (0: none, or not seen running yet), and how the policy
 * in force has jobs share a GPU ("" when it shares none). */
struct JobPlanInfo {
	std::int64_t batch = 0;
	int group_size = 0;
	const char *share = ""; /* "", "interleave" or "pack" */
};
void agent_set_plan_lookup(JobPlanInfo (*lookup)(std::uint32_t job));

/* The distinct fabric reports of the registered agents (JSON of
 * core/placement/fabric.h's to_json()), for apply_agent_fabric() in
 * engine.cc. */
std::vector<std::string> agent_fabric_reports();

} /* namespace tidal::plugin */
