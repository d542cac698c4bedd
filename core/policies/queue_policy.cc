/*
 * queue_policy.cc - rank, allocate, place.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/queue_policy.h"

#include <algorithm>
#include <numeric>

namespace tidal {

QueueOptions queue_options(const Params &params, QueueOptions d)
{
	QueueOptions o = d;
	std::string p = params.get_choice(
		"Placement", placement_scheme_name(d.placement),
		{"consolidated", "switch-aware", "first-fit", "best-fit",
		 "count", "most-free"});
	placement_scheme_from_name(p, &o.placement);
	static const char *disc[] = {"skip", "block", "quota"};
	std::string dn = params.get_choice(
		"Discipline", disc[(int)d.discipline], {"skip", "block", "quota"});
	for (int i = 0; i < 3; i++)
		if (dn == disc[i])
			o.discipline = (Discipline)i;
	o.preemptive = params.get_bool("Preemptive", d.preemptive);
	o.replace = params.get_bool("Replace", d.replace);
	o.moves = params.get_bool("Moves", d.moves);
	return o;
}

Time QueuePolicy::wake_at(const Snapshot &,
			 const std::vector<const Job *> &) const
{
	return std::numeric_limits<Time>::infinity();
}

Time QueuePolicy::rank_changes_at(const Job &, const Snapshot &) const
{
	return std::numeric_limits<Time>::infinity();
}

/* Said of every waiting job at every cycle: built as a string, since a
 * stream's setup cost more than the text. */
static std::string fmt_fit(int need, int free_now)
{
	return "needs " + std::to_string(need) + " GPUs, " +
	       std::to_string(free_now) + " free";
}

Plan QueuePolicy::decide(const Snapshot &snap)
{
	Plan plan;
	if (use_index(snap)) {
		QueueRanking how;
		how.change = rank_change();
		how.rank = [&](const Job &j) { return rank(j, snap); };
		how.changes_at = [&](const Job &j) {
			return rank_changes_at(j, snap);
		};
		how.fresh = [&](const Job &j) { fresh(snap, j); };
		index_.update(snap, how);
		if (opt_.preemptive)
			decide_behind_indexed(snap, plan);
		else
			decide_pending_indexed(snap, plan);
		/* AtTimes: the wake-up is that of the jobs whose rank changes
		 * first (the index foresees it; wake_at() says it exactly as
		 * without an index). */
		plan.wake_at = rank_change() == RankChange::AtTimes
				       ? wake_at(snap, index_.changing_first(1e-6))
				       : wake_at(snap, index_.running_jobs);
		return plan;
	}
	/* Whatever was indexed is out of date after a call without a
	 * delta: the next call with one starts afresh. */
	index_.invalidate();
	if (!snap.changes_only || !snap.free ||
	    opt_.discipline == Discipline::Quota || opt_.replace)
		decide_all(snap, plan);
	else if (opt_.preemptive)
		decide_behind(snap, plan);
	else
		decide_pending(snap, plan);
	plan.wake_at = wake_at(snap, snap.jobs);
	return plan;
}

void QueuePolicy::decide_all(const Snapshot &snap, Plan &plan)
{
	const bool want = snap.want_reasons;
	/* Keep and Hold change nothing: leave them out if the caller lets
	 * us. */
	const bool sparse = snap.changes_only;
	const std::vector<const Job *> &jobs = snap.jobs;
	FreeMap free(*snap.cluster);
	plan.decisions.reserve(sparse ? 0 : jobs.size());

	/* Rank the candidates; non-preemptive policies leave running jobs
	 * where they are. */
	std::vector<const Job *> cand;
	std::vector<std::size_t> slot;
	cand.reserve(jobs.size());
	slot.reserve(jobs.size());
	for (std::size_t s = 0; s < jobs.size(); s++) {
		const Job *j = jobs[s];
		if (j->state == JobState::Running && !opt_.preemptive) {
			if (!free.take(j->placement))
				free.place(j->alloc, opt_.placement);
			if (sparse)
				continue;
			Decision &d = plan.add(j->id, Action::Keep, j->alloc,
					       want ? name_ + ": running (not preemptive)"
						    : std::string());
			d.slot = (std::ptrdiff_t)s;
			if (want)
				d.placement = j->placement;
			continue;
		}
		cand.push_back(j);
		slot.push_back(s);
	}
	std::vector<Rank> ranks;
	ranks.reserve(cand.size());
	for (const Job *j : cand)
		ranks.push_back(rank(*j, snap));
	std::vector<size_t> order(cand.size());
	std::iota(order.begin(), order.end(), 0);
	auto before = [&](size_t a, size_t b) { return ranks[a] < ranks[b]; };
	if (!std::is_sorted(order.begin(), order.end(), before))
		std::stable_sort(order.begin(), order.end(), before);

	/* Quota: choose by count against the whole cluster first. */
	std::vector<bool> chosen(cand.size(), true);
	if (opt_.discipline == Discipline::Quota) {
		int quota = snap.cluster->total_gpus();
		for (size_t i : order) {
			if (cand[i]->gpus <= quota)
				quota -= cand[i]->gpus;
			else
				chosen[i] = false;
		}
		/* Chosen running jobs keep their GPUs before anyone is placed. */
		for (size_t i : order)
			if (chosen[i] && cand[i]->state == JobState::Running &&
			    !opt_.replace && !free.take(cand[i]->placement))
				chosen[i] = false;
	}

	/* Preemptive: what no running job holds, where a pending job goes
	 * first (place_pending). */
	std::optional<FreeMap> idle;
	if (opt_.preemptive && !opt_.replace &&
	    opt_.discipline != Discipline::Quota) {
		idle.emplace(*snap.cluster);
		for (const Job *j : cand)
			if (j->state == JobState::Running)
				idle->take_free_part(j->placement);
	}

	bool blocked = false;
	JobId blocker = 0;
	int position = 0;
	auto why = [&](const Job &j, size_t i, const std::string &tail) {
		if (!want)
			return std::string();
		return name_ + ": " + rank_reason(j, ranks[i]) + tail;
	};
	/* Add a decision unless it is a Keep or Hold the caller can do
	 * without. */
	auto add = [&](size_t i, Action a, int gpus, std::string reason,
		       Placement p = {}) {
		if (sparse && (a == Action::Keep || a == Action::Hold))
			return;
		Decision &d = plan.add(cand[i]->id, a, gpus, std::move(reason));
		d.at_rank(position, (int)cand.size());
		d.slot = (std::ptrdiff_t)slot[i];
		d.placement = std::move(p);
	};
	for (size_t i : order) {
		const Job &j = *cand[i];
		position++;
		bool running = j.state == JobState::Running;

		if (!chosen[i]) {
			add(i, running ? Action::Preempt : Action::Hold, j.gpus,
			    why(j, i, "; outside the GPU quota"));
			continue;
		}
		if (opt_.discipline == Discipline::Quota && running &&
		    !opt_.replace) {
			add(i, Action::Keep, j.alloc, why(j, i, ""),
			    j.placement);
			continue;
		}
		if (blocked && !running) {
			add(i, Action::Hold, j.gpus,
			    want ? why(j, i, "; waiting behind job " +
					     std::to_string(blocker))
				 : std::string());
			continue;
		}
		std::optional<Placement> p;
		bool taken = false; /* its GPUs went to a job ranked above */
		if (running && !opt_.replace && free.take(j.placement)) {
			p = j.placement;
		} else if (running && !opt_.replace && !opt_.moves) {
			taken = true;
		} else if (running) {
			p = free.place(j.gpus, opt_.placement);
			if (p && idle)
				idle->take_free_part(*p);
		} else {
			p = place_pending(free, idle ? &*idle : nullptr,
					  j.gpus);
		}
		if (p) {
			Action a = !running ? Action::Start
				   : *p == j.placement ? Action::Keep
						       : Action::Resize;
			add(i, a, j.gpus, why(j, i, ""), std::move(*p));
			continue;
		}
		add(i, running ? Action::Preempt : Action::Hold, j.gpus,
		    want ? why(j, i,
			       taken ? "; its GPUs went to a job ranked above "
				       "it (Moves=no)"
				     : "; " + fmt_fit(j.gpus, free.free_total()))
			 : std::string());
		if (opt_.discipline == Discipline::Block && !running &&
		    !blocked) {
			blocked = true;
			blocker = j.id;
		}
	}
}

} /* namespace tidal */
