/*
 * native.cc - the "tidal" preset: Tidal's own model of a cluster.
 *
 * Event-driven replay (replay.h), jobs run at their traced speed scaled
 * linearly in GPUs, and every start, resume or resize costs a restart
 * overhead (Tidal.RestartOverhead, default 30 s: a checkpoint load on
 * NVMe plus NCCL setup).  Metrics use the numpy definitions.
 *
 * Tidal.CycleInterval=C (seconds, default 0: at every event) asks the
 * policy as sched/tidal does: at once when a job arrives (a submission
 * wakes its cycle), otherwise every C seconds after its last decision, so
 * that GPUs that fall free wait for the next cycle.  A live replay
 * (scripts/sim_live.sh) needs it modelled: see tidal-sim(1), LIVE REPLAY.
 * So does what a preemption costs live: Tidal.RequeueDelay=R (seconds,
 * default 0), a preempted job may start again R s after its preemption at
 * the earliest (Slurm's begin time on a requeue, which sched/tidal cuts
 * to 2 s); Tidal.PreemptRelease=K (seconds, default 0), the nodes a
 * preempted job held take no new start for K s (COMPLETING: its
 * processes and epilog ending), so a start planned there waits for a
 * later cycle.  Tidal.RankStart=S (seconds, default 0): a job with a
 * table, which a live replay runs as a trainer, takes S s more per GPU
 * at each start, resume or resize (tidal-launch bringing up its world of
 * ranks: 0.05 s each on the 2-core loopback cluster, bench/rank_start.sh).
 *
 * The elasticflow policies plan with measured throughputs: --profiles DIR
 * becomes their ElasticFlow.Profiles (a --param wins), and a job without
 * a profile is held until the run ends, i.e. rejected - said before the
 * replay, since the table of results alone would not say why.  With
 * --profiles, a job whose model and batch have a table runs at its speed
 * there (ThroughputRow::paced: what tidal-train --profile paces by, and
 * what those policies plan with; with --speedup, tables sped up as the
 * trace, live.h), and every policy counts its time by it, as sched/tidal
 * does with Profiles=; others, and GPU counts outside the table, scale
 * linearly.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>

#include "core/model/policy.h"
#include "core/profiles/throughput_table.h"
#include "sim/csv.h"
#include "sim/replay.h"

namespace tidal::sim {

namespace {

bool plans_with_profiles(const std::string &policy)
{
	std::string p = lower(policy);
	return p == "elasticflow" || p == "elasticflow-noadmit";
}

class NativePreset : public Preset {
public:
	std::string name() const override { return "tidal"; }
	std::string summary() const override
	{
		return "Tidal's own model: event-driven, linear GPU scaling, "
		       "restart overhead per start";
	}
	void prepare(SimInput &in) override
	{
		profiles_ = in.profiles_path;
		table_ = ThroughputTable();
		if (!profiles_.empty()) {
			std::string err;
			if (!table_.load_dir(profiles_, &err))
				throw InputError("--profiles " + err);
		}
		int total = in.cluster.total_gpus();
		for (Job &j : in.trace.jobs) {
			if (j.gpus > total)
				input_error(in.trace.path, in.trace.line(j),
					    "job " + std::to_string(j.id) +
						    " asks for " +
						    std::to_string(j.gpus) +
						    " GPUs; the cluster in " +
						    in.cluster_path + " has " +
						    std::to_string(total));
			if (j.iter_time <= 0) {
				/* Only a duration: one iteration a second. */
				j.iterations = j.duration;
				j.iter_time = 1;
			}
			/* With a table: what the policies know of its speed
			 * is the table's at its GPUs, as sched/tidal's with
			 * Profiles= (and what it runs at: run()). */
			const ThroughputRow *row =
				table_.row(j.model, j.batch);
			double v = row ? row->paced(j.gpus) : NAN;
			if (j.iterations > 0 && std::isfinite(v) && v > 0) {
				j.iter_time = 1 / v;
				j.duration = j.iterations / v;
			}
		}
	}
	/* The registry's policies but those that put jobs on shared GPUs
	 * (muri-s, muri-l, antman, lucid): this model has no speeds for them
	 * yet
	 * (--preset muri has). */
	std::vector<std::string> policy_names() const override
	{
		std::vector<std::string> out;
		for (const PolicyInfo *i : all_policies()) {
			auto p = i->make(Params());
			if (!p->shares_gpus()) /* its replay has no shards */
				out.push_back(lower(i->name));
		}
		return out;
	}
	Params policy_params(const std::string &policy) const override
	{
		Params p;
		if (plans_with_profiles(policy) && !profiles_.empty())
			p.set("ElasticFlow.Profiles", profiles_, "--profiles");
		return p;
	}
	std::vector<std::string> keys() const override
	{
		return {"Tidal.RestartOverhead", "Tidal.CycleInterval",
			"Tidal.RequeueDelay", "Tidal.PreemptRelease",
			"Tidal.RankStart"};
	}
	RunResult run(const SimInput &in, const std::string &policy,
		      const Params &params, const Progress &progress,
		      RunMode mode) override
	{
		RunResult checked;
		if (mode == RunMode::Check && plans_with_profiles(policy))
			check_profiles(in, policy, params, checked);
		std::string err;
		auto p = make_policy(policy, params, &err);
		if (!p)
			throw InputError(err);
		/* Interleaved groups share GPUs at a group speed this model
		 * does not have yet: refuse rather than run them solo. */
		if (p->shares_gpus())
			throw InputError("policy '" + policy +
					 "' puts jobs on shared GPUs; the "
					 "tidal preset has no shared speeds "
					 "yet (use --preset muri or --preset "
					 "lucid)");
		size_t before = params.errors().size();
		double oh = params.get_double("Tidal.RestartOverhead", 30, 0,
					      86400);
		double cycle = params.get_double("Tidal.CycleInterval", 0, 0,
						 3600);
		double requeue = params.get_double("Tidal.RequeueDelay", 0, 0,
						   86400);
		double release = params.get_double("Tidal.PreemptRelease", 0,
						   0, 86400);
		double rank = params.get_double("Tidal.RankStart", 0, 0, 3600);
		if (params.errors().size() > before)
			throw InputError(params.errors()[before]);
		if (mode == RunMode::Check)
			return checked;
		ReplayHooks hooks;
		hooks.restart_overhead = [this, oh, rank](const Job &j, int g) {
			bool trainer = rank > 0 && j.iterations > 0 &&
				       table_.row(j.model, j.batch) != nullptr;
			return oh + (trainer ? rank * g : 0);
		};
		if (!profiles_.empty())
			hooks.speed = [this](const Job &j, int g) {
				const ThroughputRow *row = table_.row(j.model, j.batch);
				double v = row ? row->paced(g) : NAN;
				return std::isfinite(v) && v > 0 ? v : linear_speed(j, g);
			};
		hooks.cycle = cycle;
		hooks.requeue_delay = requeue;
		hooks.preempt_release = release;
		return replay(in, *p, hooks, progress);
	}

private:
	void check_profiles(const SimInput &in, const std::string &policy,
			    const Params &params, RunResult &out) const;

	std::string profiles_; /* --profiles, "" if none */
	ThroughputTable table_; /* what it holds */
};

/* Say which jobs POLICY will reject for want of a throughput profile; a
 * --profiles directory that does not load is an error (one given with
 * --param is reported by the policy itself, as a bad value). */
void NativePreset::check_profiles(const SimInput &in, const std::string &policy,
				  const Params &params, RunResult &out) const
{
	std::string dir = params.get_str("ElasticFlow.Profiles", "");
	if (dir.empty()) {
		out.warnings.push_back(
			"policy " + policy + " has no throughput profiles, so "
			"it will reject every job; give --profiles DIR or "
			"--param ElasticFlow.Profiles=DIR (one <model>.csv "
			"throughput table per model, as for --preset "
			"elasticflow)");
		return;
	}
	ThroughputTable table;
	std::string err;
	if (!table.load_dir(dir, &err)) {
		if (dir == profiles_)
			throw InputError("--profiles " + err);
		return;
	}
	long missing = 0;
	const Job *first = nullptr;
	for (const Job &j : in.trace.jobs)
		if (!table.row(j.model, j.batch) && !missing++)
			first = &j;
	if (missing)
		out.warnings.push_back(
			"policy " + policy + ": " + std::to_string(missing) +
			" of " + std::to_string(in.trace.jobs.size()) +
			" jobs have no throughput profile in " + dir +
			" and will be rejected (first: job " +
			std::to_string(first->id) + ", model '" + first->model +
			"' at batch " + std::to_string(first->batch) + ")");
}

PresetRegistrar reg("tidal", [] { return std::make_unique<NativePreset>(); });

} /* namespace */

} /* namespace tidal::sim */
