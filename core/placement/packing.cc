/*
 * packing.cc - may two jobs share GPUs (see packing.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/placement/packing.h"

#include <cstdio>
#include <map>

namespace tidal {

bool may_pack(const PackView &j, const PackView &h, const PackRules &r)
{
	return h.exclusive && h.gpus == j.gpus &&
	       h.gpu_mem_mb < r.gpu_mem_mb - j.gpu_mem_mb &&
	       j.score + h.score <= r.max_score &&
	       j.priority <= r.priority_ratio * h.priority;
}

std::string pack_refusal(const PackView &j, const PackView &h,
			 const PackRules &r)
{
	char buf[160];
	if (!h.exclusive)
		return "already shares its GPUs";
	if (h.gpus != j.gpus) {
		std::snprintf(buf, sizeof buf, "holds %d GPUs, not %d", h.gpus,
			      j.gpus);
		return buf;
	}
	if (!(h.gpu_mem_mb < r.gpu_mem_mb - j.gpu_mem_mb)) {
		std::snprintf(buf, sizeof buf,
			      "GPU memory %.0f + %.0f MiB is not below %.0f",
			      h.gpu_mem_mb, j.gpu_mem_mb, r.gpu_mem_mb);
		return buf;
	}
	if (j.score + h.score > r.max_score) {
		std::snprintf(buf, sizeof buf, "sharescore %d + %d is over %d",
			      j.score, h.score, r.max_score);
		return buf;
	}
	if (!(j.priority <= r.priority_ratio * h.priority)) {
		std::snprintf(buf, sizeof buf,
			      "priority %.0f is over %g x the host's %.0f",
			      j.priority, r.priority_ratio, h.priority);
		return buf;
	}
	return "";
}

long pack_target(const PackView &j, std::span<const PackView> hosts,
		 const PackRules &r)
{
	for (size_t i = 0; i < hosts.size(); i++)
		if (may_pack(j, hosts[i], r))
			return (long)i;
	return -1;
}

std::vector<std::vector<int>> gpu_groups(const Snapshot &snap)
{
	std::vector<std::vector<int>> out;
	std::map<JobId, size_t> seen;
	for (size_t i = 0; i < snap.jobs.size(); i++) {
		const Job &j = *snap.jobs[i];
		if (j.state != JobState::Running)
			continue;
		if (j.gpu_group) {
			auto [it, fresh] =
				seen.try_emplace(j.gpu_group, out.size());
			if (!fresh) {
				out[it->second].push_back((int)i);
				continue;
			}
		}
		out.push_back({ (int)i });
	}
	return out;
}

} /* namespace tidal */
