/*
 * lucid.h - the Lucid (ASPLOS'23) trace simulator's time model, shared by
 * the preset (lucid.cc: trace preprocessing, per-policy data, merging the
 * VCs) and the per-VC replay (lucid_vc.cc).
 *
 * The original steps every VC one second at a time; this replay jumps from
 * one second where something can change to the next and reproduces what
 * the per-second loop would have done at each of them (MODEL.md §2):
 *
 *   per second t:  (1) completions (+ progress)  (2) arrivals
 *                  (3..5) ask the policy, apply starts and preemptions
 *
 * Seconds worth visiting: arrivals, completions, the second after any
 * decision that changed something or saw an arrival (the lists it sorts
 * have changed), and the seconds where a policy's ranking input crosses
 * another's (SRTF: a running job's remaining time passes a queued one's;
 * Tiresias: attained service passes the queue threshold).  A policy that
 * places only on boundaries (Tiresias: t % 60 == 0) is visited at the
 * first boundary at or after each of those.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/policies/baseline.h"
#include "core/model/policy.h"
#include "sim/preset.h"

namespace tidal::sim::lucid {

/* How the original's loop treats one policy (MODEL.md §2, §4). */
struct Model {
	/* FixedEnd: end = start + duration, released in step 1 of that
	 * second (FIFO, SJF, QSSF).  CountDown: remain -= 1 each second after
	 * the start, the job ends in the first second that finds remain == 0,
	 * i.e. one second later (SRTF, Tiresias).  Rate: remain -= rate each
	 * second, rate < or > 1 while packed (Lucid; lucid_pack.h). */
	enum class Progress : std::uint8_t { FixedEnd, CountDown, Rate };
	Progress progress = Progress::FixedEnd;
	/* Place only when t % period == 0 (Tiresias: 60). */
	long period = 1;
	/* Candidate order handed to the policy before its stable sort:
	 * running list then queue (Tiresias) or queue then running (SRTF). */
	bool running_first = false;
	/* What the policy's ranking reads, for the crossing wake-ups. */
	enum class Watch : std::uint8_t { None, Remaining, Attained };
	Watch watch = Watch::None;
	TiresiasOptions levels; /* Watch::Attained: the policy's thresholds */
	/* remain += overhead on every preemption. */
	double overhead_small = 40; /* gpu_num <= 8 */
	double overhead_large = 60;
};

/* One virtual cluster: its nodes and its jobs in arrival order. */
struct VcInput {
	std::string name;
	Cluster cluster;
	std::vector<Job> jobs; /* stable-sorted by submit */
};

struct VcOutput {
	std::vector<JobResult> jobs;             /* in arrival order */
	std::vector<std::pair<Time, int>> busy;  /* (t, +/- GPUs) */
	long decisions = 0;
	long events = 0;
};

/* Replay one VC under POLICY with MODEL.  Throws InputError if the policy
 * asks for something the model has no notion of (resize, reject). */
VcOutput replay_vc(const VcInput &vc, Policy &policy, const Model &model);

} /* namespace tidal::sim::lucid */
