/*
 * show.cc - the agents' columns in tidalctl's records (agents.h): a
 * node's agent, its heartbeat and topology; a job's checkpoint, training
 * progress and resize story; and the progress the engine reads.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <json.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/model/number_text.h"
#include "plugin/sched/agents.h"
#include "plugin/sched/agents/registry.h"
#include "proto/json.h"

namespace tidal::plugin
{

using namespace agents;

namespace
{

void put(wire::CtlRecord &rec, const char *k, const std::string &v)
{
	rec.emplace_back(k, wire::CtlValue{ wire::CtlValue::Text,
					    v.empty() ? "None" : v, 0 });
}
} /* namespace */

void agent_node_fields(const std::string &node, wire::CtlRecord &rec,
		       double now)
{
	Registry &r = reg();
	std::lock_guard<std::mutex> g(r.mu);
	auto it = r.agents.find(node);
	if (it == r.agents.end()) {
		put(rec, "Agent", "");
		return;
	}
	const AgentInfo &a = it->second;
	double age = std::max(0.0, wall_now() - a.last_seen);
	put(rec, "Agent", age <= 3 * a.heartbeat_s ? "UP" : "DOWN");
	put(rec, "HeartbeatAge", std::to_string((long)std::lround(age)) + "s");
	put(rec, "CkptFree", bytes_text((double)a.ckpt_free));
	put(rec, "CkptDir", a.ckpt_dir);
	put(rec, "CkptWritable",
	    a.ckpt_error.empty() ? "yes" : "no (" + a.ckpt_error + ")");
	json_object *t = json_tokener_parse(a.topology.c_str()), *v;
	std::string hcas, numa;
	std::vector<std::string> names;
	int gpus = -1;
	if (t && json_object_object_get_ex(t, "hcas", &v) &&
	    json_object_get_type(v) == json_type_array)
		for (size_t i = 0; i < json_object_array_length(v); i++)
			names.push_back(wire::get_str(
				json_object_array_get_idx(v, i), "name"));
	std::sort(names.begin(), names.end()); /* hwloc's order is PCI's */
	for (const std::string &h : names)
		hcas += (hcas.empty() ? "" : ",") + h;
	if (t && json_object_object_get_ex(t, "numa_nodes", &v) &&
	    json_object_get_type(v) == json_type_array)
		numa = std::to_string(json_object_array_length(v));
	if (t && json_object_object_get_ex(t, "gpus", &v) &&
	    json_object_get_type(v) == json_type_array) {
		gpus = (int)json_object_array_length(v);
		numa += gpus ? " (GPU:NUMA" : "";
		for (int i = 0; i < gpus; i++)
			numa += (i ? "," : " ") +
				std::to_string(wire::get_integer(
					json_object_array_get_idx(v, i), "numa",
					-1));
		numa += gpus ? ")" : "";
	}
	if (t)
		json_object_put(t);
	put(rec, "HCAs", hcas);
	put(rec, "TopoGPUs", gpus < 0 ? "" : std::to_string(gpus));
	put(rec, "NUMA", numa);
}

std::vector<std::string> agent_fabric_reports()
{
	Registry &r = reg();
	std::lock_guard<std::mutex> g(r.mu);
	std::vector<std::string> out;
	for (const auto &[node, a] : r.agents)
		if (!a.fabric.empty() &&
		    std::find(out.begin(), out.end(), a.fabric) == out.end())
			out.push_back(a.fabric);
	return out;
}

void agent_job_fields(uint32_t job, wire::CtlRecord &rec, bool full)
{
	Registry &r = reg();
	std::lock_guard<std::mutex> g(r.mu);
	auto it = r.jobs.find(job);
	if (it == r.jobs.end()) {
		if (full)
			put(rec, "Checkpoint", "");
		return;
	}
	const JobInfo &j = it->second;
	if (full || j.step)
		put(rec, "Checkpoint",
		    j.step ? "step " + std::to_string(j.step) + " on " +
				     j.node + " " + j.path
			   : "");
	if (full && j.has_status) {
		char buf[160];
		std::snprintf(buf, sizeof(buf),
			      "step %llu, %.3g it/s, loss %.4g, %s (%s)",
			      (unsigned long long)j.status.step, j.status.it_s,
			      j.status.loss.value_or(0), j.status.state.c_str(),
			      j.status_node.c_str());
		std::string t = buf;
		if (j.status.batch)
			t += ", batch " + std::to_string(j.status.batch);
		if (j.status.progress) {
			std::snprintf(buf, sizeof(buf), ", progress %.6g",
				      *j.status.progress);
			t += buf;
		}
		put(rec, "Training", t);
		if (j.status.stages.present) {
			/* per step, as the trainer measured them (ms) */
			std::snprintf(buf, sizeof(buf),
				      "data %.0f ms, compute %.0f ms, sync "
				      "%.0f ms",
				      j.status.stages.data,
				      j.status.stages.compute,
				      j.status.stages.comm);
			put(rec, "Stages", buf);
		}
		if (j.status.gpu.present) {
			/* what packing policies read (lucid, antman) */
			std::snprintf(buf, sizeof(buf),
				      "utilisation %.0f%%, memory %.0f MiB",
				      j.status.gpu.util, j.status.gpu.mem_mb);
			put(rec, "GpuUse", buf);
		}
		if (j.status.grad_sqr && j.status.grad_var) {
			std::snprintf(buf, sizeof(buf),
				      "sqr %.4g, var %.4g (noise scale %.4g)",
				      *j.status.grad_sqr, *j.status.grad_var,
				      *j.status.grad_sqr > 0
					      ? *j.status.grad_var /
							*j.status.grad_sqr
					      : 0.0);
			put(rec, "Gradient", buf);
		}
	}
	if (full && !j.story.empty()) {
		std::string story;
		for (const std::string &l : j.story)
			story += (story.empty() ? "" : "; ") + l;
		put(rec, "ResizeStory", story);
	}
}

bool agent_job_progress(uint32_t job, double now, double max_age,
			JobProgress *p)
{
	Registry &r = reg();
	std::lock_guard<std::mutex> g(r.mu);
	auto it = r.jobs.find(job);
	if (it == r.jobs.end() || !it->second.has_status ||
	    now - it->second.status_seen > max_age)
		return false;
	const wire::TrainStatus &s = it->second.status;
	if (s.state != "running" || s.it_s <= 0)
		return false;
	p->step = (double)s.step;
	p->it_s = s.it_s;
	if (s.stages.present) {
		p->stages[0] = s.stages.data / 1000;
		p->stages[1] = s.stages.compute / 1000;
		p->stages[2] = s.stages.comm / 1000;
	}
	if (s.gpu.present) {
		p->gpu_util = s.gpu.util;
		p->gpu_mem_mb = s.gpu.mem_mb;
	}
	p->batch = s.batch;
	p->world = s.world;
	p->progress = s.progress.value_or(NAN);
	p->grad_sqr = s.grad_sqr.value_or(NAN);
	p->grad_var = s.grad_var.value_or(NAN);
	return true;
}
} /* namespace tidal::plugin */
