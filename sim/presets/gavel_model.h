/*
 * gavel_model.h - the "gavel" preset's jobs and its round loop
 * (gavel_replay.cc), kept apart from the preset's input handling.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <string>
#include <vector>

#include "core/policies/gavel_rounds.h"
#include "core/policies/shockwave.h"
#include "core/profiles/profile_gavel.h"
#include "sim/preset.h"
#include "sim/presets/gavel_profile.h"

namespace tidal::sim {

struct GavelModelJob {
	GavelBsJob bs;          /* batch size, steps, throughput now */
	GavelProfile profile;   /* planned epochs; profile.duration */
	double weight = 1;
	double arrival = 0;
};

struct GavelModel {
	GavelThroughputs tp;
	std::vector<GavelModelJob> jobs; /* trace order; id = index */
};

struct GavelRunConfig {
	double round = 120;
	double reset_interval = 1000;
	double preempt_penalty = 20;
	double cutoff = 1.5;
	int gpus = 32;
	bool solve_stats = false;
	std::string schedule_log; /* per-round "round now job:workers..." */
};

/* Replay every job of MODEL under ALLOC (MODEL.md section 2), or under
 * SW's round plans when SW is given (section 4.7; ALLOC is then unused). */
RunResult gavel_simulate(const GavelModel &model, const GavelRunConfig &cfg,
			 GavelAllocator &alloc, const Progress &progress,
			 Shockwave *sw = nullptr);

/* "POLICY: N solves, p50 X ms, p90, p99, max" over SECONDS. */
std::string gavel_solve_stats(const std::string &policy,
			      std::vector<double> seconds);

} /* namespace tidal::sim */
