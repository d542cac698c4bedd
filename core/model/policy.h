/*
 * policy.h - the policy interface and the registry that names policies.
 *
 * A policy turns a Snapshot into a Plan.  It may keep state between calls
 * (a learned profile, a round counter) but must be deterministic: the same
 * sequence of snapshots gives the same sequence of plans.  Policies are made
 * by name from the registry, with Params from tidal.conf, a preset, or
 * tidal-sim --policy-config.
 *
 *   tidal.conf / preset --> Params --> make_policy(name) --> Policy
 *   slurmctld or trace  --> Snapshot --> Policy::decide --> Plan --> apply
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/model/params.h"
#include "core/model/plan.h"

namespace tidal {

class Policy {
public:
	virtual ~Policy() = default;
	virtual std::string name() const = 0;
	/* IN: snap - cluster and active jobs at snap.now
	 * RET: one decision per active job (Start/Keep/Resize/Preempt/Hold/
	 *      Reject), in the order the policy ranked them; with
	 *      snap.changes_only, only for jobs that change. */
	virtual Plan decide(const Snapshot &snap) = 0;
	/* True if decide() changes nothing (whatever the time) while no job
	 * is pending, so a replay may skip asking at events that leave no job
	 * pending, and drop a wake_at that comes due then. */
	virtual bool idle_without_pending() const { return false; }
	/* False if decide() never reads the jobs' progress counters
	 * (Job::remaining, attained, executed, queued), so a replay need not
	 * bring them up to date before asking. */
	virtual bool reads_progress() const { return true; }
	/* True if decide() keeps indexes across calls through
	 * Snapshot::delta when it is given, and then reads progress counters
	 * only after calling Snapshot::sync for the job (when set), so that a
	 * replay need not bring every job up to date before asking.  Without
	 * a delta it decides from `jobs` alone, as other policies do. */
	virtual bool incremental() const { return false; }
	/* True if the policy itself admits or rejects jobs by their
	 * deadlines (it plans their work against them): sched/tidal then
	 * leaves a deadline job to it, where for other policies it cancels a
	 * job whose time limit cannot end by its deadline, as Slurm's own
	 * schedulers do (Reason DeadLine). */
	virtual bool admits_by_deadline() const { return false; }
	/* True if the policy puts several jobs on the same GPUs (Decision
	 * share and colocate): sched/tidal then needs gres/shard, and says
	 * so when slurm.conf has none. */
	virtual bool shares_gpus() const { return false; }
	/* True if jobs that share GPUs take them in turns, stage by stage,
	 * as Muri's executor has them (tidald's interleaving groups); false
	 * if they run at once, packed, each at the speed the GPU gives it
	 * beside the other (Lucid, AntMan). */
	virtual bool interleaves() const { return false; }

	/* What the policy must carry across a restart of the process that
	 * runs it (slurmctld keeps it in the plugin's state file) or a
	 * reconfiguration: lines of text without newlines.  A policy whose
	 * decisions depend on the snapshot alone has none. */
	virtual std::vector<std::string> save_state() const { return {}; }
	/* One of save_state()'s lines, from the process before this one,
	 * given before the first decide().  RET: false if it is not
	 * understood (the caller says so and drops it). */
	virtual bool load_state(const std::string &line) { return false; }
	/* Changes whenever save_state() would say something new, so that a
	 * caller saves only then. */
	virtual std::uint64_t state_serial() const { return 0; }
};

using PolicyFactory =
	std::function<std::unique_ptr<Policy>(const Params &params)>;

struct PolicyInfo {
	std::string name;
	std::string summary;
	PolicyFactory make;
};

/* Adds INFO to the registry; used by PolicyRegistrar at static init. */
void register_policy(PolicyInfo info);
const PolicyInfo *find_policy(const std::string &name);
std::vector<const PolicyInfo *> all_policies();
/* Every key that some registered policy reads when made with no values,
 * in registry order, each as its policy first asks it (repeats kept).
 * Worked out at the first call, once per process: the registry is fixed
 * after static init, and making every policy costs more than a parse. */
const std::vector<std::string> &policy_keys();

/* Make policy NAME.  RET: nullptr with *err set if the name is unknown or a
 * parameter is bad (errors name the key, the value and the rule). */
std::unique_ptr<Policy> make_policy(const std::string &name,
				    const Params &params, std::string *err);

struct PolicyRegistrar {
	PolicyRegistrar(std::string name, std::string summary,
			PolicyFactory make)
	{
		register_policy({std::move(name), std::move(summary),
				 std::move(make)});
	}
};

} /* namespace tidal */
