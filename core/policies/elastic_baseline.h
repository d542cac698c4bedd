/*
 * elastic_baseline.h - elastic-fifo and elastic-edf (elastic_baseline.cc):
 * rank, give every job its floor, let running elastic jobs keep their size,
 * grow elastic jobs into what is left.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <string>
#include <vector>

#include "core/placement/placement.h"
#include "core/model/policy.h"

namespace tidal
{

/* Fewest GPUs JOB can run on (elastic: MIN; rigid: its request) and the
 * most it can use (elastic: MAX; rigid: its request). */
int elastic_floor(const Job &job);
int elastic_cap(const Job &job);

class ElasticBaseline : public Policy
{
public:
	/* BY_DEADLINE: rank by deadline first (elastic-edf). */
	ElasticBaseline(std::string name, bool by_deadline, const Params &p);
	std::string name() const override { return name_; }
	Plan decide(const Snapshot &snap) override;
	bool admits_by_deadline() const override { return reject_; }
	/* With no job pending, only an elastic job can change (grow into
	 * freed GPUs): none was active at the last call, none can be until a
	 * job arrives. */
	bool idle_without_pending() const override { return !any_elastic_; }

	/* Exposed for the unit tests. */
	std::vector<const Job *> ranked(const Snapshot &snap) const;
	/* GPUs per ranked job by count (0 = none); REJECTED marks pending
	 * jobs whose deadline cannot be met. */
	std::vector<int> targets(const std::vector<const Job *> &ranked,
				 int total, std::vector<bool> *rejected,
				 Time now) const;

private:
	std::string reason(const Job &j, Action a, int got,
			   const Snapshot &snap, int free_now) const;

	std::string name_;
	bool by_deadline_;
	bool reject_ = false;
	int min_growth_ = 1;
	PlacementScheme scheme_ = PlacementScheme::Consolidated;
	bool any_elastic_ = false; /* an elastic job at the last decide() */
};

} /* namespace tidal */
