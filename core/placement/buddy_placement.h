/*
 * buddy_placement.h - ElasticFlow's buddy (topology) placement of elastic
 * jobs on whole nodes [cluster.elastic_placement, release_job_res].
 *
 * Nodes are grouped into node-sets; a node-set is filed under a size class
 * (1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64, 72, 88, 128, 256) and each
 * class keeps its node-sets sorted by GPUs used.  A job of g GPUs goes to
 *
 *   1. the head node-set of class g if it still has g GPUs free, else
 *   2. the head node-set of a larger class (largest first) with room, else
 *   3. a new node-set of ceil(g / gpus-per-node) nodes from the head of
 *      the free list (kept stably sorted by the node's id within its
 *      switch, as ElasticFlow numbers nodes);
 *
 * and a node-set with free GPUs left is re-filed under the largest class s
 * that divides its free count, so that same-sized jobs pack like buddies.
 * A released node-set with nothing left gives its nodes back.
 *
 * The GPU ranks a job gets (for_each_rank) are what ElasticFlow uses to
 * decide whether a restarted job finds its workers already warm: the same
 * set of ranks as before costs a cached (cheap) restart.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <functional>
#include <vector>

namespace tidal {

class BuddyCluster {
public:
	/* NODE_IDS: each node's id as ElasticFlow numbers it, its position
	 * within its switch (empty: the node index).  Released nodes go back
	 * to the free list stably sorted by that id, so on a cluster of
	 * several switches the free list interleaves them (s0n0, s1n0, s0n1,
	 * ...) the way the artifact's free_nodes.sort(key=id) does. */
	BuddyCluster(int nodes, int gpus_per_node,
		     std::vector<int> node_ids = {});

	/* Place JOB (an id >= 0) on GPUS GPUs.  RET: false if it fits
	 * nowhere (nothing changes then). */
	bool place(int job, int gpus);
	/* Release JOB, which holds GPUS (the count it holds now). */
	void release(int job, int gpus);
	bool placed(int job) const;
	int free_gpus() const;

	/* Visit the placed jobs in GPU-rank order, the way ElasticFlow's
	 * scheduling log lays them out: FN(job, first rank, GPUs). */
	void for_each_rank(const std::function<void(int, int, int)> &fn) const;

private:
	struct NodeSet {
		std::vector<int> nodes;
		int capacity = 0, util = 0, num_gpus = 0;
		int filed = -1; /* class index it is filed under, -1 = none */
		std::vector<std::pair<int, int>> jobs; /* (job, GPUs) */
	};
	int nodes_, gpn_;
	std::vector<NodeSet> sets_;
	std::vector<int> free_sets_;          /* recycled NodeSet slots */
	std::vector<std::vector<int>> classes_; /* per class: set ids */
	std::vector<int> node_id_;            /* node -> ElasticFlow's id */
	std::vector<int> free_nodes_;         /* stably sorted by node_id_ */
	std::vector<int> node_set_;           /* node -> set, -1 = free */
	std::vector<int> job_set_;            /* job -> set, -1 = none */

	int class_index(int size) const;
	void file(int set, int cls);
	void unfile(int set);
	void sort_class(int cls);
	/* Re-file SET under the largest class dividing its free count. */
	bool refile_free(int set);
	bool try_set(int set, int job, int gpus, int home);
	int new_set(int job, int gpus);
	void note_job(int job, int set);
};

} /* namespace tidal */
