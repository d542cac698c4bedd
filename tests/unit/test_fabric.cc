/*
 * test_fabric.cc - core/fabric: the switch tree derived from hand-made
 * fabrics (levels, parents, node -> leaf, names), its JSON round trip and
 * errors, merging agents' partial views, and the Cluster it produces for
 * switch-aware placement.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/placement/fabric.h"
#include "core/placement/placement.h"

#include "tests/unit/unit.h"

using namespace tidal;
using namespace tidal::fabric;

/* Switch GUIDs 0x20.., CA GUIDs 0x10..; ports numbered as they come. */
struct Builder {
	Fabric f;
	std::map<std::string, std::uint64_t> guid;
	std::map<std::uint64_t, int> next_port;

	void sw(const std::string &desc, std::uint64_t g)
	{
		f.switches.push_back({g, desc, 36});
		guid[desc] = g;
	}
	void ca(const std::string &desc, std::uint64_t g)
	{
		f.cas.push_back({g, desc, 1});
		guid[desc] = g;
	}
	void link(const std::string &a, const std::string &b, double gbps = 100)
	{
		std::uint64_t x = guid.at(a), y = guid.at(b);
		f.links.push_back({x, ++next_port[x], y, ++next_port[y], gbps});
	}
};

/* spine0 over leaf1 (n1, n2) and leaf2 (n3, n4): the ibsim fabric of
 * tests/node/data/fabric-2leaf.net. */
static Fabric two_leaf()
{
	Builder b;
	b.sw("spine0", 0x200000);
	b.sw("leaf1", 0x200001);
	b.sw("leaf2", 0x200002);
	for (int i = 1; i <= 4; i++)
		b.ca("n" + std::to_string(i) + " mlx5_0", 0x100000 + i);
	b.link("spine0", "leaf1", 200);
	b.link("spine0", "leaf2", 200);
	b.link("leaf1", "n1 mlx5_0");
	b.link("leaf1", "n2 mlx5_0");
	b.link("leaf2", "n3 mlx5_0");
	b.link("leaf2", "n4 mlx5_0");
	b.f.source = "test";
	return b.f;
}

static void test_two_leaf_tree(void **)
{
	SwitchTree t = build_tree(two_leaf());
	/* Leaves first (by name), then the spine. */
	assert_int_equal(t.switches.size(), 3);
	assert_string_equal(t.switches[0].name.c_str(), "leaf1");
	assert_string_equal(t.switches[1].name.c_str(), "leaf2");
	assert_string_equal(t.switches[2].name.c_str(), "spine0");
	assert_int_equal(t.switches[0].level, 0);
	assert_int_equal(t.switches[2].level, 1);
	assert_int_equal(t.switches[0].parent, 2);
	assert_int_equal(t.switches[1].parent, 2);
	assert_int_equal(t.switches[2].parent, -1);
	assert_int_equal(t.node_leaf.at("n1"), 0);
	assert_int_equal(t.node_leaf.at("n2"), 0);
	assert_int_equal(t.node_leaf.at("n3"), 1);
	assert_int_equal(t.node_leaf.at("n4"), 1);
	assert_true(t.switches[1].nodes ==
		    std::vector<std::string>({"n3", "n4"}));
	/* The fastest link of each switch. */
	assert_true(t.switches[0].link_gbps == 200);
	assert_true(t.warnings.empty());
}

/* leaves a1 a2 under agg1, b1 under agg2, both aggs under core1 and
 * core0: levels 0/1/2, the parent of a level-1 switch is the lowest-named
 * level-2 neighbour (core0). */
static void test_three_levels(void **)
{
	Builder b;
	const char *sws[] = {"a1", "a2", "b1", "agg1", "agg2", "core1", "core0"};
	for (int i = 0; i < 7; i++)
		b.sw(sws[i], 0x300 + i);
	b.ca("x1.cluster.example mlx5_0", 0x11);
	b.ca("x2 mlx5_0", 0x12);
	b.ca("x3 mlx5_0", 0x13);
	b.link("a1", "x1.cluster.example mlx5_0");
	b.link("a2", "x2 mlx5_0");
	b.link("b1", "x3 mlx5_0");
	b.link("a1", "agg1");
	b.link("a2", "agg1");
	b.link("b1", "agg2");
	for (const char *agg : {"agg1", "agg2"})
		for (const char *core : {"core1", "core0"})
			b.link(agg, core);
	SwitchTree t = build_tree(b.f);
	assert_int_equal(t.switches.size(), 7);
	auto at = [&](const char *n) { return t.switches[t.find(n)]; };
	assert_int_equal(at("a1").level, 0);
	assert_int_equal(at("agg2").level, 1);
	assert_int_equal(at("core1").level, 2);
	assert_int_equal(at("a2").parent, t.find("agg1"));
	assert_int_equal(at("b1").parent, t.find("agg2"));
	assert_int_equal(at("agg1").parent, t.find("core0"));
	assert_int_equal(at("core0").parent, -1);
	/* A FQDN in the description is cut to the short name. */
	assert_int_equal(t.node_leaf.at("x1"), t.find("a1"));
}

/* One node with HCAs on two leaves (rails): a tie goes to the lowest
 * name, with a warning; three HCAs, two on railB: the majority wins. */
static void test_rails(void **)
{
	Builder b;
	b.sw("railB", 0x21);
	b.sw("railA", 0x22);
	b.ca("g1 mlx5_0", 0x11);
	b.ca("g1 mlx5_1", 0x12);
	b.ca("g2 mlx5_0", 0x13);
	b.ca("g2 mlx5_1", 0x14);
	b.ca("g2 mlx5_2", 0x15);
	b.link("railB", "g1 mlx5_0");
	b.link("railA", "g1 mlx5_1");
	b.link("railB", "g2 mlx5_0");
	b.link("railA", "g2 mlx5_1");
	b.link("railB", "g2 mlx5_2");
	SwitchTree t = build_tree(b.f);
	assert_int_equal(t.node_leaf.at("g1"), t.find("railA"));
	assert_int_equal(t.node_leaf.at("g2"), t.find("railB"));
	assert_int_equal(t.warnings.size(), 2);
	assert_non_null(strstr(t.warnings[0].c_str(), "node g1: HCAs on 2"));
}

/* Descriptions become topology.conf words; empty or shared ones become
 * ib-<guid>; a switch with no path to a CA is left out with a warning. */
static void test_names(void **)
{
	Builder b;
	b.sw("MF0;leaf:QM8700/U1", 0x2a);
	b.sw("dup", 0x2b);
	b.sw("dup", 0x2c);
	b.sw("", 0x2d);
	b.ca("h1 mlx5_0", 0x11);
	b.link("MF0;leaf:QM8700/U1", "h1 mlx5_0");
	b.f.links.push_back({0x2a, 9, 0x2b, 1, 0});
	b.f.links.push_back({0x2b, 2, 0x2c, 1, 0});
	SwitchTree t = build_tree(b.f);
	assert_true(t.find("MF0_leaf_QM8700_U1") >= 0);
	assert_true(t.find("ib-000000000000002b") >= 0);
	assert_true(t.find("ib-000000000000002c") >= 0);
	assert_int_equal(t.switches.size(), 3);
	assert_int_equal(t.warnings.size(), 1);
	assert_non_null(strstr(t.warnings[0].c_str(),
			       "switch ib-000000000000002d: no path"));
}

static void test_json_round_trip(void **)
{
	Fabric f = two_leaf();
	SwitchTree t = build_tree(f);
	std::string js = to_json(f, &t);
	assert_non_null(strstr(js.c_str(), "\"node_leaf\":{\"n1\":\"leaf1\""));
	assert_non_null(strstr(js.c_str(), "\"guid\":\"0x0000000000200000\""));
	Fabric g;
	std::string err;
	assert_true(from_json(js, "agent n1", &g, &err));
	assert_int_equal(g.switches.size(), 3);
	assert_int_equal(g.cas.size(), 4);
	assert_int_equal(g.links.size(), 6);
	assert_true(g.links[0].gbps == 200);
	SwitchTree u = build_tree(g);
	assert_true(u.node_leaf == t.node_leaf);
	assert_string_equal(to_json(g, &u).c_str(), js.c_str());
}

static void test_json_errors(void **)
{
	Fabric f;
	std::string err;
	assert_false(from_json("[1]", "agent n1", &f, &err));
	assert_string_equal(err.c_str(), "agent n1: not a JSON object");
	assert_false(from_json("{\"v\":2,\"switches\":[],\"cas\":[],"
			       "\"links\":[]}", "agent n1", &f, &err));
	assert_string_equal(err.c_str(),
			    "agent n1: \"v\": 2: unknown fabric format "
			    "version (known: 1)");
	assert_false(from_json("{\"v\":1,\"switches\":[{\"guid\":\"zz\"}],"
			       "\"cas\":[],\"links\":[]}", "agent n1", &f,
			       &err));
	assert_string_equal(err.c_str(),
			    "agent n1: switches[0]: \"guid\": \"zz\" is not "
			    "a hexadecimal GUID");
	assert_false(from_json("{\"v\":1,\"switches\":[],\"cas\":[],"
			       "\"links\":[{\"a\":\"0x1\",\"b\":\"0x2\","
			       "\"a_port\":\"x\"}]}", "agent n1", &f, &err));
	assert_string_equal(err.c_str(),
			    "agent n1: links[0]: \"a_port\" is not an integer");
	assert_false(from_json("{\"v\":1}", "f", &f, &err));
	assert_non_null(strstr(err.c_str(), "must be arrays"));
}

/* Two agents each report their half (and the spine links from both ends):
 * the union is the whole fabric with each cable once. */
static void test_merge(void **)
{
	Fabric all = two_leaf();
	Fabric a = all, b = all;
	a.cas.resize(2);
	a.links = {all.links[0], all.links[2], all.links[3]};
	b.cas.erase(b.cas.begin(), b.cas.begin() + 2);
	FabricLink rev = all.links[0];
	std::swap(rev.a, rev.b);
	std::swap(rev.a_port, rev.b_port);
	b.links = {rev, all.links[1], all.links[4], all.links[5]};
	merge(&a, b);
	assert_int_equal(a.switches.size(), 3);
	assert_int_equal(a.cas.size(), 4);
	assert_int_equal(a.links.size(), 6);
	assert_true(build_tree(a).node_leaf == build_tree(all).node_leaf);
}

/* The tree fills a cluster with no topology.conf; switch-aware placement
 * then keeps a 2-node job under one leaf.  n5 is not on the fabric. */
static void test_apply_to_cluster(void **)
{
	Cluster c = test::cluster(5, 4);
	for (int i = 0; i < 5; i++)
		c.nodes[i].name = "n" + std::to_string(i + 1);
	SwitchTree t = build_tree(two_leaf());
	assert_int_equal(apply_tree(t, &c), 4);
	assert_int_equal(c.switches.size(), 3);
	assert_int_equal(c.nodes[0].switch_id, 0);
	assert_int_equal(c.nodes[2].switch_id, 1);
	assert_int_equal(c.nodes[4].switch_id, -1);
	assert_true(c.switches[0].nodes == std::vector<int>({0, 1}));
	assert_true(c.switches[2].children == std::vector<int>({0, 1}));
	FreeMap m(c);
	assert_true(m.take({{0, 4}})); /* n1 full: leaf1 has 4 free */
	assert_true(m.take({{2, 1}})); /* leaf2 has 7 free */
	auto p = m.place(7, PlacementScheme::SwitchAware, PlaceMode::Test);
	assert_true(p.has_value());
	for (const NodeShare &s : *p)
		assert_int_equal(c.nodes[s.node].switch_id, 1);
	/* No node of the cluster on the fabric: the cluster is unchanged. */
	Cluster d = test::cluster(2, 8);
	d.nodes[0].name = "gpu01";
	d.nodes[1].name = "gpu02";
	assert_int_equal(apply_tree(t, &d), 0);
	assert_true(d.switches.empty());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_leaf_tree),
		cmocka_unit_test(test_three_levels),
		cmocka_unit_test(test_rails),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_json_errors),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_apply_to_cluster),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
