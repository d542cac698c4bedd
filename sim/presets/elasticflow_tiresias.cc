/*
 * elasticflow_tiresias.cc - ElasticFlow's "dlas-gpu" baseline (Tiresias,
 * discretised 2D-LAS) [dlas_sim_jobs(gputime=True)].
 *
 * Non-elastic: a job runs on its traced GPU count for its traced duration.
 * The ranking and fit-first allocation are core Tiresias (levels kept here,
 * FIFO within a level, global GPU count); this file is the anchor's time
 * model:
 *
 *   next event = min(next arrival event, the single end event, the next
 *                queue jump); on a tie the arrival event carries the ends
 *   at an event:
 *     1. complete the end jobs (on time: accepted + 1, late: declined);
 *     2. append arrivals to queue 0;
 *     3. running jobs: executed += max(int(now - last) - overhead, 0);
 *        demote one level when executed x GPUs reaches the threshold;
 *     4. decide (core Tiresias); a job started now owes a startup
 *        overhead, paid at its next event;
 *     5. sort runnable jobs by GPUs (descending, stable); pending jobs go
 *        to the tail of their queue;
 *     6. end event: each running job's end = int(now + duration -
 *        executed (+ overhead on a restart event)); only the earliest
 *        (>= now + slot) is kept, ties grouped;
 *     7. next jump = earliest int(ceil((limit - executed_s) / GPUs)) + now
 *        (the artifact mixes seconds and GPU-seconds here), >= now + slot;
 *        arrival events are coalesced with the slot (ends are dropped).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/policies/baseline.h"
#include "core/model/policy.h"
#include "sim/csv.h"
#include "sim/presets/elasticflow.h"

namespace tidal::sim::elasticflow {

namespace {

constexpr SlotTime kNever = std::numeric_limits<SlotTime>::max();

struct LasState {
	int q = 0;
	long executed = 0, total_executed = 0; /* seconds */
	SlotTime last_check = 0;
};

struct TiresiasRun {
	Context &ctx;
	Policy &policy;
	std::vector<double> limits; /* GPU-seconds, one per level but the last */
	EventList arrivals;
	Event end_event;
	bool has_end = false;
	SlotTime next_jump = kNever;
	std::vector<int> runnable;
	std::vector<std::vector<int>> queues;
	std::vector<LasState> las;
	std::vector<Job> view; /* what the core policy sees */
	long schedule_count = 0;

	TiresiasRun(Context &c, Policy &p, std::vector<double> l)
		: ctx(c), policy(p), limits(std::move(l)),
		  queues(limits.size() + 1), las(c.jobs.size()),
		  view(c.jobs.size())
	{
	}
	EfJob &job(int j) { return ctx.jobs[j]; }
	void complete(const std::vector<int> &ends);
	void arrive(const std::vector<int> &starts);
	void account(SlotTime now);
	void schedule(SlotTime now, bool restart);
	void requeue_pending();
	void plan_end(SlotTime now, bool restart);
	void plan_jump(SlotTime now);
	RunResult run();
};

void TiresiasRun::complete(const std::vector<int> &ends)
{
	for (int j : ends) {
		EfJob &e = job(j);
		if (e.end_time > e.ddl)
			ctx.declined++;
		else if (!e.job->best_effort)
			ctx.accepted++;
		e.status = Status::Done;
		ctx.complete(j);
		list_remove(runnable, j);
		list_remove(queues[las[j].q], j);
	}
}

void TiresiasRun::arrive(const std::vector<int> &starts)
{
	for (int j : starts) {
		job(j).status = Status::Pending;
		job(j).num_gpu = job(j).job->gpus;
		las[j] = LasState{};
		las[j].last_check = job(j).submit;
		runnable.push_back(j);
		queues[0].push_back(j);
	}
}

/* Attained service since the last event, and demotion. */
void TiresiasRun::account(SlotTime now)
{
	for (int j : runnable) {
		EfJob &e = job(j);
		LasState &s = las[j];
		if (e.status != Status::Running) {
			s.last_check = now;
			continue;
		}
		double ran = std::max((double)(long)(now - s.last_check) -
					      e.overhead, 0.0);
		s.total_executed = (long)((double)s.total_executed + ran);
		s.executed = (long)((double)s.executed + ran);
		s.last_check = now;
		e.overhead = 0;
		long gpu_time = s.executed * e.num_gpu;
		if (s.q < (int)limits.size() && (double)gpu_time >= limits[s.q]) {
			list_remove(queues[s.q], j);
			s.q++;
			queues[s.q].push_back(j);
		}
	}
}

/* Ask core Tiresias: rank = (queue, position in it), fit-first. */
void TiresiasRun::schedule(SlotTime now, bool restart)
{
	Snapshot snap;
	snap.cluster = &ctx.in->cluster;
	snap.now = (Time)now;
	snap.want_reasons = false;
	for (const std::vector<int> &q : queues)
		for (size_t pos = 0; pos < q.size(); pos++) {
			int j = q[pos];
			Job &v = view[j];
			v = *job(j).job;
			v.level = las[j].q;
			v.seq = pos;
			v.attained = (double)(las[j].executed * job(j).num_gpu);
			bool run = job(j).status == Status::Running;
			v.state = run ? JobState::Running : JobState::Pending;
			v.alloc = run ? v.gpus : 0;
			if (run)
				v.placement = {{-1, v.gpus}};
			snap.jobs.push_back(&v);
		}
	Plan plan = policy.decide(snap);
	for (const Decision &d : plan.decisions) {
		int j = -1;
		for (const Job *v : snap.jobs)
			if (v->id == d.job)
				j = (int)(v - view.data());
		EfJob &e = job(j);
		if (d.action == Action::Start) {
			e.overhead = elastic_overhead(e.num_gpu, restart, false,
						      ctx.cluster_gpus);
			e.status = Status::Running;
			if (e.start < 0)
				e.start = now;
		} else if (d.action == Action::Preempt) {
			e.status = Status::Pending;
		}
	}
}

void TiresiasRun::requeue_pending()
{
	std::stable_sort(runnable.begin(), runnable.end(), [&](int a, int b) {
		return job(a).num_gpu > job(b).num_gpu;
	});
	for (std::vector<int> &q : queues)
		std::stable_partition(q.begin(), q.end(), [&](int j) {
			return job(j).status != Status::Pending;
		});
}

void TiresiasRun::plan_end(SlotTime now, bool restart)
{
	has_end = false;
	end_event = Event{};
	SlotTime best = kNever;
	for (int j : runnable) {
		EfJob &e = job(j);
		if (e.status != Status::Running)
			continue;
		double remaining = e.job->duration - (double)las[j].total_executed;
		if (restart) {
			e.overhead = elastic_overhead(e.num_gpu, true, false,
						      ctx.cluster_gpus);
			remaining += e.overhead;
		}
		SlotTime end = (SlotTime)((double)now + remaining);
		SlotTime at = std::max(now + ctx.slot, end);
		if (at < best) {
			end_event = Event{at, {}, {j}};
			best = at;
			e.end_time = end;
		} else if (at == best) {
			e.end_time = end;
			end_event.end_jobs.push_back(j);
		}
	}
	has_end = best != kNever;
}

void TiresiasRun::plan_jump(SlotTime now)
{
	next_jump = kNever;
	for (int j : runnable) {
		const EfJob &e = job(j);
		const LasState &s = las[j];
		if (e.status != Status::Running || s.q >= (int)limits.size())
			continue;
		double left = (limits[s.q] - (double)s.executed) / e.num_gpu;
		next_jump = std::min(next_jump,
				     (SlotTime)std::ceil(left) + now);
	}
	if (next_jump - now < ctx.slot)
		next_jump = now + ctx.slot;
}

RunResult TiresiasRun::run()
{
	arrivals.add_starts(ctx.jobs);
	while (!arrivals.empty() || !runnable.empty()) {
		if (arrivals.empty() && !has_end)
			throw InputError(ctx.in->trace_path + ": tiresias: " +
					 "jobs wider than the cluster never run");
		SlotTime st = arrivals.empty() ? kNever : arrivals.ev[0].time;
		SlotTime en = has_end ? end_event.time : kNever;
		Event ev;
		bool start = en >= st;
		SlotTime now = start ? st : en;
		if (start) {
			ev.start_jobs = arrivals.ev[0].start_jobs;
			if (en == st)
				ev.end_jobs = end_event.end_jobs;
		} else {
			ev.end_jobs = end_event.end_jobs;
		}
		if (now > next_jump) {
			now = next_jump;
			ev = Event{};
			start = false;
		}
		complete(ev.end_jobs);
		if (start) {
			arrive(ev.start_jobs);
			arrivals.ev.erase(arrivals.ev.begin());
		}
		account(now);
		bool restart = schedule_count > 0 &&
			       schedule_count % ctx.slot == 0;
		schedule_count++;
		schedule(now, restart);
		requeue_pending();
		plan_end(now, restart);
		plan_jump(now);
		int busy = 0;
		for (int j : runnable)
			if (job(j).status == Status::Running)
				busy += job(j).num_gpu;
		ctx.sample(now, busy);
		ctx.result.decisions++;
		ctx.result.events++;
		if (!arrivals.empty())
			arrivals.coalesce(now, ctx.slot, false);
	}
	return ctx.finish("tiresias");
}

} /* namespace */

RunResult run_tiresias(Context &ctx, const Params &params, RunMode mode)
{
	std::string err;
	std::unique_ptr<Policy> p = make_policy("tiresias", params, &err);
	if (!p)
		throw InputError(err);
	TiresiasOptions t = tiresias_options(params);
	if (mode == RunMode::Check)
		return {};
	TiresiasRun r(ctx, *p, t.thresholds);
	return r.run();
}

} /* namespace tidal::sim::elasticflow */
