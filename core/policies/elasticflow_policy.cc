/*
 * elasticflow_policy.cc - "elasticflow" and "elasticflow-noadmit" as core
 * policies (what the plugin runs), built on the planner in elasticflow.h.
 *
 * At every decide():
 *
 *   1. each job that has not been admitted yet (pending, never started)
 *      is tested alone against the admitted jobs, in submission order:
 *      all of them are re-planned in deadline order from a free cluster
 *      (an admitted job that can no longer meet its deadline counts as
 *      best-effort there, so that it does not refuse every job after it);
 *      if any plan misses its deadline the job is rejected, with a reason
 *      naming its deadline, the GPU-time it needs and what the cluster can
 *      offer it (best-effort jobs are admitted without a deadline);
 *   2. the admitted jobs get their minimum satisfactory share now;
 *   3. the GPUs left go by marginal return (ef_allocate_leftover);
 *   4. jobs keeping their GPU count keep their placement; the others are
 *      placed by the Placement scheme (consolidated by default).
 *
 * Parameters:
 *   ElasticFlow.Profiles=DIR  throughput tables, one <model>.csv per model
 *                             (required)
 *   ElasticFlow.Slot=240      planning slot, seconds
 *   Placement=consolidated    see core/placement/placement.h
 *
 * A job's GPU range is its min_gpus..max_gpus (or its requested count),
 * further limited to the levels its profile lists and to 64.
 *
 * A job it cannot plan, one without a throughput row (model and global
 * batch) or without its work in iterations (Job::iterations_known), is
 * rejected while pending, the reason naming what it lacks: left pending
 * it would wait forever, and run outside the plan it would take GPUs the
 * admitted jobs' deadlines count on.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <sstream>

#include "core/placement/placement.h"
#include "core/policies/elasticflow.h"
#include "core/model/policy.h"

namespace tidal {

namespace {

constexpr SlotTime kNoDeadlineSlot = std::numeric_limits<SlotTime>::max();

class ElasticFlowPolicy : public Policy {
public:
	ElasticFlowPolicy(std::string name, bool admission, const Params &p)
		: name_(std::move(name)), admission_(admission)
	{
		slot_ = p.get_long("ElasticFlow.Slot", 240, 1, 86400);
		std::string dir = p.get_str("ElasticFlow.Profiles", "");
		placement_scheme_from_name(
			p.get_choice("Placement", "consolidated",
				     {"consolidated", "switch-aware",
				      "first-fit", "best-fit", "count",
				      "most-free"}),
			&scheme_);
		if (dir.empty()) {
			err_ = "ElasticFlow.Profiles: the directory of "
			       "throughput tables is required";
		} else if (!table_.load_dir(dir, &err_)) {
			/* A bad value like any other (tidal-sim stops);
			 * the plugin goes on holding every job. */
			p.invalid("ElasticFlow.Profiles", err_,
				  "every job is held");
			err_ = "ElasticFlow.Profiles=" + dir + ": " + err_;
		}
	}
	const std::string &error() const { return err_; }
	std::string name() const override { return name_; }
	Plan decide(const Snapshot &snap) override;
	bool admits_by_deadline() const override { return admission_; }

private:
	struct Item {
		const Job *job;
		EfEntry entry;
	};
	bool view_of(const Job &j, EfJobView *v, std::string *why) const;
	void admit_new(std::vector<Item> &items, const EfEnv &env, Plan &plan);
	void emit(std::vector<Item> &items, const Snapshot &snap, Plan &plan);

	std::string name_, err_;
	bool admission_;
	SlotTime slot_ = 240;
	PlacementScheme scheme_ = PlacementScheme::Consolidated;
	ThroughputTable table_;
	std::set<JobId> admitted_;
};

/* Up to four of ITEMS, comma separated, "..." for the rest. */
template <typename T> static std::string some_of(const std::vector<T> &items)
{
	std::ostringstream s;
	for (size_t i = 0; i < items.size() && i < 4; i++)
		s << (i ? ", " : "") << items[i];
	if (items.size() > 4)
		s << ", ...";
	return items.empty() ? "none" : s.str();
}

/* What planning J lacks, "" if nothing: a throughput row (its model and
 * global batch) and its work in iterations. */
static std::string missing(const Job &j, const ThroughputTable &table)
{
	std::vector<std::string> m;
	if (j.model.empty())
		m.push_back("no --train-model");
	else if (!table.has_model(j.model))
		m.push_back("no throughput table for --train-model=" +
			    j.model + " (tables: " + some_of(table.models()) +
			    ")");
	if (j.batch <= 0)
		m.push_back("no --train-batch");
	else if (table.has_model(j.model) && !table.row(j.model, j.batch))
		m.push_back(j.model + "'s table has no row for --train-batch=" +
			    std::to_string(j.batch) + " (rows: " +
			    some_of(table.batches(j.model)) + ")");
	if (!j.iterations_known)
		m.push_back("no --train-iters");
	std::string out;
	for (const std::string &x : m)
		out += (out.empty() ? "" : ", ") + x;
	return out;
}

bool ElasticFlowPolicy::view_of(const Job &j, EfJobView *v,
				std::string *why) const
{
	std::string lacks = missing(j, table_);
	if (!lacks.empty()) {
		*why = name_ + " cannot plan this job without its throughput "
			       "profile and its iterations: " + lacks;
		return false;
	}
	const ThroughputRow *row = table_.row(j.model, j.batch);
	int cap = std::min(64, j.max_gpus > 0 ? j.max_gpus : j.gpus);
	v->row = row;
	v->max_gpu = row->last_level(cap + 1, cap);
	v->iter_left = j.remaining > 0 ? j.remaining : j.iterations;
	v->deadline = j.has_deadline() && !j.best_effort
			      ? (SlotTime)std::floor(j.deadline)
			      : kNoDeadlineSlot;
	if (v->max_gpu <= 0)
		*why = name_ + ": " + j.model + "'s table at batch " +
		       std::to_string(j.batch) +
		       " has no measured GPU count up to " +
		       std::to_string(cap) + ", the most the job takes";
	else if (v->iter_left <= 0)
		*why = name_ + ": no iterations left";
	return v->max_gpu > 0 && v->iter_left > 0;
}

static void by_deadline(std::vector<int> &order,
			const std::vector<EfEntry> &es)
{
	std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
		return es[a].view.deadline < es[b].view.deadline;
	});
}

void ElasticFlowPolicy::admit_new(std::vector<Item> &items, const EfEnv &env,
				  Plan &plan)
{
	std::vector<EfEntry> es;
	for (Item &it : items)
		es.push_back(it.entry);
	std::vector<int> base;
	for (size_t i = 0; i < items.size(); i++)
		if (admitted_.count(items[i].job->id))
			base.push_back((int)i);
	/* An admitted job that can no longer meet its deadline (it ran
	 * slower than its profile, or started late) no longer counts
	 * against new jobs: it is tested as best-effort, the first that
	 * fails at a time, so that one late job does not refuse every job
	 * after it. */
	for (size_t tries = 0; tries < base.size(); tries++) {
		std::vector<int> order = base;
		by_deadline(order, es);
		EfTimeline f;
		EfAdmission r = ef_admit(es, order, env, f);
		if (r.ok)
			break;
		es[order[r.failed]].view.deadline = kNoDeadlineSlot;
	}
	for (size_t i = 0; i < items.size(); i++) {
		const Job &j = *items[i].job;
		if (admitted_.count(j.id))
			continue;
		std::vector<int> trial = base;
		trial.push_back((int)i);
		by_deadline(trial, es);
		EfTimeline f;
		EfAdmission r = ef_admit(es, trial, env, f);
		if (r.ok || !admission_ || j.best_effort) {
			admitted_.insert(j.id);
			base.push_back((int)i);
			continue;
		}
		std::string why = r.reason;
		if (trial[r.failed] != (int)i)
			why = "admitting it would make job " +
			      items[trial[r.failed]].job->name +
			      " miss its deadline: " + r.reason;
		plan.add(j.id, Action::Reject, 0, "deadline cannot be met: " + why)
			.note("deadline", (double)es[i].view.deadline)
			.note("needed_gpu_s", ef_needed_gpu_time(es[i].view));
	}
}

void ElasticFlowPolicy::emit(std::vector<Item> &items, const Snapshot &snap,
			     Plan &plan)
{
	FreeMap free(*snap.cluster);
	std::vector<Item *> keep, move;
	for (Item &it : items) {
		int g = it.entry.gpus;
		if (it.job->state == JobState::Running && g == it.job->alloc &&
		    free.take(it.job->placement))
			keep.push_back(&it);
		else
			move.push_back(&it);
	}
	for (Item *it : keep)
		plan.add(it->job->id, Action::Keep, it->entry.gpus,
			 snap.want_reasons ? "keeps its share" : "")
			.placement = it->job->placement;
	std::stable_sort(move.begin(), move.end(), [](Item *a, Item *b) {
		return a->entry.gpus > b->entry.gpus;
	});
	for (Item *it : move) {
		const Job &j = *it->job;
		int g = it->entry.gpus;
		bool running = j.state == JobState::Running;
		std::optional<Placement> p;
		if (g > 0)
			p = free.place(g, scheme_);
		if (!p) {
			plan.add(j.id, running ? Action::Preempt : Action::Hold,
				 0, "no GPUs in its plan now");
			continue;
		}
		Decision &d = plan.add(j.id,
				       running ? Action::Resize : Action::Start,
				       g, "planned share to meet its deadline");
		d.placement = *p;
		d.note("planned_end", (double)it->entry.plan.end);
	}
}

Plan ElasticFlowPolicy::decide(const Snapshot &snap)
{
	Plan plan;
	EfEnv env;
	env.now = (SlotTime)std::ceil(snap.now);
	env.slot = slot_;
	env.cluster = snap.cluster->total_gpus();
	std::vector<Item> items;
	for (const Job *j : snap.jobs) {
		Item it{j, {}};
		std::string why;
		if (!err_.empty()) { /* tidal.conf's to fix: every job waits */
			plan.add(j->id, Action::Hold, 0, err_);
			continue;
		}
		if (!view_of(*j, &it.entry.view, &why)) {
			/* It would wait forever: a pending job is rejected
			 * (RejectAction) with what it lacks. */
			bool pending = j->state == JobState::Pending;
			plan.add(j->id, pending ? Action::Reject : Action::Hold,
				 0, why);
			continue;
		}
		if (j->state == JobState::Running)
			admitted_.insert(j->id);
		items.push_back(std::move(it));
	}
	admit_new(items, env, plan);
	std::vector<Item> live;
	for (Item &it : items)
		if (admitted_.count(it.job->id))
			live.push_back(std::move(it));
	std::vector<EfEntry> es;
	for (Item &it : live)
		es.push_back(it.entry);
	std::vector<int> order;
	for (size_t i = 0; i < es.size(); i++)
		order.push_back((int)i);
	by_deadline(order, es);
	EfTimeline f;
	ef_admit(es, order, env, f);
	for (EfEntry &e : es)
		e.gpus = e.plan.alloc.at(env.now);
	ef_allocate_leftover(es, order, env, f, [](int, int) {});
	for (size_t i = 0; i < live.size(); i++)
		live[i].entry = es[i];
	emit(live, snap, plan);
	return plan;
}

/* A bad profile directory is not fatal here: every job is held with the
 * error as its reason, so the plugin keeps running and says why. */
std::unique_ptr<Policy> make(const char *name, bool admission,
			     const Params &p)
{
	return std::make_unique<ElasticFlowPolicy>(name, admission, p);
}

PolicyRegistrar reg_ef("elasticflow",
		       "ElasticFlow: deadline admission, minimum satisfactory "
		       "share, leftover GPUs by marginal return",
		       [](const Params &p) { return make("elasticflow", true, p); });
PolicyRegistrar reg_ef_noadmit(
	"elasticflow-noadmit",
	"ElasticFlow's planner without admission control",
	[](const Params &p) { return make("elasticflow-noadmit", false, p); });

} /* namespace */

} /* namespace tidal */
