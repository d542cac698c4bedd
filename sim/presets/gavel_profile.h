/*
 * gavel_profile.h - the Shockwave artifact's per-job profiles and its
 * dynamic batch-size rules (Accordion and GNS), as the "gavel" preset's
 * job model.  See shockwave/MODEL.md sections 1.3-1.5 and 3.5.
 *
 * A job's batch size may change while it runs; that changes its
 * throughput and rescales its step counts (completed epochs round up).
 * The profile (batch size per epoch, as the trace generator planned it)
 * gives the job's isolated duration, which the anchor uses for its
 * deadline cut-off and for the finish-time-fairness denominator.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <string>
#include <vector>

#include "core/profiles/profile_gavel.h"

namespace tidal::sim {

enum class BsMode { Static, Accordion, Gns };

/* Samples per epoch of MODEL's dataset; 0 if unknown. */
double gavel_dataset_size(const std::string &model);

/* Largest batch size the batch-size rules go up to; 0 if none. */
int gavel_bs_cap(const std::string &model);

/* The trace generator's batch size per epoch (E epochs). */
std::vector<int> gavel_gns_pattern(const std::string &model, int bs0, int E,
				   int sf);
std::vector<int> gavel_accordion_pattern(const std::string &model, int bs0,
					 int E);

/* The run-time state of one job's batch size (MODEL.md 3.5). */
struct GavelBsJob {
	std::string model;
	BsMode mode = BsMode::Static;
	int bs0 = 0, bs = 0, sf = 1;
	double total_steps = 0, steps_run = 0;
	double tput = 0; /* isolated steps/s at bs */
	bool big = false, small = false;
};

/* Epoch counts of the profile, and its isolated duration (seconds).
 * RET: false with *err if a throughput is missing. */
struct GavelProfile {
	int epochs = 0;
	std::vector<int> bs_every_epoch;
	std::vector<double> duration_every_epoch;
	double duration = 0;
};
bool gavel_make_profile(const GavelThroughputs &tp, const std::string &model,
			int bs0, int sf, BsMode mode, double total_steps,
			GavelProfile *out, std::string *err);

/* Step 4 of a round: set big/small flags from the job's current epoch. */
void gavel_bs_trigger(GavelBsJob &j);

/* At the job's next completed micro-task: apply a flagged change.
 * RET: true if the batch size changed (the allocation must be redone). */
bool gavel_bs_apply(GavelBsJob &j, const GavelThroughputs &tp);

} /* namespace tidal::sim */
