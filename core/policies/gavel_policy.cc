/*
 * gavel_policy.cc - the Gavel allocation policies as registry policies
 * (gandiva-fair, max-min-fairness, finish-time-fairness,
 * min-total-duration, max-sum-throughput, allox) for the plugin and the
 * native replay: each decide() is one Gavel round on core types.
 *
 *   pick(): Snapshot --> GavelJob per active job (tput = 1 / iter_time,
 *   work left = remaining, run time from Job::executed) --> GavelRounds
 *   --> the round's jobs and their workers.  The round mechanics (Keep,
 *   Start, Preempt, Hold, the round's phase, a restart) are
 *   RoundPolicy's (round_policy.h).
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
#include <cstdio>

#include "core/policies/gavel_rounds.h"
#include "core/policies/round_policy.h"

namespace tidal {

namespace {

class GavelRoundPolicy : public RoundPolicy
{
public:
	GavelRoundPolicy(std::string name, const Params &p,
			 std::unique_ptr<GavelAllocator> alloc)
	    : RoundPolicy(std::move(name),
			  p.get_double("Gavel.RoundLength", 120, 1, 86400)),
	      alloc_(std::move(alloc)),
	      rounds_(0, round_length(),
		      p.get_double("Gavel.ResetInterval", 0, 0, 1e9))
	{
		alloc_->limit_s = p.get_double("Gavel.SolveLimit", 5, 0, 3600);
	}

protected:
	void on_new(const Job &job) override { rounds_.add_job(job.id); }
	void on_ran(JobId id, double exec) override
	{
		rounds_.job_ran(id, exec);
	}
	void on_gone(JobId id) override { rounds_.remove_job(id); }
	std::map<JobId, std::vector<int>> pick(const Snapshot &snap) override;
	void notes(const Job &job, Decision *d) const override
	{
		auto a = rounds_.allocation().find(job.id);
		d->note("share",
			a == rounds_.allocation().end() ? 0 : a->second);
		d->note("round_end", round_end());
	}
	const char *left_out_reason() const override
	{
		return "not in this round: behind jobs further below their "
		       "time share";
	}
	void save_more(std::vector<std::string> *out) const override
	{
		for (std::string &l : rounds_.save())
			out->push_back(std::move(l));
		for (std::string &l : alloc_->save())
			out->push_back(std::move(l));
	}
	bool load_more(const std::string &line) override
	{
		return rounds_.load(line) || alloc_->load(line);
	}

private:
	std::unique_ptr<GavelAllocator> alloc_;
	GavelRounds rounds_;
};

std::map<JobId, std::vector<int>> GavelRoundPolicy::pick(const Snapshot &snap)
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
	/* GPUs on nodes that are down, or held by jobs Tidal does not
	 * schedule, are no workers this round. */
	rounds_.set_workers(snap.cluster->total_gpus());
	std::map<JobId, std::vector<int>> chosen;
	for (auto &[id, ws] : rounds_.schedule(snap.now, act, *alloc_))
		chosen[id] = ws;
	if (rounds_.kept_last_round()) {
		char msg[320];
		std::snprintf(msg, sizeof(msg),
			      "the round's allocation was not solved "
			      "within Gavel.SolveLimit=%g s (stopped after "
			      "%.3f s, %zu jobs): the last allocation is "
			      "kept, jobs that came since have no share, and "
			      "the next round solves again",
			      alloc_->limit_s,
			      alloc_->solve_seconds.empty()
				      ? 0.0
				      : alloc_->solve_seconds.back(),
			      act.size());
		log(msg);
	}
	return chosen;
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
