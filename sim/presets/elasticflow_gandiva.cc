/*
 * elasticflow_gandiva.cc - ElasticFlow's "gandiva" baseline: time-slicing
 * on node-sets per job size [gandiva_sim_jobs, cluster.gandiva_*].
 *
 * Non-elastic: a job runs on its traced GPU count for its traced duration.
 * Nodes are grouped into node-sets, one size class per job GPU count; a
 * node-set holds capacity = nodes x GPUs-per-node / job-GPUs jobs at once
 * and more by oversubscription.  At every tick:
 *
 *   1. re-partition: each size class gets floor(demand / total demand x
 *      cluster) GPUs (at most its demand) and grows or shrinks by whole
 *      node-sets, redistributing its jobs to the least used node-sets;
 *   2. time-slicing: in each node-set the first `capacity` jobs run
 *      (executed += max(dt - overhead, 0)); a job ends when executed >=
 *      duration, at now - (executed - duration); on 60 s boundaries the
 *      running ones rotate to the back;
 *   3. arrivals are placed (least used node-set of their class with room,
 *      else new nodes, else oversubscribe the least used, else pend);
 *      pending jobs retry only when a node-set was released.
 *
 * The ticks are the arrival events coalesced with the slot and, when
 * none are left, one per slot.  Every running job is charged the restart
 * overhead (never cached) for the next tick.
 *
 * Quirks kept (the numbers depend on them): a node-set's `util` counts
 * jobs placed since it was last re-balanced (ended jobs are not
 * subtracted); growing a class of single-node sets re-balances only if
 * its last step found no free node; the retry of pending jobs skips the
 * job after each one that starts (Python list mutation in a for loop).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <map>

#include "sim/csv.h"
#include "sim/presets/elasticflow.h"

namespace tidal::sim::elasticflow {

namespace {

const int kSizes[] = {1,  2,  4,  8,  12, 16,  24, 32,
		      40, 48, 56, 64, 72, 88, 128, 256};

struct NodeSet {
	std::vector<int> nodes;
	std::vector<int> jobs;
	int capacity = 0, num_gpus = 0;
	double util = 0;
	double executed_unused = 0;
};

struct GandivaRun {
	Context &ctx;
	int gpn, nnodes;
	std::vector<NodeSet> sets;
	std::map<int, std::vector<int>> node_g; /* size -> set ids */
	std::vector<int> free_nodes;
	std::vector<double> executed;
	std::vector<int> pending, running;
	std::vector<int> runnable; /* jobs that ever pended (Python's list) */
	EventList events;
	long schedule_count = 0;

	GandivaRun(Context &c, int g)
		: ctx(c), gpn(g), nnodes(c.cluster_gpus / g),
		  executed(c.jobs.size(), 0)
	{
		for (int s : kSizes)
			node_g[s];
		for (int n = 0; n < nnodes; n++)
			free_nodes.push_back(n);
	}

	EfJob &job(int j) { return ctx.jobs[j]; }
	int new_set(int size);
	void sort_list(std::vector<int> &l);
	void add_job(int set, int j);
	bool place(int j);
	void expand(int size, int num_ns);
	void shrink(int size, int num_ns);
	void adjust();
	bool slice(SlotTime now, SlotTime diff);
	bool slice_set(int id, SlotTime now, SlotTime diff, bool rotate);
	void arrivals(const std::vector<int> &starts, SlotTime now);
	void retry_pending(SlotTime now);
	RunResult run();
};

void GandivaRun::sort_list(std::vector<int> &l)
{
	std::stable_sort(l.begin(), l.end(), [&](int a, int b) {
		return sets[a].util < sets[b].util;
	});
}

int GandivaRun::new_set(int size)
{
	int need = (size + gpn - 1) / gpn;
	NodeSet s;
	s.capacity = need * gpn / size;
	s.num_gpus = size;
	s.nodes.assign(free_nodes.begin(), free_nodes.begin() + need);
	free_nodes.erase(free_nodes.begin(), free_nodes.begin() + need);
	sets.push_back(std::move(s));
	return (int)sets.size() - 1;
}

void GandivaRun::add_job(int set, int j)
{
	sets[set].util += 1;
	sets[set].jobs.push_back(j);
}

/* gandiva_placement.  RET: placed. */
bool GandivaRun::place(int j)
{
	int size = job(j).job->gpus;
	auto it = node_g.find(size);
	if (it == node_g.end())
		throw InputError(ctx.in->trace_path + ": gandiva: job " +
				 job(j).job->name + " needs " +
				 std::to_string(size) +
				 " GPUs, not a node-set size");
	std::vector<int> &l = it->second;
	if (!l.empty()) {
		int s = l.front();
		l.erase(l.begin());
		l.push_back(s);
		if (sets[s].util + 1 < sets[s].capacity) {
			add_job(s, j);
			sort_list(l);
			return true;
		}
	}
	int need = (size + gpn - 1) / gpn;
	if (need <= (int)free_nodes.size()) {
		int s = new_set(size);
		add_job(s, j);
		l.push_back(s);
		sort_list(l);
		return true;
	}
	if (l.empty())
		return false;
	int s = l.front();
	l.erase(l.begin());
	add_job(s, j);
	l.push_back(s);
	sort_list(l);
	return true;
}

void GandivaRun::expand(int size, int num_ns)
{
	std::vector<int> &l = node_g[size];
	int need = (size + gpn - 1) / gpn;
	int i = 0;
	for (int k = 1; k <= num_ns; k++) {
		i = k;
		if (need <= (int)free_nodes.size()) {
			l.push_back(new_set(size));
			i = need - 1; /* the inner loop reuses Python's i */
		}
	}
	if (i <= 0)
		return;
	std::vector<int> all;
	for (int s : l) {
		if (sets[s].jobs.empty())
			continue;
		all.insert(all.end(), sets[s].jobs.begin(),
			   sets[s].jobs.end());
		sets[s].jobs.clear();
		sets[s].util = 0;
	}
	for (int j : all) {
		add_job(l.front(), j);
		sort_list(l);
	}
}

void GandivaRun::shrink(int size, int num_ns)
{
	std::vector<int> &l = node_g[size];
	if ((int)l.size() <= num_ns)
		num_ns = (int)l.size() - 1;
	std::vector<int> all;
	int i = 0;
	for (int k = 1; k <= num_ns; k++) {
		i = k;
		int s = l.front();
		l.erase(l.begin());
		all.insert(all.end(), sets[s].jobs.begin(), sets[s].jobs.end());
		free_nodes.insert(free_nodes.end(), sets[s].nodes.begin(),
				  sets[s].nodes.end());
	}
	if (i <= 0)
		return;
	for (int j : all) {
		add_job(l.front(), j);
		sort_list(l);
	}
}

void GandivaRun::adjust()
{
	std::map<int, long> demand, occupied;
	long total = 0;
	for (auto &[size, l] : node_g) {
		long jobs = 0, occ = 0;
		for (int s : l) {
			jobs += (long)sets[s].jobs.size();
			occ += (long)sets[s].nodes.size() * gpn;
		}
		demand[size] = jobs * size;
		occupied[size] = occ;
		total += jobs * size;
	}
	if (total == 0)
		return;
	for (auto &[size, l] : node_g) {
		long d = demand[size];
		if (d == 0)
			continue;
		long plan = (long)std::floor((double)d / (double)total *
					     (double)ctx.cluster_gpus);
		long diff = std::min(plan, d) - occupied[size];
		if (diff > 0)
			expand(size, (int)((diff + size - 1) / size));
		else if (diff < 0)
			shrink(size, (int)((-diff + size - 1) / size));
	}
}

/* One node-set's slice.  RET: true if it emptied (nodes released). */
bool GandivaRun::slice_set(int id, SlotTime now, SlotTime diff, bool rotate)
{
	NodeSet &s = sets[id];
	int conc = 0;
	for (size_t k = 0; k < s.jobs.size() && (int)k + 1 <= s.capacity; k++)
		conc++;
	std::vector<int> ended;
	int i = 0;
	for (int j : s.jobs) {
		EfJob &e = job(j);
		executed[j] += std::max((double)diff - e.overhead, 0.0);
		e.overhead = 0;
		if (executed[j] >= e.job->duration) {
			ended.push_back(j);
			e.end_time = now - (SlotTime)(executed[j] -
						      e.job->duration);
			if (e.end_time > e.ddl) {
				ctx.declined++;
				ctx.accepted--;
			}
		}
		if (++i >= conc)
			break;
	}
	if (rotate && (int)s.jobs.size() > conc) {
		std::vector<int> head(s.jobs.begin(), s.jobs.begin() + conc);
		s.jobs.erase(s.jobs.begin(), s.jobs.begin() + conc);
		s.jobs.insert(s.jobs.end(), head.begin(), head.end());
	}
	for (int j : ended) {
		list_remove(running, j);
		list_remove(s.jobs, j);
		job(j).status = Status::Done;
		ctx.complete(j);
	}
	if (!s.jobs.empty())
		return false;
	free_nodes.insert(free_nodes.end(), s.nodes.begin(), s.nodes.end());
	return true;
}

/* time_slicing_execute.  RET: a node-set was released. */
bool GandivaRun::slice(SlotTime now, SlotTime diff)
{
	bool released = false, rotate = now % 60 == 0;
	for (auto &[size, l] : node_g) {
		std::vector<int> gone;
		for (int id : l)
			if (slice_set(id, now, diff, rotate))
				gone.push_back(id);
		for (int id : gone)
			list_remove(l, id);
		released = released || !gone.empty();
	}
	return released;
}

void GandivaRun::arrivals(const std::vector<int> &starts, SlotTime now)
{
	for (int j : starts) {
		EfJob &e = job(j);
		if (!place(j)) {
			e.status = Status::Pending;
			pending.push_back(j);
			if (!list_has(runnable, j))
				runnable.push_back(j);
			continue;
		}
		e.status = Status::Running;
		e.start = now;
		running.push_back(j);
		if (!e.best_effort)
			ctx.accepted++;
	}
}

void GandivaRun::retry_pending(SlotTime now)
{
	/* Python removes from the list it iterates: the next job is
	 * skipped after each start. */
	for (size_t i = 0; i < pending.size(); i++) {
		int j = pending[i];
		if (!place(j))
			continue;
		pending.erase(pending.begin() + (long)i);
		EfJob &e = job(j);
		e.status = Status::Running;
		e.start = now;
		running.push_back(j);
		if (!e.best_effort)
			ctx.accepted++;
	}
}

RunResult GandivaRun::run()
{
	events.add_starts(ctx.jobs);
	SlotTime now = events.ev[0].time, diff = 0;
	while (!events.empty() || !pending.empty() || !running.empty()) {
		adjust();
		bool released = slice(now, diff);
		for (int j : runnable)
			job(j).overhead = 0;
		int ei = events.find(now);
		if (ei >= 0) {
			std::vector<int> starts = events.ev[ei].start_jobs;
			arrivals(starts, now);
			events.ev.erase(events.ev.begin() + ei);
		}
		if (released)
			retry_pending(now);
		int busy = 0;
		for (auto &[size, l] : node_g)
			for (int id : l)
				busy += std::min((int)sets[id].jobs.size(),
						 sets[id].capacity) * size;
		ctx.sample(now, busy);
		ctx.result.decisions++;
		ctx.result.events++;
		if (events.empty()) {
			now += ctx.slot;
			diff = ctx.slot;
			continue;
		}
		bool restart = schedule_count > 0 &&
			       schedule_count % ctx.slot == 0;
		schedule_count++;
		for (int j : running)
			job(j).overhead = elastic_overhead(
				job(j).job->gpus, restart, false,
				ctx.cluster_gpus);
		SlotTime next = events.coalesce(now, ctx.slot, false);
		diff = next - now;
		now = next;
	}
	return ctx.finish("gandiva");
}

} /* namespace */

RunResult run_gandiva(Context &ctx, int gpus_per_node)
{
	GandivaRun r(ctx, gpus_per_node);
	return r.run();
}

} /* namespace tidal::sim::elasticflow */
