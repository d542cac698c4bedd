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
 * Muri-S/L and AntMan are further MuriSchedulers (groups set itertime_cur
 * and overhead per job); they are not implemented yet.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/policies/baseline.h"
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
				input_error(in.trace.path, (long)j.index + 2,
					    id + " asks for " +
						    std::to_string(j.gpus) +
						    " GPUs; the cluster has " +
						    std::to_string(total));
			if (!(j.iter_time > 0) || !(j.iterations > 0))
				input_error(in.trace.path, (long)j.index + 2,
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
	RunResult run(const SimInput &in, const std::string &policy,
		      const Params &params, const Progress &progress) override
	{
		std::string name = canonical(policy);
		if (name == "antman" || name == "muri-s" || name == "muri-l")
			throw InputError("policy '" + policy +
					 "' is not implemented in the muri "
					 "preset yet");
		std::string err;
		auto p = make_policy(name, params, &err);
		if (!p)
			throw InputError(err);
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
