/*
 * queue_policy.h - the ranked-queue skeleton behind the baseline policies.
 *
 * A baseline policy is three stages:
 *
 *   rank       a sort key per job (FIFO: submit time; SRTF: remaining time;
 *              Tiresias: queue level, then position in the level; ...).
 *              Sorting is stable over the snapshot's job order.
 *   allocate   walk the ranked jobs and give each its GPUs:
 *                skip   a job that does not fit is passed over, later jobs
 *                       may still start (backfill without reservation);
 *                block  the first pending job that does not fit stops all
 *                       pending jobs behind it (head-of-line FIFO);
 *                quota  choose jobs by GPU count against the whole cluster
 *                       first (running jobs outside the quota are
 *                       preempted), then place the chosen pending jobs.
 *   place      a PlacementScheme (placement.h).
 *
 * Non-preemptive policies rank only pending jobs; running jobs keep their
 * GPUs.  Preemptive ones rank everything and preempt running jobs that lose
 * their place: a pending job takes GPUs that no running job holds where it
 * fits in them, and a running job's only where it does not.
 *
 * A replay asks at every event, mostly with one new job or none pending.
 * With Snapshot::changes_only and Snapshot::free, decide() answers from the
 * replay's free map and looks at pending jobs (and, when preemptive, at the
 * running jobs ranked behind them) instead of rebuilding everything; the
 * plan is the full walk's less its Keep and Hold decisions
 * (queue_policy_changes.cc).  With a Snapshot::delta as well, the pending
 * jobs stay ranked in an index from call to call, so that a long queue
 * costs nothing at an event that cannot start its jobs
 * (queue_policy_index.cc).
 *
 * Parameters (Key=Value, prefix = policy name):
 *
 *   Placement=consolidated|switch-aware|first-fit|best-fit|count|most-free
 *   Discipline=skip|block|quota
 *   Preemptive=yes|no
 *   Replace=yes|no        re-place running jobs from an empty cluster at
 *                         every decision (Muri's simulator) instead of
 *                         keeping their nodes.
 *   Moves=yes|no          a running job whose GPUs went to a job ranked
 *                         above it moves to other free GPUs at no cost
 *                         (the simulators that model migration as free)
 *                         instead of being preempted.  Live, a move is a
 *                         requeue and a restart, as a preemption is:
 *                         default no.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/placement/placement.h"
#include "core/model/policy.h"
#include "core/policies/queue_index.h"

namespace tidal {

enum class Discipline : std::uint8_t { Skip, Block, Quota };

struct QueueOptions {
	PlacementScheme placement = PlacementScheme::Consolidated;
	Discipline discipline = Discipline::Skip;
	bool preemptive = false;
	bool replace = false;
	bool moves = false;
};

/* Read the options above from PARAMS over DEFAULTS. */
QueueOptions queue_options(const Params &params, QueueOptions defaults);

class QueuePolicy : public Policy {
public:
	QueuePolicy(std::string name, QueueOptions opt)
		: name_(std::move(name)), opt_(opt)
	{
	}
	std::string name() const override { return name_; }
	Plan decide(const Snapshot &snap) override;
	/* Re-placing (Replace=yes) moves running jobs even with none
	 * pending; otherwise nothing changes without a pending job. */
	bool idle_without_pending() const override { return !opt_.replace; }
	bool incremental() const override
	{
		return rank_change() != RankChange::Anytime;
	}

	const QueueOptions &options() const { return opt_; }

protected:
	/* JOB's rank; with Snapshot::sync set, its progress counters are
	 * already brought up to date (fresh()). */
	virtual Rank rank(const Job &job, const Snapshot &snap) const = 0;
	/* Why JOB ranks where it does, e.g. "1234 s remaining". */
	virtual std::string rank_reason(const Job &job, const Rank &r) const = 0;
	/* Optional wake-up (Tiresias level boundaries), from the running jobs
	 * among JOBS (with Snapshot::sync set, fresh() each before reading
	 * its progress). */
	virtual Time wake_at(const Snapshot &snap,
			     const std::vector<const Job *> &jobs) const;
	/* When rank() can change; Anytime (no index) unless a policy says
	 * otherwise. */
	virtual RankChange rank_change() const { return RankChange::Anytime; }
	/* RankChange::AtTimes: when the rank of running JOB changes next
	 * (its progress counters brought up to date), or infinity. */
	virtual Time rank_changes_at(const Job &job, const Snapshot &snap) const;
	/* Bring JOB's progress counters to snap.now if the caller keeps them
	 * lazily (Snapshot::sync). */
	static void fresh(const Snapshot &snap, const Job &job)
	{
		if (snap.sync)
			snap.sync(job);
	}

private:
	/* The full walk over every job. */
	void decide_all(const Snapshot &snap, Plan &plan);
	/* The short walks (queue_policy_changes.cc). */
	void decide_pending(const Snapshot &snap, Plan &plan);
	void decide_behind(const Snapshot &snap, Plan &plan);
	/* (pending jobs ranked before it, slot) of a running job */
	using Behind = std::vector<std::pair<std::size_t, std::size_t>>;
	void take_back(const Snapshot &snap, FreeMap &free, FreeMap &idle,
		       Behind::iterator first, Behind::iterator last,
		       Plan &plan);
	Decision *take_back_one(FreeMap &free, FreeMap *idle, const Job &r,
				Plan &plan);
	/* A pending job's GPUs in a preemptive walk: from IDLE (what no
	 * running job holds) if it fits there, so that nobody loses GPUs to
	 * it; else from FREE (IDLE and the GPUs of the running jobs not
	 * walked yet).  Both maps lose what it takes. */
	std::optional<Placement> place_pending(FreeMap &free, FreeMap *idle,
					       int gpus) const;
	/* Sort SLOTS (indices into snap.jobs, ascending) by ranks_[slot],
	 * stably. */
	void sort_by_rank(std::vector<std::size_t> &slots) const;

	/* The walks over index_ (queue_policy_index.cc). */
	bool use_index(const Snapshot &snap) const;
	void decide_pending_indexed(const Snapshot &snap, Plan &plan);
	void decide_behind_indexed(const Snapshot &snap, Plan &plan);
	/* Start every pending job in rank order on the caller's free map,
	 * if each fits there: the preemptive walk's plan, since nobody then
	 * loses GPUs.  RET false (PLAN as it was) at the first that does
	 * not fit. */
	bool start_all_idle(const Snapshot &snap, Plan &plan);
	/* The running jobs ranked behind FIRST into behind_q_ (not in rank
	 * order unless ranks never change); each marked behind. */
	void collect_behind(const Snapshot &snap, const QueueKey &first);
	/* The first pending job after IT that may still fit in FREE GPUs
	 * (every other fails for want of GPUs). */
	QueueSet::const_iterator next_candidate(QueueSet::const_iterator it,
						int free) const;
	/* behind_q_[FROM, TO) take their GPUs back, in rank order where it
	 * matters: moved or preempted where a job ranked before them took
	 * them.  TAIL: the last ones, of which only those on a node the walk
	 * put something on can have lost GPUs. */
	void take_back_indexed(std::size_t from, std::size_t to, bool tail,
			       Plan &plan);
	void mark_dirty(const Placement &p);

	std::string name_;
	QueueOptions opt_;
	/* Scratch reused across calls (no state: each call overwrites it). */
	std::vector<Rank> ranks_;
	std::vector<std::size_t> pending_;
	Behind behind_;

	/* Kept across calls with a Snapshot::delta. */
	QueueIndex index_;
	/* Scratch of the indexed walks. */
	std::optional<FreeMap> walk_free_;
	std::optional<FreeMap> walk_idle_; /* what no running job holds */
	std::vector<QueueKey> behind_q_;
	bool behind_sorted_ = false; /* in rank order (ranks kept ranked) */
	std::vector<char> dirty_;
	std::vector<int> dirty_nodes_;
	bool dirty_all_ = false;
	std::uint64_t walk_ = 0;
};

} /* namespace tidal */
