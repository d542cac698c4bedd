/*
 * gavel.cc - the "gavel" preset: the Gavel/Shockwave round-based
 * simulator (shockwave/MODEL.md, Scheduler.simulate).
 *
 * Time model, one loop iteration per round (T = Gavel.RoundLength, 120 s):
 *
 *   1. the round ends when its slowest micro-task ends (or, with nothing
 *      running, at the next arrival; the round start then stays put);
 *   2. every micro-task is credited, largest finish first: a job that
 *      did not run the round before pays 20 s of its near-full round
 *      (exec > T - 5) and the same fraction of its steps; a job whose
 *      run time passes 1.5x its profiled duration is cut off as done;
 *      completed jobs leave; flagged batch-size changes happen;
 *   3. Accordion/GNS triggers flag batch-size changes (gavel_profile.h);
 *   4. arrivals up to now join; the core round mechanism (GavelRounds)
 *      and the named allocation policy pick jobs and workers; each gets
 *      min(int(tput T), remaining) steps, finishing at now + steps/tput.
 *
 * Metrics: makespan = the last round end; JCT = end of the job's last
 * micro-task - arrival; rho = round(JCT / (profiled duration x
 * max(1, N/G)), 5); unfair = share of jobs with rho > 1.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include <json-c/json.h>

#include "core/policies/gavel_rounds.h"
#include "sim/csv.h"
#include "sim/preset.h"
#include "sim/presets/gavel_model.h"

namespace tidal::sim {

namespace {

class GavelPreset : public Preset {
public:
	std::string name() const override { return "gavel"; }
	std::string summary() const override
	{
		return "Gavel/Shockwave NSDI'23 simulator: 120 s rounds, "
		       "time-share allocations, dynamic batch sizes";
	}
	void prepare(SimInput &in) override;
	std::vector<std::string> policy_names() const override
	{
		return {"gandiva-fair", "fifo", "max-min-fairness",
			"finish-time-fairness", "min-total-duration",
			"max-sum-throughput", "allox", "shockwave"};
	}
	std::vector<std::string> keys() const override
	{
		return {"Gavel.RoundLength", "Gavel.ResetInterval",
			"Gavel.PreemptionOverhead", "Gavel.CutoffFactor",
			"Gavel.SolveStats", "Gavel.ScheduleLog",
			"PolicyConfig.Json", "Shockwave.FutureRounds",
			"Shockwave.TimeLimit", "Shockwave.MipGap",
			"Shockwave.PriorityCap", "Allox.Alpha", "Allox.Seed"};
	}
	RunResult run(const SimInput &in, const std::string &name,
		      const Params &params, const Progress &progress,
		      RunMode mode) override;
	MetricRules metric_rules() const override
	{
		MetricRules r;
		r.makespan_from_first_submit = false;
		return r;
	}

private:
	GavelModel model_;
};

BsMode parse_mode(const Csv &csv, size_t r)
{
	const std::string &m = csv.str(r, 7);
	if (m == "static")
		return BsMode::Static;
	if (m == "accordion")
		return BsMode::Accordion;
	if (m == "gns")
		return BsMode::Gns;
	csv.fail(r, "mode '" + m + "' is not static, accordion or gns");
}

void GavelPreset::prepare(SimInput &in)
{
	if (in.profiles_path.empty())
		throw InputError("the gavel preset needs --profiles "
				 "<Gavel throughputs JSON>");
	std::string err;
	if (!model_.tp.load(in.profiles_path, &err))
		throw InputError(err);
	if (in.trace.format != "gavel")
		input_error(in.trace.path, 0,
			    "the gavel preset reads Gavel .trace files");
	/* The reader keeps raw columns; the mode and weight are ours. */
	Csv csv = Csv::load(in.trace.path, '\t', false);
	model_.jobs.clear();
	for (size_t r = 0; r < csv.rows() && r < in.trace.jobs.size(); r++) {
		const Job &j = in.trace.jobs[r];
		GavelModelJob g;
		g.bs.model = j.model;
		g.bs.mode = parse_mode(csv, r);
		g.bs.bs0 = g.bs.bs = j.batch;
		g.bs.sf = j.gpus;
		g.bs.total_steps = j.iterations;
		g.weight = csv.num(r, 8);
		g.arrival = j.submit;
		if (!gavel_make_profile(model_.tp, j.model, j.batch, j.gpus,
					g.bs.mode, j.iterations, &g.profile,
					&err))
			input_error(in.trace.path, csv.line(r), err);
		auto t = model_.tp.isolated("v100", j.name, j.gpus);
		if (!t)
			input_error(in.trace.path, csv.line(r),
				    "no v100 throughput for ('" + j.name +
					    "', " + std::to_string(j.gpus) + ")");
		g.bs.tput = *t;
		if (j.gpus > in.cluster.total_gpus())
			input_error(in.trace.path, csv.line(r),
				    "job needs " + std::to_string(j.gpus) +
					    " GPUs; the cluster has " +
					    std::to_string(in.cluster.total_gpus()));
		model_.jobs.push_back(g);
	}
}

/* Shockwave's solver configuration (a configurations JSON), then
 * Shockwave.* parameters over it. */
ShockwaveConfig shockwave_config(const Params &params, const GavelRunConfig &g)
{
	ShockwaveConfig c;
	c.round = g.round;
	c.gpus = g.gpus;
	std::string path = params.get_str("PolicyConfig.Json", "");
	if (!path.empty()) {
		json_object *o = json_object_from_file(path.c_str());
		if (!o)
			input_error(path, 0, "not a JSON object (Shockwave config)");
		if (!json_object_is_type(o, json_type_object))
			input_error(path, 0,
				    "not a JSON object (Shockwave config)");
		/* A number where the config has KEY (as Shockwave reads it),
		 * else DEF; anything else is an error naming the key. */
		auto is_num = [](json_object *v) {
			return json_object_is_type(v, json_type_double) ||
			       json_object_is_type(v, json_type_int);
		};
		auto num = [&](const char *k, double def) {
			json_object *v;
			if (!json_object_object_get_ex(o, k, &v))
				return def;
			if (!is_num(v))
				input_error(
					path, 0,
					std::string("\"") + k +
						"\" must be a number (got " +
						json_object_to_json_string(v) +
						")");
			return json_object_get_double(v);
		};
		c.future_rounds = (int)num("future_rounds", c.future_rounds);
		c.k = num("k", c.k);
		c.lambda = num("lambda", c.lambda);
		c.rhomax = num("rhomax", c.rhomax);
		c.mip_gap = num("solver_rel_gap", c.mip_gap);
		c.time_limit_s = num("solver_timeout", c.time_limit_s);
		json_object *b;
		if (json_object_object_get_ex(o, "log_approximation_bases", &b)) {
			if (!json_object_is_type(b, json_type_array))
				input_error(path, 0,
					    "\"log_approximation_bases\" must "
					    "be an array of numbers");
			c.bases.clear();
			for (size_t i = 0; i < json_object_array_length(b);
			     i++) {
				json_object *v =
					json_object_array_get_idx(b, i);
				if (!is_num(v))
					input_error(
						path, 0,
						"\"log_approximation_bases\" "
						"must be an array of numbers");
				c.bases.push_back(json_object_get_double(v));
			}
		}
		json_object_put(o);
	}
	c.future_rounds = (int)params.get_long("Shockwave.FutureRounds",
					       c.future_rounds, 1, 1000);
	c.time_limit_s = params.get_double("Shockwave.TimeLimit",
					   c.time_limit_s, 0, 3600);
	c.mip_gap = params.get_double("Shockwave.MipGap", c.mip_gap, 0, 1);
	c.priority_cap = params.get_double("Shockwave.PriorityCap",
					   c.priority_cap, 1, 1e300);
	return c;
}

RunResult GavelPreset::run(const SimInput &in, const std::string &name,
			   const Params &params, const Progress &progress,
			   RunMode mode)
{
	std::string policy = lower(name);
	GavelRunConfig cfg;
	cfg.round = params.get_double("Gavel.RoundLength", 120, 1, 86400);
	cfg.reset_interval =
		params.get_double("Gavel.ResetInterval", 1000, 0, 1e9);
	cfg.preempt_penalty =
		params.get_double("Gavel.PreemptionOverhead", 20, 0, 86400);
	cfg.cutoff = params.get_double("Gavel.CutoffFactor", 1.5, 0, 1e6);
	cfg.gpus = in.cluster.total_gpus();
	cfg.solve_stats = params.get_bool("Gavel.SolveStats", false);
	cfg.schedule_log = params.get_str("Gavel.ScheduleLog", "");
	std::string err;
	if (policy == "shockwave") {
		ShockwaveConfig sc = shockwave_config(params, cfg);
		if (mode == RunMode::Check)
			return {};
		Shockwave sw(sc);
		auto none = make_gavel_allocator("gandiva-fair", params, &err);
		RunResult r = gavel_simulate(model_, cfg, *none, progress, &sw);
		for (JobResult &jr : r.jobs)
			jr.name = in.trace.jobs[jr.id].name;
		if (cfg.solve_stats)
			std::fprintf(stderr, "%s (%ld infeasible, %ld hit the "
					     "time limit)\n",
				     gavel_solve_stats(policy, sw.solve_seconds)
					     .c_str(),
				     sw.infeasible_solves, sw.limit_hits);
		return r;
	}
	auto alloc = make_gavel_allocator(policy, params, &err);
	if (!alloc)
		throw InputError(err + " (gavel preset policies: gandiva-fair, "
				       "fifo, max-min-fairness, "
				       "finish-time-fairness, min-total-duration, "
				       "max-sum-throughput, allox, shockwave)");
	if (mode == RunMode::Check)
		return {};
	RunResult r = gavel_simulate(model_, cfg, *alloc, progress);
	for (JobResult &jr : r.jobs)
		jr.name = in.trace.jobs[jr.id].name;
	if (cfg.solve_stats)
		std::fprintf(stderr, "%s\n",
			     gavel_solve_stats(policy, alloc->solve_seconds)
				     .c_str());
	return r;
}

PresetRegistrar reg("gavel", [] { return std::make_unique<GavelPreset>(); });

} /* namespace */

} /* namespace tidal::sim */
