/*
 * gavel_policy.cc - the Gavel allocation policies as registry policies
 * (gandiva-fair, max-min-fairness, finish-time-fairness,
 * min-total-duration, max-sum-throughput, allox) for the plugin and the
 * native replay: each decide() is one Gavel round on core types.
 *
 *   Snapshot --> GavelJob per active job (tput = 1 / iter_time, work
 *   left = remaining, run time from Job::executed) --> GavelRounds, once
 *   per round --> the round's jobs: Keep where they run, Start for the
 *   others on free GPUs; Preempt / Hold for the rest; wake_at = the
 *   round's end.
 *
 * A round holds until its end, however often decide() is called (the
 * plugin calls it every CycleInterval): between ends the same jobs run,
 * so that shares are not recomputed into churn.  A job that stays runs
 * on where it is (Gavel's lease extension, whatever worker ids the round
 * gave it).  A job that enters waits until the GPUs it needs are free:
 * those of the jobs this round preempts come free only once they are
 * gone, so it starts at a later call (wake_at: at once), never on GPUs a
 * running job holds.  (In Slurm a leaver's GPUs show free once it is
 * requeued, and the start is refused for the seconds its processes take
 * to end: the plugin tries again each cycle.)  A job that arrives
 * mid-round waits for the next one, as in Gavel.  A preempted job that
 * is briefly out of the snapshot (its requeue completing) keeps its
 * place in the bookkeeping; a job gone at a round's end is dropped.
 *
 * The "gavel" preset of tidal-sim drives GavelRounds itself with the
 * anchor's own time model; this wrapper is what slurmctld would run.
 * Gavel's FIFO is not registered here: "fifo" is the baseline policy.
 * Every decision notes the job's share and when the round ends
 * (round_end, in the snapshot's clock), for tidalctl explain.
 *
 * A round's solve is bounded (Gavel.SolveLimit): one that runs out keeps
 * the last allocation (GavelRounds::kept_last_round) and says so in the
 * plan's log, and the next round solves again.
 *
 * Params: Gavel.RoundLength (120 s), Gavel.ResetInterval (0 s: the
 * shares are recomputed at the first round after jobs come or go, so that
 * a new job does not wait out the anchor's 1000 s with no share),
 * Gavel.SolveLimit (5 s; 0 = no bound), Allox.Alpha (0.2), Allox.Seed (0).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>

#include "core/policies/gavel_rounds.h"
#include "core/model/policy.h"
#include "core/placement/placement.h"

namespace tidal {

namespace {

/* After preempting this round's leavers: ask again as soon as their GPUs
 * can be free (a replay has released them once the plan is applied). */
constexpr double kSettle = 1e-3;

class GavelRoundPolicy : public Policy {
public:
	GavelRoundPolicy(std::string name, const Params &p,
			 std::unique_ptr<GavelAllocator> alloc)
	    : name_(std::move(name)), alloc_(std::move(alloc)),
	      round_(p.get_double("Gavel.RoundLength", 120, 1, 86400)),
	      reset_(p.get_double("Gavel.ResetInterval", 0, 0, 1e9))
	{
		alloc_->limit_s = p.get_double("Gavel.SolveLimit", 5, 0, 3600);
	}
	std::string name() const override { return name_; }
	Plan decide(const Snapshot &snap) override;
	std::vector<std::string> save_state() const override;
	bool load_state(const std::string &line) override;
	std::uint64_t state_serial() const override { return serial_; }

private:
	/* Worker w = the w-th GPU counting node by node. */
	Placement placement(const Cluster &c, const std::vector<int> &ws) const;
	void sync(const Snapshot &snap, bool boundary);
	void new_round(const Snapshot &snap);

	std::string name_;
	std::unique_ptr<GavelAllocator> alloc_;
	double round_, reset_;
	std::unique_ptr<GavelRounds> rounds_;
	std::map<JobId, double> executed_; /* Job::executed at last call */
	/* This round: its jobs and their workers, and when it ends. */
	std::map<JobId, std::vector<int>> chosen_;
	double round_end_ = 0;
	bool started_ = false;
	/* Jobs preempted and not seen back in the queue since: when. */
	std::map<JobId, double> leaving_;
	/* For the next plan's log: this round's solve ran out of time. */
	std::string over_limit_;
	/* Bumped at each round and each change of leaving_: what
	 * save_state() holds then is consistent (executed_ and the rounds'
	 * run time are credited together). */
	std::uint64_t serial_ = 0;
};

std::vector<std::string> GavelRoundPolicy::save_state() const
{
	std::vector<std::string> out;
	char buf[160];
	std::snprintf(buf, sizeof(buf), "round %.17g %d", round_end_,
		      started_ ? 1 : 0);
	out.push_back(buf);
	for (auto &[id, e] : executed_) {
		std::snprintf(buf, sizeof(buf), "exec %llu %.17g",
			      (unsigned long long)id, e);
		out.push_back(buf);
	}
	for (auto &[id, ws] : chosen_)
		out.push_back("chosen " + std::to_string(id) + " " +
			      gavel_workers_text(ws));
	for (auto &[id, when] : leaving_) {
		std::snprintf(buf, sizeof(buf), "leaving %llu %.17g",
			      (unsigned long long)id, when);
		out.push_back(buf);
	}
	if (rounds_)
		for (std::string &l : rounds_->save())
			out.push_back(std::move(l));
	for (std::string &l : alloc_->save())
		out.push_back(std::move(l));
	return out;
}

bool GavelRoundPolicy::load_state(const std::string &line)
{
	std::string word = line.substr(0, line.find(' '));
	unsigned long long id;
	double v;
	int flag, n = 0;
	char ws[4096];
	std::vector<int> w;
	const char *s = line.c_str();
	if (word == "round" &&
	    std::sscanf(s, "round %lg %d%n", &v, &flag, &n) == 2 && !s[n]) {
		round_end_ = v;
		started_ = flag != 0;
		return true;
	}
	if (word == "exec" &&
	    std::sscanf(s, "exec %llu %lg%n", &id, &v, &n) == 2 && !s[n]) {
		executed_[id] = v;
		return true;
	}
	if (word == "chosen" &&
	    std::sscanf(s, "chosen %llu %4095s%n", &id, ws, &n) == 2 && !s[n] &&
	    gavel_parse_workers(ws, &w)) {
		chosen_[id] = w;
		return true;
	}
	if (word == "leaving" &&
	    std::sscanf(s, "leaving %llu %lg%n", &id, &v, &n) == 2 && !s[n]) {
		leaving_[id] = v;
		return true;
	}
	if (word == "rounds" || word == "rjob" || word == "alloc" ||
	    word == "prev") {
		if (!rounds_)
			rounds_ = std::make_unique<GavelRounds>(0, round_,
								reset_);
		return rounds_->load(line);
	}
	return alloc_->load(line);
}

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

/* Admit new jobs and credit run time since the last call; at a round's
 * end, drop the jobs that are gone (a preempted one only a round after
 * it left: it may still be on its way back to the queue). */
void GavelRoundPolicy::sync(const Snapshot &snap, bool boundary)
{
	if (!rounds_)
		rounds_ = std::make_unique<GavelRounds>(
			snap.cluster->total_gpus(), round_, reset_);
	std::set<JobId> seen;
	for (const Job *j : snap.jobs) {
		seen.insert(j->id);
		auto it = executed_.find(j->id);
		if (it == executed_.end()) {
			rounds_->add_job(j->id);
			executed_[j->id] = j->executed;
			continue;
		}
		if (j->executed > it->second)
			rounds_->job_ran(j->id, j->executed - it->second);
		it->second = std::max(it->second, j->executed);
		if (j->state != JobState::Running && leaving_.erase(j->id))
			serial_++;
	}
	if (!boundary)
		return;
	for (auto it = executed_.begin(); it != executed_.end();) {
		auto l = leaving_.find(it->first);
		bool back_soon =
			l != leaving_.end() && snap.now - l->second < round_;
		if (seen.count(it->first) || back_soon) {
			++it;
			continue;
		}
		rounds_->remove_job(it->first);
		leaving_.erase(it->first);
		it = executed_.erase(it);
	}
}

void GavelRoundPolicy::new_round(const Snapshot &snap)
{
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
	chosen_.clear();
	/* GPUs on nodes that are down, or held by jobs Tidal does not
	 * schedule, are no workers this round. */
	rounds_->set_workers(snap.cluster->total_gpus());
	for (auto &[id, ws] : rounds_->schedule(snap.now, act, *alloc_))
		chosen_[id] = ws;
	if (rounds_->kept_last_round()) {
		char msg[320];
		std::snprintf(msg, sizeof(msg),
			      "%s: the round's allocation was not solved "
			      "within Gavel.SolveLimit=%g s (stopped after "
			      "%.3f s, %zu jobs): the last allocation is "
			      "kept, jobs that came since have no share, and "
			      "the next round solves again",
			      name_.c_str(), alloc_->limit_s,
			      alloc_->solve_seconds.empty()
				      ? 0.0
				      : alloc_->solve_seconds.back(),
			      act.size());
		over_limit_ = msg;
	}
	/* Rounds keep their phase: a call that comes late (the plugin asks
	 * every CycleInterval) does not push the next round's end later. */
	bool on_time = started_ && snap.now < round_end_ + round_;
	round_end_ = (on_time ? round_end_ : snap.now) + round_;
	started_ = true;
}

Plan GavelRoundPolicy::decide(const Snapshot &snap)
{
	bool boundary = !started_ || snap.now >= round_end_;
	sync(snap, boundary);
	if (boundary) {
		new_round(snap);
		serial_++;
	}

	/* Every running job's GPUs are taken: the stayers keep theirs, the
	 * leavers' come free only once they are gone. */
	FreeMap free(*snap.cluster);
	for (const Job *j : snap.jobs)
		if (j->state == JobState::Running)
			free.take(j->placement);
	Plan plan;
	bool leavers = false;
	for (const Job *j : snap.jobs) {
		auto c = chosen_.find(j->id);
		auto a = rounds_->allocation().find(j->id);
		double share = a == rounds_->allocation().end() ? 0 : a->second;
		bool running = j->state == JobState::Running;
		if (c == chosen_.end()) {
			if (running) {
				leavers = true;
				if (leaving_.emplace(j->id, snap.now).second)
					serial_++;
			}
			plan.add(j->id,
				 running ? Action::Preempt : Action::Hold, 0,
				 snap.want_reasons ? "not in this round: "
						     "behind jobs further "
						     "below their time share"
						   : "")
				.note("share", share)
				.note("round_end", round_end_);
			continue;
		}
		std::string why = snap.want_reasons
					  ? "runs this round (time share " +
						    std::to_string(share) + ")"
					  : "";
		if (running) {
			Decision &d =
				plan.add(j->id, Action::Keep, j->gpus, why);
			d.placement = j->placement;
			d.note("share", share).note("round_end", round_end_);
			continue;
		}
		/* The round's workers where they are free, else any free
		 * GPUs, one node first. */
		std::optional<Placement> p =
			placement(*snap.cluster, c->second);
		if (placement_gpus(*p) != j->gpus || !free.take(*p))
			p = free.place(j->gpus, PlacementScheme::Consolidated);
		if (!p) {
			plan.add(j->id, Action::Hold, 0,
				 snap.want_reasons ? "in this round, waiting "
						     "for the GPUs of "
						     "the jobs it replaces"
						   : "")
				.note("share", share)
				.note("round_end", round_end_);
			continue;
		}
		Decision &d = plan.add(j->id, Action::Start, j->gpus, why);
		d.placement = *p;
		d.note("share", share).note("round_end", round_end_);
	}
	plan.wake_at = leavers ? snap.now + kSettle : round_end_;
	if (!over_limit_.empty()) {
		plan.log.push_back(std::move(over_limit_));
		over_limit_.clear();
	}
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
