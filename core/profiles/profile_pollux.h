/*
 * profile_pollux.h - one application's measured performance and
 * convergence, as the Pollux (OSDI'21) artifact records them, and the
 * lookups its simulator treats as ground truth.
 *
 *   throughput(placement, local_bsz)  step and sync time per iteration:
 *       the placement (GPUs per node) is rotated to its lexicographically
 *       smallest rotation; a measured placement interpolates linearly over
 *       local_bsz (scipy interp1d); any other falls back to LinearInterp3
 *       over (num_nodes <= 16, num_replicas, local_bsz) of the placement
 *       means plus the scalability rows.
 *   progress(epoch)                   statistical progress at the start
 *       of EPOCH: the smallest over the validated batch sizes.
 *   grad_stats(batch, epoch)          (grad_sqr, grad_var), interpolated
 *       linearly between the nearest validated batch sizes.
 *
 * The same tables serve the Pollux, Optimus and Tiresias baselines.
 * Lookups outside the tables (the artifact's assertion failures) throw
 * ProfileError naming the application and the request.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/solvers/delaunay.h"

namespace tidal {

struct ProfileError : std::runtime_error {
	using std::runtime_error::runtime_error;
};

struct StepTime {
	double step = 0; /* seconds per iteration */
	double sync = 0; /* of which gradient synchronisation */
};

struct GradStats {
	double sqr = 0, var = 0;
};

class PolluxApp {
public:
	struct PlacementRow {
		long placement = 0; /* digits = GPUs per node */
		int local_bsz = 0;
		StepTime t;
	};
	struct ScalabilityRow {
		int num_nodes = 0, num_replicas = 0, local_bsz = 0;
		StepTime t;
	};
	struct EpochRow {
		double progress = 0, iteration = 0, metric = 0;
		GradStats grad;
	};

	std::string name;
	std::vector<PlacementRow> placements;        /* file order */
	std::vector<ScalabilityRow> scalability;     /* file order */
	std::map<int, std::vector<EpochRow>> validation; /* by total batch */

	/* Constants; 0 = derive from the tables in finish(). */
	int init_batch_size = 0, max_batch_size = 0;
	int min_local_bsz = 0, max_local_bsz = 0;
	int max_epochs = 0;

	/* Derive the defaults above.  Throws ProfileError if the tables are
	 * empty or inconsistent. */
	void finish();

	/* With target_metric unset, a job completes after max_epochs. */
	int completion_epoch() const { return max_epochs - 1; }

	StepTime throughput(const std::vector<int> &placement,
			    int local_bsz) const;
	double progress(int epoch) const;
	GradStats grad_stats(long batch, int epoch) const;
	double iteration(long batch, int epoch) const;

	/* The placement id after rotation: (4, 2) -> 24, (3, 4, 1) -> 134. */
	static long placement_id(const std::vector<int> &placement);

private:
	StepTime measured(long id, int local_bsz) const;
	StepTime fallback(const std::vector<int> &placement,
			  int local_bsz) const;
	void bounds(long batch, int *lo, int *hi) const;
	const EpochRow &row(int batch, int epoch) const;

	std::map<long, std::vector<size_t>> by_id_; /* rows by local_bsz */
	mutable std::map<std::pair<std::vector<int>, int>, StepTime> memo_;
	mutable std::unique_ptr<LinearInterp3> nd_;
};

} /* namespace tidal */
