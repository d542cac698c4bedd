/*
 * muri.cc - the "muri" preset: the Muri simulator's model (SIGCOMM'22,
 * shared/anchors/muri/MODEL.md) around Tidal's core policies.
 *
 *   policy      anchor name    core policy, as configured here
 *   srtf        shortest       srtf: first-fit (Yarn), skip, preemptive,
 *                              every job re-placed from an empty cluster
 *   srsf        shortest-gpu   srsf: the same
 *   tiresias    dlas-gpu       tiresias: a global GPU counter (count), skip,
 *                              levels kept here ([3250, 7200] GPU-s, one
 *                              demotion per event), order inside a level
 *                              kept here (pending to the back)
 *   muri-s      multi-resource-blossom-same-gpu
 *                              muri-s (core/policies/muri.h): groups of up to
 *                              4 same-width jobs interleaved, SRSF order
 *   muri-l      ...-unaware    muri-l: the same, least attained service
 *   antman      antman         kept here (muri_antman.cc): guaranteed jobs
 *                              on their own GPUs, opportunistic ones on top
 *
 * The anchor names are accepted as aliases.  The time model (event merging,
 * per-interval overhead, end prediction) is in muri_replay.cc; this file
 * holds the two ways the anchor's loops keep their job order:
 *
 *   RankedScheduler  one runnable list, sorted in place by the policy's
 *                    rank at every event (ties keep the previous order);
 *   LevelScheduler   one list per Tiresias level, arrivals and demotions
 *                    appended, pending jobs moved to the back after each
 *                    decision.
 *
 *   GroupScheduler   Muri-S/L: the plan's order is the anchor's final
 *                    list order; group members share a time and an
 *                    overhead.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/policies/baseline.h"
#include "core/policies/muri.h"
#include "sim/csv.h"
#include "sim/presets/muri_model.h"

namespace tidal::sim::muri {

namespace {

/* Ask POLICY about the runnable jobs, in the list's order. */
Plan decide(Policy &policy, const Cluster &cluster,
	    const std::vector<MJob *> &runnable, Time now)
{
	Snapshot snap;
	snap.cluster = &cluster;
	snap.now = now;
	snap.want_reasons = false;
	snap.jobs.reserve(runnable.size());
	for (const MJob *m : runnable)
		snap.jobs.push_back(&m->job);
	return policy.decide(snap);
}

/* SRTF/SRSF (shortest_first_sim_jobs): the plan lists the jobs in the
 * policy's stable rank order, which is the anchor's in-place sort. */
class RankedScheduler : public MuriScheduler {
public:
	RankedScheduler(std::unique_ptr<Policy> p, const Cluster &c)
		: policy_(std::move(p)), cluster_(c)
	{
	}
	std::string name() const override { return policy_->name(); }
	void schedule(std::vector<MJob *> &runnable, Time now) override
	{
		Plan plan = decide(*policy_, cluster_, runnable, now);
		decisions++;
		std::unordered_map<JobId, size_t> pos;
		for (size_t i = 0; i < plan.decisions.size(); i++)
			pos.emplace(plan.decisions[i].job, i);
		auto at = [&](const MJob *m) {
			auto it = pos.find(m->job.id);
			return it == pos.end() ? plan.decisions.size()
					       : it->second;
		};
		std::stable_sort(runnable.begin(), runnable.end(),
				 [&](const MJob *a, const MJob *b) {
					 return at(a) < at(b);
				 });
		apply_solo_plan(plan, runnable, now);
	}

private:
	std::unique_ptr<Policy> policy_;
	const Cluster &cluster_;
};

/* dlas-gpu (dlas_sim_jobs(gputime=True)): Tiresias over levels this
 * scheduler keeps, with the anchor's queue clock (wall time while running,
 * overhead included) and its queue-jump events. */
class LevelScheduler : public MuriScheduler {
public:
	LevelScheduler(std::unique_ptr<Policy> p, const Cluster &c,
		       std::vector<double> limits)
		: policy_(std::move(p)), cluster_(c),
		  limits_(std::move(limits)), queues_(limits_.size() + 1)
	{
	}
	std::string name() const override { return policy_->name(); }
	LoopRules rules() const override
	{
		LoopRules r;
		r.earliest_end_only = true;
		return r;
	}
	void arrive(MJob &j) override
	{
		j.job.level = 0;
		queues_[0].push_back(&j);
	}
	void leave(MJob &j) override { std::erase(queues_[j.job.level], &j); }
	void advance(MJob &j, Time now) override
	{
		j.executed = j.executed + now - j.last_check;
		j.job.attained = j.executed * j.job.gpus;
		int lvl = j.job.level;
		if (lvl < (int)limits_.size() &&
		    j.executed * j.job.gpus >= limits_[lvl]) {
			std::erase(queues_[lvl], &j);
			j.job.level = lvl + 1;
			queues_[lvl + 1].push_back(&j);
		}
	}
	void schedule(std::vector<MJob *> &runnable, Time now) override
	{
		for (auto &q : queues_)
			for (size_t i = 0; i < q.size(); i++)
				q[i]->job.seq = i;
		Plan plan = decide(*policy_, cluster_, runnable, now);
		decisions++;
		apply_solo_plan(plan, runnable, now);
		for (auto &q : queues_)
			std::stable_partition(q.begin(), q.end(), [](MJob *m) {
				return m->job.state == JobState::Running;
			});
	}
	Time next_jump(const std::vector<MJob *> &runnable,
		       Time now) const override
	{
		Time t = kNever;
		for (const MJob *m : runnable) {
			int lvl = m->job.level;
			if (m->job.state != JobState::Running ||
			    lvl >= (int)limits_.size())
				continue;
			double at = std::ceil(limits_[lvl] / m->job.gpus) -
				    m->executed + now;
			t = std::min(t, at);
		}
		return t;
	}

private:
	std::unique_ptr<Policy> policy_;
	const Cluster &cluster_;
	std::vector<double> limits_;
	std::vector<std::vector<MJob *>> queues_;
};

/* Muri-S/L (multi_resource_blossom_same_sim_jobs): the core Muri policy
 * groups and places; its plan lists the jobs in the anchor's final list
 * order (sorted by rank, then stably by width, descending), and each group
 * member runs at the group's iteration time and pays the sum of its
 * members' restart overheads on every interval (MODEL.md §3.1). */
class GroupScheduler : public MuriScheduler {
public:
	GroupScheduler(std::unique_ptr<Policy> p, const Cluster &c)
		: policy_(std::move(p)),
		  muri_(dynamic_cast<Muri *>(policy_.get())), cluster_(c)
	{
	}
	std::string name() const override { return policy_->name(); }
	LoopRules rules() const override
	{
		LoopRules r;
		r.merge_abs = 1e-4;
		return r;
	}
	void schedule(std::vector<MJob *> &runnable, Time now) override;
	/* A group's members hold the same GPUs. */
	int busy_gpus(const std::vector<MJob *> &runnable) const override
	{
		int busy = 0;
		for (const Muri::Placed &g : muri_->placed())
			for (JobId id : g.members) {
				auto it = running_.find(id);
				if (it != running_.end()) {
					busy += it->second;
					break;
				}
			}
		return busy;
	}

private:
	std::unordered_map<JobId, int> running_; /* id -> GPUs, this step */
	std::unique_ptr<Policy> policy_;
	Muri *muri_;
	const Cluster &cluster_;
};

void GroupScheduler::schedule(std::vector<MJob *> &runnable, Time now)
{
	Plan plan = decide(*policy_, cluster_, runnable, now);
	decisions++;
	std::unordered_map<JobId, MJob *> by_id;
	for (MJob *m : runnable)
		by_id.emplace(m->job.id, m);
	/* per member: (group iteration time, group overhead) */
	std::unordered_map<JobId, std::pair<double, double>> speed;
	for (const Muri::Placed &g : muri_->placed()) {
		double oh = 0;
		for (JobId id : g.members) {
			const Job &j = by_id.at(id)->job;
			oh += restart_overhead(j.gpus, j.model);
		}
		for (JobId id : g.members)
			speed[id] = {g.iter_time, oh};
	}
	std::vector<MJob *> order;
	order.reserve(runnable.size());
	running_.clear();
	for (const Decision &d : plan.decisions) {
		MJob *m = by_id.at(d.job);
		Job &j = m->job;
		order.push_back(m);
		if (d.action == Action::Start || d.action == Action::Keep) {
			if (j.state != JobState::Running)
				m->resumes++;
			if (j.start < 0)
				j.start = now;
			j.state = JobState::Running;
			j.alloc = d.gpus;
			j.placement = d.placement;
			running_[j.id] = d.gpus;
			m->itertime_cur = speed.at(j.id).first;
			m->overhead = speed.at(j.id).second;
		} else {
			if (j.state == JobState::Running)
				j.preemptions++;
			j.state = JobState::Pending;
			j.alloc = 0;
			j.placement.clear();
		}
	}
	runnable = std::move(order);
}

/* The anchor's names for the policies it shares with Tidal. */
std::string canonical(const std::string &policy)
{
	std::string p = lower(policy);
	if (p == "shortest")
		return "srtf";
	if (p == "shortest-gpu")
		return "srsf";
	if (p == "dlas-gpu")
		return "tiresias";
	if (p == "multi-resource-blossom-same-gpu")
		return "muri-s";
	if (p == "multi-resource-blossom-same-gpu-unaware")
		return "muri-l";
	return p;
}

class MuriPreset : public Preset {
public:
	std::string name() const override { return "muri"; }
	std::string summary() const override
	{
		return "Muri (SIGCOMM'22) simulator: restart overhead on every "
		       "event interval, Yarn first-fit, dlas queues";
	}
	void prepare(SimInput &in) override
	{
		int total = in.cluster.total_gpus();
		for (const Job &j : in.trace.jobs) {
			std::string id = "job " + std::to_string(j.id);
			if (j.gpus > total)
				input_error(in.trace.path, in.trace.line(j),
					    id + " asks for " +
						    std::to_string(j.gpus) +
						    " GPUs; the cluster has " +
						    std::to_string(total));
			if (!(j.iter_time > 0) || !(j.iterations > 0))
				input_error(in.trace.path, in.trace.line(j),
					    id + " needs a positive "
						 "iteration_time and "
						 "iterations (Muri format)");
		}
	}
	Params policy_params(const std::string &policy) const override
	{
		Params p;
		std::string name = canonical(policy);
		if (name == "srtf" || name == "srsf") {
			p.set("Placement", "first-fit");
			p.set("Discipline", "skip");
			p.set("Preemptive", "yes");
			p.set("Replace", "yes");
		} else if (name == "tiresias") {
			p.set("Placement", "count");
			p.set("Discipline", "skip");
			p.set("Preemptive", "yes");
			p.set("Replace", "yes");
			p.set("Tiresias.Thresholds", "3250,7200");
			p.set("Tiresias.Order", "arrival");
			p.set("Tiresias.Levels", "state");
		}
		return p;
	}
	/* The registry's (antman among them: here the anchor's model, not
	 * the core policy), and the anchor's names for ours. */
	std::vector<std::string> policy_names() const override
	{
		std::vector<std::string> out = Preset::policy_names();
		for (const char *n :
		     {"antman", "shortest", "shortest-gpu", "dlas-gpu",
		      "multi-resource-blossom-same-gpu",
		      "multi-resource-blossom-same-gpu-unaware"})
			if (std::find(out.begin(), out.end(), n) == out.end())
				out.push_back(n);
		return out;
	}
	std::vector<std::string> keys() const override
	{
		return { "AntMan.UtilCap", "Muri.RestartOverhead" };
	}
	RunResult run(const SimInput &in, const std::string &policy,
		      const Params &params, const Progress &progress,
		      RunMode mode) override
	{
		std::string name = canonical(policy);
		OverheadOverride overhead(
			params.has("Muri.RestartOverhead")
				? params.get_double("Muri.RestartOverhead", 0,
						    0, 86400)
				: -1);
		if (name == "antman")
			return run_antman(in, params, progress, mode);
		std::string err;
		auto p = make_policy(name, params, &err);
		if (!p)
			throw InputError(err);
		if (mode == RunMode::Check)
			return {};
		if (dynamic_cast<Muri *>(p.get())) {
			GroupScheduler s(std::move(p), in.cluster);
			return run_muri(in, s, progress);
		}
		if (auto *t = dynamic_cast<Tiresias *>(p.get())) {
			std::vector<double> limits = t->tiresias().thresholds;
			LevelScheduler s(std::move(p), in.cluster, limits);
			return run_muri(in, s, progress);
		}
		RankedScheduler s(std::move(p), in.cluster);
		return run_muri(in, s, progress);
	}
	MetricRules metric_rules() const override
	{
		MetricRules r;
		r.makespan_from_first_submit = false;
		r.percentile_by_index = true;
		return r;
	}
};

PresetRegistrar reg("muri", [] { return std::make_unique<MuriPreset>(); });

} /* namespace */

} /* namespace tidal::sim::muri */
