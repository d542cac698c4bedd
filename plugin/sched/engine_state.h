/*
 * engine_state.h - the engine object behind bridge.h's C entry points.
 *
 * One Engine per slurmctld (a function-local static).  Its mutex is taken
 * by configure() (scontrol reconfigure, from slurmctld's threads) and by
 * decide() (the plugin thread), never while a slurmctld lock is waited for.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/params.h"
#include "core/plan.h"
#include "core/policy.h"
#include "plugin/sched/bridge.h"

namespace tidal {
namespace plugin {

/* What the engine keeps about a job between cycles. */
struct JobMemo {
	std::uint64_t seq = 0; /* arrival order, 1-based; 0 = new */
	double submit = 0;     /* first submit seen (requeue resets Slurm's) */
	double attained = 0;   /* GPU-seconds of earlier runs */
	double executed = 0;   /* seconds of earlier runs */
	double run_start = 0;  /* start of the run seen last cycle, 0 = none */
	int run_gpus = 0;
	double seen = 0;       /* snapshot time it was last seen */
};

/* The last plan, for tidalctl and the state file. */
struct LastCycle {
	double now = 0;
	std::vector<Decision> decisions;
};

class Engine {
public:
	int configure(const std::string &text, const std::string &origin,
		      std::string *msg);
	int decide(const tidal_snap_t &s, tidal_plan_t *out);
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
	void shutdown()
	{
		std::lock_guard<std::mutex> g(mu_);
		policy_.reset();
		memo_.clear();
	}

private:
	void fill_job(const tidal_job_t &b, double now, Job *j,
		      std::string *log);
	void fill_cluster(const tidal_snap_t &s, Cluster *c);
	void forget_old(double now);
	void record(const tidal_snap_t &s, const Plan &plan);

	std::mutex mu_;
	std::unique_ptr<Policy> policy_;
	Params params_;
	std::string name_;
	double interval_ = 2;
	std::unordered_map<std::uint32_t, JobMemo> memo_;
	std::uint64_t next_seq_ = 0;
	LastCycle last_;
	std::uint64_t cycles_ = 0;
};

Engine &engine();

} /* namespace plugin */
} /* namespace tidal */
