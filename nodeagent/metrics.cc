/*
 * metrics.cc - see metrics.h.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "nodeagent/metrics.h"

#include <map>
#include <mutex>

#include "core/version.h"
#include "nodeagent/nvml.h"

namespace tidal::agent
{

namespace
{

const std::vector<double> kSeconds = { 0.05, 0.1, 0.25, 0.5, 1,  2.5,
				       5,    10,  30,   60,  120, 300 };

/* The generation each launcher last reported, for restarts_total. */
std::mutex gen_mu;
std::map<uint64_t, int64_t> generations;

void declare(obs::Registry &r, const std::string &node)
{
	using obs::Metric;
	r.declare("tidal_agent_info", Metric::Gauge,
		  "tidald's version and node (value 1).",
		  { "version", "node" });
	r.declare("tidal_agent_registered", Metric::Gauge,
		  "1 while sched/tidal knows this node (its last heartbeat "
		  "was answered), else 0.");
	r.declare("tidal_agent_checkpoints_total", Metric::Counter,
		  "Checkpoints sched/tidal asked for (checkpoint, "
		  "checkpoint_stop), by result (ok, failed).",
		  { "result" });
	r.declare("tidal_agent_checkpoint_seconds", Metric::Histogram,
		  "Time from sched/tidal's order to the launcher's complete "
		  "checkpoint.",
		  {}, kSeconds);
	r.declare("tidal_agent_checkpoint_bytes_total", Metric::Counter,
		  "Bytes of the checkpoints written on sched/tidal's order.");
	r.declare("tidal_agent_fetches_total", Metric::Counter,
		  "Checkpoints copied from a peer tidald, by result (ok, "
		  "failed).",
		  { "result" });
	r.declare("tidal_agent_fetch_bytes_total", Metric::Counter,
		  "Bytes of the checkpoints copied from peers.");
	r.declare("tidal_agent_fetch_seconds", Metric::Histogram,
		  "Time to copy and verify a checkpoint from a peer.", {},
		  kSeconds);
	r.declare("tidal_agent_checkpoint_free_bytes", Metric::Gauge,
		  "Free bytes in the checkpoint directory.");
	r.declare("tidal_agent_launchers", Metric::Gauge,
		  "Jobs running under tidal-launch on this node.");
	r.declare("tidal_agent_launcher_restarts_total", Metric::Counter,
		  "Restarts of a job's trainers by its launcher (its "
		  "generation going up).");
	r.declare("tidal_agent_job_gpu_utilization_ratio", Metric::Gauge,
		  "The share of each step a job's GPU stage took, as its "
		  "trainer measured it (0..1).",
		  { "job" });
	r.declare("tidal_agent_job_gpu_memory_bytes", Metric::Gauge,
		  "GPU memory a job's trainer takes per GPU, as it reports.",
		  { "job" });
	r.declare("tidal_agent_nvml_up", Metric::Gauge,
		  "1 if NVML (libnvidia-ml.so.1) answers, else 0.");
	r.declare("tidal_agent_gpu_utilization_ratio", Metric::Gauge,
		  "NVML's GPU utilisation (0..1).", { "gpu", "uuid" });
	r.declare("tidal_agent_gpu_memory_used_bytes", Metric::Gauge,
		  "NVML's used GPU memory.", { "gpu", "uuid" });
	r.declare("tidal_agent_gpu_memory_total_bytes", Metric::Gauge,
		  "NVML's total GPU memory.", { "gpu", "uuid" });
	r.set("tidal_agent_info", { TIDAL_VERSION, node }, 1);
	r.on_collect([](obs::Registry &reg) {
		std::vector<GpuSample> gpus;
		std::string why;
		bool up = nvml_sample(&gpus, &why);
		reg.set("tidal_agent_nvml_up", {}, up ? 1 : 0);
		for (const char *f : { "tidal_agent_gpu_utilization_ratio",
				       "tidal_agent_gpu_memory_used_bytes",
				       "tidal_agent_gpu_memory_total_bytes" })
			reg.clear(f);
		for (const GpuSample &g : gpus) {
			std::vector<std::string> l = { std::to_string(g.index),
						       g.uuid };
			reg.set("tidal_agent_gpu_utilization_ratio", l, g.util);
			reg.set("tidal_agent_gpu_memory_used_bytes", l,
				(double)g.mem_used);
			reg.set("tidal_agent_gpu_memory_total_bytes", l,
				(double)g.mem_total);
		}
	});
}

} /* namespace */

obs::Registry &agent_metrics(const std::string &node)
{
	static obs::Registry *r = [&node] {
		auto *reg = new obs::Registry; /* lives as long as tidald */
		declare(*reg, node);
		return reg;
	}();
	return *r;
}

void metrics_heartbeat(const std::vector<wire::JobReport> &jobs,
		       std::optional<uint64_t> ckpt_free, bool registered)
{
	obs::Registry &r = agent_metrics();
	r.set("tidal_agent_registered", {}, registered ? 1 : 0);
	if (ckpt_free)
		r.set("tidal_agent_checkpoint_free_bytes", {},
		      (double)*ckpt_free);
	r.set("tidal_agent_launchers", {}, (double)jobs.size());
	r.clear("tidal_agent_job_gpu_utilization_ratio");
	r.clear("tidal_agent_job_gpu_memory_bytes");
	std::lock_guard<std::mutex> g(gen_mu);
	std::map<uint64_t, int64_t> now;
	for (const wire::JobReport &j : jobs) {
		const wire::TrainStatus &s = j.status;
		auto was = generations.find(j.job);
		if (was != generations.end() && s.generation > was->second)
			r.add("tidal_agent_launcher_restarts_total", {},
			      (double)(s.generation - was->second));
		now[j.job] = s.generation;
		if (s.gpu.present) {
			std::string id = std::to_string(j.job);
			r.set("tidal_agent_job_gpu_utilization_ratio", { id },
			      s.gpu.util / 100.0);
			r.set("tidal_agent_job_gpu_memory_bytes", { id },
			      s.gpu.mem_mb * 1024 * 1024);
		}
	}
	generations.swap(now);
}

} /* namespace tidal::agent */
