/*
 * pollux_problem.h - one round of Pollux's cluster-wide allocation
 * (OSDI'21 pollux.py Problem): the state, the objective and the repair
 * that enforces the constraints.  The optimisers (pollux_ga.h, the
 * anchor's NSGA-II; pollux_search.h, Tidal's local search) share it.
 *
 * A state S is a jobs x nodes matrix of replicas (one GPU each), jobs in
 * Pollux's order (attained service, then arrival), nodes in cluster order.
 *
 *   F1 = -powermean_{p=-1}(s_j + 1e-3)   (minimised; what is applied)
 *        s_j = speedup_j(#nodes, #replicas) x scale
 *              x restart factor_j if row j differs from the current one
 *   F2 = -sum_j speedup_j / GPUs on nodes that hold any replica
 *
 * Constraints (repair, in this order): a node hosts at most one
 * distributed job (the first in job order; later entries on that node are
 * zeroed, as the artifact's cumulative mask does); at most max_replicas
 * and 16 nodes per job (a random node order keeps a prefix); node
 * capacity (earlier jobs win).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace tidal
{

/* xoshiro256** with explicit conversions: the same stream everywhere. */
class Rng
{
public:
	explicit Rng(std::uint64_t seed);
	std::uint64_t next();
	double uniform(); /* [0, 1) */
	int below(int n); /* [0, n) */

private:
	std::uint64_t s_[4];
};

struct PolluxJobInput {
	/* speedup(nodes, replicas) relative to the fair share; nodes <=
	 * replicas; (0, 0) -> 0.  Called with nodes in {1, 2} only by the
	 * local search and with any count by the GA: the goodput model
	 * depends on the node count only through nodes > 1. */
	std::function<double(int nodes, int replicas)> speedup;
	int max_replicas = 1;
	double restart_factor = 1; /* max(age - 30 restarts, 0) / (age + 30) */
};

class PolluxProblem
{
public:
	/* JOBS in Pollux order; NODE_GPUS per node; BASE = current state
	 * (jobs x nodes, row-major). */
	PolluxProblem(std::vector<PolluxJobInput> jobs,
		      std::vector<int> node_gpus, std::vector<int> base);

	int jobs() const { return (int)jobs_.size(); }
	int nodes() const { return (int)caps_.size(); }
	int cap(int n) const { return caps_[n]; }
	int max_replicas(int j) const { return jobs_[j].max_replicas; }
	const std::vector<int> &base() const { return base_; }
	bool row_is_base(const int *row, int j) const;

	/* Memoised speedup at (nodes, replicas); node counts >= 2 share one
	 * entry. */
	double speedup(int j, int nodes, int replicas) const;
	/* The scaled, restart-penalised speedup s_j of a row. */
	double scaled(int j, int nodes, int replicas, bool kept) const;

	/* F1 and F2 of STATE. */
	void evaluate(const int *state, double *f1, double *f2) const;
	/* Sum of (s_j + 1e-3)^-1 (F1 = -J / this). */
	double inverse_sum(const int *state) const;
	static double f1_from_inverse_sum(double inv, int jobs)
	{
		return -(double)jobs / inv;
	}

	/* The artifact's repair, in place. */
	void repair(int *state, Rng &rng) const;
	/* True if STATE satisfies every constraint (repair would keep it). */
	bool feasible(const int *state) const;

private:
	std::vector<PolluxJobInput> jobs_;
	std::vector<int> caps_;
	std::vector<int> base_;
	double scale_;
	mutable std::vector<std::vector<double>> memo_; /* [j][2 r + multi] */
};

} /* namespace tidal */
