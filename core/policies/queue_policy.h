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
 * their place.
 *
 * A replay asks at every event, mostly with one new job or none pending.
 * With Snapshot::changes_only and Snapshot::free, decide() answers from the
 * replay's free map and looks at pending jobs (and, when preemptive, at the
 * running jobs ranked behind them) instead of rebuilding everything; the
 * plan is the full walk's less its Keep and Hold decisions
 * (queue_policy_changes.cc).
 *
 * Parameters (Key=Value, prefix = policy name):
 *
 *   Placement=consolidated|switch-aware|first-fit|best-fit|count|most-free
 *   Discipline=skip|block|quota
 *   Preemptive=yes|no
 *   Replace=yes|no        re-place running jobs from an empty cluster at
 *                         every decision (Muri's simulator) instead of
 *                         keeping their nodes.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/placement/placement.h"
#include "core/model/policy.h"

namespace tidal {

enum class Discipline : std::uint8_t { Skip, Block, Quota };

struct QueueOptions {
	PlacementScheme placement = PlacementScheme::Consolidated;
	Discipline discipline = Discipline::Skip;
	bool preemptive = false;
	bool replace = false;
};

/* Read the options above from PARAMS over DEFAULTS. */
QueueOptions queue_options(const Params &params, QueueOptions defaults);

/* A rank: compared lexicographically, smaller first. */
struct Rank {
	double k1 = 0, k2 = 0;
	bool operator<(const Rank &o) const
	{
		return k1 != o.k1 ? k1 < o.k1 : k2 < o.k2;
	}
};

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

	const QueueOptions &options() const { return opt_; }

protected:
	virtual Rank rank(const Job &job, const Snapshot &snap) const = 0;
	/* Why JOB ranks where it does, e.g. "1234 s remaining". */
	virtual std::string rank_reason(const Job &job, const Rank &r) const = 0;
	/* Optional wake-up (Tiresias level boundaries). */
	virtual Time wake_at(const Snapshot &snap) const;

private:
	/* The full walk over every job. */
	void decide_all(const Snapshot &snap, Plan &plan);
	/* The short walks (queue_policy_changes.cc). */
	void decide_pending(const Snapshot &snap, Plan &plan);
	void decide_behind(const Snapshot &snap, Plan &plan);
	/* (pending jobs ranked before it, slot) of a running job */
	using Behind = std::vector<std::pair<std::size_t, std::size_t>>;
	void take_back(const Snapshot &snap, FreeMap &free,
		       Behind::iterator first, Behind::iterator last,
		       Plan &plan);
	/* Sort SLOTS (indices into snap.jobs, ascending) by ranks_[slot],
	 * stably. */
	void sort_by_rank(std::vector<std::size_t> &slots) const;

	std::string name_;
	QueueOptions opt_;
	/* Scratch reused across calls (no state: each call overwrites it). */
	std::vector<Rank> ranks_;
	std::vector<std::size_t> pending_;
	Behind behind_;
};

} /* namespace tidal */
