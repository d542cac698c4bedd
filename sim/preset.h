/*
 * preset.h - how tidal-sim models a cluster: the native model and the
 * anchors' presets.
 *
 * A preset is data plus small named hooks (as Batsim's decision code is a
 * library its simulator calls): which policy parameters each policy gets,
 * how the trace is adjusted, which replay model runs (event merging,
 * progress accounting, restart overheads), and how the metrics are
 * defined.  Presets register themselves by name, like policies.
 *
 *   tidal-sim --preset NAME ...
 *       load cluster + trace --> Preset::prepare
 *       --> for each policy: Preset::run(RunMode::Check)
 *           (builds the policy, reads its parameters; bad values and
 *           keys nobody read stop the run here, before any replay)
 *       --> for each policy: Preset::run(RunMode::Replay) (usually
 *           sim::replay with the preset's hooks)
 *       --> RunResult --> summarize(RunResult, MetricRules) --> report
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/model/params.h"
#include "sim/trace.h"

namespace tidal::sim {

struct SimInput {
	std::string cluster_path;
	std::string trace_path;
	std::string profiles_path;  /* --profiles, "" if none */
	std::string estimates_path; /* --estimates, "" if none */
	Params policy_config;       /* --policy-config */
	std::uint64_t seed = 1;
	Cluster cluster;
	Trace trace;
};

struct JobResult {
	JobId id = 0;
	std::string name;
	int gpus = 0;
	Time submit = 0, start = -1, end = -1;
	double queue = 0;     /* seconds waiting, as the preset defines it */
	double jct = 0;       /* end - submit, as the preset defines it */
	int preemptions = 0;
	Time deadline = kNoDeadline;
	bool rejected = false;
	/* A live run's job that ended without finishing its work (sacct's
	 * state of its last run not COMPLETED: TIMEOUT, FAILED, ...): it
	 * counts as missing its deadline. */
	bool unfinished = false;
	double rho = -1;      /* finish-time fairness, -1 = not computed */
};

/* The result row of JOB completed at END (queue left for the caller: each
 * model counts waiting its own way), or of JOB rejected. */
JobResult completed_result(const Job &job, Time end);
JobResult rejected_result(const Job &job);

/* GPUs in use from `t` until the next sample. */
struct UtilSample {
	Time t = 0;
	int busy = 0;
};

struct RunResult {
	std::string policy;
	/* RunMode::Check: what the user should know before the replay
	 * (tidal-sim prints them as warnings). */
	std::vector<std::string> warnings;
	std::vector<JobResult> jobs; /* completed and rejected jobs */
	std::vector<UtilSample> util;
	int total_gpus = 0;
	long decisions = 0; /* policy invocations */
	long events = 0;
	/* Set by presets whose anchor defines these its own way. */
	std::optional<double> deadline_ratio;
	std::optional<double> worst_rho;
	std::optional<double> unfair_fraction;
	std::optional<double> makespan;
};

/* How summary metrics are computed (each anchor has its own habits). */
struct MetricRules {
	/* makespan = max(end) - min(submit) if true, else max(end). */
	bool makespan_from_first_submit = true;
	/* p99 JCT: sorted[int(n*0.99)] (Muri) if true, else linear
	 * interpolation at 0.99*(n-1) (numpy/pandas default). */
	bool percentile_by_index = false;
	/* JCT truncated to whole seconds (ElasticFlow's int()). */
	bool truncate_jct = false;
};

struct Summary {
	std::string policy;
	long jobs = 0;
	double avg_jct = 0, median_jct = 0, p99_jct = 0, makespan = 0;
	double avg_queue = 0, p999_queue = 0;
	std::optional<double> deadline_ratio, worst_rho, unfair_fraction;
	double utilization = 0;
	double cpu_seconds = 0;
	long rejected = 0;
};

Summary summarize(const RunResult &r, const MetricRules &rules);

/* Progress reporting: called with (done jobs, total jobs); may be empty. */
using Progress = std::function<void(long done, long total)>;

/* What Preset::run does (one code path for "what if" and "do it", as
 * Slurm's cons_tres job_test() takes a mode).  Check: build the policy
 * and read every parameter the replay reads - no key may be read only
 * later - then return an empty result, with warnings if any; nothing is
 * written.  Replay: also replay. */
enum class RunMode { Check, Replay };

class Preset {
public:
	virtual ~Preset() = default;
	virtual std::string name() const = 0;
	virtual std::string summary() const = 0;
	/* Adjust the trace/cluster and load profiles; throws InputError. */
	virtual void prepare(SimInput &in) {}
	/* Parameters this preset gives POLICY (before --policy-config). */
	virtual Params policy_params(const std::string &policy) const
	{
		return {};
	}
	/* The names --policy accepts, lower case (matching ignores case);
	 * the registry's policies unless the preset says otherwise. */
	virtual std::vector<std::string> policy_names() const;
	/* Keys the preset and its own policies (those not in the registry)
	 * read: only for telling a key of another preset from a typo; a run
	 * knows what it read from Params::unused(). */
	virtual std::vector<std::string> keys() const { return {}; }
	/* Run POLICY on IN as MODE says.  Throws InputError. */
	virtual RunResult run(const SimInput &in, const std::string &policy,
			      const Params &params, const Progress &progress,
			      RunMode mode) = 0;
	virtual MetricRules metric_rules() const { return {}; }
};

using PresetFactory = std::function<std::unique_ptr<Preset>()>;
void register_preset(const std::string &name, PresetFactory make);
std::unique_ptr<Preset> make_preset(const std::string &name, std::string *err);
std::vector<std::string> preset_names();

struct PresetRegistrar {
	PresetRegistrar(const std::string &name, PresetFactory make)
	{
		register_preset(name, std::move(make));
	}
};

} /* namespace tidal::sim */
