/*
 * cluster_io.cc - slurm.conf, gres.conf, topology.conf and anchor specs.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "sim/cluster_io.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "core/params.h"
#include "sim/csv.h"

namespace tidal::sim {

namespace fs = std::filesystem;

/* Split "a,b[1-2,4],c" at top-level commas. */
static std::vector<std::string> split_top(const std::string &s)
{
	std::vector<std::string> out;
	std::string cur;
	int depth = 0;
	for (char c : s) {
		if (c == '[')
			depth++;
		if (c == ']')
			depth--;
		if (c == ',' && depth == 0) {
			out.push_back(cur);
			cur.clear();
		} else {
			cur += c;
		}
	}
	if (!cur.empty())
		out.push_back(cur);
	return out;
}

static long parse_index(const std::string &s, const std::string &file,
			long line)
{
	if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
		input_error(file, line, "bad hostlist number '" + s + "'");
	return std::strtol(s.c_str(), nullptr, 10);
}

std::vector<std::string> expand_hostlist(const std::string &list,
					 const std::string &file, long line)
{
	std::vector<std::string> out;
	for (const std::string &item : split_top(list)) {
		size_t lb = item.find('[');
		if (lb == std::string::npos) {
			out.push_back(item);
			continue;
		}
		size_t rb = item.find(']', lb);
		if (rb == std::string::npos)
			input_error(file, line,
				    "unbalanced '[' in hostlist '" + item + "'");
		std::string prefix = item.substr(0, lb);
		std::string suffix = item.substr(rb + 1);
		std::stringstream ranges(item.substr(lb + 1, rb - lb - 1));
		std::string r;
		while (std::getline(ranges, r, ',')) {
			size_t dash = r.find('-');
			std::string a = r.substr(0, dash);
			std::string b = dash == std::string::npos
						? a
						: r.substr(dash + 1);
			long lo = parse_index(a, file, line);
			long hi = parse_index(b, file, line);
			if (hi < lo || hi - lo > 1000000)
				input_error(file, line,
					    "bad hostlist range '" + r + "'");
			for (long i = lo; i <= hi; i++) {
				std::string num = std::to_string(i);
				if (num.size() < a.size())
					num.insert(0, a.size() - num.size(), '0');
				for (const std::string &rest :
				     expand_hostlist(suffix.empty()
							     ? std::string()
							     : suffix,
						     file, line))
					out.push_back(prefix + num + rest);
				if (suffix.empty())
					out.push_back(prefix + num);
			}
		}
	}
	return out;
}

/* One "Key=Value Key=Value" line as an ordered list of pairs. */
using KvLine = std::vector<std::pair<std::string, std::string>>;

static KvLine split_kv(const std::string &line, const std::string &file,
		       long lineno)
{
	KvLine out;
	std::istringstream in(line);
	std::string word;
	while (in >> word) {
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

/* GPUs in a Gres= value: "gpu:4", "gpu:a100:4", "gpu:a100:4(S:0-1),mps:100". */
static int gres_gpus(const std::string &gres, const std::string &file,
		     long line)
{
	int total = 0;
	for (const std::string &item : split_top(gres)) {
		std::string g = item.substr(0, item.find('('));
		if (g.rfind("gpu", 0) != 0)
			continue;
		size_t colon = g.rfind(':');
		if (colon == std::string::npos)
			input_error(file, line,
				    "Gres=" + gres + ": gpu needs a count (gpu:N)");
		std::string n = g.substr(colon + 1);
		if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos)
			input_error(file, line,
				    "Gres=" + gres + ": '" + n + "' is not a GPU count");
		total += std::atoi(n.c_str());
	}
	return total;
}

static long to_long(const std::string &key, const std::string &v,
		    const std::string &file, long line)
{
	char *end = nullptr;
	long n = std::strtol(v.c_str(), &end, 10);
	if (v.empty() || *end || n < 0)
		input_error(file, line,
			    key + "=" + v + ": must be a non-negative integer");
	return n;
}

static void read_gres_conf(Cluster &c, const std::string &path)
{
	std::string text = read_file(path);
	std::map<std::string, int> counts;
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
		if (count < 0)
			count = file.empty() ? 1
					     : (long)expand_hostlist(file, path,
								     lineno)
						       .size();
		for (const std::string &n : expand_hostlist(nodes, path, lineno))
			counts[n] += (int)count;
	}
	for (auto &[name, n] : counts) {
		int i = c.find_node(name);
		if (i >= 0)
			c.nodes[i].gpus = n;
	}
}

static void read_topology_conf(Cluster &c, const std::string &path)
{
	std::string text = read_file(path);
	std::map<std::string, int> by_name;
	std::vector<std::pair<int, std::string>> child_lists;
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
		for (const std::string &n : expand_hostlist(nodes, path, lineno)) {
			int ni = c.find_node(n);
			if (ni < 0)
				input_error(path, lineno,
					    "switch " + sw.name +
						    " lists unknown node '" + n + "'");
			sw.nodes.push_back(ni);
			c.nodes[ni].switch_id = id;
		}
		by_name[sw.name] = id;
		if (!switches.empty())
			child_lists.emplace_back(id, switches);
		c.switches.push_back(std::move(sw));
	}
	for (const auto &[id, list] : child_lists)
		for (const std::string &n : expand_hostlist(list, path, 0)) {
			auto it = by_name.find(n);
			if (it == by_name.end())
				input_error(path, 0,
					    "switch " + c.switches[id].name +
						    " lists unknown switch '" + n + "'");
			c.switches[id].children.push_back(it->second);
			c.switches[it->second].parent = id;
		}
	/* Levels: leaves 0, parents one above their highest child. */
	for (size_t pass = 0; pass < c.switches.size(); pass++)
		for (Switch &s : c.switches)
			for (int ch : s.children)
				s.level = std::max(s.level,
						   c.switches[ch].level + 1);
}

Cluster parse_slurm_conf(const std::string &path, const std::string &text)
{
	Cluster c;
	Node defaults;
	int default_gpus = 0;
	for (const auto &[lineno, line] : conf_lines(text)) {
		KvLine kv = split_kv(line, path, lineno);
		if (kv.empty())
			continue;
		if (kv[0].first == "partitionname") {
			std::string name = kv[0].second;
			for (const auto &[k, v] : kv)
				if (k == "nodes" && lower(v) != "all")
					for (const std::string &n :
					     expand_hostlist(v, path, lineno)) {
						int i = c.find_node(n);
						if (i >= 0 && c.nodes[i].group.empty())
							c.nodes[i].group = name;
					}
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
			if (c.find_node(name) >= 0)
				input_error(path, lineno,
					    "node '" + name + "' defined twice");
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
		read_gres_conf(c, (dir / "gres.conf").string());
	if (fs::exists(dir / "topology.conf"))
		read_topology_conf(c, (dir / "topology.conf").string());
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
	if (sw <= 0 || nps <= 0 || gpn <= 0 || sw * nps > 1000000)
		csv.fail(0, "switches, nodes per switch and GPUs per node must "
			    "be positive");
	return make_uniform_cluster((int)sw, (int)nps, (int)gpn, (int)cpus, mem);
}

/* Lucid/Helios: ",num" rows of (vc, nodes); 8 GPUs and 96 CPUs a node. */
static Cluster load_vc_csv(const Csv &csv)
{
	Cluster c;
	for (size_t r = 0; r < csv.rows(); r++) {
		std::string vc = csv.str(r, 0);
		long n = csv.integer(r, csv.need("num"));
		if (vc.empty() || n < 0)
			csv.fail(r, "a VC row needs a name and a node count >= 0");
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
