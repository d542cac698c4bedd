/*
 * interleave.h - iteration time of jobs interleaved on the same GPUs.
 *
 * Muri (SIGCOMM'22) splits an iteration into stages that use different
 * resources (0 = data loading / CPU / IO, 1 = GPU compute, 2 = network
 * sync).  Up to four jobs sharing the same GPUs run their stages staggered,
 * so that while one job computes, another loads data and a third syncs.
 * The group's iteration time is given by a recurrence over four staggered
 * slots (shared/anchors/muri/MODEL.md §4.5); the order of the jobs in the
 * slots matters, and Muri picks the best one.  A measured slowdown factor
 * per group size is applied on top.
 *
 * AntMan's opportunistic jobs use a cruder model: how many iterations of
 * the resource-guaranteed job fit around one of the opportunistic one
 * (MODEL.md §4.2); antman_iterations() is that count.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tidal {

/* Seconds per iteration in each stage: IO/CPU, GPU, network. */
using StageTimes = std::array<double, 3>;

/* A member of an interleaving group. */
struct InterleaveJob {
	StageTimes stages{};
	double solo = 0;       /* s per iteration alone (factors included) */
	std::size_t index = 0; /* input position: the "no ordering" order */
};

enum class Ordering : unsigned char {
	Best,  /* minimum over all slot orders (Muri) */
	Worst, /* maximum over all slot orders (ablation) */
	None,  /* jobs in input order (ablation) */
};

/* Group size -> factor on the computed time.  [0] is the solo factor
 * (already inside InterleaveJob::solo); [1..3] for 2, 3 and 4 jobs.  Muri's
 * defaults give net slowdowns 1.33, 1.5 and 1.37 over the stage sums. */
using GroupFactors = std::array<double, 4>;
GroupFactors muri_group_factors();

/* The staggered-slot time of ORDER (1 to 4 stage vectors, slot order), with
 * no factor applied. */
double staggered_time(const StageTimes *const *order, int n);

/* How a group runs: the members in slot order, and the shape of the
 * cycle, with its period (no factor).
 *
 *   Staggered  4 slots; member m loads data (stage 0) from boundary m to
 *              m+2, computes (1) from m+2 to m+3, syncs (2) from m+3 to
 *              m+4, all mod 4; a boundary is reached when every stage
 *              ending at it is done.
 *   Pair       two members, 2 slots: in slot 0 member 0 loads data while
 *              member 1 computes and then syncs; in slot 1 the reverse.
 */
struct InterleavePlan {
	enum Shape : unsigned char { Staggered, Pair } shape = Staggered;
	std::vector<std::size_t> order; /* positions in JOBS, slot order */
	double raw = 0;			/* s per group iteration, no factor */
};

/* The schedule of JOBS (1 to 4) under ORDERING; for two jobs the best
 * ordering also tries Muri's direct two-job pairing. */
InterleavePlan interleave_plan(const std::vector<const InterleaveJob *> &jobs,
			       Ordering ordering);

/* A stage run of a group's clock: slot position MEMBER runs stages
 * FIRST..LAST back to back from boundary K (the one asked about) to
 * boundary END. */
struct SlotRun {
	int member = 0, first = 0, last = 0;
	uint64_t end = 0;
};

/* What starts at boundary K of a group of N (1 to 4) members run as
 * SHAPE; boundary K+1 is reached when every run ending at it is done.
 * Staggered: member m begins its first cycle at boundary m. */
std::vector<SlotRun> slot_starts(InterleavePlan::Shape shape, int n,
				 uint64_t k);

/* interleave_plan(JOBS, ORDERING).raw. */
double interleave_raw_time(const std::vector<const InterleaveJob *> &jobs,
			   Ordering ordering);

/* Seconds per iteration of every member of the group: the solo time for
 * one job, else interleave_raw_time() x FACTORS[n - 1]. */
double group_iter_time(const std::vector<const InterleaveJob *> &jobs,
		       Ordering ordering, const GroupFactors &factors);

/* AntMan: iterations of a job with stages C that overlap one iteration of
 * a job with stages T (both without the solo factor). */
int antman_iterations(StageTimes t, const StageTimes &c);

} /* namespace tidal */
