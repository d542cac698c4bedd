/*
 * round_policy.h - the round mechanics shared by the registry policies
 * that pick, once per round, the jobs that run until it ends (the Gavel
 * allocation policies, gavel_policy.cc; Shockwave, shockwave_policy.cc).
 *
 *   decide(): at a round's end (or the first call) --> admit new jobs,
 *   credit run time, drop gone ones --> pick() the round's jobs --> for
 *   every job: Keep where it runs, Start on free GPUs (the round's
 *   workers if free), Preempt the others that run, Hold the rest;
 *   wake_at = the round's end (at once while leavers are on their way).
 *
 * A round holds until its end, however often decide() is called (the
 * plugin calls it every CycleInterval): between ends the same jobs run,
 * so that shares are not recomputed into churn.  A job that stays runs
 * on where it is, whatever worker ids the round gave it.  A job that
 * enters waits until the GPUs it needs are free: those of the jobs this
 * round preempts come free only once they are gone, so it starts at a
 * later call (wake_at: at once), never on GPUs a running job holds.  (In
 * Slurm a leaver's GPUs show free once it is requeued, and the start
 * waits while its node completes the job: the plugin tries again each
 * cycle.)  A job that arrives mid-round waits for the next one.  A
 * preempted job that is briefly out of the snapshot (its requeue
 * completing) keeps its place in the bookkeeping; a job gone at a
 * round's end is dropped.
 *
 * What a restart must not lose (the round in force, its jobs, each job's
 * run time as last credited, and the subclass's own bookkeeping) is
 * save_state()'s; it changes state_serial() at each round and each
 * change of the leavers.  Run time is credited from Job::executed, which
 * the caller keeps across restarts, so the state needs saving only then.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/model/policy.h"

namespace tidal {

class RoundPolicy : public Policy {
public:
	RoundPolicy(std::string name, double round_len)
	    : name_(std::move(name)), round_(round_len)
	{
	}
	std::string name() const override { return name_; }
	Plan decide(const Snapshot &snap) override;
	std::vector<std::string> save_state() const override;
	bool load_state(const std::string &line) override;
	std::uint64_t state_serial() const override { return serial_; }

protected:
	/* JOB is new to the rounds. */
	virtual void on_new(const Job &job) = 0;
	/* ID ran EXEC seconds more since the last call. */
	virtual void on_ran(JobId id, double exec) = 0;
	/* ID is gone (at a round's end). */
	virtual void on_gone(JobId id) = 0;
	/* The jobs to run this round, each with its workers (the w-th GPU
	 * counting node by node; none: anywhere free). */
	virtual std::map<JobId, std::vector<int>>
	pick(const Snapshot &snap) = 0;
	/* The numbers each decision about JOB carries (tidalctl explain). */
	virtual void notes(const Job &job, Decision *d) const = 0;
	/* Why a job is not in this round, for its Reason. */
	virtual const char *left_out_reason() const = 0;
	/* The subclass's own state lines, and one back (false: not its). */
	virtual void save_more(std::vector<std::string> *out) const = 0;
	virtual bool load_more(const std::string &line) = 0;

	/* A line for the next plan's log. */
	void log(std::string line) { log_.push_back(std::move(line)); }
	double round_length() const { return round_; }
	double round_end() const { return round_end_; }

private:
	Placement placement(const Cluster &c, const std::vector<int> &ws) const;
	void sync(const Snapshot &snap, bool boundary);

	std::string name_;
	double round_;
	std::map<JobId, double> executed_; /* Job::executed at last call */
	/* This round: its jobs and their workers, and when it ends. */
	std::map<JobId, std::vector<int>> chosen_;
	double round_end_ = 0;
	bool started_ = false;
	/* Jobs preempted and not seen back in the queue since: when. */
	std::map<JobId, double> leaving_;
	std::vector<std::string> log_;
	std::uint64_t serial_ = 0;
};

} /* namespace tidal */
