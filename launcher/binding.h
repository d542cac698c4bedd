/*
 * binding.h - which CPUs and which InfiniBand HCA each local rank should
 * use: the ones nearest its GPU, from the hwloc summary of node/topo.h.
 *
 * Rank LOCAL_RANK drives the LOCAL_RANK-th device of CUDA_VISIBLE_DEVICES
 * (or GPU LOCAL_RANK when it is unset).  Its CPU set is the GPU's local
 * CPUs intersected with the CPUs the launcher may use (Slurm's cgroup or
 * task binding); an empty intersection, a device given as a UUID, or a
 * machine whose hwloc view has no such GPU mean no binding.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include "node/topo.h"

#include <optional>
#include <string>

namespace tidal::launch {

struct Binding {
	int gpu = -1;            /* topo::Gpu::index */
	std::string cpus;        /* "0-3,8": what the rank is bound to */
	std::string gpu_cpus;    /* the GPU's own local CPUs */
	int numa = -1;
	std::string hca;         /* nearest HCA, for NCCL_IB_HCA; "" = none */
};

class Binder {
public:
	/* Read the topology: XML if not empty, else this machine.  RET false
	 * with ERR (no hwloc, unreadable XML): then bind nothing. */
	bool load(const std::string &xml, std::string &err);
	/* The binding of LOCAL_RANK given CUDA_VISIBLE_DEVICES (VISIBLE, may
	 * be null).  RET nullopt with WHY when the rank stays unbound. */
	std::optional<Binding> for_rank(int local_rank, const char *visible,
					std::string &why) const;

private:
	std::optional<topo::Summary> summary_;
};

/* {0,1,2,5} -> "0-2,5" */
std::string cpu_list_string(const std::vector<int> &cpus);

} /* namespace tidal::launch */
