/*
 * fabric.cc - fabric JSON in and out, and the switch tree derived from the
 * links (see fabric.h for the rules).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/placement/fabric.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <set>

#include <json-c/json.h>

namespace tidal::fabric {

std::string guid_str(std::uint64_t guid)
{
	char b[24];
	std::snprintf(b, sizeof(b), "0x%016" PRIx64, guid);
	return b;
}

std::string node_of_ca(const std::string &desc)
{
	size_t b = desc.find_first_not_of(" \t");
	if (b == std::string::npos)
		return "";
	size_t e = desc.find_first_of(" \t.", b);
	return desc.substr(b, e == std::string::npos ? e : e - b);
}

int SwitchTree::find(const std::string &name) const
{
	for (size_t i = 0; i < switches.size(); i++)
		if (switches[i].name == name)
			return (int)i;
	return -1;
}

/* topology.conf switch names are single words: keep [A-Za-z0-9_.-], turn
 * the rest into '_'.  "MF0;leaf1:QM8700/U1" -> "MF0_leaf1_QM8700_U1". */
static std::string sanitise(const std::string &desc)
{
	std::string s;
	for (char ch : desc) {
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' ||
			  ch == '.';
		s += ok ? ch : '_';
	}
	size_t b = s.find_first_not_of('_'), e = s.find_last_not_of('_');
	return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

namespace {

/* The graph of one fabric, switches indexed in GUID order. */
struct Graph {
	std::vector<const FabricSwitch *> sw;
	std::map<std::uint64_t, int> sw_index;
	std::map<std::uint64_t, const FabricCa *> ca;
	std::vector<std::set<int>> up_down;              /* switch neighbours */
	std::vector<std::vector<const FabricCa *>> hcas; /* CAs per switch */
	std::vector<double> gbps;                        /* fastest link */
};

Graph make_graph(const Fabric &f)
{
	Graph g;
	for (const FabricSwitch &s : f.switches)
		g.sw.push_back(&s);
	std::sort(g.sw.begin(), g.sw.end(),
		  [](auto *x, auto *y) { return x->guid < y->guid; });
	for (size_t i = 0; i < g.sw.size(); i++)
		g.sw_index[g.sw[i]->guid] = (int)i;
	for (const FabricCa &c : f.cas)
		g.ca[c.guid] = &c;
	g.up_down.resize(g.sw.size());
	g.hcas.resize(g.sw.size());
	g.gbps.assign(g.sw.size(), 0);
	for (const FabricLink &l : f.links) {
		auto sa = g.sw_index.find(l.a), sb = g.sw_index.find(l.b);
		int a = sa == g.sw_index.end() ? -1 : sa->second;
		int b = sb == g.sw_index.end() ? -1 : sb->second;
		if (a >= 0 && b >= 0 && a != b) {
			g.up_down[a].insert(b);
			g.up_down[b].insert(a);
		}
		for (auto [s, other] : {std::pair{a, l.b}, std::pair{b, l.a}}) {
			if (s < 0)
				continue;
			g.gbps[s] = std::max(g.gbps[s], l.gbps);
			auto c = g.ca.find(other);
			if (c != g.ca.end())
				g.hcas[s].push_back(c->second);
		}
	}
	return g;
}

/* Names: the sanitised description where it is non-empty and unique,
 * else ib-<guid>. */
std::vector<std::string> switch_names(const Graph &g)
{
	std::map<std::string, int> uses;
	for (const FabricSwitch *s : g.sw)
		uses[sanitise(s->desc)]++;
	std::vector<std::string> names;
	for (const FabricSwitch *s : g.sw) {
		std::string n = sanitise(s->desc);
		if (n.empty() || uses[n] > 1) {
			char b[24];
			std::snprintf(b, sizeof(b), "ib-%016" PRIx64, s->guid);
			n = b;
		}
		names.push_back(n);
	}
	return names;
}

/* Hop distance from the nearest switch with a CA; -1 = unreachable. */
std::vector<int> levels(const Graph &g)
{
	std::vector<int> lv(g.sw.size(), -1);
	std::deque<int> q;
	for (size_t i = 0; i < g.sw.size(); i++)
		if (!g.hcas[i].empty()) {
			lv[i] = 0;
			q.push_back((int)i);
		}
	while (!q.empty()) {
		int s = q.front();
		q.pop_front();
		for (int n : g.up_down[s])
			if (lv[n] < 0) {
				lv[n] = lv[s] + 1;
				q.push_back(n);
			}
	}
	return lv;
}

/* Each node's leaf by majority of its HCAs (ties to the lowest name). */
void assign_nodes(const Graph &g, const std::vector<std::string> &names,
		  const std::vector<int> &lv, SwitchTree *t)
{
	std::map<std::string, std::map<std::string, int>> votes;
	for (size_t s = 0; s < g.sw.size(); s++) {
		if (lv[s] != 0)
			continue;
		for (const FabricCa *c : g.hcas[s]) {
			std::string node = node_of_ca(c->desc);
			if (node.empty()) {
				t->warnings.push_back(
					"CA " + guid_str(c->guid) +
					": empty node description; not mapped "
					"to a Slurm node");
				continue;
			}
			votes[node][names[s]]++;
		}
	}
	for (auto &[node, by_leaf] : votes) {
		std::string best;
		int most = 0;
		for (auto &[leaf, n] : by_leaf) /* map order: lowest name wins */
			if (n > most)
				best = leaf, most = n;
		if (by_leaf.size() > 1)
			t->warnings.push_back(
				"node " + node + ": HCAs on " +
				std::to_string(by_leaf.size()) +
				" leaf switches; using " + best);
		int i = t->find(best);
		t->node_leaf[node] = i;
		t->switches[i].nodes.push_back(node);
	}
}

} /* namespace */

SwitchTree build_tree(const Fabric &f)
{
	SwitchTree t;
	Graph g = make_graph(f);
	std::vector<std::string> names = switch_names(g);
	std::vector<int> lv = levels(g);
	std::vector<int> order;
	for (size_t i = 0; i < g.sw.size(); i++) {
		if (lv[i] >= 0)
			order.push_back((int)i);
		else
			t.warnings.push_back("switch " + names[i] +
					     ": no path to a CA; left out");
	}
	std::sort(order.begin(), order.end(), [&](int a, int b) {
		return lv[a] != lv[b] ? lv[a] < lv[b] : names[a] < names[b];
	});
	std::vector<int> pos(g.sw.size(), -1);
	for (size_t k = 0; k < order.size(); k++) {
		int s = order[k];
		pos[s] = (int)k;
		TreeSwitch ts;
		ts.name = names[s];
		ts.guid = g.sw[s]->guid;
		ts.level = lv[s];
		ts.link_gbps = g.gbps[s];
		t.switches.push_back(ts);
	}
	for (int s : order) {
		int parent = -1;
		for (int n : g.up_down[s])
			if (lv[n] == lv[s] + 1 &&
			    (parent < 0 || names[n] < names[parent]))
				parent = n;
		t.switches[pos[s]].parent = parent < 0 ? -1 : pos[parent];
	}
	assign_nodes(g, names, lv, &t);
	for (TreeSwitch &ts : t.switches)
		std::sort(ts.nodes.begin(), ts.nodes.end());
	return t;
}

void merge(Fabric *a, const Fabric &b)
{
	std::set<std::uint64_t> sw, ca;
	for (const FabricSwitch &s : a->switches)
		sw.insert(s.guid);
	for (const FabricCa &c : a->cas)
		ca.insert(c.guid);
	for (const FabricSwitch &s : b.switches)
		if (sw.insert(s.guid).second)
			a->switches.push_back(s);
	for (const FabricCa &c : b.cas)
		if (ca.insert(c.guid).second)
			a->cas.push_back(c);
	/* A cable is the same whichever end reported it. */
	auto key = [](const FabricLink &l) {
		std::pair<std::uint64_t, int> x{l.a, l.a_port}, y{l.b, l.b_port};
		return x < y ? std::pair{x, y} : std::pair{y, x};
	};
	std::set<decltype(key(FabricLink()))> seen;
	for (const FabricLink &l : a->links)
		seen.insert(key(l));
	for (const FabricLink &l : b.links)
		if (seen.insert(key(l)).second)
			a->links.push_back(l);
	if (a->source != b.source)
		a->source = "merged";
}

/* ---------------------------------------------------------------- JSON */

namespace {

using JsonPtr = std::unique_ptr<json_object, decltype(&json_object_put)>;

void add(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}

json_object *str(const std::string &s)
{
	return json_object_new_string(s.c_str());
}

json_object *tree_json(const SwitchTree &t)
{
	json_object *o = json_object_new_object();
	json_object *sws = json_object_new_array();
	for (const TreeSwitch &s : t.switches) {
		json_object *j = json_object_new_object();
		add(j, "name", str(s.name));
		add(j, "guid", str(guid_str(s.guid)));
		add(j, "level", json_object_new_int(s.level));
		add(j, "parent", s.parent < 0 ? nullptr
					      : str(t.switches[s.parent].name));
		add(j, "link_gbps", json_object_new_double(s.link_gbps));
		json_object *nodes = json_object_new_array();
		for (const std::string &n : s.nodes)
			json_object_array_add(nodes, str(n));
		add(j, "nodes", nodes);
		json_object_array_add(sws, j);
	}
	add(o, "switches", sws);
	json_object *leaf = json_object_new_object();
	for (auto &[node, i] : t.node_leaf)
		add(leaf, node.c_str(), str(t.switches[i].name));
	add(o, "node_leaf", leaf);
	json_object *w = json_object_new_array();
	for (const std::string &s : t.warnings)
		json_object_array_add(w, str(s));
	add(o, "warnings", w);
	return o;
}

} /* namespace */

std::string to_json(const Fabric &f, const SwitchTree *tree)
{
	JsonPtr o(json_object_new_object(), json_object_put);
	add(o.get(), "v", json_object_new_int(1));
	add(o.get(), "source", str(f.source));
	json_object *sws = json_object_new_array();
	for (const FabricSwitch &s : f.switches) {
		json_object *j = json_object_new_object();
		add(j, "guid", str(guid_str(s.guid)));
		add(j, "desc", str(s.desc));
		add(j, "ports", json_object_new_int(s.ports));
		json_object_array_add(sws, j);
	}
	add(o.get(), "switches", sws);
	json_object *cas = json_object_new_array();
	for (const FabricCa &c : f.cas) {
		json_object *j = json_object_new_object();
		add(j, "guid", str(guid_str(c.guid)));
		add(j, "desc", str(c.desc));
		add(j, "node", str(node_of_ca(c.desc)));
		add(j, "ports", json_object_new_int(c.ports));
		json_object_array_add(cas, j);
	}
	add(o.get(), "cas", cas);
	json_object *links = json_object_new_array();
	for (const FabricLink &l : f.links) {
		json_object *j = json_object_new_object();
		add(j, "a", str(guid_str(l.a)));
		add(j, "a_port", json_object_new_int(l.a_port));
		add(j, "b", str(guid_str(l.b)));
		add(j, "b_port", json_object_new_int(l.b_port));
		add(j, "gbps", json_object_new_double(l.gbps));
		json_object_array_add(links, j);
	}
	add(o.get(), "links", links);
	if (tree)
		add(o.get(), "tree", tree_json(*tree));
	return json_object_to_json_string_ext(
		o.get(), JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

namespace {

/* Field readers: each names the record and the key when it fails. */
struct Reader {
	std::string where;
	std::string *err;

	bool fail(const std::string &what) const
	{
		if (err)
			*err = where + ": " + what;
		return false;
	}
	bool guid(json_object *o, const char *k, std::uint64_t *out) const
	{
		json_object *v;
		if (!json_object_object_get_ex(o, k, &v) ||
		    !json_object_is_type(v, json_type_string))
			return fail(std::string("\"") + k +
				    "\" missing or not a string");
		const char *s = json_object_get_string(v);
		char *end;
		*out = std::strtoull(s, &end, 16);
		if (end == s || *end)
			return fail(std::string("\"") + k + "\": \"" + s +
				    "\" is not a hexadecimal GUID");
		return true;
	}
	bool integer(json_object *o, const char *k, int *out) const
	{
		json_object *v;
		if (!json_object_object_get_ex(o, k, &v))
			return true; /* optional, keeps the default */
		if (!json_object_is_type(v, json_type_int))
			return fail(std::string("\"") + k +
				    "\" is not an integer");
		*out = json_object_get_int(v);
		return true;
	}
	std::string text(json_object *o, const char *k) const
	{
		json_object *v;
		if (!json_object_object_get_ex(o, k, &v) ||
		    !json_object_is_type(v, json_type_string))
			return "";
		return json_object_get_string(v);
	}
};

json_object *array(json_object *o, const char *k)
{
	json_object *v;
	if (!json_object_object_get_ex(o, k, &v) ||
	    !json_object_is_type(v, json_type_array))
		return nullptr;
	return v;
}

bool read_nodes(json_object *arr, const std::string &origin, bool sw,
		Fabric *out, std::string *err)
{
	size_t n = json_object_array_length(arr);
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i);
		Reader r{origin + ": " + (sw ? "switches[" : "cas[") +
				 std::to_string(i) + "]",
			 err};
		std::uint64_t guid;
		int ports = 0;
		if (!json_object_is_type(o, json_type_object))
			return r.fail("not an object");
		if (!r.guid(o, "guid", &guid) || !r.integer(o, "ports", &ports))
			return false;
		if (sw)
			out->switches.push_back({guid, r.text(o, "desc"), ports});
		else
			out->cas.push_back({guid, r.text(o, "desc"), ports});
	}
	return true;
}

bool read_links(json_object *arr, const std::string &origin, Fabric *out,
		std::string *err)
{
	size_t n = json_object_array_length(arr);
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i), *v;
		Reader r{origin + ": links[" + std::to_string(i) + "]", err};
		FabricLink l;
		if (!json_object_is_type(o, json_type_object))
			return r.fail("not an object");
		if (!r.guid(o, "a", &l.a) || !r.guid(o, "b", &l.b) ||
		    !r.integer(o, "a_port", &l.a_port) ||
		    !r.integer(o, "b_port", &l.b_port))
			return false;
		if (json_object_object_get_ex(o, "gbps", &v))
			l.gbps = json_object_get_double(v);
		out->links.push_back(l);
	}
	return true;
}

} /* namespace */

bool from_json(const std::string &text, const std::string &origin,
	       Fabric *out, std::string *err)
{
	Reader top{origin, err};
	JsonPtr o(json_tokener_parse(text.c_str()), json_object_put);
	if (!o || !json_object_is_type(o.get(), json_type_object))
		return top.fail("not a JSON object");
	int v = 0;
	if (!top.integer(o.get(), "v", &v))
		return false;
	if (v != 1)
		return top.fail("\"v\": " + std::to_string(v) +
				": unknown fabric format version (known: 1)");
	Fabric f;
	f.source = top.text(o.get(), "source");
	json_object *sws = array(o.get(), "switches");
	json_object *cas = array(o.get(), "cas");
	json_object *links = array(o.get(), "links");
	if (!sws || !cas || !links)
		return top.fail("\"switches\", \"cas\" and \"links\" must be "
				"arrays");
	if (!read_nodes(sws, origin, true, &f, err) ||
	    !read_nodes(cas, origin, false, &f, err) ||
	    !read_links(links, origin, &f, err))
		return false;
	*out = std::move(f);
	return true;
}

/* ---------------------------------------------------------------- cluster */

int apply_tree(const SwitchTree &tree, Cluster *c)
{
	int mapped = 0;
	for (const Node &n : c->nodes)
		if (tree.node_leaf.count(n.name))
			mapped++;
	if (!mapped)
		return 0;
	c->switches.clear();
	for (const TreeSwitch &t : tree.switches) {
		Switch s;
		s.name = t.name;
		s.parent = t.parent;
		s.level = t.level;
		s.link_gbps = t.link_gbps;
		c->switches.push_back(s);
	}
	for (size_t i = 0; i < tree.switches.size(); i++)
		if (tree.switches[i].parent >= 0)
			c->switches[tree.switches[i].parent].children.push_back(
				(int)i);
	for (size_t i = 0; i < c->nodes.size(); i++) {
		auto it = tree.node_leaf.find(c->nodes[i].name);
		c->nodes[i].switch_id = it == tree.node_leaf.end() ? -1
								   : it->second;
		if (it != tree.node_leaf.end())
			c->switches[it->second].nodes.push_back((int)i);
	}
	return mapped;
}

} /* namespace tidal::fabric */
