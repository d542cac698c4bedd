/*
 * fabric.h - an InfiniBand fabric as the node agents discover it, and the
 * switch tree the engine derives from it when topology.conf gives none.
 *
 * A Fabric is what libibnetdisc sees (node/fabric_ib.cc fills it):
 * switches and channel adapters by GUID with their node descriptions, and
 * the links between ports.  It travels as JSON (agent -> plugin), so this
 * file also reads and writes that JSON.  Nothing here links libibnetdisc or
 * includes a Slurm header: the plugin and the simulator use it as is.
 *
 * From a Fabric, build_tree() derives the tree Slurm's topology/tree plugin
 * would be given by topology.conf (SwitchName=... Switches=... Nodes=...):
 *
 *            spine0  (level 1)
 *           /      \
 *       leaf1      leaf2      (level 0: switches with a CA attached)
 *       /   \      /   \
 *      n1   n2    n3   n4     (Slurm node = first word of the CA's
 *                              node description, "n1 mlx5_0" -> n1)
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/model/model.h"

namespace tidal::fabric {

struct FabricSwitch {
	std::uint64_t guid = 0;
	std::string desc; /* node description, e.g. "MF0;leaf1:QM8700/U1" */
	int ports = 0;
};

struct FabricCa {
	std::uint64_t guid = 0;
	std::string desc; /* "<hostname> <hca>", e.g. "n1 mlx5_0" */
	int ports = 0;
};

/* One cable: port A_PORT of node A to port B_PORT of node B. */
struct FabricLink {
	std::uint64_t a = 0;
	int a_port = 0;
	std::uint64_t b = 0;
	int b_port = 0;
	double gbps = 0; /* active data rate, 0 = unknown */
};

struct Fabric {
	std::string source; /* "ibnetdisc", "merged", ... */
	std::vector<FabricSwitch> switches;
	std::vector<FabricCa> cas;
	std::vector<FabricLink> links;
};

/* A switch of the derived tree; indices are into SwitchTree::switches. */
struct TreeSwitch {
	std::string name; /* Tidal's name: sanitised description or ib-<guid> */
	std::uint64_t guid = 0;
	int parent = -1;
	int level = 0;    /* 0 = leaf */
	double link_gbps = 0;
	std::vector<std::string> nodes; /* Slurm node names, sorted */
};

struct SwitchTree {
	std::vector<TreeSwitch> switches; /* by level, then name */
	std::map<std::string, int> node_leaf; /* node name -> leaf index */
	std::vector<std::string> warnings;
	int find(const std::string &name) const;
};

/* "0x0002c90300a1b2c3" (16 hex digits). */
std::string guid_str(std::uint64_t guid);
/* Slurm node name from a CA's node description: its first word, cut at the
 * first '.' (a FQDN).  RET "" when the description has none. */
std::string node_of_ca(const std::string &desc);

/*
 * Derive the tree.  Leaves are the switches with a CA attached; a switch's
 * level is its hop distance from the nearest leaf; its parent is the
 * neighbour one level up with the lowest name (Slurm's tree has one parent
 * per switch; in a fat tree every spine reaches every leaf, so the choice
 * does not change which nodes share a subtree).  A node with HCAs on
 * several leaves (rail-optimised fabrics) gets the leaf most of them use,
 * ties to the lowest name, with a warning.  Deterministic.
 */
SwitchTree build_tree(const Fabric &f);

/* Union of B into A by GUID (every agent of one subnet sees the same
 * fabric; agents on different subnets see parts of it). */
void merge(Fabric *a, const Fabric &b);

/* JSON text of F, with TREE's switches and node_leaf when TREE != nullptr. */
std::string to_json(const Fabric &f, const SwitchTree *tree);
/* Read the JSON of to_json() (its "tree" is ignored: it is derived).
 * RET false with ERR = "<origin>: <what is wrong>". */
bool from_json(const std::string &text, const std::string &origin,
	       Fabric *out, std::string *err);

/*
 * Put TREE into C's switches and its nodes' switch_id, as topology.conf
 * would.  Nodes of C that the fabric does not name keep switch_id -1.
 * RET the number of C's nodes given a leaf; 0 leaves C unchanged.
 */
int apply_tree(const SwitchTree &tree, Cluster *c);

} /* namespace tidal::fabric */
