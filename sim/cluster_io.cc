/*
 * cluster_io.cc - slurm.conf, gres.conf, topology.conf and anchor specs.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "sim/cluster_io.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <unordered_map>

#include "core/model/hostlist.h"
#include "core/model/params.h"
#include "sim/csv.h"

namespace tidal::sim {

namespace fs = std::filesystem;

/* Limits that keep a typo (n[0-99999999]) from eating the machine, and
 * every sum below from overflowing an int.  No real cluster is near them. */
static constexpr long kMaxNodes = kMaxHostlistNames;
static constexpr long kMaxGpusPerNode = 65536;
static constexpr long kMaxGpus = 1L << 24;

std::vector<std::string> expand_hostlist(const std::string &list,
					 const std::string &file, long line)
{
	std::vector<std::string> out;
	std::string err;
	if (!tidal::expand_hostlist(list, &out, &err))
		input_error(file, line, err);
	return out;
}

/* One "Key=Value Key=Value" line as an ordered list of pairs.  Double
 * quotes group blanks into a value (Reason="down for repair"). */
using KvLine = std::vector<std::pair<std::string, std::string>>;

static KvLine split_kv(const std::string &line, const std::string &file,
		       long lineno)
{
	KvLine out;
	size_t i = 0;
	while ((i = line.find_first_not_of(" \t\r", i)) != std::string::npos) {
		std::string word;
		bool quoted = false;
		for (; i < line.size(); i++) {
			char c = line[i];
			if (c == '"')
				quoted = !quoted;
			else if (!quoted && (c == ' ' || c == '\t' || c == '\r'))
				break;
			else
				word += c;
		}
		if (quoted)
			input_error(file, lineno, "unbalanced '\"'");
		size_t eq = word.find('=');
		if (eq == std::string::npos || eq == 0)
			input_error(file, lineno,
				    "'" + word + "' is not Key=Value");
		out.emplace_back(lower(word.substr(0, eq)), word.substr(eq + 1));
	}
	return out;
}

static std::vector<std::pair<long, std::string>>
conf_lines(const std::string &text)
{
	std::vector<std::pair<long, std::string>> out;
	std::istringstream in(text);
	std::string line;
	long n = 0;
	while (std::getline(in, line)) {
		n++;
		size_t hash = line.find('#');
		if (hash != std::string::npos)
			line.resize(hash);
		if (line.find_first_not_of(" \t\r") == std::string::npos)
			continue;
		out.emplace_back(n, line);
	}
	return out;
}

/* GPUs in a Gres= value: "gpu:4", "gpu:a100:4", "gpu:a100:4(S:0-1),mps:100".
 * A gpu entry with no count ("gpu", "gpu:a100") is one GPU, as in
 * slurm.conf(5). */
static int gres_gpus(const std::string &gres, const std::string &file,
		     long line)
{
	long total = 0;
	for (const std::string &item : split_top_level(gres)) {
		std::string g = item.substr(0, item.find('('));
		std::vector<std::string> f;
		std::stringstream in(g);
		std::string part;
		while (std::getline(in, part, ':'))
			f.push_back(part);
		if (f.empty() || f[0] != "gpu")
			continue;
		long n = 1;
		const std::string &last = f.back();
		bool digits = !last.empty() &&
			      last.find_first_not_of("0123456789") ==
				      std::string::npos;
		if (f.size() > 1 && digits && last.size() <= 9)
			n = std::strtol(last.c_str(), nullptr, 10);
		else if (f.size() > 2 || digits)
			input_error(file, line,
				    "Gres=" + gres + ": '" + last +
					    "' is not a GPU count");
		total += n;
		if (total > kMaxGpusPerNode)
			input_error(file, line,
				    "Gres=" + gres + ": more than " +
					    std::to_string(kMaxGpusPerNode) +
					    " GPUs on one node");
	}
	return (int)total;
}

static long to_long(const std::string &key, const std::string &v,
		    const std::string &file, long line)
{
	char *end = nullptr;
	errno = 0;
	long n = std::strtol(v.c_str(), &end, 10);
	if (v.empty() || *end || errno || n < 0 || n > INT_MAX)
		input_error(file, line,
			    key + "=" + v + ": must be an integer in [0, " +
				    std::to_string(INT_MAX) + "]");
	return n;
}

/* Node name -> index, so large clusters load in linear time. */
using NodeIndex = std::unordered_map<std::string, int>;

static void read_gres_conf(Cluster &c, const NodeIndex &index,
			   const std::string &path)
{
	std::string text = read_file(path);
	std::map<int, long> counts;
	for (const auto &[lineno, line] : conf_lines(text)) {
		KvLine kv = split_kv(line, path, lineno);
		std::string nodes, name, file;
		long count = -1;
		for (const auto &[k, v] : kv) {
			if (k == "nodename")
				nodes = v;
			else if (k == "name")
				name = v;
			else if (k == "file")
				file = v;
			else if (k == "count")
				count = to_long("Count", v, path, lineno);
		}
		if (name != "gpu" || nodes.empty())
			continue;
		/* gres.conf(5): Count defaults to the number of File= entries,
		 * else one. */
		if (count < 0)
			count = file.empty() ? 1
					     : (long)expand_hostlist(file, path,
								     lineno)
						       .size();
		for (const std::string &n : expand_hostlist(nodes, path, lineno)) {
			auto it = index.find(n);
			if (it == index.end())
				continue;
			long &sum = counts[it->second];
			sum += count;
			if (sum > kMaxGpusPerNode)
				input_error(path, lineno,
					    "more than " +
						    std::to_string(kMaxGpusPerNode) +
						    " GPUs on node " + n);
		}
	}
	for (const auto &[i, n] : counts)
		c.nodes[i].gpus = (int)n;
}

/* Levels: leaves 0, a parent one above its highest child.  Children are
 * settled before their parent (Kahn's order); a switch never settled is
 * on a cycle. */
static void switch_levels(Cluster &c, const std::string &path)
{
	size_t n = c.switches.size();
	std::vector<size_t> unsettled(n);
	std::vector<int> ready;
	for (size_t s = 0; s < n; s++) {
		unsettled[s] = c.switches[s].children.size();
		if (!unsettled[s])
			ready.push_back((int)s);
	}
	size_t settled = 0;
	while (!ready.empty()) {
		int s = ready.back();
		ready.pop_back();
		settled++;
		int p = c.switches[s].parent;
		if (p < 0)
			continue;
		c.switches[p].level =
			std::max(c.switches[p].level, c.switches[s].level + 1);
		if (--unsettled[p] == 0)
			ready.push_back(p);
	}
	if (settled < n)
		for (size_t s = 0; s < n; s++)
			if (unsettled[s])
				input_error(path, 0,
					    "switch " + c.switches[s].name +
						    " is on a cycle of "
						    "Switches= lists");
}

static void read_topology_conf(Cluster &c, const NodeIndex &index,
			       const std::string &path)
{
	std::string text = read_file(path);
	std::map<std::string, int> by_name;
	struct ChildList {
		int id;
		long line;
		std::string list;
	};
	std::vector<ChildList> child_lists;
	for (const auto &[lineno, line] : conf_lines(text)) {
		KvLine kv = split_kv(line, path, lineno);
		Switch sw;
		std::string nodes, switches;
		for (const auto &[k, v] : kv) {
			if (k == "switchname")
				sw.name = v;
			else if (k == "nodes")
				nodes = v;
			else if (k == "switches")
				switches = v;
			else if (k == "linkspeed")
				sw.link_gbps = (double)to_long("LinkSpeed", v,
							       path, lineno);
		}
		if (sw.name.empty())
			input_error(path, lineno, "line has no SwitchName=");
		int id = (int)c.switches.size();
		if (!by_name.emplace(sw.name, id).second)
			input_error(path, lineno,
				    "switch " + sw.name + " defined twice");
		for (const std::string &n : expand_hostlist(nodes, path, lineno)) {
			auto it = index.find(n);
			if (it == index.end())
				input_error(path, lineno,
					    "switch " + sw.name +
						    " lists unknown node '" + n + "'");
			Node &node = c.nodes[it->second];
			/* The switch being read is not in c.switches yet. */
			if (node.switch_id == id)
				input_error(path, lineno,
					    "switch " + sw.name + " lists node " +
						    n + " twice");
			if (node.switch_id >= 0)
				input_error(path, lineno,
					    "node " + n + " is already on switch " +
						    c.switches[node.switch_id].name);
			sw.nodes.push_back(it->second);
			node.switch_id = id;
		}
		if (!switches.empty())
			child_lists.push_back({id, lineno, switches});
		c.switches.push_back(std::move(sw));
	}
	for (const ChildList &cl : child_lists)
		for (const std::string &n : expand_hostlist(cl.list, path, cl.line)) {
			auto it = by_name.find(n);
			Switch &sw = c.switches[cl.id];
			if (it == by_name.end())
				input_error(path, cl.line,
					    "switch " + sw.name +
						    " lists unknown switch '" + n + "'");
			Switch &child = c.switches[it->second];
			if (child.parent >= 0 || it->second == cl.id)
				input_error(path, cl.line,
					    "switch " + child.name +
						    (it->second == cl.id
							     ? " lists itself"
							     : " already has parent " +
								       c.switches[child.parent]
									       .name));
			sw.children.push_back(it->second);
			child.parent = cl.id;
		}
	switch_levels(c, path);
}

/* PartitionName=P Nodes=...: a node's group is its first partition. */
static void read_partition(Cluster &c, const NodeIndex &index,
			   const KvLine &kv, const std::string &path,
			   long lineno)
{
	const std::string &name = kv[0].second;
	if (lower(name) == "default")
		return;
	for (const auto &[k, v] : kv) {
		if (k != "nodes")
			continue;
		if (lower(v) == "all") {
			for (Node &n : c.nodes)
				if (n.group.empty())
					n.group = name;
			continue;
		}
		for (const std::string &n : expand_hostlist(v, path, lineno)) {
			auto it = index.find(n);
			if (it != index.end() && c.nodes[it->second].group.empty())
				c.nodes[it->second].group = name;
		}
	}
}

/* Refuse clusters whose GPU total would overflow the engine's ints. */
static void check_size(const Cluster &c, const std::string &path)
{
	long gpus = 0;
	for (const Node &n : c.nodes)
		gpus += n.gpus;
	if ((long)c.nodes.size() > kMaxNodes || gpus > kMaxGpus)
		input_error(path, 0,
			    "cluster too large: " + std::to_string(c.nodes.size()) +
				    " nodes, " + std::to_string(gpus) +
				    " GPUs (at most " + std::to_string(kMaxNodes) +
				    " and " + std::to_string(kMaxGpus) + ")");
}

Cluster parse_slurm_conf(const std::string &path, const std::string &text)
{
	Cluster c;
	NodeIndex index;
	Node defaults;
	int default_gpus = 0;
	for (const auto &[lineno, line] : conf_lines(text)) {
		KvLine kv = split_kv(line, path, lineno);
		if (kv.empty())
			continue;
		if (kv[0].first == "partitionname") {
			read_partition(c, index, kv, path, lineno);
			continue;
		}
		if (kv[0].first != "nodename")
			continue;
		Node proto = defaults;
		int gpus = default_gpus;
		for (const auto &[k, v] : kv) {
			if (k == "cpus")
				proto.cpus = (int)to_long("CPUs", v, path, lineno);
			else if (k == "realmemory")
				proto.mem_mb = (double)to_long("RealMemory", v,
							       path, lineno);
			else if (k == "gres")
				gpus = gres_gpus(v, path, lineno);
		}
		if (lower(kv[0].second) == "default") {
			defaults = proto;
			default_gpus = gpus;
			continue;
		}
		for (const std::string &name :
		     expand_hostlist(kv[0].second, path, lineno)) {
			if (!index.emplace(name, (int)c.nodes.size()).second)
				input_error(path, lineno,
					    "node '" + name + "' defined twice");
			if ((long)c.nodes.size() >= kMaxNodes)
				input_error(path, lineno,
					    "more than " + std::to_string(kMaxNodes) +
						    " nodes");
			Node n = proto;
			n.name = name;
			n.gpus = gpus;
			c.nodes.push_back(n);
		}
	}
	if (c.nodes.empty())
		input_error(path, 0, "no NodeName= lines: not a slurm.conf "
				     "describing any node");
	fs::path dir = fs::path(path).parent_path();
	if (fs::exists(dir / "gres.conf"))
		read_gres_conf(c, index, (dir / "gres.conf").string());
	if (fs::exists(dir / "topology.conf"))
		read_topology_conf(c, index, (dir / "topology.conf").string());
	check_size(c, path);
	if (c.total_gpus() == 0)
		input_error(path, 0, "the cluster has no GPUs (no Gres=gpu:N "
				     "on any node, nor in gres.conf)");
	return c;
}

Cluster make_uniform_cluster(int switches, int nodes_per_switch, int gpus,
			     int cpus, double mem_mb)
{
	Cluster c;
	for (int s = 0; s < switches; s++) {
		Switch sw;
		sw.name = "s" + std::to_string(s);
		for (int n = 0; n < nodes_per_switch; n++) {
			Node node;
			node.name = "n" + std::to_string(s * nodes_per_switch + n);
			node.gpus = gpus;
			node.cpus = cpus;
			node.mem_mb = mem_mb;
			node.switch_id = s;
			sw.nodes.push_back((int)c.nodes.size());
			c.nodes.push_back(node);
		}
		c.switches.push_back(sw);
	}
	return c;
}

static Cluster load_spec_csv(const Csv &csv)
{
	if (csv.rows() != 1)
		input_error(csv.file(), 0, "a cluster spec has exactly one row");
	long sw = csv.integer(0, csv.need("num_switch"));
	long nps = csv.integer(0, csv.need("num_node_p_switch"));
	long gpn = csv.integer(0, csv.need("num_gpu_p_node"));
	int cpu_col = csv.col("num_cpu_p_node"), mem_col = csv.col("mem_p_node");
	long cpus = cpu_col >= 0 ? csv.integer(0, cpu_col) : 0;
	double mem = mem_col >= 0 ? csv.num(0, mem_col) * 1024 : 0;
	if (sw <= 0 || nps <= 0 || gpn <= 0)
		csv.fail(0, "switches, nodes per switch and GPUs per node must "
			    "be positive");
	if (sw > kMaxNodes || nps > kMaxNodes || sw * nps > kMaxNodes ||
	    gpn > kMaxGpusPerNode || sw * nps * gpn > kMaxGpus ||
	    cpus < 0 || cpus > INT_MAX || mem < 0)
		csv.fail(0, "cluster too large, or negative CPUs or memory");
	return make_uniform_cluster((int)sw, (int)nps, (int)gpn, (int)cpus, mem);
}

/* Lucid/Helios: ",num" rows of (vc, nodes); 8 GPUs and 96 CPUs a node. */
static Cluster load_vc_csv(const Csv &csv)
{
	Cluster c;
	std::map<std::string, long> seen;
	int c_num = csv.need("num");
	for (size_t r = 0; r < csv.rows(); r++) {
		std::string vc = csv.str(r, 0);
		long n = csv.integer(r, c_num);
		if (vc.empty() || n < 0)
			csv.fail(r, "a VC row needs a name and a node count >= 0");
		if (!seen.emplace(vc, csv.line(r)).second)
			csv.fail(r, "VC " + vc + " is already on line " +
					    std::to_string(seen[vc]));
		if (n > kMaxNodes - (long)c.nodes.size())
			csv.fail(r, "more than " + std::to_string(kMaxNodes) +
					    " nodes");
		for (long i = 0; i < n; i++) {
			Node node;
			node.name = vc + "-" + std::to_string(i);
			node.gpus = 8;
			node.cpus = 96;
			node.group = vc;
			c.nodes.push_back(node);
		}
	}
	if (c.nodes.empty())
		input_error(csv.file(), 0, "no VC has any node");
	return c;
}

Cluster load_cluster(const std::string &path)
{
	std::string text = read_file(path);
	std::string first = text.substr(0, text.find('\n'));
	if (first.find("num_switch") != std::string::npos)
		return load_spec_csv(Csv(path, text));
	if (first == ",num" || first == ",num\r" ||
	    first.rfind("vc,num", 0) == 0)
		return load_vc_csv(Csv(path, text));
	return parse_slurm_conf(path, text);
}

} /* namespace tidal::sim */
