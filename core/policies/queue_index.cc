/*
 * queue_index.cc - the ranked queues kept across calls (queue_index.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/queue_index.h"

#include <algorithm>
#include <cmath>

namespace tidal {

static bool kept_ranked(RankChange c)
{
	return c == RankChange::Never || c == RankChange::AtTimes;
}

void QueueIndex::update(const Snapshot &snap, const QueueRanking &ranking)
{
	const SnapshotDelta &d = *snap.delta;
	if (!valid_ || d.stream != stream_) {
		entries_.clear();
		pending.clear();
		pending_by_gpus.clear();
		running.clear();
		running_jobs.clear();
		running_ranked.clear();
		changes_.clear();
		on_node.assign(snap.cluster->nodes.size(), {});
		valid_ = true;
		stream_ = d.stream;
	}
	for (JobId id : d.left)
		untrack(id);
	for (const auto &[job, order] : d.changed) {
		untrack(job->id);
		if (job->state == JobState::Pending ||
		    job->state == JobState::Running)
			track(job, order, ranking);
	}
	if (ranking.change != RankChange::AtTimes)
		return;
	/* Rank afresh the running jobs whose rank changes by now (a little
	 * early is harmless: the rank is read, not foreseen). */
	Time due = snap.now + 1e-9 * std::max(1.0, std::fabs(snap.now));
	due_.clear();
	for (auto it = changes_.begin(); it != changes_.end() && it->first <= due;
	     it = changes_.erase(it))
		due_.push_back(it->second);
	for (QueueEntry *e : due_) {
		const Job &j = *e->key.job;
		ranking.fresh(j);
		Rank r = ranking.rank(j);
		if (r < e->key.rank || e->key.rank < r) {
			running_ranked.erase(e->key);
			e->key.rank = r;
			running_ranked.insert(e->key);
		}
		e->changes_at = ranking.changes_at(j);
		if (e->changes_at < std::numeric_limits<Time>::infinity())
			changes_.insert({e->changes_at, e});
	}
}

void QueueIndex::rerank_running(const QueueRanking &ranking)
{
	for (QueueEntry *e : running) {
		ranking.fresh(*e->key.job);
		e->key.rank = ranking.rank(*e->key.job);
	}
	/* Insertion sort: linear when the order holds, as it mostly does
	 * from one call to the next. */
	QueueKeyLess less;
	for (std::size_t i = 1; i < running.size(); i++) {
		QueueEntry *e = running[i];
		std::size_t k = i;
		while (k > 0 && less(e->key, running[k - 1]->key)) {
			running[k] = running[k - 1];
			k--;
		}
		running[k] = e;
	}
	for (std::size_t i = 0; i < running.size(); i++) {
		running[i]->at = i;
		running_jobs[i] = running[i]->key.job;
	}
}

std::vector<const Job *> QueueIndex::changing_first(Time tol) const
{
	std::vector<const Job *> v;
	if (changes_.empty())
		return v;
	Time last = changes_.begin()->first + tol;
	for (auto it = changes_.begin(); it != changes_.end() && it->first <= last;
	     ++it)
		v.push_back(it->second->key.job);
	return v;
}

void QueueIndex::track(const Job *j, std::uint64_t order,
		       const QueueRanking &ranking)
{
	ranking.fresh(*j);
	QueueEntry &e = entries_[j->id];
	e.id = j->id;
	e.gpus = j->gpus;
	e.running = j->state == JobState::Running;
	e.key = {ranking.rank(*j), order, j, &e};
	e.behind = 0;
	e.changes_at = std::numeric_limits<Time>::infinity();
	if (!e.running) {
		pending.insert(e.key);
		pending_by_gpus[e.gpus].insert(e.key);
		return;
	}
	e.placement = j->placement;
	e.at = running.size();
	running.push_back(&e);
	running_jobs.push_back(j);
	if (kept_ranked(ranking.change))
		running_ranked.insert(e.key);
	if (ranking.change == RankChange::AtTimes) {
		e.changes_at = ranking.changes_at(*j);
		if (e.changes_at < std::numeric_limits<Time>::infinity())
			changes_.insert({e.changes_at, &e});
	}
	for (const NodeShare &s : e.placement)
		if (s.node >= 0 && (std::size_t)s.node < on_node.size())
			on_node[s.node].push_back(&e);
}

/* Forget job ID.  No pointer to the job is read: it may have left, and
 * its memory hold another job (SnapshotDelta). */
void QueueIndex::untrack(JobId id)
{
	auto it = entries_.find(id);
	if (it == entries_.end())
		return;
	QueueEntry &e = it->second;
	if (!e.running) {
		pending.erase(e.key);
		auto g = pending_by_gpus.find(e.gpus);
		g->second.erase(e.key);
		if (g->second.empty())
			pending_by_gpus.erase(g);
	} else {
		running_ranked.erase(e.key);
		if (e.changes_at < std::numeric_limits<Time>::infinity())
			changes_.erase({e.changes_at, &e});
		running[e.at] = running.back();
		running_jobs[e.at] = running_jobs.back();
		running[e.at]->at = e.at;
		running.pop_back();
		running_jobs.pop_back();
		for (const NodeShare &s : e.placement) {
			if (s.node < 0 || (std::size_t)s.node >= on_node.size())
				continue;
			std::vector<QueueEntry *> &v = on_node[s.node];
			auto k = std::find(v.begin(), v.end(), &e);
			if (k != v.end()) {
				*k = v.back();
				v.pop_back();
			}
		}
	}
	entries_.erase(it);
}

} /* namespace tidal */
