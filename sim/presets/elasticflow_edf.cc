/*
 * elasticflow_edf.cc - ElasticFlow's "edf" baseline: elastic EDF with no
 * admission control [one_queue_edf_sim_jobs].
 *
 * At each event (the first of the list):
 *
 *   1. advance running jobs by time_diff at their GPU count (a job whose
 *      iterations run out early is moved into this event);
 *   2. complete the event's end jobs: late (end_time > ddl) ones move from
 *      accepted to declined;
 *   3. re-plan every runnable job plus the arrivals in deadline order on a
 *      fresh free-GPU timeline (core/policies/edf_elastic.h); a job runs on
 *      its allocation at now, its end event moves to the planned end, and
 *      a pending job with GPUs starts (accepted + 1);
 *   4. pop the event, coalesce the list with the slot, jump to its head.
 *
 * Placement only decides GPU ranks, and this policy charges no overhead,
 * so it is not modelled.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <set>

#include "core/placement/buddy_placement.h"
#include "core/policies/edf_elastic.h"
#include "sim/csv.h"
#include "sim/presets/elasticflow.h"

namespace tidal::sim::elasticflow {

namespace {

struct EdfRun {
	Context &ctx;
	EventList events;
	std::vector<int> pending, runnable, running;
	std::vector<EdfPlan> plans;

	explicit EdfRun(Context &c) : ctx(c), plans(c.jobs.size()) {}

	EfJob &job(int j) { return ctx.jobs[j]; }
	void advance(SlotTime diff, SlotTime now);
	void advance_one(int j, SlotTime diff, SlotTime now);
	void complete(const std::vector<int> &ends);
	bool plan(std::vector<int> &order, SlotTime now);
	void apply(SlotTime now);
	RunResult run();

	/* edf-accessctrl */
	BuddyCluster *buddy = nullptr;
	std::set<std::pair<int, int>> cache;
	long schedule_count = 0;
	void adopt(int j, SlotTime now);
	void admit(const std::vector<int> &starts, SlotTime now, bool *any);
	void replan_admitted(SlotTime now);
	void place_and_log(const std::vector<int> &order);
	void charge_overheads();
	RunResult run_admit();
};

/* jobs.run_all_jobs: progress over the last TIME_DIFF seconds. */
void EdfRun::advance_one(int j, SlotTime diff, SlotTime now)
{
	EfJob &e = job(j);
	double tput = e.row->at(e.num_gpu);
	SlotTime run = diff;
	if (now > e.end_time)
		run -= now - e.end_time;
	double r = run < e.overhead ? 0 : (double)run - e.overhead;
	double iters = r * tput;
	if (e.iter_left <= iters && e.end_time > now) {
		/* Done before its planned end: it ends in this event. */
		e.old_end_time = e.end_time;
		SlotTime end = now - diff +
			       (SlotTime)std::ceil(e.iter_left / tput);
		iters = (double)(e.end_time - now + diff) * tput;
		e.end_time = now;
		events.change_end(ctx.jobs, j);
		e.end_time = end;
	}
	e.iter_left -= iters;
	e.overhead = 0;
}

void EdfRun::advance(SlotTime diff, SlotTime now)
{
	for (int j : runnable)
		if (job(j).num_gpu > 0)
			advance_one(j, diff, now);
	for (int j : runnable)
		job(j).overhead = 0;
}

void EdfRun::complete(const std::vector<int> &ends)
{
	for (int j : ends) {
		EfJob &e = job(j);
		if (e.end_time > e.ddl) {
			ctx.declined++;
			ctx.accepted--;
		}
		list_remove(running, j);
		list_remove(runnable, j);
		e.status = Status::Done;
		ctx.complete(j);
	}
}

/* EDF_estimate_all_jobs: ORDER is sorted by deadline (stably, in place)
 * and planned on a fresh timeline. */
bool EdfRun::plan(std::vector<int> &order, SlotTime now)
{
	bool ok = true;
	std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
		return job(a).ddl < job(b).ddl;
	});
	FreeTimeline free(now, ctx.cluster_gpus);
	for (int j : order) {
		EfJob &e = job(j);
		ElasticJobView v{e.row, e.max_gpu, e.iter_left, e.ddl};
		plans[j] = edf_plan_job(v, now, ctx.slot, ctx.cluster_gpus,
					free);
		ok = ok && plans[j].meets_deadline;
	}
	return ok;
}

/* Adopt the plans: GPUs now, planned end, starts. */
void EdfRun::apply(SlotTime now)
{
	int busy = 0;
	for (int j : runnable) {
		EfJob &e = job(j);
		e.num_gpu = plans[j].gpus_now;
		e.old_end_time = e.end_time;
		e.end_time = plans[j].end;
		busy += e.num_gpu;
		if (e.status == Status::Running) {
			events.change_end(ctx.jobs, j);
		} else if (e.num_gpu > 0) {
			e.status = Status::Running;
			e.start = now;
			list_remove(pending, j);
			running.push_back(j);
			ctx.accepted++;
			events.add_end(ctx.jobs, j);
		}
	}
	ctx.sample(now, busy);
}

RunResult EdfRun::run()
{
	events.add_starts(ctx.jobs);
	SlotTime now = events.ev[0].time, diff = 0;
	while (!events.empty()) {
		advance(diff, now);
		Event ev = events.ev[0];
		complete(ev.end_jobs);
		if (!ev.start_jobs.empty()) {
			std::vector<int> all = runnable;
			all.insert(all.end(), ev.start_jobs.begin(),
				   ev.start_jobs.end());
			plan(all, ev.time);
			for (int j : ev.start_jobs) {
				job(j).status = Status::Pending;
				pending.push_back(j);
				if (!list_has(runnable, j))
					runnable.push_back(j);
			}
		} else {
			plan(runnable, ev.time);
		}
		apply(ev.time);
		ctx.result.decisions++;
		ctx.result.events++;
		events.ev.erase(events.ev.begin());
		if (events.empty())
			break;
		SlotTime next = events.coalesce(now, ctx.slot, true);
		diff = next - now;
		now = next;
	}
	if (!pending.empty())
		throw InputError(ctx.in->trace_path + ": edf: " +
				 std::to_string(pending.size()) +
				 " job(s) never started: the cluster is too "
				 "small for them");
	return ctx.finish("edf");
}

/* The planner divides by the speed of any level up to max_gpu; the
 * artifact dies with ZeroDivisionError on a 0 or empty cell there. */
void check_levels(const Context &ctx)
{
	for (const EfJob &e : ctx.jobs)
		for (int g : e.row->gpus) {
			double v = e.row->at(g);
			if (g > e.max_gpu || (std::isfinite(v) && v > 0))
				continue;
			input_error(ctx.in->trace_path,
				    ctx.in->trace.line(*e.job),
				    "edf: model " + e.job->model + " at batch " +
					    std::to_string(e.job->batch) +
					    " has no usable throughput at " +
					    std::to_string(g) + " GPUs (max " +
					    std::to_string(e.max_gpu) + ")");
		}
}

/* Take job J's last plan: GPUs now and (later, by the caller) its end. */
void EdfRun::adopt(int j, SlotTime now)
{
	(void)now;
	job(j).num_gpu = plans[j].gpus_now;
}

/* Each arrival alone against the admitted jobs [edf-accessctrl]. */
void EdfRun::admit(const std::vector<int> &starts, SlotTime now, bool *any)
{
	for (int s : starts) {
		std::vector<int> trial = runnable;
		trial.push_back(s);
		if (!plan(trial, now)) {
			job(s).status = Status::Done;
			ctx.declined++;
			JobResult r;
			r.id = job(s).job->id;
			r.name = job(s).job->name;
			r.gpus = job(s).job->gpus;
			r.submit = (Time)job(s).submit;
			r.deadline = job(s).job->deadline;
			r.rejected = true;
			ctx.result.jobs.push_back(r);
			continue;
		}
		job(s).status = Status::Pending;
		pending.push_back(s);
		runnable.push_back(s);
		*any = true;
		for (int j : running) {
			adopt(j, now);
			job(j).old_end_time = job(j).end_time;
			job(j).end_time = plans[j].end;
			events.change_end(ctx.jobs, j);
		}
		std::vector<int> starting;
		for (int j : pending) {
			adopt(j, now);
			job(j).old_end_time = job(j).end_time;
			job(j).end_time = plans[j].end;
			if (job(j).num_gpu > 0)
				starting.push_back(j);
		}
		for (int j : starting) {
			job(j).status = Status::Running;
			job(j).start = now;
			list_remove(pending, j);
			running.push_back(j);
			ctx.accepted++;
			events.add_end(ctx.jobs, j);
		}
	}
}

/* No arrival admitted: re-plan and adopt (a job with no GPUs now keeps
 * its old end). */
void EdfRun::replan_admitted(SlotTime now)
{
	plan(runnable, now);
	for (int j : runnable) {
		EfJob &e = job(j);
		adopt(j, now);
		if (e.num_gpu <= 0)
			continue;
		if (e.status == Status::Pending) {
			e.status = Status::Running;
			e.start = now;
			list_remove(pending, j);
			running.push_back(j);
			ctx.accepted++;
			events.add_end(ctx.jobs, j);
		}
		e.end_time = plans[j].end;
		events.change_end(ctx.jobs, j);
	}
}

void EdfRun::place_and_log(const std::vector<int> &order)
{
	int busy = 0;
	for (int j : order)
		if (job(j).num_gpu > 0) {
			if (!buddy->place(j, job(j).num_gpu))
				throw InputError("edf-admit: placement failed");
			busy += job(j).num_gpu;
		}
	buddy->for_each_rank([&](int j, int first, int gpus) {
		job(j).in_cache = !cache.insert({first, gpus}).second;
	});
	(void)busy;
}

void EdfRun::charge_overheads()
{
	bool restart = schedule_count > 0 && schedule_count % ctx.slot == 0;
	schedule_count++;
	if (restart)
		cache.clear();
	for (int j : running) {
		EfJob &e = job(j);
		if (e.num_gpu <= 0) {
			e.overhead = 0;
			continue;
		}
		e.overhead = elastic_overhead(e.num_gpu, restart, e.in_cache,
					      ctx.cluster_gpus);
		e.old_end_time = e.end_time;
		e.end_time += (SlotTime)e.overhead;
		events.change_end(ctx.jobs, j);
	}
}

RunResult EdfRun::run_admit()
{
	BuddyCluster b(ctx.cluster_gpus / ctx.gpus_per_node,
		       ctx.gpus_per_node, ctx.node_ids);
	buddy = &b;
	events.add_starts(ctx.jobs);
	SlotTime now = events.ev[0].time, diff = 0;
	while (!events.empty() || !pending.empty()) {
		if (events.empty())
			break; /* the artifact would crash here */
		advance(diff, now);
		for (int j : runnable) {
			job(j).old_end_time = job(j).end_time;
			if (b.placed(j))
				b.release(j, job(j).num_gpu);
		}
		Event ev = events.ev[0];
		for (int j : ev.end_jobs) {
			EfJob &e = job(j);
			list_remove(running, j);
			list_remove(runnable, j);
			e.status = Status::Done;
			ctx.complete(j);
			if (e.end_time > e.ddl) {
				ctx.declined++;
				ctx.accepted--;
			}
		}
		bool any = false;
		admit(ev.start_jobs, ev.time, &any);
		if (!any)
			replan_admitted(ev.time);
		place_and_log(runnable);
		int busy = 0;
		for (int j : running)
			busy += job(j).num_gpu;
		ctx.sample(ev.time, busy);
		ctx.result.decisions++;
		ctx.result.events++;
		events.ev.erase(events.ev.begin());
		if (events.empty()) {
			diff = 10;
			continue;
		}
		events.sort();
		charge_overheads();
		SlotTime next = events.coalesce(now, ctx.slot, true);
		diff = next - now;
		now = next;
	}
	return ctx.finish("edf-admit");
}

} /* namespace */

RunResult run_edf(Context &ctx, bool admission)
{
	check_levels(ctx);
	EdfRun r(ctx);
	return admission ? r.run_admit() : r.run();
}

} /* namespace tidal::sim::elasticflow */
