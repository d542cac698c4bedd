/*
 * pollux_job.h - the Pollux artifact's job dynamics (simulator.Job) and
 * its profile loader.
 *
 * A job advances through its epochs at the ground-truth goodput of its
 * placement and batch size (core/profile_pollux.h).  This is the part the
 * Tiresias, Optimus and Pollux runs share; the policies only decide
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

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/profile_pollux.h"

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

	/* Optional batch choice for jobs without a target batch (Pollux):
	 * (app, nodes, replicas) -> (atomic_bsz, accum_steps). */
	std::function<std::pair<int, int>(const PolluxJob &, int, int)>
		choose_batch;

private:
	void update_local_bsz();
};

/* Python's round(): halves to even. */
double round_half_even(double x);

} /* namespace tidal::sim */
