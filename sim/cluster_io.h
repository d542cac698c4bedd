/*
 * cluster_io.h - build a Cluster from slurm.conf or an anchor's spec.
 *
 * Accepted inputs (detected from the file):
 *   slurm.conf       NodeName= lines (hostlists, Gres=gpu[:type]:N, CPUs,
 *                    RealMemory, NodeName=DEFAULT), PartitionName= lines
 *                    (a node's group is its first partition); gres.conf
 *                    and topology.conf beside it are read when present.
 *   cluster spec     ElasticFlow/Muri CSV: num_switch,num_node_p_switch,
 *                    num_gpu_p_node,num_cpu_p_node,mem_p_node
 *   VC config        Lucid/Helios CSV ",num": one row per virtual cluster
 *                    and its node count, 8 GPUs per node.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <string>
#include <vector>

#include "core/model/model.h"

namespace tidal::sim {

/* Expand a Slurm hostlist ("n[01-03,7],gpu5") into names. Throws
 * InputError naming FILE:LINE when malformed. */
std::vector<std::string> expand_hostlist(const std::string &list,
					 const std::string &file, long line);

Cluster load_cluster(const std::string &path);
Cluster parse_slurm_conf(const std::string &path, const std::string &text);

/* A uniform cluster: SWITCHES x NODES_PER_SWITCH nodes of GPUS each. */
Cluster make_uniform_cluster(int switches, int nodes_per_switch, int gpus,
			     int cpus, double mem_mb);

} /* namespace tidal::sim */
