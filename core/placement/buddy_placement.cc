/*
 * buddy_placement.cc - ElasticFlow's node-set (buddy) placement.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/placement/buddy_placement.h"

#include <algorithm>
#include <set>

namespace tidal {

namespace {

const int kClasses[] = {1,  2,  4,  8,  12, 16,  24, 32,
			40, 48, 56, 64, 72, 88, 128, 256};
const int kNumClasses = (int)(sizeof(kClasses) / sizeof(kClasses[0]));

} /* namespace */

BuddyCluster::BuddyCluster(int nodes, int gpus_per_node,
			   std::vector<int> node_ids)
	: nodes_(nodes), gpn_(gpus_per_node), classes_(kNumClasses),
	  node_id_(std::move(node_ids)), node_set_(nodes, -1)
{
	if ((int)node_id_.size() != nodes) {
		node_id_.resize(nodes);
		for (int n = 0; n < nodes; n++)
			node_id_[n] = n;
	}
	for (int n = 0; n < nodes; n++)
		free_nodes_.push_back(n);
}

int BuddyCluster::class_index(int size) const
{
	for (int i = 0; i < kNumClasses; i++)
		if (kClasses[i] == size)
			return i;
	return -1;
}

void BuddyCluster::file(int set, int cls)
{
	classes_[cls].push_back(set);
	sets_[set].filed = cls;
}

void BuddyCluster::unfile(int set)
{
	int cls = sets_[set].filed;
	if (cls < 0)
		return;
	auto &l = classes_[cls];
	auto it = std::find(l.begin(), l.end(), set);
	if (it != l.end())
		l.erase(it);
	sets_[set].filed = -1;
}

void BuddyCluster::sort_class(int cls)
{
	std::stable_sort(classes_[cls].begin(), classes_[cls].end(),
			 [&](int a, int b) {
				 return sets_[a].util < sets_[b].util;
			 });
}

void BuddyCluster::note_job(int job, int set)
{
	if ((int)job_set_.size() <= job)
		job_set_.resize(job + 1, -1);
	job_set_[job] = set;
}

bool BuddyCluster::refile_free(int set)
{
	NodeSet &s = sets_[set];
	int free = (int)s.nodes.size() * gpn_ - s.util;
	if (free <= 0)
		return false;
	for (int i = kNumClasses - 1; i >= 0; i--) {
		if (kClasses[i] > free || free % kClasses[i])
			continue;
		s.num_gpus = kClasses[i];
		file(set, i);
		sort_class(i);
		return true;
	}
	return false;
}

/* Try SET (just popped off its class list) for JOB; HOME is the job's own
 * class, where a full node-set is filed.  RET: true if placed; else SET
 * was pushed back to the tail of the list it came from. */
bool BuddyCluster::try_set(int set, int job, int gpus, int home)
{
	NodeSet &s = sets_[set];
	int from = s.filed;
	unfile(set);
	if (s.util + gpus > s.capacity) {
		file(set, from);
		return false;
	}
	s.util += gpus;
	s.jobs.emplace_back(job, gpus);
	note_job(job, set);
	if (!refile_free(set))
		file(set, home);
	sort_class(home);
	return true;
}

int BuddyCluster::new_set(int job, int gpus)
{
	int need = (gpus + gpn_ - 1) / gpn_;
	if (need > (int)free_nodes_.size())
		return -1;
	int id;
	if (!free_sets_.empty()) {
		id = free_sets_.back();
		free_sets_.pop_back();
		sets_[id] = NodeSet();
	} else {
		id = (int)sets_.size();
		sets_.emplace_back();
	}
	NodeSet &s = sets_[id];
	s.capacity = need * gpn_;
	s.num_gpus = gpus;
	s.nodes.assign(free_nodes_.begin(), free_nodes_.begin() + need);
	free_nodes_.erase(free_nodes_.begin(), free_nodes_.begin() + need);
	for (int n : s.nodes)
		node_set_[n] = id;
	s.util = gpus;
	s.jobs.emplace_back(job, gpus);
	note_job(job, id);
	return id;
}

bool BuddyCluster::place(int job, int gpus)
{
	int home = class_index(gpus);
	if (home < 0)
		return false;
	if (!classes_[home].empty() &&
	    try_set(classes_[home].front(), job, gpus, home))
		return true;
	for (int i = kNumClasses - 1; i > home; i--)
		if (!classes_[i].empty() &&
		    try_set(classes_[i].front(), job, gpus, home))
			return true;
	int id = new_set(job, gpus);
	if (id < 0)
		return false;
	/* A new node-set keeps num_gpus = the job's size when re-filed. */
	int keep = sets_[id].num_gpus;
	if (refile_free(id)) {
		sets_[id].num_gpus = keep;
		sort_class(home);
	} else {
		file(id, home);
		sort_class(home);
	}
	return true;
}

void BuddyCluster::release(int job, int gpus)
{
	int id = job_set_[job];
	job_set_[job] = -1;
	NodeSet &s = sets_[id];
	s.util -= gpus;
	for (auto it = s.jobs.begin(); it != s.jobs.end(); ++it)
		if (it->first == job) {
			s.jobs.erase(it);
			break;
		}
	int free = s.capacity - s.util;
	if (s.util == 0) {
		unfile(id);
		for (int n : s.nodes) {
			node_set_[n] = -1;
			free_nodes_.push_back(n);
		}
		/* free_nodes.sort(key=id): stable, and the id is the node's
		 * position in its switch, not its global index. */
		std::stable_sort(free_nodes_.begin(), free_nodes_.end(),
				 [&](int a, int b) {
					 return node_id_[a] < node_id_[b];
				 });
		free_sets_.push_back(id);
		return;
	}
	if (free <= 0)
		return;
	for (int i = kNumClasses - 1; i >= 0; i--) {
		if (kClasses[i] > free || free % kClasses[i])
			continue;
		if (free == s.num_gpus)
			break;
		unfile(id);
		s.num_gpus = kClasses[i];
		file(id, i);
		sort_class(i);
		break;
	}
}

bool BuddyCluster::placed(int job) const
{
	return job >= 0 && job < (int)job_set_.size() && job_set_[job] >= 0;
}

int BuddyCluster::free_gpus() const
{
	int free = (int)free_nodes_.size() * gpn_;
	for (const auto &l : classes_)
		for (int s : l)
			free += sets_[s].capacity - sets_[s].util;
	return free;
}

void BuddyCluster::for_each_rank(
	const std::function<void(int, int, int)> &fn) const
{
	std::set<int> recorded;
	int row = 0;
	for (int n = 0; n < nodes_; n++) {
		int id = node_set_[n];
		if (id < 0 || sets_[id].filed < 0 || sets_[id].jobs.empty()) {
			row += gpn_;
			continue;
		}
		const NodeSet &s = sets_[id];
		if (kClasses[s.filed] >= gpn_) {
			const auto &j0 = s.jobs.front();
			if (recorded.insert(j0.first).second)
				fn(j0.first, row, j0.second);
			row += gpn_;
			continue;
		}
		int used = 0;
		for (const auto &[job, g] : s.jobs) {
			fn(job, row, g);
			row += g;
			used += g;
		}
		row += gpn_ - used;
	}
}

} /* namespace tidal */
