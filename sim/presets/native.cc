/*
 * native.cc - the "tidal" preset: Tidal's own model of a cluster.
 *
 * Event-driven replay (replay.h), jobs run at their traced speed scaled
 * linearly in GPUs, and every start, resume or resize costs a restart
 * overhead (Tidal.RestartOverhead, default 30 s: a checkpoint load on
 * NVMe plus NCCL setup).  Metrics use the numpy definitions.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/muri.h"
#include "core/policy.h"
#include "sim/csv.h"
#include "sim/replay.h"

namespace tidal::sim {

namespace {

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
		int total = in.cluster.total_gpus();
		for (Job &j : in.trace.jobs) {
			if (j.gpus > total)
				input_error(in.trace.path, 0,
					    "job " + std::to_string(j.id) +
						    " asks for " +
						    std::to_string(j.gpus) +
						    " GPUs; the cluster has " +
						    std::to_string(total));
			if (j.iter_time <= 0) {
				/* Only a duration: one iteration a second. */
				j.iterations = j.duration;
				j.iter_time = 1;
			}
		}
	}
	RunResult run(const SimInput &in, const std::string &policy,
		      const Params &params, const Progress &progress) override
	{
		std::string err;
		auto p = make_policy(policy, params, &err);
		if (!p)
			throw InputError(err);
		/* Interleaved groups share GPUs at a group speed this model
		 * does not have yet: refuse rather than run them solo. */
		if (dynamic_cast<Muri *>(p.get()))
			throw InputError("policy '" + policy +
					 "' interleaves jobs on shared GPUs; "
					 "the tidal preset has no group speeds "
					 "yet (use --preset muri)");
		size_t before = params.errors().size();
		double oh = params.get_double("Tidal.RestartOverhead", 30, 0,
					      86400);
		if (params.errors().size() > before)
			throw InputError(params.errors()[before]);
		ReplayHooks hooks;
		hooks.restart_overhead = [oh](const Job &, int) { return oh; };
		return replay(in, *p, hooks, progress);
	}
};

PresetRegistrar reg("tidal", [] { return std::make_unique<NativePreset>(); });

} /* namespace */

} /* namespace tidal::sim */
