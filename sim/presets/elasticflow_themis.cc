/*
 * elasticflow_themis.cc - ElasticFlow's "themis" baseline: finish-time
 * fairness with a fixed lease of one slot [themis_sim_jobs].
 *
 * Non-elastic: a job runs on its traced GPU count.  Every slot:
 *
 *   1. the event at now (if any): its end jobs complete (on time:
 *      accepted + 1; late: declined); arrivals join the runnable list;
 *   2. each runnable job's finish-time fairness inputs: elapsed = last
 *      event time - submit, work = iterations left / speed at its GPUs,
 *      isolated = cumulative isolated time + iterations left / share,
 *      share = min(ceil(cluster / jobs) / GPUs, 1); the cumulative
 *      isolated time grows by the iterations done since the last slot /
 *      the share then;
 *   3. shares x by core/policies/themis.h; jobs sorted by x (descending,
 *      stable) run greedily while their GPUs fit;
 *   4. a running job progresses one slot (remaining time from the traced
 *      duration, iterations from the speed); one whose remaining time ends
 *      within the slot completes at the next slot, at now + remaining.
 *
 * The artifact charges no restart overhead here (its 'overhead' key is set
 * at load time, so the estimate is never made).  Arrival events are
 * coalesced with the slot like the other policies'.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>

#include "core/policies/themis.h"
#include "sim/csv.h"
#include "sim/presets/elasticflow.h"

namespace tidal::sim::elasticflow {

namespace {

struct ThemisRun {
	Context &ctx;
	EventList events;
	std::vector<int> runnable;
	std::vector<double> cum_iso, prev_left, prev_share, remaining, x;
	std::vector<bool> seen, has_prev, running;
	SlotTime event_time = 0;

	explicit ThemisRun(Context &c)
		: ctx(c), cum_iso(c.jobs.size(), 0),
		  prev_left(c.jobs.size(), 0), prev_share(c.jobs.size(), 0),
		  remaining(c.jobs.size(), 0), x(c.jobs.size(), 0),
		  seen(c.jobs.size(), false), has_prev(c.jobs.size(), false),
		  running(c.jobs.size(), false)
	{
		for (size_t j = 0; j < c.jobs.size(); j++)
			remaining[j] = c.jobs[j].job->duration;
	}

	EfJob &job(int j) { return ctx.jobs[j]; }
	double tput(int j) { return job(j).row->at(job(j).job->gpus); }
	void handle_event(const Event &ev);
	void decide();
	SlotTime next_time(SlotTime now);
	void progress(SlotTime now, SlotTime next);
	RunResult run();
};

void ThemisRun::handle_event(const Event &ev)
{
	event_time = ev.time;
	for (int j : ev.end_jobs) {
		EfJob &e = job(j);
		if (e.status == Status::Done)
			continue;
		if (e.end_time > e.ddl)
			ctx.declined++;
		else if (!e.best_effort)
			ctx.accepted++;
		list_remove(runnable, j);
		e.status = Status::Done;
		ctx.complete(j);
	}
	for (int j : ev.start_jobs) {
		job(j).status = Status::Pending;
		runnable.push_back(j);
	}
}

void ThemisRun::decide()
{
	int n = (int)runnable.size(), cluster = ctx.cluster_gpus;
	std::vector<FtfJob> in;
	for (int j : runnable) {
		EfJob &e = job(j);
		int g = e.job->gpus;
		double share = std::min(
			(double)((cluster + n - 1) / n) / (double)g, 1.0);
		if (has_prev[j])
			cum_iso[j] += (prev_left[j] - e.iter_left) / prev_share[j];
		FtfJob f;
		f.elapsed = (double)(event_time - e.submit);
		f.work = e.iter_left / tput(j);
		f.isolated = cum_iso[j] + e.iter_left / share;
		f.gpus = g;
		in.push_back(f);
		prev_left[j] = e.iter_left;
		prev_share[j] = share;
		has_prev[j] = true;
	}
	FtfShares s = themis_shares(in, cluster);
	for (int i = 0; i < n; i++)
		x[runnable[i]] = s.x[i];
	std::stable_sort(runnable.begin(), runnable.end(),
			 [&](int a, int b) { return x[a] > x[b]; });
	int free = cluster;
	for (int j : runnable) {
		running[j] = false;
	}
	for (int j : runnable) {
		if (free <= 0)
			break;
		if (job(j).job->gpus <= free) {
			running[j] = true;
			free -= job(j).job->gpus;
			if (job(j).start < 0)
				job(j).start = event_time;
		}
	}
	ctx.sample(event_time, cluster - free);
}

/* The next slot; arrivals within it are merged into it. */
SlotTime ThemisRun::next_time(SlotTime now)
{
	SlotTime next = now + ctx.slot, slot = ctx.slot;
	if (events.empty())
		return next;
	SlotTime ns = events.ev[0].time;
	while (ns - now <= slot && events.ev.size() > 1) {
		Event &a = events.ev[0], &b = events.ev[1];
		a.time = now + slot;
		if (b.time - now > slot) {
			ns = a.time;
			break;
		}
		ns = b.time;
		a.start_jobs.insert(a.start_jobs.end(), b.start_jobs.begin(),
				    b.start_jobs.end());
		a.end_jobs.insert(a.end_jobs.end(), b.end_jobs.begin(),
				  b.end_jobs.end());
		events.ev.erase(events.ev.begin() + 1);
	}
	if (ns - now < slot)
		events.ev[0].time = next;
	return next;
}

void ThemisRun::progress(SlotTime now, SlotTime next)
{
	std::vector<int> ends;
	SlotTime dt = next - now;
	for (int j : runnable) {
		if (!running[j])
			continue;
		EfJob &e = job(j);
		SlotTime end = now + (SlotTime)remaining[j];
		remaining[j] = std::max(0.0, remaining[j] - (double)dt);
		e.iter_left -= (double)dt * tput(j);
		if (e.iter_left <= 0) {
			remaining[j] = 0;
			end = next;
		}
		if (end <= next) {
			ends.push_back(j);
			e.end_time = end;
		}
	}
	if (!events.empty() && events.ev[0].time == next)
		events.ev[0].end_jobs.insert(events.ev[0].end_jobs.end(),
					     ends.begin(), ends.end());
	else if (!ends.empty())
		events.ev.push_back({next, {}, ends});
	events.sort();
}

RunResult ThemisRun::run()
{
	events.add_starts(ctx.jobs);
	SlotTime now = events.ev[0].time;
	while (!events.empty() || !runnable.empty()) {
		int ei = events.find(now);
		if (ei >= 0)
			handle_event(events.ev[0]);
		if (!runnable.empty())
			decide();
		ctx.result.decisions++;
		ctx.result.events++;
		if (!events.empty() && events.ev[0].time == now) {
			events.ev.erase(events.ev.begin());
			events.sort();
		}
		SlotTime next = next_time(now);
		progress(now, next);
		now = next;
	}
	return ctx.finish("themis");
}

} /* namespace */

RunResult run_themis(Context &ctx, int)
{
	ThemisRun r(ctx);
	return r.run();
}

} /* namespace tidal::sim::elasticflow */
