/*
 * pollux_job.h - the Pollux artifact's job dynamics (simulator.Job) and
 * its profile loader.
 *
 * A job advances through its epochs at the ground-truth goodput of its
 * placement and batch size (core/profiles/profile_pollux.h).  This is the
 * part the Tiresias, Optimus and Pollux runs share; the policies only decide
 * placements.  Time arithmetic is in whole seconds, as in the artifact:
 * every epoch crossing is rounded (banker's rounding) to a second.
 *
 *   step(seconds):  30 s restart delay first (counts as service), then
 *                   progress at goodput = gain / iteration time, crossing
 *                   epochs at their exact (rounded) second; the batch size
 *                   is re-chosen after every pass.
 *   reallocate(p):  new placement -> restart delay 30 s, restarts + 1.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/profiles/goodput.h"
#include "core/profiles/profile_pollux.h"

namespace tidal::sim {

/* Load every application directory under DIR (placements.csv,
 * scalability.csv, validation-<B>.csv) with the artifact's constants.
 * Throws InputError naming the file and line. */
std::map<std::string, PolluxApp> load_pollux_apps(const std::string &dir);

struct PolluxJob {
	const PolluxApp *app = nullptr;
	std::string name;
	double submit = 0;
	int target_replicas = 0; /* Tiresias: fixed GPUs */
	long target_batch = 0;   /* 0 = chosen by the policy's hook */

	std::vector<int> placement; /* GPUs per node, in allocation order */
	int atomic_bsz = 0, accum_steps = 0;
	int epoch = 0;
	double progress = 0;
	double rescale_time = 0;
	double attained = 0; /* GPU-seconds, restart delay included */
	int restarts = -1;   /* -1 = never allocated */
	double completion = -1;

	bool done() const { return completion >= 0; }
	int replicas() const;

	/* Advance SECONDS from NOW (the start of the round). */
	void step(double now, double seconds, double interference = 0);
	void reallocate(const std::vector<int> &p);

	/* Pollux: learn the goodput model from the job's own steps
	 * (simulator.Job.update_params) and, without a target batch, pick
	 * the batch that maximises the fitted goodput. */
	bool learn = false;
	std::vector<PerfSample> samples; /* one per (nodes, replicas, atomic) */
	GradParams grad;                 /* the latest observed */
	std::optional<PerfParams> perf;  /* fitted on samples */
	long fits = 0;

	int max_profiled_replicas() const;
	GoodputFunction goodput_fn() const;
	/* Speedup vs one replica; none while nothing is fitted. */
	std::optional<SpeedupFunction> speedup_fn() const;

private:
	void update_local_bsz();
	void observe(int nodes, int reps, StepTime st, GradStats g);
	std::set<std::array<int, 3>> seen_;
};

/* Python's round(): halves to even. */
double round_half_even(double x);

} /* namespace tidal::sim */
