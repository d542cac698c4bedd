/*
 * queue_index.h - what a ranked-queue policy keeps from call to call when
 * its caller says what changed (Snapshot::delta): the pending jobs in rank
 * order, the same per GPU count, and the running jobs with their GPUs per
 * node (in rank order too, for ranks that never change).
 *
 *   delta --> update(): left (by id), then changed (rank read once, as the
 *             job enters or changes) --> pending, pending_by_gpus,
 *             running, running_ranked, on_node
 *
 * A pending job's rank must not change while it waits (RankChange in
 * queue_policy.h): it is read when the job enters.  The walks that use the
 * index are in queue_policy_index.cc.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "core/model/model.h"

namespace tidal {

/* A rank: compared lexicographically, smaller first. */
struct Rank {
	double k1 = 0, k2 = 0;
	bool operator<(const Rank &o) const
	{
		return k1 != o.k1 ? k1 < o.k1 : k2 < o.k2;
	}
};

/* When a job's rank can change (QueuePolicy::rank_change). */
enum class RankChange : std::uint8_t {
	Never,        /* never: it depends on the request alone (FIFO, EDF) */
	AtTimes,      /* while it runs, at times the policy foresees
		       * (Tiresias' level thresholds); never while it waits */
	WhileRunning, /* at any time while it runs (SRTF's remaining time);
		       * never while it waits */
	Anytime,      /* at any call (a rank that reads the clock or the
		       * other jobs): no index across calls */
};

/* How a policy ranks, for the index. */
struct QueueRanking {
	RankChange change = RankChange::Anytime;
	/* A job's rank, its progress counters brought up to date. */
	std::function<Rank(const Job &)> rank;
	/* AtTimes: when a running job's rank changes next (infinity:
	 * never), its counters brought up to date. */
	std::function<Time(const Job &)> changes_at;
	/* Bring a job's counters up to date (Snapshot::sync). */
	std::function<void(const Job &)> fresh;
};

struct QueueEntry;

/* A job's place in a rank order: rank, then the caller's order of jobs
 * (what a stable sort over Snapshot::jobs gives). */
struct QueueKey {
	Rank rank;
	std::uint64_t order = 0;
	const Job *job = nullptr;
	QueueEntry *entry = nullptr;
};
struct QueueKeyLess {
	bool operator()(const QueueKey &a, const QueueKey &b) const
	{
		return a.rank < b.rank ||
		       (!(b.rank < a.rank) && a.order < b.order);
	}
};
using QueueSet = std::set<QueueKey, QueueKeyLess>;

/* What the index knows of one active job. */
struct QueueEntry {
	JobId id = 0;
	int gpus = 0; /* its request */
	bool running = false;
	QueueKey key;        /* its rank when it entered or changed (and,
			      * AtTimes, when that rank last changed) */
	Time changes_at = std::numeric_limits<Time>::infinity();
	Placement placement; /* running: its GPUs, as last told */
	std::size_t at = 0;  /* running: its place in QueueIndex::running */
	/* Scratch of a walk: the walk's number while the job is ranked
	 * behind the first pending job and has not taken its GPUs back. */
	std::uint64_t behind = 0;
};

class QueueIndex {
public:
	/* Read SNAP's delta (a new stream: start afresh), then, AtTimes,
	 * rank afresh the running jobs whose rank changes by snap.now. */
	void update(const Snapshot &snap, const QueueRanking &ranking);
	/* WhileRunning: rank every running job afresh and put `running` in
	 * rank order (from the order of the last call, so a call where few
	 * ranks cross costs about one pass). */
	void rerank_running(const QueueRanking &ranking);
	/* AtTimes: the running jobs whose rank changes first, and those
	 * within TOL seconds after them (a policy's wake-up is among
	 * them). */
	std::vector<const Job *> changing_first(Time tol) const;
	/* Forget everything: the next update() starts afresh. */
	void invalidate() { valid_ = false; }

	QueueSet pending;
	std::map<int, QueueSet> pending_by_gpus;
	/* The running jobs (WhileRunning: in rank order after
	 * rerank_running()). */
	std::vector<QueueEntry *> running;
	std::vector<const Job *> running_jobs; /* the same jobs */
	QueueSet running_ranked; /* Never and AtTimes only */
	std::vector<std::vector<QueueEntry *>> on_node;

private:
	void track(const Job *job, std::uint64_t order,
		   const QueueRanking &ranking);
	void untrack(JobId id);
	/* AtTimes: the running entries by QueueEntry::changes_at. */
	std::set<std::pair<Time, QueueEntry *>> changes_;
	std::vector<QueueEntry *> due_; /* scratch */

	bool valid_ = false;
	std::uint64_t stream_ = 0;
	/* Node-based: entries keep their addresses while they exist. */
	std::unordered_map<JobId, QueueEntry> entries_;
};

} /* namespace tidal */
