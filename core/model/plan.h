/*
 * plan.h - what a policy decides, and why.
 *
 * Every decision carries a reason a person can read and the numbers behind
 * it.  The plugin writes the reason into the job's Reason field, tidalctl
 * explain prints both, the simulator logs them.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "core/model/model.h"

namespace tidal {

enum class Action : std::uint8_t {
	Start,   /* pending -> running on `placement` */
	Keep,    /* running, unchanged */
	Resize,  /* running -> running at `gpus` on `placement` */
	Preempt, /* running -> pending (checkpoint, release GPUs) */
	Hold,    /* stays pending; reason says why */
	Reject,  /* will never run (e.g. infeasible deadline) */
};
const char *action_name(Action a);

struct Decision {
	JobId job = 0;
	/* Index of the job in Snapshot::jobs, so a caller finds it without a
	 * search; -1 if the policy does not say. */
	std::ptrdiff_t slot = -1;
	Action action = Action::Hold;
	int gpus = 0;
	Placement placement;
	std::string reason;
	std::vector<std::pair<std::string, double>> numbers;
	/* The job's place in the policy's order, 1 = first, of RANKED jobs
	 * ranked; 0 if the policy ranks none.  Kept out of REASON, which
	 * would otherwise change whenever a job ahead starts or ends. */
	int rank = 0;
	int ranked = 0;
	/* The global batch the job should run at from its next start (an
	 * adaptive policy: Pollux); 0 = the policy does not choose it. */
	int batch = 0;
	/* GPU sharing (Muri's groups).  SHARE: the job runs on GPUs that
	 * other jobs may join (sched/tidal starts it with gres/shard).
	 * COLOCATE: start it on the GPUs of that job, which runs or starts
	 * earlier in the same plan; its placement is that job's.  0 = none. */
	bool share = false;
	JobId colocate = 0;

	Decision &note(std::string key, double value)
	{
		numbers.emplace_back(std::move(key), value);
		return *this;
	}
	Decision &at_rank(int r, int of)
	{
		rank = r;
		ranked = of;
		return *this;
	}
};

/*
 * A policy's answer.  Normally one decision per active job; with
 * Snapshot::changes_only a job without a decision is unchanged (Keep if
 * running, Hold if pending).
 */
struct Plan {
	std::vector<Decision> decisions;
	/* The policy wants to be asked again at this time even if nothing else
	 * happens (e.g. a Tiresias queue boundary); infinity = no wish. */
	Time wake_at = std::numeric_limits<Time>::infinity();
	/* Lines for the operator's log, one event each (slurmctld's log in
	 * the plugin, stderr in tidal-sim; the caller puts the policy's name
	 * before each): what the decisions cannot say, such as a solve that
	 * ran out of time. */
	std::vector<std::string> log;
	/* Nodes the policy keeps for its own use (Lucid's profiler nodes),
	 * as indices into the snapshot's cluster: no start that the policy
	 * planned elsewhere may land there, not even one the plugin lets
	 * Slurm place (its planned nodes refused). */
	std::vector<int> kept_nodes;

	Decision &add(JobId job, Action action, int gpus, std::string reason)
	{
		Decision d;
		d.job = job;
		d.action = action;
		d.gpus = gpus;
		d.reason = std::move(reason);
		decisions.push_back(std::move(d));
		return decisions.back();
	}
	/* The decision for JOB, or nullptr. Linear: plans are short-lived. */
	const Decision *find(JobId job) const;
};

} /* namespace tidal */
