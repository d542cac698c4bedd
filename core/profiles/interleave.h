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

/* The group time of JOBS (1 to 4) under ORDERING with no factor; for two
 * jobs the best ordering also tries Muri's direct two-job pairing. */
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
