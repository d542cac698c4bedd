/*
 * tidal_topo.cc - tidal-topo: print what tidald would report about this
 * node (hwloc summary plus libibverbs ports) or about the InfiniBand fabric
 * (libibnetdisc), as JSON.  The same functions run inside tidald; this
 * program exists for tests, for checking a node by hand, and for writing a
 * topology.conf from a live fabric.
 *
 * Exit codes: 0 printed; 1 discovery failed (message on stderr); 2 usage.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <getopt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "core/placement/fabric.h"
#include "core/version.h"
#include "node/fabric_ib.h"
#include "node/topo.h"

namespace {

const char kUsage[] =
	"Usage: tidal-topo [--xml FILE] [--no-verbs]\n"
	"       tidal-topo --fabric [--ca NAME] [--port N] [--timeout-ms MS]\n"
	"                           [--topology-conf]\n"
	"Print this node's topology summary (hwloc: GPUs, NUMA nodes, HCAs,\n"
	"NVSwitches; libibverbs: HCA ports) or, with --fabric, the InfiniBand\n"
	"fabric (libibnetdisc: switches, links, node -> leaf switch) as JSON.\n"
	"  --xml FILE        summarise an hwloc XML export instead of this machine\n"
	"  --no-verbs        leave out the libibverbs port list\n"
	"  --fabric          discover the fabric from a local HCA port\n"
	"  --ca NAME         HCA to discover from (default: the first)\n"
	"  --port N          its port (default: the first active one)\n"
	"  --timeout-ms MS   per-SMP timeout (default: libibmad's)\n"
	"  --topology-conf   print the derived tree as Slurm topology.conf lines\n"
	"  -h, --help, -V, --version\n";

[[noreturn]] void usage_error(const std::string &msg)
{
	std::fprintf(stderr, "tidal-topo: %s\n%s", msg.c_str(), kUsage);
	std::exit(2);
}

int number(const char *opt, const char *v, long lo, long hi)
{
	char *end;
	long n = std::strtol(v, &end, 10);
	if (end == v || *end || n < lo || n > hi)
		usage_error(std::string(opt) + " " + v + ": not an integer in " +
			    std::to_string(lo) + ".." + std::to_string(hi));
	return (int)n;
}

struct Options {
	std::string xml;
	bool fabric = false, verbs = true, conf = false;
	tidal::topo::FabricOptions fab;
};

Options parse(int argc, char **argv)
{
	enum { O_XML = 256, O_NOVERBS, O_FABRIC, O_CA, O_PORT, O_TMO, O_CONF };
	static const struct option longopts[] = {
		{"xml", required_argument, nullptr, O_XML},
		{"no-verbs", no_argument, nullptr, O_NOVERBS},
		{"fabric", no_argument, nullptr, O_FABRIC},
		{"ca", required_argument, nullptr, O_CA},
		{"port", required_argument, nullptr, O_PORT},
		{"timeout-ms", required_argument, nullptr, O_TMO},
		{"topology-conf", no_argument, nullptr, O_CONF},
		{"help", no_argument, nullptr, 'h'},
		{"version", no_argument, nullptr, 'V'},
		{nullptr, 0, nullptr, 0},
	};
	Options o;
	int c;
	while ((c = getopt_long(argc, argv, "hV", longopts, nullptr)) != -1) {
		switch (c) {
		case O_XML: o.xml = optarg; break;
		case O_NOVERBS: o.verbs = false; break;
		case O_FABRIC: o.fabric = true; break;
		case O_CA: o.fab.ca = optarg; break;
		case O_PORT: o.fab.port = number("--port", optarg, 1, 254); break;
		case O_TMO:
			o.fab.timeout_ms = number("--timeout-ms", optarg, 1, 60000);
			break;
		case O_CONF: o.conf = true; break;
		case 'h': std::fputs(kUsage, stdout); std::exit(0);
		case 'V': std::puts("tidal-topo " TIDAL_VERSION); std::exit(0);
		default: usage_error("bad option");
		}
	}
	if (optind < argc)
		usage_error(std::string("unexpected argument ") + argv[optind]);
	if (o.fabric && !o.xml.empty())
		usage_error("--fabric and --xml exclude each other");
	if (o.conf && !o.fabric)
		usage_error("--topology-conf needs --fabric");
	return o;
}

/* SwitchName=leaf1 Nodes=n1,n2 / SwitchName=spine0 Switches=leaf1,leaf2 */
void print_topology_conf(const tidal::fabric::SwitchTree &t)
{
	for (size_t i = 0; i < t.switches.size(); i++) {
		const tidal::fabric::TreeSwitch &s = t.switches[i];
		std::string kids;
		for (const tidal::fabric::TreeSwitch &k : t.switches)
			if (k.parent == (int)i)
				kids += (kids.empty() ? "" : ",") + k.name;
		std::string nodes;
		for (const std::string &n : s.nodes)
			nodes += (nodes.empty() ? "" : ",") + n;
		std::printf("SwitchName=%s", s.name.c_str());
		if (!kids.empty())
			std::printf(" Switches=%s", kids.c_str());
		if (!nodes.empty())
			std::printf(" Nodes=%s", nodes.c_str());
		std::printf("\n");
	}
	for (const std::string &w : t.warnings)
		std::printf("# %s\n", w.c_str());
}

int run(const Options &o)
{
	using namespace tidal;
	if (o.fabric) {
		fabric::Fabric f = topo::discover_fabric(o.fab);
		fabric::SwitchTree t = fabric::build_tree(f);
		if (o.conf)
			print_topology_conf(t);
		else
			std::printf("%s\n", fabric::to_json(f, &t).c_str());
		return 0;
	}
	topo::Summary s = o.xml.empty() ? topo::summarize_live()
					: topo::summarize_xml(o.xml);
	std::string js = topo::to_json(s);
	if (o.verbs && o.xml.empty()) {
		std::vector<std::string> warn;
		std::string v = topo::verbs_to_json(topo::hcas_from_verbs(&warn));
		for (const std::string &w : warn)
			std::fprintf(stderr, "tidal-topo: %s\n", w.c_str());
		js.pop_back(); /* the closing brace */
		js += ",\"verbs\":" + v + "}";
	}
	std::printf("%s\n", js.c_str());
	return 0;
}

} /* namespace */

int main(int argc, char **argv)
{
	Options o = parse(argc, argv);
	try {
		return run(o);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "tidal-topo: %s\n", e.what());
		return 1;
	}
}
