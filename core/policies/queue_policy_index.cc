/*
 * queue_policy_index.cc - the short walks (queue_policy_changes.cc) over
 * indexes kept from call to call, for a caller that says what changed
 * (Snapshot::delta): an event costs what it can change, not what is queued.
 *
 * The index holds the pending jobs in rank order (a rank that cannot change
 * while a job waits: RankChange::Never or WhileRunning), the same again per
 * GPU count, and the running jobs (in rank order too when ranks never
 * change).  Each call first reads the delta (left, then changed), then
 * walks:
 *
 *   not preemptive  the pending jobs in rank order on a copy of the
 *                   caller's free map, from the first; a job that asks for
 *                   more GPUs than are free cannot start, so the walk goes
 *                   straight to the next one that asks for fewer
 *                   (Discipline=skip), or stops at the first that does not
 *                   fit (block).
 *
 *   preemptive      as decide_behind(): the running jobs ranked behind the
 *                   first pending job give their GPUs to the walk's map;
 *                   the pending jobs are placed in rank order, skipping as
 *                   above, and the behind jobs ranked before each take
 *                   their GPUs back, in rank order (moved or preempted if a
 *                   job before them took them).  Once no pending job is
 *                   left to try, the rest take theirs back: only those on a
 *                   node where the walk started or moved a job can lose
 *                   theirs, and only if one does is the rest walked job by
 *                   job.
 *
 * Both give exactly the plan of the walks without an index (the unit test
 * test_queue_policy_index compares whole replays).  A job's rank is read
 * when it enters the index; running jobs whose rank changes while they run
 * are ranked afresh at each call (Snapshot::sync first).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>

#include "core/policies/queue_policy.h"

namespace tidal {

bool QueuePolicy::use_index(const Snapshot &snap) const
{
	return snap.delta && snap.changes_only && snap.free &&
	       opt_.discipline != Discipline::Quota && !opt_.replace &&
	       rank_change() != RankChange::Anytime;
}

QueueSet::const_iterator
QueuePolicy::next_candidate(QueueSet::const_iterator it, int free) const
{
	/* Block: every job is tried, since the first that fails blocks the
	 * rest. */
	if (opt_.discipline == Discipline::Block)
		return std::next(it);
	const QueueKey *best = nullptr;
	for (const auto &[gpus, q] : index_.pending_by_gpus) {
		if (gpus > free)
			break;
		auto c = q.upper_bound(*it);
		if (c != q.end() && (!best || QueueKeyLess()(*c, *best)))
			best = &*c;
	}
	return best ? index_.pending.find(*best) : index_.pending.end();
}

static void start_at(Plan &plan, const Job &j, Placement p)
{
	Decision &d = plan.add(j.id, Action::Start, j.gpus, std::string());
	d.placement = std::move(p);
}

void QueuePolicy::decide_pending_indexed(const Snapshot &snap, Plan &plan)
{
	if (index_.pending.empty())
		return;
	if (!walk_free_)
		walk_free_.emplace(*snap.cluster);
	FreeMap &free = *walk_free_;
	free.assign(*snap.free);
	auto it = index_.pending.cbegin();
	while (it != index_.pending.cend()) {
		const Job &j = *it->job;
		std::optional<Placement> p = free.place(j.gpus, opt_.placement);
		if (p)
			start_at(plan, j, std::move(*p));
		else if (opt_.discipline == Discipline::Block)
			break; /* the rest wait behind j */
		if (free.free_total() == 0)
			break; /* the rest cannot fit */
		it = next_candidate(it, free.free_total());
	}
}

void QueuePolicy::collect_behind(const Snapshot &snap, const QueueKey &first)
{
	behind_q_.clear();
	if (rank_change() != RankChange::WhileRunning) {
		for (auto r = index_.running_ranked.upper_bound(first);
		     r != index_.running_ranked.end(); ++r)
			behind_q_.push_back(*r);
	} else {
		QueueRanking how;
		how.rank = [&](const Job &j) { return rank(j, snap); };
		how.fresh = [&](const Job &j) { fresh(snap, j); };
		index_.rerank_running(how);
		auto from = std::upper_bound(
			index_.running.begin(), index_.running.end(), first,
			[](const QueueKey &k, const QueueEntry *e) {
				return QueueKeyLess()(k, e->key);
			});
		for (auto it = from; it != index_.running.end(); ++it)
			behind_q_.push_back((*it)->key);
	}
	behind_sorted_ = true;
	walk_++;
	for (const QueueKey &b : behind_q_)
		b.entry->behind = walk_;
}

void QueuePolicy::mark_dirty(const Placement &p)
{
	for (const NodeShare &s : p) {
		if (s.node < 0 || (std::size_t)s.node >= dirty_.size()) {
			dirty_all_ = true;
			continue;
		}
		if (!dirty_[s.node]) {
			dirty_[s.node] = 1;
			dirty_nodes_.push_back(s.node);
		}
	}
}

void QueuePolicy::take_back_indexed(std::size_t from, std::size_t to,
				    bool tail, Plan &plan)
{
	FreeMap &free = *walk_free_;
	auto first = behind_q_.begin() + (std::ptrdiff_t)from,
	     last = behind_q_.begin() + (std::ptrdiff_t)to;
	if (tail && !dirty_all_) {
		/* Only a node the walk put something on can be short of the
		 * GPUs its behind jobs want back; if none is, they all take
		 * theirs back and nothing changes. */
		bool short_of = false;
		for (std::size_t k = 0; k < dirty_nodes_.size() && !short_of;
		     k++) {
			int n = dirty_nodes_[k], want = 0;
			for (const QueueEntry *e : index_.on_node[n])
				if (e->behind == walk_)
					for (const NodeShare &sh : e->placement)
						if (sh.node == n)
							want += sh.gpus;
			short_of = want > free.free_on(n);
		}
		if (!short_of)
			return;
	} else {
		/* If all can take their GPUs back, their order does not
		 * matter (decide_behind's take_back). */
		auto it = first;
		while (it != last && free.take(it->job->placement)) {
			it->entry->behind = 0;
			++it;
		}
		if (it == last)
			return;
		for (auto u = first; u != it; ++u)
			free.release(u->job->placement);
	}
	if (!behind_sorted_)
		std::sort(first, last, QueueKeyLess());
	for (auto it = first; it != last; ++it) {
		it->entry->behind = 0;
		if (Decision *d = take_back_one(free, &*walk_idle_, *it->job,
						plan))
			mark_dirty(d->placement);
	}
}

bool QueuePolicy::start_all_idle(const Snapshot &snap, Plan &plan)
{
	const std::size_t before = plan.decisions.size();
	if (index_.pending.size() == 1) {
		/* The common case: one arrival, tried on the caller's map
		 * itself. */
		const Job &j = *index_.pending.begin()->job;
		std::optional<Placement> p =
			snap.free->fit(j.gpus, opt_.placement);
		if (!p)
			return false;
		start_at(plan, j, std::move(*p));
		return true;
	}
	if (!walk_idle_)
		walk_idle_.emplace(*snap.cluster);
	FreeMap &idle = *walk_idle_;
	idle.assign(*snap.free);
	for (const QueueKey &k : index_.pending) {
		std::optional<Placement> p = idle.place(k.job->gpus, opt_.placement);
		if (!p) {
			plan.decisions.resize(before);
			return false;
		}
		start_at(plan, *k.job, std::move(*p));
	}
	return true;
}

void QueuePolicy::decide_behind_indexed(const Snapshot &snap, Plan &plan)
{
	if (index_.pending.empty())
		return;
	/* Where every pending job fits in GPUs no running job holds, no
	 * running job loses its own: the behind jobs need not be looked
	 * at. */
	if (start_all_idle(snap, plan))
		return;
	const bool single = index_.pending.size() == 1;
	collect_behind(snap, *index_.pending.begin());
	if (!walk_free_)
		walk_free_.emplace(*snap.cluster);
	if (!walk_idle_)
		walk_idle_.emplace(*snap.cluster);
	FreeMap &free = *walk_free_, &idle = *walk_idle_;
	free.assign(*snap.free);
	idle.assign(*snap.free);
	for (const QueueKey &b : behind_q_)
		free.release(b.job->placement);
	for (int n : dirty_nodes_)
		dirty_[n] = 0;
	dirty_nodes_.clear();
	dirty_.resize(snap.cluster->nodes.size(), 0);
	dirty_all_ = false;

	bool blocked = false;
	std::size_t next = 0; /* behind_q_[next, ...) are not back yet */
	auto it = index_.pending.cbegin();
	for (;;) {
		const Job &j = *it->job;
		std::optional<Placement> p;
		if (!blocked) {
			p = place_pending(free, &idle, j.gpus);
			if (p) {
				mark_dirty(*p);
				start_at(plan, j, *p);
			} else if (opt_.discipline == Discipline::Block) {
				blocked = true;
			}
		}
		/* One pending job: every behind job takes its GPUs back iff
		 * the new job fits in what the caller's map has free. */
		if (single && (!p || snap.free->fits(*p)))
			return;
		auto after = blocked ? index_.pending.cend()
				     : next_candidate(it, free.free_total());
		if (after == index_.pending.cend()) {
			take_back_indexed(next, behind_q_.size(), true, plan);
			return;
		}
		/* The behind jobs ranked before AFTER come back now. */
		auto from = behind_q_.begin() + (std::ptrdiff_t)next;
		auto mid = behind_sorted_
				   ? std::lower_bound(from, behind_q_.end(), *after,
						      QueueKeyLess())
				   : std::partition(from, behind_q_.end(),
						    [&](const QueueKey &b) {
							    return QueueKeyLess()(
								    b, *after);
						    });
		std::size_t last = (std::size_t)(mid - behind_q_.begin());
		take_back_indexed(next, last, false, plan);
		next = last;
		it = after;
	}
}

} /* namespace tidal */
