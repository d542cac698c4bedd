/*
 * gavel_rounds.h - Gavel's round-based mechanism (OSDI'20, as Shockwave
 * NSDI'23 runs it): a policy computes an allocation A_j (the share of
 * time job j should hold its GPUs); every round, jobs are ranked by how
 * far they are behind that share and packed onto the workers.
 *
 *   add/remove/changed --> need update --(at most every ResetInterval s)-->
 *      reset time bookkeeping, deficits; A = allocator(jobs)
 *   each round: priority p_j = A_j / (time_j / time_all)  (A_j * 1e9 if
 *      the job has not run since the reset) --> stable sort by
 *      (p, deficit, A) descending --> take jobs that fit (backfill)
 *      --> workers: jobs that ran last round keep theirs (lease
 *      extension), others get the lowest free workers, larger jobs first
 *
 * A job selected but absent from the allocation (it arrived after the
 * last reset) gets no workers that round: Gavel leaves its GPUs idle.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/model/params.h"

namespace tidal {

/* What an allocation policy sees of a job (MODEL.md 3.4). */
struct GavelJob {
	JobId id = 0;
	int sf = 1;             /* GPUs (scale factor) */
	double tput = 0;        /* isolated steps/s now */
	double remaining = 0;   /* steps left */
	double since_start = 0; /* now - arrival */
	double weight = 1;      /* priority weight */
};

/* An allocation policy: time shares A_j in [0, 1] for the active jobs
 * (given sorted by id).  May keep state between calls (Themis'
 * cumulative isolated time, AlloX's previous allocation). */
class GavelAllocator {
public:
	virtual ~GavelAllocator() = default;
	virtual std::map<JobId, double> allocate(const std::vector<GavelJob> &jobs,
						 int gpus, double now) = 0;
	/* FIFO skips jobs with zero priority when selecting. */
	virtual bool skip_zero_priority() const { return false; }
	/* The state kept between calls, as lines for a restart
	 * (Policy::save_state), and one of them back.  RET: false if LINE
	 * is not this policy's. */
	virtual std::vector<std::string> save() const { return {}; }
	virtual bool load(const std::string &line) { return false; }
	/* Seconds spent in solvers, one entry per allocate() call. */
	std::vector<double> solve_seconds;
	/* The most seconds one allocate() may spend solving; 0 = no bound.
	 * An LP is stopped at what is left of it (GLPK counts whole ms, so
	 * under 1 ms left no LP starts); a step that cannot be stopped
	 * (AlloX's assignment) is checked once it ends.  A call that runs
	 * out sets over_limit, and its answer must not be used: GavelRounds
	 * keeps the last allocation. */
	double limit_s = 0;
	bool over_limit = false;
};

/* Names: gandiva-fair, max-min-fairness, finish-time-fairness,
 * min-total-duration, max-sum-throughput, allox, fifo.
 * RET: nullptr with *err if NAME is not one of them. */
std::unique_ptr<GavelAllocator> make_gavel_allocator(const std::string &name,
						     const Params &params,
						     std::string *err);
bool is_gavel_allocator(const std::string &name);

class GavelRounds {
public:
	/* WORKERS single-GPU workers, ids 0..WORKERS-1. */
	GavelRounds(int workers, double round_len, double reset_interval)
		: workers_(workers), round_(round_len), reset_every_(reset_interval)
	{
	}

	void add_job(JobId id);
	void remove_job(JobId id);
	/* A batch-size change or failed micro-task. */
	void mark_changed() { need_update_ = true; }
	/* The workers now (a live cluster's usable GPUs change as nodes go
	 * down and come back): a new count calls for a new allocation, and
	 * the old worker ids no longer name the same GPUs. */
	void set_workers(int workers)
	{
		if (workers != workers_) {
			workers_ = workers;
			need_update_ = true;
			prev_workers_.clear();
		}
	}
	/* A micro-task of ID ended after EXEC seconds. */
	void job_ran(JobId id, double exec);

	/* One round at NOW over ACTIVE (every added job, any order).
	 * RET: job -> worker ids, in assignment order. */
	std::vector<std::pair<JobId, std::vector<int>>>
	schedule(double now, const std::vector<GavelJob> &active,
		 GavelAllocator &alloc);

	/* The bookkeeping as lines (rounds, rjob, alloc, prev), for a
	 * restart, and one of them back.  RET: false if LINE is not one. */
	std::vector<std::string> save() const;
	bool load(const std::string &line);

	/* Was the allocation recomputed in the last schedule()? */
	bool reset_last_round() const { return reset_last_; }
	/* Did the last schedule()'s solve run out of its limit
	 * (GavelAllocator::limit_s)?  Then the allocation before it was
	 * kept (equal shares, Gandiva-fair's, if there was none yet), jobs
	 * that came since have no share, and the next round solves again. */
	bool kept_last_round() const { return kept_last_; }
	const std::map<JobId, double> &allocation() const { return alloc_; }

private:
	struct State {
		double time = 0;    /* job_time since the last reset */
		double deficit = 0;
		double priority = 0;
	};
	void reset(double now, const std::vector<GavelJob> &sorted,
		   GavelAllocator &alloc);
	std::vector<int> assign(
		const std::vector<std::pair<JobId, int>> &selected,
		std::vector<std::pair<JobId, std::vector<int>>> *out);

	int workers_;
	double round_, reset_every_;
	bool need_update_ = false, reset_last_ = false, kept_last_ = false;
	double last_reset_ = 0, worker_time_ = 0;
	std::vector<JobId> order_; /* insertion (arrival) order */
	std::map<JobId, State> st_;
	std::map<JobId, double> alloc_;
	std::map<JobId, std::vector<int>> prev_workers_;
};

/* A worker list as "W,W,W" ("-" for none), and back (false if it is
 * not one): for the state lines of GavelRounds and its policy. */
std::string gavel_workers_text(const std::vector<int> &ws);
bool gavel_parse_workers(const std::string &s, std::vector<int> *ws);

} /* namespace tidal */
