/*
 * gavel_policy.cc - the Gavel allocation policies as registry policies
 * (gandiva-fair, max-min-fairness, finish-time-fairness,
 * min-total-duration, max-sum-throughput, allox) for the plugin and the
 * native replay: each decide() is one Gavel round on core types.
 *
 *   Snapshot --> GavelJob per active job (tput = 1 / iter_time, work
 *   left = remaining, run time from Job::executed) --> GavelRounds --> a
 *   placement per selected job on the cluster's GPUs in node order -->
 *   Start / Keep / Preempt / Hold, and wake_at = now + round length.
 *
 * The "gavel" preset of tidal-sim drives GavelRounds itself with the
 * anchor's own time model; this wrapper is what slurmctld would run.
 * Gavel's FIFO is not registered here: "fifo" is the baseline policy.
 *
 * Params: Gavel.RoundLength (120 s), Gavel.ResetInterval (1000 s),
 * Allox.Alpha (0.2), Allox.Seed (0).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cstdio>

#include "core/policies/gavel_rounds.h"
#include "core/model/policy.h"

namespace tidal {

namespace {

class GavelRoundPolicy : public Policy {
public:
	GavelRoundPolicy(std::string name, const Params &p,
			 std::unique_ptr<GavelAllocator> alloc)
		: name_(std::move(name)), alloc_(std::move(alloc)),
		  round_(p.get_double("Gavel.RoundLength", 120, 1, 86400)),
		  reset_(p.get_double("Gavel.ResetInterval", 1000, 0, 1e9))
	{
	}
	std::string name() const override { return name_; }
	Plan decide(const Snapshot &snap) override;

private:
	/* Worker w = the w-th GPU counting node by node. */
	Placement placement(const Cluster &c, const std::vector<int> &ws) const;
	void sync(const Snapshot &snap);

	std::string name_;
	std::unique_ptr<GavelAllocator> alloc_;
	double round_, reset_;
	std::unique_ptr<GavelRounds> rounds_;
	std::map<JobId, double> executed_; /* Job::executed at last call */
};

Placement GavelRoundPolicy::placement(const Cluster &c,
				      const std::vector<int> &ws) const
{
	Placement p;
	for (int w : ws) {
		int node = 0;
		while (node < (int)c.nodes.size() && w >= c.nodes[node].gpus)
			w -= c.nodes[node++].gpus;
		if (!p.empty() && p.back().node == node)
			p.back().gpus++;
		else
			p.push_back({node, 1});
	}
	return p;
}

/* Admit new jobs, drop gone ones, credit run time since the last call. */
void GavelRoundPolicy::sync(const Snapshot &snap)
{
	if (!rounds_)
		rounds_ = std::make_unique<GavelRounds>(
			snap.cluster->total_gpus(), round_, reset_);
	std::map<JobId, double> seen;
	for (const Job *j : snap.jobs) {
		auto it = executed_.find(j->id);
		if (it == executed_.end())
			rounds_->add_job(j->id);
		else if (j->executed > it->second)
			rounds_->job_ran(j->id, j->executed - it->second);
		seen[j->id] = j->executed;
	}
	for (auto &[id, e] : executed_)
		if (!seen.count(id))
			rounds_->remove_job(id);
	executed_ = seen;
}

Plan GavelRoundPolicy::decide(const Snapshot &snap)
{
	sync(snap);
	std::vector<GavelJob> act;
	for (const Job *j : snap.jobs) {
		GavelJob g;
		g.id = j->id;
		g.sf = j->gpus;
		g.tput = j->iter_time > 0 ? 1 / j->iter_time : 1;
		g.remaining = j->remaining;
		g.since_start = snap.now - j->submit;
		act.push_back(g);
	}
	auto sched = rounds_->schedule(snap.now, act, *alloc_);
	std::map<JobId, const std::vector<int> *> chosen;
	for (auto &[id, ws] : sched)
		chosen[id] = &ws;
	Plan plan;
	for (const Job *j : snap.jobs) {
		auto c = chosen.find(j->id);
		auto a = rounds_->allocation().find(j->id);
		double share = a == rounds_->allocation().end() ? 0 : a->second;
		if (c == chosen.end()) {
			Action act_ = j->state == JobState::Running
					      ? Action::Preempt
					      : Action::Hold;
			plan.add(j->id, act_, 0,
				 snap.want_reasons
					 ? "not in this round: behind jobs further "
					   "below their time share"
					 : "")
				.note("share", share);
			continue;
		}
		Placement p = placement(*snap.cluster, *c->second);
		bool same = j->state == JobState::Running && j->placement == p;
		Action act_ = same ? Action::Keep
				   : j->state == JobState::Running ? Action::Resize
								   : Action::Start;
		Decision &d = plan.add(j->id, act_, j->gpus,
				       snap.want_reasons
					       ? "runs this round (time share " +
							 std::to_string(share) + ")"
					       : "");
		d.placement = p;
		d.note("share", share);
	}
	plan.wake_at = snap.now + round_;
	return plan;
}

std::unique_ptr<Policy> make(const std::string &name, const Params &p)
{
	std::string err;
	auto a = make_gavel_allocator(name, p, &err);
	if (!a)
		return nullptr;
	return std::make_unique<GavelRoundPolicy>(name, p, std::move(a));
}

#define GAVEL_POLICY(var, name, summary)                                     \
	PolicyRegistrar var(name, summary,                                   \
			    [](const Params &p) { return make(name, p); })

GAVEL_POLICY(reg_gf, "gandiva-fair",
	     "Gavel rounds, equal time shares (Gandiva-fair as in Gavel)");
GAVEL_POLICY(reg_mmf, "max-min-fairness",
	     "Gavel rounds, max-min fair GPU shares (LP, GLPK)");
GAVEL_POLICY(reg_ftf, "finish-time-fairness",
	     "Gavel rounds, least worst finish-time ratio (Themis; LP bisection)");
GAVEL_POLICY(reg_mtd, "min-total-duration",
	     "Gavel rounds, shortest makespan of the active jobs (LP bisection)");
GAVEL_POLICY(reg_mst, "max-sum-throughput",
	     "Gavel rounds, largest total throughput (LP)");
GAVEL_POLICY(reg_allox, "allox",
	     "Gavel rounds, AlloX min-cost job positions (assignment)");

} /* namespace */

} /* namespace tidal */
