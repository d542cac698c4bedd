/*
 * elasticflow_ef.cc - ElasticFlow itself: "elasticflow" (ef-accessctrl,
 * admission control) and "elasticflow-noadmit" (ef)
 * [ef_sim_jobs_access_control, ef_sim_jobs].
 *
 * The planner is core/policies/elasticflow.h; placement is
 * core/placement/buddy_placement.h.  This file is the artifact's time model:
 *
 *   1. progress over the last interval (a job whose iterations ran out
 *      before its planned end is moved into this event);
 *   2. the event at now: its end jobs complete if they are placed; a job
 *      whose planned real_end missed its deadline moves from accepted to
 *      declined (ef: the logged end is judged instead);
 *   3. admission (ef-accessctrl): re-plan admitted jobs + arrivals in
 *      deadline order; one miss rejects every arrival of the event;
 *   4. re-plan the runnable jobs; a pending job whose plan starts now
 *      starts; leftover GPUs go by marginal return; buddy placement; the
 *      placement's ranks decide whether the restart is cached;
 *   5. an empty event at the earliest planned scale-up; every running job
 *      pays the restart overhead (its end moves); the event list is
 *      coalesced with the slot.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/placement/buddy_placement.h"
#include "core/policies/elasticflow.h"
#include "sim/csv.h"
#include "sim/presets/elasticflow.h"

namespace tidal::sim::elasticflow {

namespace {

constexpr SlotTime kMaxSize = std::numeric_limits<SlotTime>::max();

struct EfRun {
	Context &ctx;
	bool admission;
	EfEnv env;
	BuddyCluster buddy;
	EventList events;
	std::vector<int> pending, runnable, running;
	std::vector<EfEntry> entries;
	EfTimeline timeline;
	std::set<std::pair<int, int>> cache; /* (first rank, GPUs) seen */
	long schedule_count = 0;
	SlotTime first_scale = kMaxSize;

	EfRun(Context &c, bool adm, int gpn)
		: ctx(c), admission(adm),
		  buddy(c.cluster_gpus / gpn, gpn, c.node_ids),
		  entries(c.jobs.size())
	{
		env.slot = c.slot;
		env.cluster = c.cluster_gpus;
		for (size_t j = 0; j < c.jobs.size(); j++) {
			EfJob &e = c.jobs[j];
			entries[j].view = {e.row, e.ef_max_gpu, e.iter_left,
					   e.ddl};
		}
	}

	EfJob &job(int j) { return ctx.jobs[j]; }
	void advance(SlotTime diff, SlotTime now);
	void complete(const std::vector<int> &ends);
	void release(int j);
	void plan_all(std::vector<int> &list, bool record_old);
	bool admit(const std::vector<int> &starts);
	void decline(int j, const std::string &reason);
	void replan(SlotTime now, bool redo);
	void start(int j, SlotTime now);
	void start_pending(SlotTime now);
	void leftover(SlotTime now);
	void place(SlotTime now);
	void log_ranks();
	void charge_overheads();
	bool event_accessctrl(SlotTime now, int ei);
	void event_noadmit(SlotTime now, int ei);
	RunResult run();
};

/* jobs.run_all_jobs; the clip uses real_end (set once planned). */
void EfRun::advance(SlotTime diff, SlotTime now)
{
	for (int j : runnable) {
		EfJob &e = job(j);
		if (e.num_gpu == 0)
			continue;
		double tput = e.row->at(e.num_gpu);
		SlotTime run = diff;
		if (now > e.real_end)
			run -= now - e.real_end;
		double r = run < e.overhead ? 0 : (double)run - e.overhead;
		double iters = r * tput;
		if (e.iter_left <= iters && e.end_time > now) {
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
	for (int j : runnable)
		job(j).overhead = 0;
}

void EfRun::release(int j)
{
	if (buddy.placed(j))
		buddy.release(j, job(j).num_gpu);
}

void EfRun::complete(const std::vector<int> &ends)
{
	for (int j : ends) {
		EfJob &e = job(j);
		if (admission && !buddy.placed(j))
			continue;
		if (!admission && e.status == Status::Done)
			continue;
		release(j);
		bool late = admission ? e.real_end > e.ddl : e.end_time > e.ddl;
		if (late) {
			ctx.declined++;
			ctx.accepted--;
		}
		list_remove(running, j);
		list_remove(runnable, j);
		list_remove(pending, j);
		e.status = Status::Done;
		ctx.complete(j);
	}
}

/* estimate_all_jobs: LIST sorted by deadline (stably, in place), every
 * placement released, each job planned and committed. */
void EfRun::plan_all(std::vector<int> &list, bool record_old)
{
	std::stable_sort(list.begin(), list.end(), [&](int a, int b) {
		return job(a).ddl < job(b).ddl;
	});
	for (int j : list) {
		if (record_old)
			job(j).old_end_time = job(j).end_time;
		release(j);
		entries[j].view.iter_left = job(j).iter_left;
	}
	EfAdmission r = ef_admit(entries, list, env, timeline);
	for (int j : list) {
		job(j).end_time = entries[j].plan.end;
		job(j).real_end = entries[j].plan.real_end;
	}
	(void)r;
}

void EfRun::decline(int j, const std::string &reason)
{
	EfJob &e = job(j);
	e.status = Status::Done;
	e.reject_reason = reason;
	ctx.declined++;
	JobResult r;
	r.id = e.job->id;
	r.name = e.job->name;
	r.gpus = e.job->gpus;
	r.submit = (Time)e.submit;
	r.deadline = e.job->deadline;
	r.rejected = true;
	ctx.result.jobs.push_back(r);
}

/* Admission of the event's arrivals (all or nothing).  RET: admitted. */
bool EfRun::admit(const std::vector<int> &starts)
{
	EfTimeline saved = timeline;
	std::vector<int> list = runnable;
	list.insert(list.end(), starts.begin(), starts.end());
	std::stable_sort(list.begin(), list.end(), [&](int a, int b) {
		return job(a).ddl < job(b).ddl;
	});
	for (int j : list) {
		job(j).old_end_time = job(j).end_time;
		release(j);
		entries[j].view.iter_left = job(j).iter_left;
	}
	EfAdmission r = ef_admit(entries, list, env, timeline);
	for (int j : list) {
		job(j).end_time = entries[j].plan.end;
		job(j).real_end = entries[j].plan.real_end;
	}
	if (r.ok) {
		for (int j : starts) {
			job(j).status = Status::Pending;
			pending.push_back(j);
			runnable.push_back(j);
		}
		return true;
	}
	int failed = list[r.failed];
	for (int j : starts) {
		if (job(j).best_effort) {
			job(j).status = Status::Pending;
			pending.push_back(j);
			runnable.push_back(j);
			continue;
		}
		std::string why = r.reason;
		if (failed != j)
			why = "admitting it would make job " +
			      job(failed).job->name + " miss its deadline: " +
			      r.reason;
		decline(j, why);
	}
	timeline = saved;
	return false;
}

/* Step 6: GPUs now from the plans, end events moved, plans redone. */
void EfRun::replan(SlotTime now, bool redo)
{
	if (redo)
		timeline.reset(now, env.cluster);
	std::stable_sort(runnable.begin(), runnable.end(), [&](int a, int b) {
		return job(a).ddl < job(b).ddl;
	});
	for (int j : runnable) {
		EfJob &e = job(j);
		EfEntry &en = entries[j];
		e.num_gpu = en.plan.alloc.at(now);
		events.change_end(ctx.jobs, j);
		e.old_end_time = e.end_time;
		if (!redo)
			continue;
		ef_plan(en.view, env, timeline, &en.plan);
		e.end_time = en.plan.end;
		e.real_end = en.plan.real_end;
	}
}

void EfRun::start(int j, SlotTime now)
{
	EfJob &e = job(j);
	e.status = Status::Running;
	e.start = now;
	list_remove(pending, j);
	running.push_back(j);
	if (!e.best_effort)
		ctx.accepted++;
}

static SlotTime first_nonzero(const EfAllocs &a)
{
	for (const auto &[t, g] : a)
		if (g != 0)
			return t;
	return 0;
}

void EfRun::start_pending(SlotTime now)
{
	std::vector<int> starts;
	int free = buddy.free_gpus();
	for (int j : pending) {
		const EfAllocs &a = entries[j].plan.alloc;
		bool later = false;
		for (const auto &[t, g] : a) {
			if (g == 0)
				continue;
			later = t > now;
			break;
		}
		job(j).num_gpu = a.at(now);
		if (later && !admission)
			events.add_scale(first_nonzero(a));
		if (job(j).num_gpu <= free && !later)
			starts.push_back(j);
	}
	for (int j : starts) {
		start(j, now);
		events.add_end(ctx.jobs, j);
	}
}

void EfRun::leftover(SlotTime now)
{
	for (int j : runnable)
		entries[j].gpus = job(j).num_gpu;
	ef_allocate_leftover(entries, runnable, env, timeline,
			     [&](int j, int) {
				     EfJob &e = job(j);
				     e.num_gpu = entries[j].gpus;
				     e.old_end_time = e.end_time;
				     e.end_time = entries[j].plan.end;
				     e.real_end = entries[j].plan.real_end;
				     if (e.status == Status::Pending)
					     start(j, now);
				     events.change_end(ctx.jobs, j);
			     });
}

void EfRun::place(SlotTime now)
{
	first_scale = kMaxSize;
	std::vector<int> &who = admission ? runnable : running;
	if (admission)
		std::stable_sort(who.begin(), who.end(), [&](int a, int b) {
			return job(a).num_gpu > job(b).num_gpu;
		});
	int gpn = ctx.gpus_per_node;
	for (int j : who) {
		auto it = entries[j].plan.alloc.upper_bound(now);
		if (it != entries[j].plan.alloc.end()) {
			if (admission)
				first_scale = std::min(first_scale, it->first);
			else if (it->first < kMaxSize)
				events.add_scale(it->first);
		}
		if (job(j).num_gpu >= gpn && !buddy.place(j, job(j).num_gpu))
			throw InputError("elasticflow: buddy placement failed");
	}
	for (int size : {4, 2, 1}) {
		if (size >= gpn)
			continue;
		for (int j : who)
			if (job(j).num_gpu == size &&
			    !buddy.place(j, size))
				throw InputError("elasticflow: buddy placement "
						 "failed");
	}
	int busy = 0;
	for (int j : runnable)
		busy += job(j).num_gpu;
	ctx.sample(now, busy);
}

void EfRun::log_ranks()
{
	buddy.for_each_rank([&](int j, int first, int gpus) {
		job(j).in_cache = !cache.insert({first, gpus}).second;
	});
}

void EfRun::charge_overheads()
{
	bool restart = schedule_count > 0 && schedule_count % ctx.slot == 0;
	schedule_count++;
	if (restart)
		cache.clear();
	for (int j : admission ? runnable : running) {
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

/* The event at NOW (ef-accessctrl).  RET: false to skip the rest. */
bool EfRun::event_accessctrl(SlotTime now, int ei)
{
	Event ev = events.ev[ei];
	events.ev.erase(events.ev.begin() + ei);
	if (pending.empty() && running.empty() && ev.end_jobs.empty() &&
	    ev.start_jobs.empty())
		return false;
	complete(ev.end_jobs);
	for (int j : runnable)
		job(j).old_end_time = job(j).end_time;
	bool admitted = !ev.start_jobs.empty() && admit(ev.start_jobs);
	if (!admitted)
		plan_all(runnable, ev.start_jobs.empty());
	/* The artifact re-plans the same jobs in the same deadline order on a
	 * fresh timeline here: the plans and the timeline are the ones just
	 * made, so only the bookkeeping is redone. */
	replan(now, false);
	return true;
}

/* The event at NOW (ef: no admission, no re-plan). */
void EfRun::event_noadmit(SlotTime now, int ei)
{
	Event ev = events.ev[ei];
	complete(ev.end_jobs);
	for (int j : runnable)
		job(j).old_end_time = job(j).end_time;
	for (int j : ev.start_jobs) {
		job(j).status = Status::Pending;
		pending.push_back(j);
		runnable.push_back(j);
	}
	plan_all(runnable, true);
	replan(now, false);
	int i = events.find(now);
	if (i >= 0)
		events.ev.erase(events.ev.begin() + i);
}

RunResult EfRun::run()
{
	events.add_starts(ctx.jobs);
	SlotTime now = events.ev[0].time, diff = 0, ev_time = now;
	while (!events.empty() || !pending.empty() || !running.empty()) {
		env.now = now;
		advance(diff, now);
		int ei = events.find(now);
		if (ei >= 0) {
			ev_time = now;
			if (admission) {
				if (!event_accessctrl(now, ei))
					continue;
			} else {
				event_noadmit(now, ei);
			}
		}
		start_pending(now);
		leftover(now);
		place(now);
		log_ranks();
		ctx.result.decisions++;
		ctx.result.events++;
		events.sort();
		if (admission && (events.empty() ||
				  first_scale < events.ev[0].time)) {
			events.add_scale(first_scale);
			events.sort();
		}
		if (events.empty()) {
			now += 10;
			diff = 10;
			continue;
		}
		charge_overheads();
		SlotTime next = events.coalesce(now, ctx.slot, true);
		diff = next - ev_time;
		now = next;
	}
	return ctx.finish(admission ? "elasticflow" : "elasticflow-noadmit");
}

} /* namespace */

int ef_max_gpu(const std::string &m, int bs, bool t4)
{
	if (t4) {
		if (m == "bert" || m == "cifar10")
			return 16;
		if (m == "deepspeech2" && bs == 320)
			return 32;
		if (m == "yolov3")
			return 4;
		if (m == "ncf")
			return 1;
		return 64;
	}
	if (m == "deepspeech2")
		return bs;
	if (m == "gpt2" && (bs == 128 || bs == 256))
		return bs == 128 ? 16 : 32;
	if (m == "bert")
		return bs == 64 ? 8 : 16;
	if (m == "inception3" && (bs == 64 || bs == 128))
		return bs == 64 ? 16 : 32;
	if (m == "resnet50")
		return bs == 64 ? 32 : std::min(bs, 64);
	if (m == "vgg16" && bs == 64)
		return 32;
	return std::min(bs, 64);
}

RunResult run_ef(Context &ctx, bool admission, int gpus_per_node)
{
	ctx.gpus_per_node = gpus_per_node;
	EfRun r(ctx, admission, gpus_per_node);
	return r.run();
}

} /* namespace tidal::sim::elasticflow */
