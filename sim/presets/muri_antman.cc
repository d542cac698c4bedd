/*
 * muri_antman.cc - AntMan as the Muri simulator models it
 * (shared/anchors/muri/MODEL.md §4.2).
 *
 * AntMan is not preemptive and keeps per-GPU state across events, so it is
 * a scheduler of its own rather than a core queue policy:
 *
 *   - resource-guaranteed jobs (trace priority 0) get GPUs no other
 *     guaranteed job holds, on one node (first fit) or on whole nodes; when
 *     none fits they reserve what they can (the node with the most free
 *     GPUs) and top up at later events, starting when complete;
 *   - opportunistic jobs (priority 1) take the least-utilised GPUs whose
 *     utilisation is below a cap, all or nothing, on top of whatever runs
 *     there, and slow down: twice their solo time next to another
 *     opportunistic job, or the AntMan interleaving count
 *     (antman_iterations) times a guaranteed neighbour's iteration.
 *
 * The order jobs are served in, the defaults of 0.1 and 0.9 and the pick
 * of the least-utilised GPUs are core AntMan's (core/policies/antman.h),
 * which sched/tidal runs: what is the anchor's own is the per-GPU ledger
 * kept across events below, with its reservations and float residues.
 *
 * GPU utilisations are bookkept with the anchor's exact float operations
 * (+0.09 when a guaranteed job takes a GPU, +0.01 on every one of its GPUs
 * when it is complete, -0.1 on release; +-0.9 for opportunistic jobs):
 * the residues decide ties in the least-utilised order and whether a GPU
 * is under the cap.  CPU and memory never bind on the validated cluster
 * (at most 8 guaranteed GPUs x 6 CPUs and 16 x 5 GB per node) and are not
 * tracked.
 *
 * Parameter: AntMan.UtilCap, the utilisation under which a GPU takes an
 * opportunistic job (default 0.8, MODEL.md; it reproduces the anchor's
 * run exactly.  A later cluster.py passes 1.0, which lets a second
 * opportunistic job onto GPUs holding a guaranteed one through the float
 * residue 0.09 + 0.01 + 0.9 < 1.0).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/policies/antman.h"
#include "core/profiles/interleave.h"
#include "sim/csv.h"
#include "sim/presets/muri_model.h"

namespace tidal::sim::muri {

namespace {

struct Gpu {
	double util = 0;
	std::vector<MJob *> guaranteed, opportunistic;
};

struct AJob {
	int remaining_gpu = 0;
	int last_node = -1;
	double gpu_util = 0;
	std::vector<std::pair<int, int>> gpus; /* (node, index) taken */
};

class AntmanScheduler : public MuriScheduler
{
public:
	AntmanScheduler(const Cluster &c, double cap)
	    : gpus_(c.nodes.size()), util_cap_(cap)
	{
		for (size_t n = 0; n < c.nodes.size(); n++)
			gpus_[n].resize(c.nodes[n].gpus);
	}
	std::string name() const override { return "antman"; }
	LoopRules rules() const override
	{
		LoopRules r;
		r.end_merge_abs = 1e-4;
		return r;
	}
	void arrive(MJob &m) override
	{
		AJob &a = state_[&m];
		a.remaining_gpu = m.job.gpus;
		/* The anchor's defaults, whatever the trace says. */
		a.gpu_util = antman_default_util(antman_opportunistic(m.job));
	}
	void leave(MJob &m) override;
	void schedule(std::vector<MJob *> &runnable, Time now) override;
	/* GPUs with a running job (reserved ones wait idle). */
	int busy_gpus(const std::vector<MJob *> &runnable) const override
	{
		int busy = 0;
		auto runs = [](const std::vector<MJob *> &v) {
			for (const MJob *m : v)
				if (m->job.state == JobState::Running)
					return true;
			return false;
		};
		for (const auto &node : gpus_)
			for (const Gpu &g : node)
				busy += runs(g.guaranteed) || runs(g.opportunistic);
		return busy;
	}

private:
	bool place(MJob &m);
	bool place_guaranteed_node(MJob &m, AJob &a);
	bool place_guaranteed_wide(MJob &m, AJob &a);
	bool place_opportunistic(MJob &m, AJob &a);
	void take(MJob &m, AJob &a, int node, const std::vector<int> &idx);
	void complete(AJob &a);
	std::vector<int> free_guaranteed(int node) const;
	double iter_time(MJob &m);

	std::vector<std::vector<Gpu>> gpus_; /* [node][gpu] */
	double util_cap_;
	std::unordered_map<MJob *, AJob> state_;
};

std::vector<int> AntmanScheduler::free_guaranteed(int node) const
{
	std::vector<int> v;
	for (size_t k = 0; k < gpus_[node].size(); k++)
		if (gpus_[node][k].guaranteed.empty())
			v.push_back((int)k);
	return v;
}

/* A guaranteed job takes IDX on NODE (util + (0.1 - 0.01) each). */
void AntmanScheduler::take(MJob &m, AJob &a, int node,
			   const std::vector<int> &idx)
{
	double add = a.gpu_util - 0.01;
	for (int k : idx) {
		Gpu &g = gpus_[node][k];
		g.guaranteed.push_back(&m);
		g.util += add;
		a.gpus.push_back({node, k});
	}
	a.remaining_gpu -= (int)idx.size();
}

/* The job holds all its GPUs: +0.01 on every one. */
void AntmanScheduler::complete(AJob &a)
{
	for (auto [n, k] : a.gpus)
		gpus_[n][k].util += 0.01;
}

bool AntmanScheduler::place_guaranteed_node(MJob &m, AJob &a)
{
	int need = a.remaining_gpu;
	if (need == m.job.gpus) {
		int best = -1;
		size_t most = 0;
		for (size_t n = 0; n < gpus_.size(); n++) {
			std::vector<int> f = free_guaranteed((int)n);
			if ((int)f.size() >= need) {
				f.resize(need);
				take(m, a, (int)n, f);
				a.last_node = (int)n;
				complete(a);
				return true;
			}
			if (f.size() > most) {
				most = f.size();
				best = (int)n;
			}
		}
		if (best >= 0) { /* reserve the most free node's GPUs */
			take(m, a, best, free_guaranteed(best));
			a.last_node = best;
		}
		return false;
	}
	std::vector<int> f = free_guaranteed(a.last_node);
	if ((int)f.size() >= need) {
		f.resize(need);
		take(m, a, a.last_node, f);
		complete(a);
		return true;
	}
	take(m, a, a.last_node, f);
	return false;
}

/* Wider than a node: whole nodes free of guaranteed jobs, as many as
 * found (they stay reserved), complete when all are there.  The validated
 * traces only have multiples of the node size here. */
bool AntmanScheduler::place_guaranteed_wide(MJob &m, AJob &a)
{
	int per_node = (int)gpus_[0].size();
	int full = a.remaining_gpu / per_node;
	std::vector<int> nodes;
	for (size_t n = 0; n < gpus_.size() && (int)nodes.size() < full; n++)
		if ((int)free_guaranteed((int)n).size() >= per_node)
			nodes.push_back((int)n);
	for (int n : nodes)
		take(m, a, n, free_guaranteed(n));
	if ((int)nodes.size() < full || a.remaining_gpu % per_node)
		return false;
	complete(a);
	return true;
}

/* All or nothing on the least-utilised GPUs under the cap (core's rule,
 * over every GPU in node order). */
bool AntmanScheduler::place_opportunistic(MJob &m, AJob &a)
{
	std::vector<std::pair<int, int>> at;
	std::vector<double> util;
	for (size_t n = 0; n < gpus_.size(); n++)
		for (size_t k = 0; k < gpus_[n].size(); k++) {
			at.push_back({(int)n, (int)k});
			util.push_back(gpus_[n][k].util);
		}
	std::vector<int> pick =
		antman_least_utilised(util, m.job.gpus, util_cap_);
	if (pick.empty() && m.job.gpus > 0)
		return false;
	for (int i : pick) {
		auto [n, k] = at[i];
		gpus_[n][k].util += a.gpu_util;
		gpus_[n][k].opportunistic.push_back(&m);
		a.gpus.push_back({n, k});
	}
	a.remaining_gpu = 0;
	return true;
}

bool AntmanScheduler::place(MJob &m)
{
	AJob &a = state_[&m];
	if (antman_opportunistic(m.job))
		return place_opportunistic(m, a);
	if (m.job.gpus > (int)gpus_[0].size())
		return place_guaranteed_wide(m, a);
	return place_guaranteed_node(m, a);
}

void AntmanScheduler::leave(MJob &m)
{
	auto it = state_.find(&m);
	if (it == state_.end())
		return;
	AJob &a = it->second;
	for (auto [n, k] : a.gpus) {
		Gpu &g = gpus_[n][k];
		auto &list = antman_opportunistic(m.job) ? g.opportunistic
							 : g.guaranteed;
		auto pos = std::find(list.begin(), list.end(), &m);
		if (pos != list.end()) {
			list.erase(pos);
			g.util -= a.gpu_util;
		}
	}
	state_.erase(it);
}

/* An opportunistic job's iteration: the slowest of its neighbours' effect
 * on any of its GPUs. */
double AntmanScheduler::iter_time(MJob &m)
{
	double t = m.job.iter_time;
	for (auto [n, k] : state_[&m].gpus) {
		const Gpu &g = gpus_[n][k];
		for (MJob *c : g.guaranteed) {
			if (state_[c].remaining_gpu > 0)
				continue;
			int iters =
				antman_iterations(m.job.stages, c->job.stages);
			t = std::max(t, iters * c->job.iter_time);
		}
		for (MJob *c : g.opportunistic)
			if (c != &m)
				t = std::max(t, m.job.iter_time * 2.0);
	}
	return t;
}

void AntmanScheduler::schedule(std::vector<MJob *> &runnable, Time now)
{
	std::stable_sort(runnable.begin(), runnable.end(),
			 [](const MJob *x, const MJob *y) {
				 return antman_before(x->job, y->job);
			 });
	decisions++;
	for (MJob *m : runnable) {
		Job &j = m->job;
		if (j.state != JobState::Pending || !place(*m))
			continue;
		if (j.start < 0)
			j.start = now;
		j.state = JobState::Running;
		j.alloc = j.gpus;
		m->resumes++;
		m->overhead = restart_overhead(j.gpus, j.model);
	}
	for (MJob *m : runnable)
		if (m->job.state == JobState::Running)
			m->itertime_cur = antman_opportunistic(m->job)
						  ? iter_time(*m)
						  : m->job.iter_time;
}

} /* namespace */

RunResult run_antman(const SimInput &in, const Params &params,
		     const Progress &progress, RunMode mode)
{
	double cap = params.get_double("AntMan.UtilCap", 0.8, 0, 10);
	if (!params.errors().empty())
		throw InputError(params.errors().back());
	if (mode == RunMode::Check)
		return {};
	AntmanScheduler s(in.cluster, cap);
	return run_muri(in, s, progress);
}

} /* namespace tidal::sim::muri */
