/*
 * engine.h - the engine object behind bridge.h's C entry points.
 *
 * One Engine per slurmctld (a function-local static).  Its mutex is taken
 * by configure() (scontrol reconfigure, from slurmctld's threads) and by
 * decide() (the plugin thread), never while a slurmctld lock is waited for.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/model/params.h"
#include "core/model/plan.h"
#include "core/model/policy.h"
#include "core/profiles/throughput_table.h"
#include "plugin/sched/agents.h"
#include "plugin/sched/bridge.h"
#include "proto/defaults.h"

namespace tidal {
namespace plugin {

/* What the engine keeps about a job between cycles. */
struct JobMemo {
	std::uint64_t seq = 0; /* order of arrival or of the last requeue,
				* 1-based; 0 = new */
	double submit = 0;     /* first submit seen (requeue resets Slurm's) */
	double attained = 0;   /* GPU-seconds of earlier runs */
	double executed = 0;   /* seconds of earlier runs */
	double run_start = 0;  /* start of the run seen last cycle, 0 = none */
	double run_exact = 0;  /* the same to the microsecond, where known */
	double started_at = 0; /* when sched/tidal last started it (exact) */
	int run_gpus = 0;
	double seen = 0;       /* snapshot time it was last seen */
	/* Counted in tidal_admissions_total: 0 not yet, 1 admitted, 2
	 * rejected (not saved: counters start afresh with slurmctld). */
	std::uint8_t admission = 0;
	/* Its index in the snapshot of decide number CYCLE (Engine::
	 * decides_), which a decision finds its job by (not saved). */
	int index = -1;
	std::uint64_t cycle = 0;
};

/* One job as tidalctl shows it: what the snapshot said and what the last
 * decision was. */
struct JobView {
	Job job;           /* placement holds snapshot node indices */
	std::uint32_t uid = 0;
	std::string nodes; /* names of the nodes it runs on */
	Decision decision;
	bool decided = false;
	/* Running on a shared GPU: the other jobs on it, "12,14"; "" none. */
	std::string partners;
	/* Holding a shard of GPU G of node N: "N-gpuG" (tidald's group name);
	 * "" none. */
	std::string shared_gpu;
};

/* One node as tidalctl shows it. */
struct NodeView {
	std::string name;
	std::string leaf_switch;
	bool up = true;
	int gpus_total = 0; /* configured */
	int gpus_other = 0; /* held by jobs Tidal does not see */
	int gpus_alloc = 0; /* held by running jobs Tidal sees */
	std::vector<std::pair<std::uint32_t, int>> jobs; /* job, GPUs */
};

/* The last cycle, for tidalctl. */
struct LastCycle {
	double now = 0;
	double decide_ms = 0;
	std::vector<JobView> jobs;
	std::vector<NodeView> nodes;
};

class Engine {
public:
	int configure(const std::string &text, const std::string &origin,
		      std::string *msg);
	int decide(const tidal_snap_t &s, tidal_plan_t *out);
	/* Job ID's run began at WHEN (tidal_engine_started). */
	void started(std::uint32_t id, double when);
	/* A tidalctl request (one JSON object) from UID; RET the reply, one
	 * JSON object.  ADMIN: root or SlurmUser.  PRIVATE_JOBS: non-admins
	 * see only their own jobs (PrivateData=jobs).  *REFUSED: why a
	 * malformed or unauthorised request is refused (for slurmctld's
	 * log), NULL if it is not.  ctl_engine.cc. */
	std::string handle(const std::string &request, std::uint32_t uid,
			   bool admin, bool private_jobs,
			   const char **refused);
	/* The uid of job ID as the last cycle saw it, -1 if it did not (for
	 * agents/node_ops.cc's ckpt_where; ctl_engine.cc). */
	std::int64_t job_uid(std::uint32_t id);
	/* For job_plan (agents.h): the global batch the last decision for
	 * job ID chose (0 for none), and the running jobs that share its
	 * GPU, itself included (0: none seen). */
	JobPlanInfo job_plan(std::uint32_t id);
	int ctl_port()
	{
		std::lock_guard<std::mutex> g(mu_);
		return ctl_port_;
	}
	void set_slurm_version(const std::string &v)
	{
		std::lock_guard<std::mutex> g(mu_);
		slurm_version_ = v;
	}
	int metrics_port()
	{
		std::lock_guard<std::mutex> g(mu_);
		return metrics_port_;
	}
	std::string metrics_addr()
	{
		std::lock_guard<std::mutex> g(mu_);
		return metrics_addr_;
	}
	double interval()
	{
		std::lock_guard<std::mutex> g(mu_);
		return interval_;
	}
	const char *policy_name()
	{
		std::lock_guard<std::mutex> g(mu_);
		return name_.c_str();
	}
	bool admits_by_deadline()
	{
		std::lock_guard<std::mutex> g(mu_);
		return policy_ && policy_->admits_by_deadline();
	}
	void apply_conf(tidal_apply_conf_t *c)
	{
		std::lock_guard<std::mutex> g(mu_);
		*c = apply_conf_;
		std::snprintf(c->policy, sizeof(c->policy), "%s",
			      name_.c_str());
	}
	/* Plugin state (state.c): memo lines into *OUT unless nothing changed
	 * since the last dump (RET false) and not FORCE; one line back in. */
	bool state_dump(std::string *out, bool force);
	bool state_line(const std::string &line);
	void shutdown()
	{
		std::lock_guard<std::mutex> g(mu_);
		policy_.reset();
		memo_.clear();
		next_seq_ = 0;
		state_dirty_ = true;
	}

private:
	void fill_job(const tidal_job_t &b, int index, double now, Job *j,
		      std::string *log);
	/* The snapshot index of job ID in this decide, -1 if not in it. */
	int index_of(JobId id) const;
	void fill_cluster(const tidal_snap_t &s, Cluster *c);
	void forget_old(double now);
	/* SLOTS: the snapshot index of each of PLAN's decisions' jobs. */
	void count_admissions(const std::vector<JobView> &views,
			      const Plan &plan, const std::vector<int> &slots);
	std::string set_policy(const std::string &name);
	/* The cycle for tidalctl (last_): this cycle's views (spare_),
	 * completed with PLAN's decisions, become last_'s, and last_'s the
	 * spare ones. */
	void record(const tidal_snap_t &s, Plan &&plan,
		    const std::vector<int> &slots, double decide_ms);

	std::mutex mu_;
	std::unique_ptr<Policy> policy_;
	Params params_;
	std::string name_;
	double interval_ = 2;
	int ctl_port_ = TIDAL_CTL_PORT;
	int metrics_port_ = 0;
	std::string slurm_version_; /* built against; "" = not told */
	std::string metrics_addr_;
	/* SIGUSR1, 30 s, hold, AdminComment */
	tidal_apply_conf_t apply_conf_ = {10, 30, 0, TIDAL_ACCT_ADMIN, ""};
	std::vector<std::string> node_names_;
	/* Profiles=DIR: a pending job's speed from its table (fill_job). */
	ThroughputTable profiles_;
	std::unordered_map<std::uint32_t, JobMemo> memo_;
	std::uint64_t next_seq_ = 0;
	std::uint64_t dumped_serial_ = 0; /* policy's state_serial() */
	LastCycle last_;
	/* The views of the cycle before last, kept for their storage
	 * (decide() fills them, record() swaps them with last_.jobs). */
	std::vector<JobView> spare_;
	bool state_dirty_ = true;
	std::uint64_t cycles_ = 0;
	std::uint64_t decides_ = 0; /* decide() calls, failed ones too */
	/* Whether GPUs can be shared, as last told in the log for a sharing
	 * policy; -1 = not told since it was configured. */
	int sharing_said_ = -1;
};

Engine &engine();

} /* namespace plugin */
} /* namespace tidal */
