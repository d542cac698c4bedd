/*
 * queue_policy_changes.cc - the short walks a replay gets when it asks for
 * changes only (Snapshot::changes_only) and lends its free map
 * (Snapshot::free).
 *
 * The full walk (queue_policy.cc) starts from an empty cluster and visits
 * every job in rank order: a running job takes its own GPUs back, or is
 * moved (Moves=yes) or preempted if a job ranked before it took them; a
 * pending job is placed on what no running job holds if it fits there,
 * else on what is left.  Both short walks give exactly its plan, less
 * the Keep and Hold decisions:
 *
 *   not preemptive  running jobs always keep their GPUs, so the map the
 *                   pending jobs see is the replay's map: place the pending
 *                   jobs in rank order on a copy of it, and stop at the
 *                   first that blocks (Discipline=block).
 *
 *   preemptive      every running job ranked before the first pending job
 *                   keeps its GPUs (nothing has been placed yet).  The map
 *                   the first pending job sees is the replay's map plus the
 *                   GPUs of the running jobs ranked behind it ("behind");
 *                   a copy of the replay's map, less what the walk
 *                   places, is what no running job holds ("idle").
 *                   Walk the pending jobs in rank order (each on idle
 *                   where it fits there); after each, the
 *                   behind jobs ranked before the next pending job take
 *                   their GPUs back.  If every one of them can, their order
 *                   among themselves does not matter; if one cannot, those
 *                   few are walked in rank order as in the full walk
 *                   (moved elsewhere, or preempted).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>

#include "core/policies/queue_policy.h"

namespace tidal {

void QueuePolicy::sort_by_rank(std::vector<std::size_t> &slots) const
{
	auto before = [&](std::size_t a, std::size_t b) {
		return ranks_[a] < ranks_[b];
	};
	if (!std::is_sorted(slots.begin(), slots.end(), before))
		std::stable_sort(slots.begin(), slots.end(), before);
}

static void start(Plan &plan, const Job &j, std::size_t slot, Placement p)
{
	Decision &d = plan.add(j.id, Action::Start, j.gpus, std::string());
	d.slot = (std::ptrdiff_t)slot;
	d.placement = std::move(p);
}

void QueuePolicy::decide_pending(const Snapshot &snap, Plan &plan)
{
	const std::vector<const Job *> &jobs = snap.jobs;
	pending_.clear();
	if (snap.pending >= 0) {
		/* From the end, where arrivals are, until all are found. */
		for (std::size_t s = jobs.size();
		     s > 0 && (long)pending_.size() < snap.pending; s--)
			if (jobs[s - 1]->state != JobState::Running)
				pending_.push_back(s - 1);
		std::reverse(pending_.begin(), pending_.end());
	} else {
		for (std::size_t s = 0; s < jobs.size(); s++)
			if (jobs[s]->state != JobState::Running)
				pending_.push_back(s);
	}
	if (pending_.empty())
		return;
	ranks_.resize(jobs.size());
	for (std::size_t s : pending_)
		ranks_[s] = rank(*jobs[s], snap);
	sort_by_rank(pending_);

	FreeMap free = *snap.free;
	for (std::size_t s : pending_) {
		const Job &j = *jobs[s];
		std::optional<Placement> p = free.place(j.gpus, opt_.placement);
		if (p)
			start(plan, j, s, std::move(*p));
		else if (opt_.discipline == Discipline::Block)
			break; /* the rest wait behind j */
		if (free.free_total() == 0)
			break; /* the rest cannot fit */
	}
}

void QueuePolicy::decide_behind(const Snapshot &snap, Plan &plan)
{
	const std::vector<const Job *> &jobs = snap.jobs;
	ranks_.resize(jobs.size());
	pending_.clear();
	for (std::size_t s = 0; s < jobs.size(); s++) {
		ranks_[s] = rank(*jobs[s], snap);
		if (jobs[s]->state != JobState::Running)
			pending_.push_back(s);
	}
	if (pending_.empty())
		return;
	sort_by_rank(pending_);

	/* Full-walk position: rank, then snapshot order (the sort is
	 * stable). */
	auto after = [&](std::size_t a, std::size_t b) {
		return ranks_[b] < ranks_[a] ||
		       (!(ranks_[a] < ranks_[b]) && a > b);
	};
	/* The behind jobs, as (pending jobs ranked before it, slot); the
	 * replay's map plus their GPUs is what the first pending job
	 * sees. */
	FreeMap free = *snap.free, idle = *snap.free;
	behind_.clear();
	for (std::size_t s = 0; s < jobs.size(); s++) {
		if (jobs[s]->state != JobState::Running ||
		    !after(s, pending_.front()))
			continue;
		std::size_t k = std::partition_point(
			pending_.begin(), pending_.end(),
			[&](std::size_t q) { return after(s, q); }) -
			pending_.begin();
		behind_.push_back({k, s});
		free.release(jobs[s]->placement);
	}
	if (!std::is_sorted(behind_.begin(), behind_.end()))
		std::sort(behind_.begin(), behind_.end());

	bool blocked = false;
	auto next = behind_.begin();
	for (std::size_t k = 1; k <= pending_.size(); k++) {
		std::size_t q = pending_[k - 1];
		const Job &j = *jobs[q];
		std::optional<Placement> p;
		if (!blocked) {
			p = place_pending(free, &idle, j.gpus);
			if (p)
				start(plan, j, q, *p);
			else if (opt_.discipline == Discipline::Block)
				blocked = true;
		}
		/* One pending job: every behind job takes its GPUs back iff
		 * the new job fits in what the replay's map has free. */
		if (pending_.size() == 1 && (!p || snap.free->fits(*p)))
			break;
		auto last = next;
		while (last != behind_.end() && last->first == k)
			++last;
		take_back(snap, free, idle, next, last, plan);
		next = last;
	}
}

/* The behind jobs in [FIRST, LAST), all ranked between the same two
 * pending jobs, take their GPUs back from FREE.  If all can, the order
 * does not matter; if one cannot, undo and walk them in rank order as the
 * full walk does, moving or preempting those that do not fit. */
void QueuePolicy::take_back(const Snapshot &snap, FreeMap &free,
			    FreeMap &idle, Behind::iterator first,
			    Behind::iterator last, Plan &plan)
{
	const std::vector<const Job *> &jobs = snap.jobs;
	auto it = first;
	while (it != last && free.take(jobs[it->second]->placement))
		++it;
	if (it == last)
		return;
	for (auto u = first; u != it; ++u)
		free.release(jobs[u->second]->placement);
	std::stable_sort(first, last, [&](const auto &a, const auto &b) {
		return ranks_[a.second] < ranks_[b.second];
	});
	for (it = first; it != last; ++it)
		if (Decision *d =
			    take_back_one(free, &idle, *jobs[it->second], plan))
			d->slot = (std::ptrdiff_t)it->second;
}

std::optional<Placement> QueuePolicy::place_pending(FreeMap &free,
						    FreeMap *idle,
						    int gpus) const
{
	std::optional<Placement> p;
	if (idle && (p = idle->place(gpus, opt_.placement))) {
		if (free.take(*p))
			return p;
		idle->release(*p); /* IDLE must shadow FREE; if not, FREE decides */
	}
	p = free.place(gpus, opt_.placement);
	if (p && idle)
		idle->take_free_part(*p);
	return p;
}

/* Running job R takes its GPUs back from FREE, or, where a job ranked
 * before it took them, is moved elsewhere (Resize, with Moves=yes: IDLE
 * loses what it takes) or preempted. */
Decision *QueuePolicy::take_back_one(FreeMap &free, FreeMap *idle,
				     const Job &r, Plan &plan)
{
	if (free.take(r.placement))
		return nullptr;
	std::optional<Placement> p;
	if (opt_.moves)
		p = free.place(r.gpus, opt_.placement);
	if (p && idle)
		idle->take_free_part(*p);
	if (p && *p == r.placement)
		return nullptr;
	Decision &d = plan.add(r.id, p ? Action::Resize : Action::Preempt,
			       r.gpus, std::string());
	if (p)
		d.placement = std::move(*p);
	return &d;
}

} /* namespace tidal */
