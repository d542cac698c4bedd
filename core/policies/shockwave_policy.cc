/*
 * shockwave_policy.cc - Shockwave (shockwave.h) as a registry policy for
 * the plugin and the native replay: each round, Shockwave's plan for it
 * picks the jobs that run until it ends (round_policy.h runs them).
 *
 * A job's work is split into Shockwave.Epochs equal epochs (the plugin
 * knows a job's iterations, from --train-iters or its time limit, not
 * its dataset): epoch duration = iterations / epochs x the time per
 * iteration, batch size = --train-batch (1 without), samples per epoch =
 * iterations / epochs x batch.  Each round, before its plan is read:
 *   - epochs done = (iterations - remaining) / (iterations / epochs),
 *     from Job::remaining: the launcher's reported step where a node
 *     agent reports it, else the run time against the time limit;
 *   - each job that ran in the last round records its throughput and
 *     batch size (shockwave_observation, shockwave.h), from which
 *     Shockwave recalibrates its epoch durations as it does from its
 *     profiles.
 * Shockwave re-solves its program every 8 rounds, when jobs come or go,
 * and when the usable GPUs change.
 *
 * The solve is bounded by Gavel.SolveLimit (5 s; GLPK's branch and cut):
 * stopped with a solution, the best found is used, as the anchor does
 * with Gurobi; stopped with none, the last plan is kept, the log says
 * so, and the next round solves again.
 *
 * A restart keeps the round in force (RoundPolicy's state); Shockwave's
 * own history (each job's finish-time estimates and throughput
 * timeline) is not saved: after a restart its jobs are taken again from
 * their progress, and the next solve starts that history anew.
 *
 * Params: Gavel.RoundLength (120 s), Gavel.SolveLimit (5 s),
 * Shockwave.Epochs (10), Shockwave.FutureRounds (20), Shockwave.MipGap
 * (0.001), Shockwave.PriorityCap (1e6).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "core/policies/round_policy.h"
#include "core/policies/shockwave.h"

namespace tidal {

namespace {

ShockwaveConfig live_config(const Params &p)
{
	ShockwaveConfig c;
	c.round = p.get_double("Gavel.RoundLength", 120, 1, 86400);
	c.time_limit_s = p.get_double("Gavel.SolveLimit", 5, 0, 3600);
	c.future_rounds =
		(int)p.get_long("Shockwave.FutureRounds", c.future_rounds, 1,
				1000);
	c.mip_gap = p.get_double("Shockwave.MipGap", c.mip_gap, 0, 1);
	c.priority_cap = p.get_double("Shockwave.PriorityCap",
				      c.priority_cap, 1, 1e30);
	c.keep_plan_on_limit = true;
	c.gpus = 0; /* set_gpus() at each round */
	return c;
}

class ShockwaveRoundPolicy : public RoundPolicy {
public:
	explicit ShockwaveRoundPolicy(const Params &p)
	    : RoundPolicy("shockwave",
			  p.get_double("Gavel.RoundLength", 120, 1, 86400)),
	      sw_(live_config(p)),
	      epochs_((int)p.get_long("Shockwave.Epochs", 10, 1, 1000)),
	      limit_(p.get_double("Gavel.SolveLimit", 5, 0, 3600))
	{
	}

protected:
	void on_new(const Job &job) override {}
	void on_ran(JobId id, double exec) override { ran_.insert(id); }
	void on_gone(JobId id) override { sw_.remove_job(id); }
	std::map<JobId, std::vector<int>> pick(const Snapshot &snap) override;
	void notes(const Job &job, Decision *d) const override
	{
		d->note("epoch", epoch_of(job));
		d->note("epochs", epochs_);
		d->note("round_end", round_end());
	}
	const char *left_out_reason() const override
	{
		return "not in this round: Shockwave's plan gives it to jobs "
		       "further from their fair finish time";
	}
	void save_more(std::vector<std::string> *out) const override
	{
		out->push_back("swrounds " + std::to_string(rounds_));
	}
	bool load_more(const std::string &line) override
	{
		long n;
		int k = 0;
		if (std::sscanf(line.c_str(), "swrounds %ld%n", &n, &k) != 1 ||
		    line[k] || n < 0)
			return false;
		rounds_ = n;
		return true;
	}

private:
	/* Job J's iterations per epoch. */
	double per_epoch(const Job &j) const
	{
		return std::max(1.0, j.iterations / epochs_);
	}
	/* Epochs J has done. */
	int epoch_of(const Job &j) const
	{
		double done = std::max(0.0, j.iterations - j.remaining);
		return std::min(epochs_, (int)std::floor(done / per_epoch(j)));
	}
	ShockwaveJob make_job(const Job &j) const;

	Shockwave sw_;
	int epochs_;
	double limit_;
	long rounds_ = 0;          /* rounds picked */
	std::set<JobId> ran_;      /* ran since the last round */
};

ShockwaveJob ShockwaveRoundPolicy::make_job(const Job &j) const
{
	ShockwaveJob s;
	s.id = j.id;
	s.gpus = std::max(1, j.gpus);
	s.submit = j.submit;
	int bs = j.batch > 0 ? j.batch : 1;
	double it = per_epoch(j);
	s.dataset = it * bs;
	s.bs.assign(epochs_, bs);
	s.prof.assign(epochs_, it * (j.iter_time > 0 ? j.iter_time : 1));
	return s;
}

std::map<JobId, std::vector<int>>
ShockwaveRoundPolicy::pick(const Snapshot &snap)
{
	std::map<JobId, int> epochs;
	for (const Job *j : snap.jobs) {
		if (!sw_.has_job(j->id))
			sw_.add_job(make_job(*j));
		else if (ran_.count(j->id))
			epochs[j->id] = epoch_of(*j);
	}
	if (rounds_ > 0) {
		sw_.update_progress(epochs);
		for (const Job *j : snap.jobs)
			if (ran_.count(j->id)) {
				auto [tput, bs] = shockwave_observation(*j);
				sw_.record_throughput(j->id, sw_.round_ptr(),
						      tput, bs);
			}
	}
	ran_.clear();
	rounds_++;
	int gpus = snap.cluster->total_gpus();
	sw_.set_gpus(gpus);
	std::map<JobId, std::vector<int>> chosen;
	std::map<JobId, const Job *> by_id;
	for (const Job *j : snap.jobs)
		by_id[j->id] = j;
	for (JobId id : sw_.round_schedule()) {
		auto j = by_id.find(id);
		if (j == by_id.end() || j->second->gpus > gpus)
			continue;
		gpus -= j->second->gpus;
		chosen[id] = {}; /* anywhere free; stayers where they run */
	}
	if (sw_.kept_last) {
		char msg[256];
		std::snprintf(msg, sizeof(msg),
			      "the plan was not solved within "
			      "Gavel.SolveLimit=%g s (%zu jobs): the last plan "
			      "is kept, and the next round solves again",
			      limit_, snap.jobs.size());
		log(msg);
	}
	return chosen;
}

PolicyRegistrar reg("shockwave",
		    "Shockwave rounds: Nash social welfare over epoch progress "
		    "with finish-time fairness (MILP, GLPK)",
		    [](const Params &p) {
			    return std::make_unique<ShockwaveRoundPolicy>(p);
		    });

} /* namespace */

std::pair<double, int> shockwave_observation(const Job &j)
{
	if (j.measured && j.step_time > 0 && j.run_batch > 0)
		return { 1 / j.step_time, j.run_batch };
	return { j.iter_time > 0 ? 1 / j.iter_time : 0,
		 j.batch > 0 ? j.batch : 1 };
}

} /* namespace tidal */
