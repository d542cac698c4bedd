/*
 * muri.h - Muri (SIGCOMM'22): multi-resource interleaving of jobs that
 * share GPUs.
 *
 * Jobs of the same GPU width are grouped (up to four per group) so that
 * their data-loading, compute and sync stages overlap (interleave.h); a
 * group holds one set of GPUs and each member runs at the group's
 * iteration time.  One decision:
 *
 *   rank       Muri-S: remaining GPU-seconds (SRSF; the oracle duration x
 *              GPUs before a job first runs).  Muri-L: attained GPU-seconds
 *              (least attained service, no durations needed).  Stable over
 *              the snapshot's order.
 *   candidates from an empty cluster, each ranked job that still fits
 *              (first-fit) opens a slot that brings up to Packing jobs of
 *              its width, in rank order.
 *   grouping   per width, rounds of maximum-weight matching (matching.h)
 *              over the current groups, edge weight = resource use of the
 *              merged group (sum of stage times / (group time x 4)); pairs
 *              merge only while the candidates need more GPUs than the
 *              cluster has.  At most Packing jobs per group.
 *   autopack   a group slower than its members run one after another is
 *              split again; groups are ranked by their best member and
 *              kept while their first member still fits.
 *   place      widest first (stable), one first-fit placement per group.
 *
 * Parameters (prefix Muri.): Packing=1..4, Ordering=best|worst|none,
 * Blossom=yes|no (no = consecutive candidates, the ablation),
 * Matcher=lemon|anchor, Autopack=yes|no, Placement=<scheme>,
 * Profiles=FILE (stage times per model, for jobs that carry none: a CSV
 * with the header model,data,compute,comm, seconds per iteration; the
 * job's solo iteration time is then their sum).
 *
 * Where the cluster limits sharing (Cluster::sharing: sched/tidal with
 * gres/shard), groups stay within it, and a started job's decision says
 * share (and colocate for the partners of a group's anchor).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/profiles/interleave.h"
#include "core/solvers/matching.h"
#include "core/placement/placement.h"
#include "core/model/policy.h"

namespace tidal {

struct MuriOptions {
	bool know_duration = true; /* Muri-S; false = Muri-L */
	int packing = 4;
	Ordering ordering = Ordering::Best;
	bool blossom = true;
	bool autopack = true;
	Matcher matcher = Matcher::Lemon;
	PlacementScheme placement = PlacementScheme::FirstFit;
	GroupFactors factors = muri_group_factors();
	/* Muri.Profiles: stage times by model name. */
	std::map<std::string, StageTimes> profiles;
};

MuriOptions muri_options(const Params &params, MuriOptions defaults);

/* Read a stage-time table (Muri.Profiles) from PATH into *OUT.  RET false
 * with *ERR naming the file, line, value and rule. */
bool load_stage_profiles(const std::string &path,
			 std::map<std::string, StageTimes> *out,
			 std::string *err);

/* A group of jobs sharing GPUs: indices into the ranked job list. */
struct MuriGroup {
	std::vector<int> members;
	double iter_time = 0; /* s per iteration of every member */
	double rank = 0;      /* the best member's sort value */
};

/* Interleaved group times kept from one decision to the next: a group's
 * time under Ordering::Best or Worst is a function of its members' stage
 * times alone (the best or worst of every slot order, whatever order they
 * come in), and the same groups are weighed again at every event.  Keyed
 * by the members' stage times, bit for bit; forgets everything past
 * kMaxEntries (a few MB). */
class InterleaveMemo {
public:
	static constexpr std::size_t kMaxEntries = 1 << 15;
	/* interleave_raw_time(JOBS, ORDERING), from memory where it can
	 * (not for Ordering::None, which reads the jobs' input order). */
	double raw_time(const std::vector<const InterleaveJob *> &jobs,
			Ordering ordering);

private:
	struct Key {
		std::array<StageTimes, 4> stages{}; /* sorted, bitwise */
		std::uint8_t n = 0, ordering = 0;
		bool operator==(const Key &o) const;
	};
	struct KeyHash {
		std::size_t operator()(const Key &k) const;
	};
	std::unordered_map<Key, double, KeyHash> memo_;
};

/* The grouping of one decision (candidates, matching, autopack) for JOBS
 * in rank order with their sort values RANK.  RET: the groups that fit, in
 * rank order.  MEMO, if given, keeps group times across calls. */
std::vector<MuriGroup> muri_groups(const std::vector<const Job *> &jobs,
				   const std::vector<double> &rank,
				   const Cluster &cluster,
				   const MuriOptions &o,
				   InterleaveMemo *memo = nullptr);

class Muri : public Policy
{
public:
	Muri(std::string name, MuriOptions o) : name_(std::move(name)), opt_(o)
	{
	}
	std::string name() const override { return name_; }
	bool shares_gpus() const override { return true; }
	bool interleaves() const override { return true; }
	/* Decisions come in placement order (rank, then widest first). */
	Plan decide(const Snapshot &snap) override;

	/* The sort value of JOB (smaller runs first). */
	double sort_value(const Job &job) const;
	/* After decide(): the groups placed, as job ids, and their time. */
	struct Placed {
		std::vector<JobId> members;
		double iter_time = 0;
	};
	const std::vector<Placed> &placed() const { return placed_; }

private:
	std::string name_;
	MuriOptions opt_;
	std::vector<Placed> placed_;
	InterleaveMemo memo_;
};

} /* namespace tidal */
