/*
 * edf_elastic.h - elastic earliest-deadline-first planning over a free-GPU
 * timeline (ElasticFlow's EDF baseline, edf_sim_allocation).
 *
 * Jobs are planned one after another in deadline order against a shared
 * FreeTimeline that starts as {now: cluster}.  Each job walks the timeline
 * from now and, in every segment, takes
 *
 *   base = min(max_gpu, cluster)    if that many GPUs are free,
 *   the largest level <= free       if some are free,
 *   nothing                         otherwise,
 *
 * until its remaining iterations fit in the segment; past the last key it
 * takes base (the cluster is assumed free there).  Its GPUs come back at the
 * slot-aligned finish.  The planned end is the unaligned ceil of the finish.
 *
 * Quirks kept on purpose (the anchor's numbers depend on them):
 *   - the GPUs are returned at align(now, end, slot) with the free count of
 *     the job's last segment *before* it took its share, and only when the
 *     unaligned end is not itself a key; an existing key there is
 *     overwritten;
 *   - the partial-share level ignores max_gpu (it is below base anyway).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include "core/placement/free_timeline.h"
#include "core/profiles/throughput_table.h"

namespace tidal {

/* What the planner needs to know about one job. */
struct ElasticJobView {
	const ThroughputRow *row = nullptr; /* the job's (model, batch) row */
	int max_gpu = 1;
	double iter_left = 0; /* > 0 */
	SlotTime deadline = 0;
};

struct EdfPlan {
	int gpus_now = 0;     /* allocation in the segment starting at now */
	SlotTime end = 0;     /* planned (unaligned) finish */
	bool meets_deadline = false;
};

/* Plan JOB from NOW on TIMELINE (updated in place: the job's GPUs are
 * reserved).  SLOT aligns the release key; CLUSTER_GPUS is the cluster. */
EdfPlan edf_plan_job(const ElasticJobView &job, SlotTime now, SlotTime slot,
		     int cluster_gpus, FreeTimeline &timeline);

} /* namespace tidal */
