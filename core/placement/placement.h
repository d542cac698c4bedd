/*
 * placement.h - where a job's GPUs go.
 *
 * A FreeMap tracks free GPUs per node.  place() takes a scheme and either
 * returns the chosen NodeShares (and, in Mode::Commit, takes them) or
 * nothing.  Mode::Test answers "would it fit" without changing the map, so
 * the simulator, tidalctl explain and the live plugin share one code path
 * (as Slurm's cons_tres job_test() takes a run-now / test-only mode).
 *
 * Schemes:
 *   consolidated  fewest nodes, best fit (the node whose free count is the
 *                 smallest that still holds the job); the default.
 *   switch-aware  fewest leaf switches, then fewest nodes.
 *   first-fit     Yarn/Muri: single node = first node with room; wider =
 *                 whole free nodes in index order plus one for the rest.
 *   best-fit      Lucid "consolidate": ascending free for narrow jobs,
 *                 descending free (whole idle nodes first) for wide ones.
 *   count         a global GPU counter, no fragmentation (Tiresias in the
 *                 Muri and ElasticFlow simulators); shares carry node -1.
 *   most-free     repeatedly all it needs from the node with the most free
 *                 GPUs, ties to the lowest index (Tiresias in the Pollux
 *                 artifact: Counter.most_common); shares in taking order.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/model/model.h"

namespace tidal {

enum class PlacementScheme : std::uint8_t {
	Consolidated,
	SwitchAware,
	FirstFit,
	BestFit,
	Count,
	MostFree,
};
/* Parse a scheme name; returns false for an unknown name. */
bool placement_scheme_from_name(const std::string &name, PlacementScheme *out);
const char *placement_scheme_name(PlacementScheme s);

enum class PlaceMode : std::uint8_t { Commit, Test };

class FreeMap {
public:
	explicit FreeMap(const Cluster &cluster);

	/* Mark every GPU free again. */
	void reset();
	/* Become a copy of OTHER, a map of the same cluster, in this map's
	 * memory (a policy's scratch map, copied at every decision). */
	void assign(const FreeMap &other);
	int free_total() const { return free_total_; }
	int free_on(int node) const { return free_[node]; }

	/* Take exactly `gpus` GPUs by SCHEME.  RET: the shares, or nullopt if
	 * they do not fit (the map is then unchanged). */
	std::optional<Placement> place(int gpus, PlacementScheme scheme,
				       PlaceMode mode = PlaceMode::Commit);
	/* Where place() would put them, on a map that stays as it is. */
	std::optional<Placement> fit(int gpus, PlacementScheme scheme) const;
	/* Are these exact shares all free? */
	bool fits(const Placement &p) const;
	/* Take these exact shares if all are free.  RET: true if taken. */
	bool take(const Placement &p, PlaceMode mode = PlaceMode::Commit);
	/* Give back P, which must have been taken. */
	void release(const Placement &p);
	/* Take of P what is free here, node by node (a map that shadows
	 * another: what the other gave to P is no longer free in this one
	 * either). */
	void take_free_part(const Placement &p);

private:
	std::optional<Placement> consolidated(int gpus) const;
	std::optional<Placement> switch_aware(int gpus) const;
	std::optional<Placement> first_fit(int gpus) const;
	std::optional<Placement> best_fit(int gpus) const;
	std::optional<Placement> most_free(int gpus) const;
	/* Greedy fill of NODES (in the given order) up to GPUS. */
	std::optional<Placement> fill(const std::vector<int> &nodes,
				      int gpus) const;
	void set_free(int node, int gpus);
	/* Lowest-index node with exactly FREE GPUs free at or after node
	 * FROM, or -1. */
	int next_with(int free, int from) const;

	const Cluster &cluster_;
	std::vector<int> free_;
	int free_total_ = 0;
	int total_ = 0;
	int per_node_ = 0;
	/* Nodes by free count, one bitset of words_ words per count 0 ..
	 * per_node_: best-fit finds its node without scanning every node. */
	std::vector<std::uint64_t> by_free_;
	int words_ = 0;
};

} /* namespace tidal */
