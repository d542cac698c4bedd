/*
 * metrics.cc - sched/tidal's metric families (metrics.h) and bridge.h's
 * tidal_metrics_* entry points for the C side (sched_tidal.c's cycle,
 * resize.c's requeues and restarts).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "plugin/sched/metrics.h"

#include <cctype>
#include <map>

#include "core/version.h"
#include "plugin/sched/c_api.h"
#include "plugin/sched/engine.h"

namespace tidal::plugin
{

namespace
{

const std::vector<double> kCycleBuckets = { 0.0005, 0.001, 0.0025, 0.005,
					    0.01,   0.025, 0.05,   0.1,
					    0.25,   0.5,   1,      2.5,
					    5,      10 };
const std::vector<double> kPhaseBuckets = { 0.5, 1,  2,   5,   10,  20,
					    30,  60, 120, 300, 600, 1800 };

void declare(obs::Registry &r)
{
	using obs::Metric;
	r.declare("tidal_build_info", Metric::Gauge,
		  "Tidal's version (value 1).", { "version" });
	r.declare("tidal_policy_info", Metric::Gauge,
		  "The policy in force (value 1).", { "policy" });
	r.declare("tidal_cycles_total", Metric::Counter,
		  "Scheduling cycles run.");
	r.declare("tidal_cycle_seconds", Metric::Histogram,
		  "Wall time of a scheduling cycle: snapshot, decide and "
		  "apply, waits for slurmctld's locks included.",
		  {}, kCycleBuckets);
	r.declare("tidal_decide_seconds", Metric::Histogram,
		  "Time the policy took to decide, no lock held.", {},
		  kCycleBuckets);
	r.declare("tidal_lock_hold_seconds", Metric::Histogram,
		  "Time a cycle held slurmctld's job and node write locks, "
		  "all its lock sections together.",
		  {}, kCycleBuckets);
	r.declare("tidal_lock_wait_seconds", Metric::Histogram,
		  "Time a cycle waited for slurmctld's locks.", {},
		  kCycleBuckets);
	r.declare("tidal_decisions_total", Metric::Counter,
		  "The policy's decisions, one per job and cycle, by action "
		  "(start, keep, resize, preempt, hold, reject).",
		  { "action" });
	r.declare("tidal_jobs", Metric::Gauge,
		  "Jobs the last cycle saw, by state (pending, running) and "
		  "class (rigid, elastic, best_effort).",
		  { "state", "class" });
	r.declare("tidal_admissions_total", Metric::Counter,
		  "Jobs admitted (a job with a deadline that started) and "
		  "rejected (by the policy, once each).",
		  { "result" });
	r.declare("tidal_resizes_total", Metric::Counter,
		  "Jobs Tidal requeued to resize (kind=resize) or to "
		  "preempt them (kind=preempt).",
		  { "kind" });
	r.declare("tidal_resize_phase_seconds", Metric::Histogram,
		  "Duration of a resize's phases: checkpoint (decision to "
		  "requeue) and restart (requeue to running again), by kind.",
		  { "kind", "phase" }, kPhaseBuckets);
	r.declare("tidal_agents", Metric::Gauge,
		  "Node agents (tidald) registered, by state: up "
		  "(heartbeat within 3 intervals) or down.",
		  { "state" });
	r.set("tidal_build_info", { TIDAL_VERSION }, 1);
	r.on_collect([](obs::Registry &reg) {
		int up = 0, down = 0;
		tidal_agent_counts(&up, &down);
		reg.set("tidal_agents", { "up" }, up);
		reg.set("tidal_agents", { "down" }, down);
	});
}

const char *const kStates[] = { "pending", "running" };
const char *const kClasses[] = { "rigid", "elastic", "best_effort" };

int job_class(const Job &j)
{
	return j.best_effort ? 2 : j.elastic() ? 1 : 0;
}

} /* namespace */

obs::Registry &metrics()
{
	static obs::Registry *r = [] {
		auto *reg = new obs::Registry; /* lives as long as slurmctld */
		declare(*reg);
		return reg;
	}();
	return *r;
}

void metrics_plan(const std::vector<JobView> &views, const Plan &plan,
		  const std::string &policy)
{
	obs::Registry &r = metrics();
	std::map<Action, double> by_action;
	for (const Decision &d : plan.decisions)
		by_action[d.action]++;
	for (const auto &[a, n] : by_action) {
		std::string name = action_name(a);
		for (char &c : name)
			c = (char)std::tolower((unsigned char)c);
		r.add("tidal_decisions_total", { name }, n);
	}
	double counts[2][3] = {};
	for (const JobView &v : views)
		counts[v.job.state == JobState::Running][job_class(v.job)]++;
	for (int st = 0; st < 2; st++)
		for (int cl = 0; cl < 3; cl++)
			r.set("tidal_jobs", { kStates[st], kClasses[cl] },
			      counts[st][cl]);
	/* Only when it changed: a scrape between the two calls would see
	 * no policy.  (Called under the engine's lock: one at a time.) */
	static std::string shown;
	if (policy != shown) {
		r.clear("tidal_policy_info");
		r.set("tidal_policy_info", { policy }, 1);
		shown = policy;
	}
}

} /* namespace tidal::plugin */

using tidal::plugin::guarded;
using tidal::plugin::metrics;

extern "C" void tidal_metrics_cycle(double cycle_s, double decide_s,
				    double hold_s, double wait_s)
{
	guarded([&] {
		tidal::obs::Registry &r = metrics();
		r.add("tidal_cycles_total");
		r.observe("tidal_cycle_seconds", {}, cycle_s);
		r.observe("tidal_decide_seconds", {}, decide_s);
		r.observe("tidal_lock_hold_seconds", {}, hold_s);
		r.observe("tidal_lock_wait_seconds", {}, wait_s);
	});
}

extern "C" void tidal_metrics_requeued(int preempt, double checkpoint_s)
{
	guarded([&] {
		const char *kind = preempt ? "preempt" : "resize";
		metrics().add("tidal_resizes_total", { kind });
		if (checkpoint_s >= 0)
			metrics().observe("tidal_resize_phase_seconds",
					  { kind, "checkpoint" }, checkpoint_s);
	});
}

extern "C" void tidal_metrics_restarted(int preempt, double restart_s)
{
	guarded([&] {
		metrics().observe("tidal_resize_phase_seconds",
				  { preempt ? "preempt" : "resize", "restart" },
				  restart_s);
	});
}

extern "C" void tidal_metrics_admission(int admitted)
{
	guarded([&] {
		metrics().add("tidal_admissions_total",
			      { admitted ? "admitted" : "rejected" });
	});
}
