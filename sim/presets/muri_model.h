/*
 * muri_model.h - the time model of the Muri simulator (SIGCOMM'22), shared
 * by the muri preset's event loop and its per-policy schedulers.
 *
 * The anchor's loop (shared/anchors/muri/MODEL.md §3) differs from Tidal's
 * native replay in ways that move its numbers a lot, so it has its own loop
 * here rather than hooks on replay.cc:
 *
 *   - arrivals are pre-binned: submit times within rel 1e-9 of a bin's first
 *     submit join that bin (math.isclose);
 *   - the restart overhead is charged on every inter-event interval of every
 *     running job (progress = max(dt - oh, 0) / itertime), while end events
 *     are predicted without it, so each intermediate event delays every
 *     running job by up to oh seconds;
 *   - end events are recomputed from scratch after every scheduling step;
 *   - the runnable list keeps the anchor's order (arrivals at the back, sorts
 *     in place), because every sort in the anchor is stable over it.
 *
 * One step of the loop:
 *
 *   pick event (arrival bin / earliest end event / scheduler's jump time)
 *     -> end the event's jobs -> append the bin's arrivals (Pending)
 *     -> progress every runnable job to the event time
 *     -> MuriScheduler::schedule (a core policy decides, the scheduler
 *        applies the plan and keeps the anchor's list order)
 *     -> predict end events
 *
 * What differs between the anchor's policy loops is a MuriScheduler plus a
 * few LoopRules; Muri-S/L and AntMan plug in as further schedulers (group
 * iteration times and group overheads go into MJob::itertime_cur and
 * MJob::overhead, which the loop already uses).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "core/model/policy.h"
#include "sim/preset.h"

namespace tidal::sim::muri {

inline constexpr Time kNever = std::numeric_limits<Time>::infinity();

/* itertime_overhead_list[0]: the solo slowdown folded into iteration_time. */
inline constexpr double kSoloFactor = 1.015;

/* Restart overhead in seconds, the anchor's overhead_dict[gpus][model];
 * 10 s for a model or width missing from the table. */
double restart_overhead(int gpus, const std::string &model);

/* Muri.RestartOverhead: every job's seconds lost per event interval in
 * place of the anchor's table, for the runs on this thread while it
 * lives (< 0: the table).  The anchor's quirk of charging it on every
 * interval stays; 0 models a cluster whose restarts cost nothing beyond
 * what its event times show (the live loopback cluster's jobs start in
 * about a second and are never restarted by muri-s or srsf there). */
class OverheadOverride
{
public:
	explicit OverheadOverride(double seconds);
	~OverheadOverride();

private:
	double saved_;
};

/* The trace's iteration_time column in ms, recovered exactly from the
 * reader's seconds (it divided by 1000), times 1.015, over 1000: the
 * anchor's own order of operations. */
double solo_iteration_time(double iter_time_s);

/* math.isclose(a, b, rel_tol=REL, abs_tol=ABS). */
bool isclose(double a, double b, double rel, double abs = 0);

/* A job of the replay: the core Job the policies see, plus the anchor's
 * per-job clocks. */
struct MJob {
	Job job;                   /* state, remaining, level, seq, ... */
	Time last_check = 0;       /* last_check_time */
	double total_executed = 0; /* wall seconds while running */
	double executed = 0;       /* dlas queue clock (executed_time) */
	double pending = 0;        /* pending_time */
	double itertime_cur = 0;   /* s per iteration now (solo or group) */
	double overhead = 0;       /* s charged per interval while running */
	int resumes = 0;
};

struct LoopRules {
	/* A start and an end are one event when |end - start| <= this
	 * (Muri-S/L and AntMan: 1e-4); < 0 = exact comparison. */
	double merge_abs = -1;
	/* dlas: keep only the earliest end time, jobs grouped by exact
	 * equality.  Otherwise every end time is binned (rel 1e-9) and the
	 * earliest bin is the next end event. */
	bool earliest_end_only = false;
	/* AntMan: after binning, end bins within this many seconds of the
	 * earliest join it (isclose(abs_tol)); < 0 = no such merge. */
	double end_merge_abs = -1;
};

/* The policy-specific half of a step. */
class MuriScheduler {
public:
	virtual ~MuriScheduler() = default;
	virtual LoopRules rules() const { return {}; }
	virtual std::string name() const = 0;
	/* J was appended to the runnable list (Pending). */
	virtual void arrive(MJob &j) {}
	/* J completed and leaves the runnable list. */
	virtual void leave(MJob &j) {}
	/* J is running and is being advanced to NOW; J.last_check is still
	 * the previous event (dlas: executed_time, demotion). */
	virtual void advance(MJob &j, Time now) {}
	/* Decide who runs at NOW.  Must set each job's state (Running or
	 * Pending), alloc, placement, itertime_cur and overhead, and may
	 * reorder RUNNABLE (the anchor's in-place sorts). */
	virtual void schedule(std::vector<MJob *> &runnable, Time now) = 0;
	/* The next queue-jump time after a step at NOW; kNever if none. */
	virtual Time next_jump(const std::vector<MJob *> &runnable,
			       Time now) const
	{
		return kNever;
	}
	/* GPUs busy after a step (utilisation): by default the sum of the
	 * running jobs' allocations; sharing schedulers count a GPU once. */
	virtual int busy_gpus(const std::vector<MJob *> &runnable) const
	{
		int busy = 0;
		for (const MJob *m : runnable)
			busy += m->job.alloc;
		return busy;
	}
	/* Policy invocations so far. */
	long decisions = 0;
};

/* An arrival bin: jobs whose submit times are isclose(rel 1e-9) to the
 * first one's.  `ends` carries jobs ended with it (see muri_replay.cc). */
struct ArrivalBin {
	Time time = 0;
	std::vector<MJob *> jobs;
	std::vector<MJob *> ends;
};

/* Bin JOBS (stable-sorted by submit time) as the anchor does. */
std::vector<ArrivalBin> bin_arrivals(std::vector<MJob> &jobs);

/* The next end event after a step at NOW: its time (kNever if no job is
 * running) and the jobs that end then. */
Time next_end(const std::vector<MJob *> &runnable, Time now,
	      const LoopRules &rules, std::vector<MJob *> *ending);

/* Run the trace in IN through SCHED. */
RunResult run_muri(const SimInput &in, MuriScheduler &sched,
		   const Progress &progress);

/* AntMan (muri_antman.cc): its own scheduler over per-GPU state. */
RunResult run_antman(const SimInput &in, const Params &params,
		     const Progress &progress, RunMode mode);

/* Apply PLAN to RUNNABLE at NOW: Start/Keep/Resize run at solo speed with
 * the job's own overhead, Preempt/Hold wait.  Used by the solo schedulers. */
void apply_solo_plan(const Plan &plan, std::vector<MJob *> &runnable,
		     Time now);

} /* namespace tidal::sim::muri */
