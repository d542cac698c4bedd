/*
 * live.h - tidal-sim's side of a live replay (tidal-sim(1), LIVE
 * REPLAY): the trace as sbatch submissions for a real slurmctld with
 * sched/tidal (scripts/sim_live.sh submits them), and that cluster's own
 * record of the run, from sacct, as a RunResult to set beside the
 * replay's.
 *
 *   tidal-sim --speedup F --submit-plan PLAN ...   the trace F times faster,
 *                                                  and its submissions
 *   scripts/sim_live.sh PLAN ...                   runs them, writes
 *                                                  sacct's record
 *   tidal-sim --speedup F --live-result ACCT ...   live beside replay
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <ostream>
#include <map>
#include <string>

#include "core/profiles/throughput_table.h"
#include "sim/preset.h"

namespace tidal::sim {

/* Every time of T divided by SPEEDUP (> 0): submits, durations, time per
 * iteration, deadlines and estimates.  Iterations stay as they are. */
void compress_time(Trace &t, double speedup);

/* A live trainer's pace: no trainer job steps more than this many times a
 * second (tidal-train keeps a profile's pace to within 1% at that rate on
 * a loaded 2-core machine, with one process per GPU). */
constexpr double kLiveMaxStepRate = 50;

/* A job of the live replay whose work is tidal-train paced by its table
 * (in TABLES, the --profiles directory loaded): one with a model, a batch
 * that has a row, and its work in iterations. */
bool live_trainer(const Job &j, const ThroughputTable &tables);

/* How many of T's iterations one live trainer step stands for: the
 * smallest K such that no trainer job, paced by TABLES SPEEDUP times
 * faster, steps more than MAX_RATE times a second at any size it may run
 * at.  1 when no job is a trainer. */
long live_step_size(const Trace &t, const ThroughputTable &tables,
		    double speedup, double max_rate);

/* Count every trainer job's work (live_trainer() with TABLES) in steps of
 * K iterations: iterations / K, rounded (at least 1), each step K times
 * as long, so that its run time stays what it was but for the rounding.
 * The tables it runs by must be sped up by 1/K as well
 * (speed_up_profiles). */
void count_in_steps(Trace &t, const ThroughputTable &tables, long k);

/* Throughput tables (ElasticFlow's form, <model>.csv in SRC) SPEEDUP times
 * faster, written to DST (made if absent): the speeds a trace of
 * compress_time() runs at, for the replay, the live plugin's planner and
 * the live trainers alike.  Throws InputError naming what fails. */
void speed_up_profiles(const std::string &src, double speedup,
		       const std::string &dst);

/* One tab-separated line per job of IN's trace, in submit order, after a
 * header naming the columns:
 *
 *   at        seconds after the replay's start to submit it
 *   name      tidal-<id> (how the live record is matched back)
 *   options   sbatch options: GPUs, time limit, --elastic-gpus=MIN-MAX
 *             for an elastic job; for a trainer job (live_trainer() with
 *             TABLES) --train-model, --train-batch and --train-iters
 *   run       seconds of work the job's process does (a paced process;
 *             a trainer's work is its iterations)
 *   deadline  seconds after the replay's start it is due, or -
 *
 * A job's time limit is its run time with room to spare (whole minutes:
 * Slurm's unit): it never ends a job before its work is done. */
void write_submit_plan(std::ostream &out, const SimInput &in,
		       const ThroughputTable &tables);

/* The live run of POLICY as sacct recorded it: PATH is
 *   sacct -a -D -X --parsable2 -o JobID,JobName,Submit,Start,End,State,AllocTRES
 * (any column order, others ignored; -D lists every run of a requeued
 * job).  Jobs named tidal-<id> are IN's trace jobs; times are counted from
 * the earliest Submit less its trace submit time, so each job's JCT is
 * live end - trace submit.  A job never started (or cancelled before it
 * was given anything: State CANCELLED, no AllocTRES) is rejected; a trace
 * job missing from the record is an error. */
RunResult live_result(const std::string &path, const SimInput &in,
		      const std::string &policy);

/* How late each job of IN reached slurmctld in the live run whose record
 * is PATH: submit.log beside it (name, planned and actual seconds after
 * the start, as scripts/sim_live.sh writes it), by job id; empty when
 * there is none.  A replay beside the live run takes each job in that
 * much later (shift_submits) and counts its times from the trace's
 * submit again (unshift_results), as live_result does: the submission's
 * latency is the live harness's, not the policy's, but a job due seconds
 * before its deadline is admitted or not by it. */
std::map<JobId, double> live_submit_delays(const std::string &path,
					   const SimInput &in);
void shift_submits(SimInput &in, const std::map<JobId, double> &delay);
void unshift_results(RunResult &r, const std::map<JobId, double> &delay);

/* sacct --parsable2 rows of every job of RUNS (JobID|JobName|Policy|
 * Submit|Start|End|Elapsed|State|AllocTRES|Preemptions), datetimes from
 * EPOCH (Unix seconds of time 0): the schema of the UB simulator's
 * slurm_acct.out, which tidal-sim reads back as a trace. */
void write_acct(std::ostream &out, const std::vector<RunResult> &runs,
		double epoch);

} /* namespace tidal::sim */
