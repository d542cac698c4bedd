/*
 * packing.h - the grouping stage that puts a second job on a running
 * job's GPUs (Lucid's resource-aware packing, ASPLOS'23).
 *
 * Two jobs may share GPUs when together they fit in GPU memory, their
 * sharescore labels (0 light .. 2 heavy use of the GPU) add up to at most
 * max_score, and the newcomer is not much lower in priority than the job
 * it joins (its priority value, smaller first, at most priority_ratio
 * times the host's).  A host shares with one job at a time and must ask
 * for as many GPUs as the newcomer.
 *
 * The rule is a pure function of the two jobs, so the simulator, the
 * plugin and `tidalctl explain` share it; pack_refusal() says in words
 * why a pair may not share.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/model/model.h"

namespace tidal {

struct PackRules {
	double gpu_mem_mb = 24576; /* per GPU; the pair must stay below it */
	int max_score = 2;
	double priority_ratio = 2;
};

/* What the rule reads of a job. */
struct PackView {
	int gpus = 0;
	double gpu_mem_mb = 0; /* per GPU */
	int score = 0;         /* sharescore label */
	double priority = 0;   /* smaller is served first */
	bool exclusive = true; /* a host: running alone on its GPUs */
};

/* "" if NEWCOMER may join HOST, else why not. */
std::string pack_refusal(const PackView &newcomer, const PackView &host,
			 const PackRules &rules);
bool may_pack(const PackView &newcomer, const PackView &host,
	      const PackRules &rules);
/* The first of HOSTS (in the caller's order) NEWCOMER may join, or -1. */
long pack_target(const PackView &newcomer, std::span<const PackView> hosts,
		 const PackRules &rules);

/* The running jobs of SNAP grouped by the GPUs they hold together
 * (Job::gpu_group; a job without one is alone), in the order of each
 * group's first job: indices into snap.jobs. */
std::vector<std::vector<int>> gpu_groups(const Snapshot &snap);

} /* namespace tidal */
