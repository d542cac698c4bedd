/*
 * elasticflow.cc - the "elasticflow" preset: ElasticFlow's simulator
 * (ASPLOS'23 artifact, simulation mode) as a tidal-sim model.
 *
 * Inputs: an ElasticFlow trace, a cluster spec (only the GPU count
 * matters), and --profiles DIR with one <model>.csv throughput table per
 * model (core/profiles/throughput_table.h).  Parameters:
 *
 *   ElasticFlow.Slot=240   scheduling slot, seconds (1..86400): events are
 *                          coalesced to at most one per slot, GPUs are
 *                          returned at slot-aligned times, and the slot
 *                          value doubles as the restart period counted in
 *                          scheduling events.
 *
 *   ElasticFlow.GpuType   A100 or T4: ElasticFlow's max_gpu rules for
 *                          elasticflow (default: T4 if the profiles
 *                          path names it, else A100).
 *
 * Policies (the artifact's names in brackets):
 *   elasticflow [ef-accessctrl], elasticflow-noadmit [ef]
 *                                         elasticflow_ef.cc
 *   edf, edf-admit [edf-accessctrl]       elasticflow_edf.cc
 *   tiresias [dlas-gpu]                   elasticflow_tiresias.cc
 *   gandiva                               elasticflow_gandiva.cc
 *   themis                                elasticflow_themis.cc
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "sim/presets/elasticflow.h"

#include <algorithm>
#include <cmath>

#include "core/model/policy.h"
#include "sim/csv.h"

namespace tidal::sim::elasticflow {

/* --- list helpers --- */

void list_remove(std::vector<int> &l, int v)
{
	auto it = std::find(l.begin(), l.end(), v);
	if (it != l.end())
		l.erase(it);
}

bool list_has(const std::vector<int> &l, int v)
{
	return std::find(l.begin(), l.end(), v) != l.end();
}

/* --- events --- */

int EventList::find(SlotTime t) const
{
	for (size_t i = 0; i < ev.size(); i++)
		if (ev[i].time == t)
			return (int)i;
	return -1;
}

void EventList::add_starts(const std::vector<EfJob> &jobs)
{
	for (size_t j = 0; j < jobs.size(); j++) {
		int i = find(jobs[j].submit);
		if (i < 0) {
			ev.push_back({jobs[j].submit, {}, {}});
			i = (int)ev.size() - 1;
		}
		ev[i].start_jobs.push_back((int)j);
	}
	sort();
}

void EventList::add_end(std::vector<EfJob> &jobs, int j)
{
	int i = find(jobs[j].end_time);
	if (i < 0)
		ev.push_back({jobs[j].end_time, {}, {j}});
	else if (!list_has(ev[i].end_jobs, j))
		ev[i].end_jobs.push_back(j);
}

void EventList::add_scale(SlotTime t)
{
	if (find(t) < 0)
		ev.push_back({t, {}, {}});
}

void EventList::change_end(std::vector<EfJob> &jobs, int j)
{
	if (jobs[j].old_end_time == jobs[j].end_time)
		return;
	int i = find(jobs[j].old_end_time);
	if (i >= 0) {
		list_remove(ev[i].end_jobs, j);
		if (ev[i].end_jobs.empty() && ev[i].start_jobs.empty())
			ev.erase(ev.begin() + i);
	}
	add_end(jobs, j);
}

void EventList::sort()
{
	std::stable_sort(ev.begin(), ev.end(),
			 [](const Event &a, const Event &b) {
				 return a.time < b.time;
			 });
}

SlotTime EventList::coalesce(SlotTime now, SlotTime slot, bool merge_ends)
{
	sort();
	SlotTime next = ev[0].time;
	while (next - now <= slot && ev.size() > 1) {
		ev[0].time = now + slot;
		if (ev[1].time - now > slot)
			break;
		next = ev[1].time;
		Event &a = ev[0], &b = ev[1];
		a.start_jobs.insert(a.start_jobs.end(), b.start_jobs.begin(),
				    b.start_jobs.end());
		if (merge_ends)
			a.end_jobs.insert(a.end_jobs.end(), b.end_jobs.begin(),
					  b.end_jobs.end());
		ev.erase(ev.begin() + 1);
	}
	return ev[0].time;
}

/* --- context --- */

void Context::complete(int j)
{
	const EfJob &e = jobs[j];
	JobResult r;
	r.id = e.job->id;
	r.name = e.job->name;
	r.gpus = e.job->gpus;
	r.submit = (Time)e.submit;
	r.start = (Time)e.start;
	r.end = (Time)e.end_time;
	r.jct = (double)(SlotTime)(e.end_time - e.submit);
	r.queue = e.start >= 0 ? (double)(e.start - e.submit) : 0;
	r.deadline = e.job->deadline;
	result.jobs.push_back(r);
	done++;
	if (progress)
		progress(done, (long)jobs.size());
}

void Context::sample(SlotTime now, int busy)
{
	if (!result.util.empty() && result.util.back().t == (Time)now)
		result.util.back().busy = busy;
	else
		result.util.push_back({(Time)now, busy});
}

RunResult Context::finish(const std::string &policy)
{
	result.policy = policy;
	result.total_gpus = cluster_gpus;
	if (accepted + declined > 0)
		result.deadline_ratio =
			(double)accepted / (double)(accepted + declined);
	if (!result.jobs.empty()) {
		double first = INFINITY, last = -INFINITY;
		for (const JobResult &r : result.jobs) {
			if (r.rejected)
				continue;
			first = std::min(first, r.submit);
			last = std::max(last, r.end);
		}
		result.makespan = last - first;
	}
	return std::move(result);
}

/* ElasticFlow's max_gpu for every policy but ef/ef-accessctrl. */
static int listed_max_gpu(const ThroughputRow &row, int batch)
{
	return std::min({row.max_listed(), 64, batch});
}

static SlotTime whole_seconds(const SimInput &in, const Job &j, double v,
			      const char *what)
{
	if (!std::isfinite(v) || v != std::floor(v))
		input_error(in.trace_path, in.trace.line(j),
			    std::string(what) + " must be whole seconds for "
			    "the elasticflow preset, got " + std::to_string(v));
	return (SlotTime)v;
}

Context make_context(const SimInput &in, const ThroughputTable &table,
		     const Params &params, const Progress &progress)
{
	Context ctx;
	ctx.in = &in;
	ctx.slot = params.get_long("ElasticFlow.Slot", 240, 1, 86400);
	ctx.cluster_gpus = in.cluster.total_gpus();
	ctx.nodes = (int)in.cluster.nodes.size();
	ctx.gpus_per_node = in.cluster.max_gpus_per_node();
	/* The artifact numbers nodes 0.. within each switch. */
	ctx.node_ids.resize(in.cluster.nodes.size());
	for (size_t n = 0; n < in.cluster.nodes.size(); n++)
		ctx.node_ids[n] = (int)n;
	for (const Switch &sw : in.cluster.switches)
		for (size_t p = 0; p < sw.nodes.size(); p++)
			if (sw.nodes[p] >= 0 &&
			    sw.nodes[p] < (int)ctx.node_ids.size())
				ctx.node_ids[sw.nodes[p]] = (int)p;
	std::string gpu = params.get_choice(
		"ElasticFlow.GpuType",
		in.profiles_path.find("T4") != std::string::npos ? "T4"
								 : "A100",
		{"A100", "T4"});
	bool t4 = lower(gpu) == "t4";
	ctx.progress = progress;
	for (const Job &j : in.trace.jobs) {
		EfJob e;
		e.job = &j;
		e.row = table.row(j.model, j.batch);
		if (!e.row)
			input_error(in.trace_path, in.trace.line(j),
				    "no throughput for model " + j.model +
					    " at batch size " +
					    std::to_string(j.batch) + " in " +
					    in.profiles_path);
		e.max_gpu = listed_max_gpu(*e.row, j.batch);
		e.ef_max_gpu = ef_max_gpu(j.model, j.batch, t4);
		e.best_effort = j.best_effort;
		e.submit = whole_seconds(in, j, j.submit, "submit_time");
		e.ddl = j.has_deadline()
				? whole_seconds(in, j, j.deadline, "ddl")
				: std::numeric_limits<SlotTime>::max();
		e.iter_left = j.iterations;
		ctx.jobs.push_back(e);
	}
	std::stable_sort(ctx.jobs.begin(), ctx.jobs.end(),
			 [](const EfJob &a, const EfJob &b) {
				 return a.submit < b.submit;
			 });
	return ctx;
}

namespace {

class ElasticFlowPreset : public Preset {
public:
	std::string name() const override { return "elasticflow"; }
	std::string summary() const override
	{
		return "ElasticFlow (ASPLOS'23) simulator: slotted events, "
		       "throughput tables, planned ends";
	}
	void prepare(SimInput &in) override
	{
		if (in.profiles_path.empty())
			throw InputError("the elasticflow preset needs --profiles "
					 "DIR (one <model>.csv throughput table "
					 "per model)");
		std::string err;
		if (!table_.load_dir(in.profiles_path, &err))
			throw InputError(err);
	}
	Params policy_params(const std::string &policy) const override
	{
		Params p;
		p.set("ElasticFlow.Slot", "240");
		if (lower(policy) == "tiresias") {
			/* dlas-gpu: queue limits in GPU-seconds, FIFO within
			 * a queue, fit-first, a global GPU count. */
			p.set("Tiresias.Thresholds", "3250,7200");
			p.set("Tiresias.Levels", "state");
			p.set("Tiresias.Order", "arrival");
			p.set("Placement", "count");
			p.set("Discipline", "skip");
			p.set("Preemptive", "yes");
			p.set("Replace", "yes");
		}
		return p;
	}
	std::vector<std::string> policy_names() const override
	{
		return {"elasticflow", "ef-accessctrl", "elasticflow-noadmit",
			"ef", "edf", "edf-admit", "edf-accessctrl", "tiresias",
			"gandiva", "themis"};
	}
	std::vector<std::string> keys() const override
	{
		return {"ElasticFlow.Slot", "ElasticFlow.GpuType"};
	}
	RunResult run(const SimInput &in, const std::string &policy,
		      const Params &params, const Progress &progress,
		      RunMode mode) override
	{
		Context ctx = make_context(in, table_, params, progress);
		std::string p = lower(policy);
		int gpn = ctx.gpus_per_node;
		if (p == "tiresias")
			return run_tiresias(ctx, params, mode);
		/* The others read no parameter beyond the context's. */
		if (mode == RunMode::Check)
			return {};
		if (p == "elasticflow" || p == "ef-accessctrl")
			return run_ef(ctx, true, gpn);
		if (p == "elasticflow-noadmit" || p == "ef")
			return run_ef(ctx, false, gpn);
		if (p == "edf")
			return run_edf(ctx, false);
		if (p == "edf-admit" || p == "edf-accessctrl")
			return run_edf(ctx, true);
		if (p == "gandiva")
			return run_gandiva(ctx, gpn);
		if (p == "themis")
			return run_themis(ctx, gpn);
		throw InputError("the elasticflow preset has no policy '" +
				 policy + "' (known: elasticflow, "
				 "elasticflow-noadmit, edf, edf-admit, "
				 "tiresias, gandiva, themis)");
	}
	MetricRules metric_rules() const override
	{
		MetricRules m;
		m.makespan_from_first_submit = true;
		m.truncate_jct = true;
		return m;
	}

private:
	ThroughputTable table_;
};

PresetRegistrar reg("elasticflow",
		    [] { return std::make_unique<ElasticFlowPreset>(); });

} /* namespace */

} /* namespace tidal::sim::elasticflow */
