/*
 * fuzz_cluster.cc - libFuzzer target for load_cluster(): slurm.conf with
 * gres.conf and topology.conf beside it, the cluster-spec CSV and the VC
 * CSV (load_cluster tells them apart by the first line).
 *
 * The input is split at lines reading "%%": the first part is the file
 * given to load_cluster, the second gres.conf, the third topology.conf
 * (absent parts: no such file).  They are written to a private temporary
 * directory, since the loader finds gres.conf and topology.conf by path.
 * InputError is a normal outcome; anything else, or a cluster that breaks
 * the placement code, is a bug.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "core/placement/placement.h"
#include "sim/cluster_io.h"
#include "sim/csv.h"

using namespace tidal;
using namespace tidal::sim;

static std::string dir;

static void cleanup()
{
	for (const char *f : {"/slurm.conf", "/gres.conf", "/topology.conf"})
		std::remove((dir + f).c_str());
	rmdir(dir.c_str());
}

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
	char tmpl[] = "/tmp/tidal-fuzz-cluster.XXXXXX";
	if (!mkdtemp(tmpl))
		std::abort();
	dir = tmpl;
	std::atexit(cleanup);
	return 0;
}

static void put(const std::string &name, const std::string *text)
{
	std::string path = dir + "/" + name;
	if (!text) {
		std::remove(path.c_str());
		return;
	}
	std::ofstream out(path, std::ios::binary | std::ios::trunc);
	out << *text;
	if (!out)
		std::abort();
}

/* Every scheme, on a few sizes: a placement is either refused or gives
 * exactly the GPUs asked for on free nodes, and Test mode changes
 * nothing. */
static void check_placement(const Cluster &c)
{
	int total = c.total_gpus();
	for (int s = 0; s <= (int)PlacementScheme::Count; s++) {
		FreeMap map(c);
		for (int g : {1, 2, 3, 8, total / 2, total - 1, total}) {
			if (g <= 0 || g > total)
				continue;
			int before = map.free_total();
			auto t = map.place(g, (PlacementScheme)s, PlaceMode::Test);
			if (map.free_total() != before)
				std::abort();
			auto p = map.place(g, (PlacementScheme)s);
			if (t != p)
				std::abort();
			if (!p)
				continue;
			if (placement_gpus(*p) != g ||
			    map.free_total() != before - g)
				std::abort();
			for (int n = 0; n < (int)c.nodes.size(); n++)
				if (map.free_on(n) < 0)
					std::abort();
			map.release(*p);
		}
	}
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
				      std::size_t size)
{
	std::string text(reinterpret_cast<const char *>(data), size);
	std::vector<std::string> parts(1);
	size_t at = 0;
	while (at <= text.size() && parts.size() <= 3) {
		size_t nl = text.find('\n', at);
		std::string line = text.substr(at, nl == std::string::npos
							   ? std::string::npos
							   : nl - at);
		if (line == "%%")
			parts.emplace_back();
		else
			parts.back() += line + "\n";
		if (nl == std::string::npos)
			break;
		at = nl + 1;
	}
	put("slurm.conf", &parts[0]);
	put("gres.conf", parts.size() > 1 ? &parts[1] : nullptr);
	put("topology.conf", parts.size() > 2 ? &parts[2] : nullptr);
	Cluster c;
	try {
		c = load_cluster(dir + "/slurm.conf");
	} catch (const InputError &) {
		return 0;
	}
	if (c.nodes.empty() || c.total_gpus() <= 0)
		std::abort();
	for (const Node &n : c.nodes)
		if (n.gpus < 0 || n.switch_id >= (int)c.switches.size())
			std::abort();
	for (const Switch &s : c.switches)
		if (s.parent >= (int)c.switches.size() || s.level < 0)
			std::abort();
	if (c.nodes.size() <= 4096)
		check_placement(c);
	return 0;
}
