/*
 * edf_elastic.cc - one job's elastic EDF plan over the free-GPU timeline.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/edf_elastic.h"

#include <algorithm>
#include <cmath>

namespace tidal {

namespace {

/* The largest column <= FREE, whatever max_gpu says (see the header). */
int largest_level_within(const ThroughputRow &row, int free)
{
	int g = 0;
	for (int n : row.gpus) {
		if (n > free)
			break;
		g = n;
	}
	return g;
}

/* One planning pass; the walk state is shared by its steps. */
struct Walk {
	const ElasticJobView &job;
	SlotTime now, slot;
	int cluster;
	const FreeTimeline &old; /* keys as they were when the walk began */
	FreeTimeline next;       /* what the walk reserves */
	SlotTime at;             /* start of the current segment */
	int avail;               /* free GPUs in it, before this job */
	double left;
	EdfPlan plan;
	bool first = true;

	void note_first(int g)
	{
		if (first)
			plan.gpus_now = g;
		first = false;
	}
	/* The job finishes in [at, seg_end) on G GPUs at END. */
	void finish(int g, SlotTime end)
	{
		note_first(g);
		next.set(at, avail - g);
		if (!old.has(end))
			next.set(align_to_slot(now, end, slot), avail);
		plan.end = end;
	}
	/* Try to finish on G GPUs before SEG_END, else consume the segment.
	 * RET: true when finished. */
	bool segment(int g, SlotTime seg_end)
	{
		double tput = job.row->at(g);
		SlotTime end = (SlotTime)std::ceil((double)at + left / tput);
		if (seg_end >= end) {
			finish(g, end);
			return true;
		}
		note_first(g);
		left -= (double)(seg_end - at) * tput;
		next.add(at, -g);
		return false;
	}
};

} /* namespace */

EdfPlan edf_plan_job(const ElasticJobView &job, SlotTime now, SlotTime slot,
		     int cluster_gpus, FreeTimeline &timeline)
{
	Walk w{job, now, slot, cluster_gpus, timeline, timeline, now,
	       timeline.at(now), job.iter_left, {}};
	int base = std::min(job.max_gpu, cluster_gpus);
	bool late = false;
	for (const auto &[k, free_at_k] : timeline.keys()) {
		if (k <= now)
			continue;
		bool done = false;
		if (w.avail >= base && base > 0)
			done = w.segment(base, k);
		else if (w.avail > 0 && base > 0)
			done = w.segment(largest_level_within(*job.row, w.avail),
					 k);
		else
			w.note_first(0);
		if (done) {
			w.next.merge();
			timeline = w.next;
			w.plan.meets_deadline = !late && w.plan.end <= job.deadline;
			return w.plan;
		}
		w.avail = w.next.at(k);
		w.at = k;
		late = late || k > job.deadline;
	}
	/* Past the last key the whole cluster is free. */
	w.note_first(base);
	w.plan.end = (SlotTime)std::ceil((double)w.at +
					 w.left / job.row->at(base));
	w.next.set(w.at, cluster_gpus - base);
	w.next.set(align_to_slot(now, w.plan.end, slot), cluster_gpus);
	w.next.merge();
	timeline = w.next;
	w.plan.meets_deadline = !late && w.plan.end <= job.deadline;
	return w.plan;
}

} /* namespace tidal */
