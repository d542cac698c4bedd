/*
 * elastic_baseline.cc - elastic-fifo and elastic-edf: the simplest policies
 * that resize elastic jobs (sbatch --elastic-gpus=MIN-MAX), as baselines
 * for the elastic schedulers and as the plugin's resize exerciser.
 *
 * Jobs are ranked (elastic-fifo: submit time; elastic-edf: deadline, then
 * submit time) and GPUs are handed out by count in three passes:
 *
 *   floors  each job in rank order gets its floor (rigid: its request;
 *           elastic: MIN) if that many GPUs are left, else nothing;
 *   keep    a running elastic job gets back up to its current size from
 *           what is left (a resize costs a checkpoint and a restart, so a
 *           job is shrunk only when a job ranked above it needs the room);
 *   grow    elastic jobs in rank order grow towards MAX into idle GPUs.
 *
 * Then placement: running jobs keep their GPUs (a shrinking job keeps a
 * subset), a growing job adds GPUs beside its own, pending jobs are placed
 * by the scheme, trying smaller sizes down to the floor when fragmentation
 * stops the planned one.  A job left without GPUs is held (pending) or
 * preempted (running).  A pending job with a deadline it cannot meet even
 * at MAX GPUs (perfect scaling assumed) is rejected, and so is one whose
 * run time is not known (Job::time_known), saying what it lacks.
 *
 * Parameters (prefix = policy name, e.g. elastic-edf.Reject=no):
 *   Placement=...            placement scheme (queue_policy.h), consolidated
 *   <name>.Reject=yes|no     reject infeasible deadlines (edf: yes, fifo: no)
 *   <name>.MinGrowth=N       grow a running job only by N GPUs or more (1)
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "core/placement/placement.h"
#include "core/policies/elastic_baseline.h"
#include "core/policies/queue_policy.h"

namespace tidal
{

int elastic_floor(const Job &j)
{
	return j.max_gpus > 0 ? std::max(j.min_gpus, 1) : j.gpus;
}

int elastic_cap(const Job &j)
{
	return j.max_gpus > 0 ? j.max_gpus : j.gpus;
}

ElasticBaseline::ElasticBaseline(std::string name, bool by_deadline,
				 const Params &p)
    : name_(std::move(name)), by_deadline_(by_deadline)
{
	scheme_ = queue_options(p, QueueOptions{}).placement;
	reject_ = p.get_bool(name_ + ".Reject", by_deadline);
	min_growth_ = (int)p.get_long(name_ + ".MinGrowth", 1, 1, 1 << 20);
}

std::vector<const Job *> ElasticBaseline::ranked(const Snapshot &snap) const
{
	std::vector<const Job *> v = snap.jobs;
	std::stable_sort(v.begin(), v.end(), [&](const Job *a, const Job *b) {
		if (by_deadline_ && a->deadline != b->deadline)
			return a->deadline < b->deadline;
		if (a->submit != b->submit)
			return a->submit < b->submit;
		return a->index < b->index;
	});
	return v;
}

/* Seconds JOB still needs at N GPUs, scaling its own speed linearly. */
static double time_at(const Job &j, int n)
{
	return n > 0 ? j.remaining_time() * std::max(j.gpus, 1) / n : 1e300;
}

std::vector<int> ElasticBaseline::targets(const std::vector<const Job *> &v,
					  int total,
					  std::vector<bool> *rejected,
					  Time now) const
{
	std::vector<int> t(v.size(), 0);
	int left = total;
	for (size_t i = 0; i < v.size(); i++) {
		const Job &j = *v[i];
		if (reject_ && j.state == JobState::Pending &&
		    j.has_deadline() &&
		    (!j.time_known ||
		     now + time_at(j, elastic_cap(j)) > j.deadline)) {
			(*rejected)[i] = true;
			continue;
		}
		if (elastic_floor(j) <= left) {
			t[i] = elastic_floor(j);
			left -= t[i];
		}
	}
	for (size_t i = 0; i < v.size(); i++)
		if (t[i] > 0 && v[i]->state == JobState::Running &&
		    v[i]->alloc > t[i]) {
			int add = std::min({ v[i]->alloc - t[i], left,
					     elastic_cap(*v[i]) - t[i] });
			t[i] += std::max(add, 0);
			left -= std::max(add, 0);
		}
	for (size_t i = 0; i < v.size(); i++) {
		if (t[i] <= 0 || elastic_cap(*v[i]) <= t[i])
			continue;
		int add = std::min(elastic_cap(*v[i]) - t[i], left);
		bool running = v[i]->state == JobState::Running;
		if (running && t[i] + add - v[i]->alloc < min_growth_ &&
		    t[i] + add > v[i]->alloc)
			add = std::max(0, v[i]->alloc - t[i]);
		t[i] += add;
		left -= add;
	}
	return t;
}

/* The first GPUS GPUs of P, share by share. */
static Placement subset(const Placement &p, int gpus)
{
	Placement out;
	for (const NodeShare &s : p) {
		if (gpus <= 0)
			break;
		int g = std::min(s.gpus, gpus);
		out.push_back({ s.node, g });
		gpus -= g;
	}
	return out;
}

/* A + B, merged per node. */
static Placement merged(Placement a, const Placement &b)
{
	for (const NodeShare &s : b) {
		auto it = std::find_if(
			a.begin(), a.end(),
			[&](const NodeShare &x) { return x.node == s.node; });
		if (it != a.end())
			it->gpus += s.gpus;
		else
			a.push_back(s);
	}
	return a;
}

/* Why job J, ranked RANK, gets decision A at GOT GPUs. */
std::string ElasticBaseline::reason(const Job &j, Action a, int got,
				    const Snapshot &snap, int free_now) const
{
	/* NAME: CLAUSE; CLAUSE; ... (a string, not a stream: it is said
	 * for every job at every cycle, and a stream's setup cost more than
	 * the text) */
	std::string why = name_;
	bool first = true;
	auto clause = [&]() -> std::string & {
		why += first ? ": " : "; ";
		first = false;
		return why;
	};
	auto num = [](long long v) { return std::to_string(v); };
	if (j.has_deadline())
		clause() += "deadline in " +
			    num((long long)(j.deadline - snap.now)) + " s";
	if (a == Action::Reject && !j.time_known) {
		/* Its time is a placeholder: say what is missing, not what
		 * the placeholder would need. */
		clause() += j.iterations_known
				    ? "its run time is unknown: no time limit, "
				      "and its --train-iters have no measured "
				      "speed yet"
				    : "its work is unknown: no time limit and no "
				      "--train-iters";
		why += ", so the deadline cannot be checked; give it a "
		       "time limit (sbatch -t)";
	} else if (a == Action::Reject) {
		clause() += "infeasible: needs " +
			    num((long long)time_at(j, elastic_cap(j))) +
			    " s at " + num(elastic_cap(j)) + " GPUs";
	} else if (a == Action::Hold || a == Action::Preempt) {
		clause() += "needs " + num(elastic_floor(j)) + " GPUs, " +
			    num(free_now) + " free";
	} else if (j.max_gpus > 0) {
		clause() += "elastic " + num(elastic_floor(j)) + "-" +
			    num(elastic_cap(j)) + ", ";
		if (a == Action::Resize)
			why += std::string(got > j.alloc ? "grows" : "shrinks") +
			       " from " + num(j.alloc) + " to";
		else
			why += "at";
		why += " " + num(got) + " GPUs";
	} else {
		clause() += (a == Action::Start ? "starts on " : "on ") +
			    num(got) + " GPUs";
	}
	return why;
}

Plan ElasticBaseline::decide(const Snapshot &snap)
{
	Plan plan;
	any_elastic_ = std::any_of(snap.jobs.begin(), snap.jobs.end(),
				   [](const Job *j) { return j->elastic(); });
	std::vector<const Job *> v = ranked(snap);
	std::vector<bool> rejected(v.size(), false);
	std::vector<int> t =
		targets(v, snap.cluster->total_gpus(), &rejected, snap.now);
	FreeMap free(*snap.cluster);
	std::vector<Placement> where(v.size());
	/* Keep and Hold change nothing: left out when the caller lets us,
	 * as are the reasons when it does not read them. */
	const bool sparse = snap.changes_only, want = snap.want_reasons;
	std::unordered_map<const Job *, std::ptrdiff_t> slot;
	if (sparse)
		for (std::size_t s = 0; s < snap.jobs.size(); s++)
			slot.emplace(snap.jobs[s], (std::ptrdiff_t)s);

	/* Running jobs hold their GPUs until a resize restarts them. */
	for (size_t i = 0; i < v.size(); i++)
		if (t[i] > 0 && v[i]->state == JobState::Running) {
			where[i] = subset(v[i]->placement,
					  std::min(t[i], v[i]->alloc));
			if (!free.take(where[i]))
				where[i].clear();
		}
	auto add = [&](size_t i, Action a, int gpus, int free_now) -> Decision * {
		const Job &j = *v[i];
		if (sparse && (a == Action::Keep || a == Action::Hold))
			return nullptr;
		Decision &d = plan.add(j.id, a, gpus,
				       want ? reason(j, a, gpus, snap, free_now)
					    : std::string());
		d.at_rank((int)i + 1, (int)v.size());
		if (sparse)
			d.slot = slot[&j];
		return &d;
	};
	for (size_t i = 0; i < v.size(); i++) {
		const Job &j = *v[i];
		bool running = j.state == JobState::Running;
		if (rejected[i]) {
			Decision *d = add(i, Action::Reject, 0, 0);
			if (j.time_known)
				d->note("NeedSeconds",
					time_at(j, elastic_cap(j)));
			d->note("LeftSeconds", j.deadline - snap.now);
			continue;
		}
		int have = placement_gpus(where[i]);
		for (int n = t[i]; n > have && n >= elastic_floor(j); n--) {
			auto p = free.place(n - have, scheme_);
			if (p) {
				where[i] = merged(where[i], *p);
				break;
			}
		}
		int got = placement_gpus(where[i]);
		if (got < elastic_floor(j) || got == 0) {
			free.release(where[i]);
			add(i, running ? Action::Preempt : Action::Hold, j.gpus,
			    free.free_total());
			continue;
		}
		Action a = !running	    ? Action::Start
			   : got == j.alloc ? Action::Keep
					    : Action::Resize;
		Decision *d = add(i, a, got, 0);
		if (!d)
			continue;
		d->placement = a == Action::Keep ? j.placement : where[i];
		d->note("TargetGPUs", got);
	}
	return plan;
}

static PolicyRegistrar reg_elastic_fifo(
	"elastic-fifo",
	"FIFO that grows elastic jobs into idle GPUs and shrinks them for "
	"jobs ranked above",
	[](const Params &p) {
		return std::make_unique<ElasticBaseline>("elastic-fifo", false,
							 p);
	});
static PolicyRegistrar reg_elastic_edf(
	"elastic-edf",
	"EDF that grows elastic jobs into idle GPUs, shrinks them for "
	"deadline jobs and rejects infeasible deadlines",
	[](const Params &p) {
		return std::make_unique<ElasticBaseline>("elastic-edf", true,
							 p);
	});

} /* namespace tidal */
