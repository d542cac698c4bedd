/*
 * test_cluster_io.cc - slurm.conf (+ gres.conf, topology.conf), the
 * cluster-spec CSV and the VC CSV, read from files written under a
 * mkdtemp directory; malformed input must say file:line and what is wrong.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cstdlib>
#include <filesystem>

#include "sim/cluster_io.h"
#include "sim/csv.h"

#include "tests/unit/unit.h"

using namespace tidal;
using namespace tidal::sim;

static const std::string &root = test::scratch_root;

/* Write FILES (name, text) into a fresh directory DIR; RET: its path. */
static std::string write_dir(
	const std::string &dir,
	const std::vector<std::pair<std::string, std::string>> &files)
{
	std::string d = root + "/" + dir;
	std::filesystem::remove_all(d);
	std::filesystem::create_directories(d);
	for (const auto &[name, text] : files) {
		std::ofstream out(d + "/" + name);
		out << text;
	}
	return d;
}

/* The message of the InputError that loading PATH throws, "" if none. */
static std::string load_error(const std::string &path)
{
	try {
		load_cluster(path);
	} catch (const InputError &e) {
		return e.what();
	}
	return "";
}

static std::string hostlist_error(const std::string &list)
{
	try {
		expand_hostlist(list, "f.conf", 3);
	} catch (const InputError &e) {
		return e.what();
	}
	return "";
}

static void test_hostlists(void **)
{
	using V = std::vector<std::string>;
	assert_true(expand_hostlist("n[01-03,7],gpu5", "f", 1) ==
		    V({"n01", "n02", "n03", "n7", "gpu5"}));
	assert_true(expand_hostlist("a[8-10]", "f", 1) ==
		    V({"a8", "a9", "a10"}));
	assert_true(expand_hostlist("a[098-101]-ib", "f", 1) ==
		    V({"a098-ib", "a099-ib", "a100-ib", "a101-ib"}));
	assert_true(expand_hostlist("r[1-2]n[0-1]", "f", 1) ==
		    V({"r1n0", "r1n1", "r2n0", "r2n1"}));
	assert_true(expand_hostlist("x,,y", "f", 1) == V({"x", "y"}));
	assert_string_equal(hostlist_error("n[1-").c_str(),
			    "f.conf:3: unbalanced '[' in hostlist 'n[1-'");
	assert_string_equal(hostlist_error("n1]").c_str(),
			    "f.conf:3: unbalanced ']' in hostlist 'n1]'");
	assert_string_equal(hostlist_error("n[3-1]").c_str(),
			    "f.conf:3: bad hostlist range '3-1'");
	assert_string_equal(hostlist_error("n[a]").c_str(),
			    "f.conf:3: bad hostlist number 'a'");
	assert_string_equal(hostlist_error("n[]").c_str(),
			    "f.conf:3: empty [] in hostlist 'n[]'");
	assert_string_equal(hostlist_error("n[99999999999]").c_str(),
			    "f.conf:3: bad hostlist number '99999999999'");
	assert_non_null(strstr(hostlist_error("n[0-999999]").c_str(),
			       "f.conf:3: hostlist expands to more than"));
	assert_non_null(strstr(hostlist_error("a[0-999]b[0-999]").c_str(),
			       "expands to more than"));
}

static const char *kSlurmConf =
	"# a test cluster\n"
	"ClusterName=t\n"
	"NodeName=DEFAULT CPUs=32 RealMemory=1000 Gres=gpu:a100:4\n"
	"NodeName=a[08-10] State=UNKNOWN\n"
	"NodeName=b[1-2,5] Gres=gpu:2 CPUs=8 Reason=\"spare nodes\"\n"
	"NodeName=c1 Gres=gpu:v100:2,gpu:t4:1(S:0-1),mps:100\n"
	"NodeName=DEFAULT Gres=gpu\n"
	"NodeName=d1\n"
	"PartitionName=DEFAULT MaxTime=INFINITE\n"
	"PartitionName=train Nodes=a[08-09],b1 Default=YES\n"
	"PartitionName=rest Nodes=ALL\n";

/* NodeName=DEFAULT, hostlists with padding and several ranges, typed and
 * untyped Gres (a bare "gpu" is one), quoted values, partition groups
 * (a node's first partition; Nodes=ALL takes the rest). */
static void test_slurm_conf(void **)
{
	std::string d = write_dir("plain", {{"slurm.conf", kSlurmConf}});
	Cluster c = load_cluster(d + "/slurm.conf");
	assert_int_equal(c.nodes.size(), 8);
	const char *names[] = {"a08", "a09", "a10", "b1",
			       "b2",  "b5",  "c1",  "d1"};
	int gpus[] = {4, 4, 4, 2, 2, 2, 3, 1};
	int cpus[] = {32, 32, 32, 8, 8, 8, 32, 32};
	const char *groups[] = {"train", "train", "rest", "train",
				"rest",  "rest",  "rest", "rest"};
	for (int i = 0; i < 8; i++) {
		assert_string_equal(c.nodes[i].name.c_str(), names[i]);
		assert_int_equal(c.nodes[i].gpus, gpus[i]);
		assert_int_equal(c.nodes[i].cpus, cpus[i]);
		assert_true(c.nodes[i].mem_mb == 1000);
		assert_string_equal(c.nodes[i].group.c_str(), groups[i]);
		assert_int_equal(c.nodes[i].switch_id, -1);
	}
	assert_int_equal(c.total_gpus(), 22);
	assert_true(c.switches.empty());
}

/* gres.conf beside slurm.conf: Count= wins, else one GPU per File= entry;
 * other GRES are ignored. */
static void test_gres_conf(void **)
{
	std::string d = write_dir(
		"gres", {{"slurm.conf", kSlurmConf},
			 {"gres.conf",
			  "# counts\n"
			  "NodeName=a[08-09] Name=gpu Type=a100 "
			  "File=/dev/nvidia[0-7]\n"
			  "NodeName=b[1-2] Name=gpu Count=3\n"
			  "NodeName=c1 Name=mps Count=100\n"}});
	Cluster c = load_cluster(d + "/slurm.conf");
	int gpus[] = {8, 8, 4, 3, 3, 2, 3, 1};
	for (int i = 0; i < 8; i++)
		assert_int_equal(c.nodes[i].gpus, gpus[i]);
}

/* topology.conf: leaves at level 0, a parent one above its highest child,
 * parents and children linked, nodes know their leaf. */
static void test_topology_conf(void **)
{
	std::string d = write_dir(
		"topo", {{"slurm.conf", kSlurmConf},
			 {"topology.conf",
			  "SwitchName=l0 Nodes=a[08-10] LinkSpeed=100\n"
			  "SwitchName=l1 Nodes=b[1-2,5],c1\n"
			  "SwitchName=mid Switches=l[0-1]\n"
			  "SwitchName=top Switches=mid,l2\n"
			  "SwitchName=l2 Nodes=d1\n"}});
	Cluster c = load_cluster(d + "/slurm.conf");
	assert_int_equal(c.switches.size(), 5);
	const char *names[] = {"l0", "l1", "mid", "top", "l2"};
	int levels[] = {0, 0, 1, 2, 0};
	int parents[] = {2, 2, 3, -1, 3};
	for (int s = 0; s < 5; s++) {
		assert_string_equal(c.switches[s].name.c_str(), names[s]);
		assert_int_equal(c.switches[s].level, levels[s]);
		assert_int_equal(c.switches[s].parent, parents[s]);
	}
	assert_true(c.switches[0].link_gbps == 100);
	assert_true(c.switches[0].nodes == std::vector<int>({0, 1, 2}));
	assert_true(c.switches[1].nodes == std::vector<int>({3, 4, 5, 6}));
	assert_true(c.switches[2].children == std::vector<int>({0, 1}));
	assert_true(c.switches[3].children == std::vector<int>({2, 4}));
	int sw[] = {0, 0, 0, 1, 1, 1, 1, 4};
	for (int i = 0; i < 8; i++)
		assert_int_equal(c.nodes[i].switch_id, sw[i]);
}

/* ElasticFlow/Muri spec: switches x nodes x GPUs, memory in GB. */
static void test_spec_csv(void **)
{
	std::string d = write_dir(
		"spec", {{"n6g8.csv",
			  "num_switch,num_node_p_switch,num_gpu_p_node,"
			  "num_cpu_p_node,mem_p_node\n2,3,8,64,256\n"}});
	Cluster c = load_cluster(d + "/n6g8.csv");
	assert_int_equal(c.nodes.size(), 6);
	assert_int_equal(c.switches.size(), 2);
	assert_int_equal(c.total_gpus(), 48);
	assert_int_equal(c.nodes[4].switch_id, 1);
	assert_int_equal(c.nodes[4].cpus, 64);
	assert_true(c.nodes[4].mem_mb == 256 * 1024);
	assert_true(c.switches[1].nodes == std::vector<int>({3, 4, 5}));
}

/* Lucid VC config: 8-GPU nodes named after their VC, grouped by it. */
static void test_vc_csv(void **)
{
	std::string d =
		write_dir("vc", {{"vc.csv", ",num\nvcA,2\nvcB,0\nvcC,1\n"}});
	Cluster c = load_cluster(d + "/vc.csv");
	assert_int_equal(c.nodes.size(), 3);
	assert_string_equal(c.nodes[1].name.c_str(), "vcA-1");
	assert_string_equal(c.nodes[2].name.c_str(), "vcC-0");
	assert_string_equal(c.nodes[2].group.c_str(), "vcC");
	assert_int_equal(c.total_gpus(), 24);
}

struct BadCase {
	const char *slurm, *gres, *topology; /* nullptr: no such file */
	const char *where;                   /* "slurm.conf:2" etc. */
	const char *what;
};

static void test_slurm_errors(void **)
{
	const char *ok = "NodeName=n[1-2] Gres=gpu:2\n";
	const BadCase cases[] = {
		{"NodeName=n1 Gres=gpu:1\nNodeName=x[1-\n", nullptr, nullptr,
		 "slurm.conf:2", "unbalanced '['"},
		{"NodeName=n1 CPUs=lots Gres=gpu:1\n", nullptr, nullptr,
		 "slurm.conf:1", "CPUs=lots: must be an integer in [0, "},
		{"NodeName=n1 CPUs=99999999999 Gres=gpu:1\n", nullptr, nullptr,
		 "slurm.conf:1", "CPUs=99999999999: must be an integer"},
		{"\n\nNodeName=n1 Gres=gpu:a100:many\n", nullptr, nullptr,
		 "slurm.conf:3", "'many' is not a GPU count"},
		{"NodeName=n1 Gres=gpu:99999\n", nullptr, nullptr,
		 "slurm.conf:1", "more than 65536 GPUs on one node"},
		{"NodeName=n[1-2] Gres=gpu:1\nNodeName=n2\n", nullptr, nullptr,
		 "slurm.conf:2", "node 'n2' defined twice"},
		{"NodeName=n1 Gres=gpu:1\ngarbage here\n", nullptr, nullptr,
		 "slurm.conf:2", "'garbage' is not Key=Value"},
		{"NodeName=n1 Reason=\"open\n", nullptr, nullptr,
		 "slurm.conf:1", "unbalanced '\"'"},
		{"ClusterName=x\n", nullptr, nullptr, "slurm.conf",
		 "no NodeName= lines"},
		{"NodeName=n1 CPUs=4\n", nullptr, nullptr, "slurm.conf",
		 "the cluster has no GPUs"},
		{ok, "NodeName=n1 Name=gpu Count=x\n", nullptr, "gres.conf:1",
		 "Count=x: must be an integer"},
		{ok, nullptr, "SwitchName=s0 Nodes=n[1-3]\n", "topology.conf:1",
		 "switch s0 lists unknown node 'n3'"},
		{ok, nullptr, "SwitchName=s0 Nodes=n1\n\nSwitchName=top Switches=s0,s9\n",
		 "topology.conf:3", "switch top lists unknown switch 's9'"},
		{ok, nullptr, "Nodes=n1\n", "topology.conf:1",
		 "line has no SwitchName="},
		{ok, nullptr, "SwitchName=s0 Nodes=n1\nSwitchName=s0 Nodes=n2\n",
		 "topology.conf:2", "switch s0 defined twice"},
		{ok, nullptr, "SwitchName=s0 Nodes=n[1-2]\nSwitchName=s1 Nodes=n2\n",
		 "topology.conf:2", "node n2 is already on switch s0"},
		{ok, nullptr, "SwitchName=s0 Nodes=n1\nSwitchName=s1 Nodes=n[2,2]\n",
		 "topology.conf:2", "switch s1 lists node n2 twice"},
		{ok, nullptr,
		 "SwitchName=a Switches=b\nSwitchName=b Switches=a\n",
		 "topology.conf", "is on a cycle"},
		{ok, nullptr, "SwitchName=a Switches=a\n", "topology.conf:1",
		 "switch a lists itself"},
		{ok, nullptr,
		 "SwitchName=l Nodes=n1\nSwitchName=a Switches=l\n"
		 "SwitchName=b Switches=l\n",
		 "topology.conf:3", "switch l already has parent a"},
	};
	int i = 0;
	for (const BadCase &bc : cases) {
		std::vector<std::pair<std::string, std::string>> files = {
			{"slurm.conf", bc.slurm}};
		if (bc.gres)
			files.emplace_back("gres.conf", bc.gres);
		if (bc.topology)
			files.emplace_back("topology.conf", bc.topology);
		std::string d = write_dir("bad" + std::to_string(i++), files);
		std::string err = load_error(d + "/slurm.conf");
		std::string where = d + "/" + bc.where + ": ";
		if (err.rfind(where, 0) != 0 ||
		    err.find(bc.what) == std::string::npos)
			fail_msg("case %d: got '%s', want '%s...%s'", i,
				 err.c_str(), where.c_str(), bc.what);
	}
}

static void test_csv_errors(void **)
{
	const struct {
		const char *text, *where, *what;
	} cases[] = {
		{"num_switch,num_node_p_switch,num_gpu_p_node\n1,2,4\n1,2,4\n",
		 "c.csv", "exactly one row"},
		{"num_switch,num_node_p_switch,num_gpu_p_node\n1,x,4\n",
		 "c.csv:2", "column 'num_node_p_switch': 'x' is not a number"},
		{"num_switch,num_node_p_switch,num_gpu_p_node\n1,0,4\n",
		 "c.csv:2", "must be positive"},
		{"num_switch,num_node_p_switch,num_gpu_p_node\n1000,1000,8\n",
		 "c.csv:2", "cluster too large"},
		{"num_switch,num_node_p_switch\n1,2\n", "c.csv:1",
		 "missing column 'num_gpu_p_node'"},
		{",num\nvcA,2\nvcB,-1\n", "c.csv:3", "node count >= 0"},
		{",num\nvcA,2\n\nvcA,1\n", "c.csv:4",
		 "VC vcA is already on line 2"},
		{",num\nvcA,0\n", "c.csv", "no VC has any node"},
	};
	int i = 0;
	for (const auto &bc : cases) {
		std::string d = write_dir("csv" + std::to_string(i++),
					  {{"c.csv", bc.text}});
		std::string err = load_error(d + "/c.csv");
		std::string where = d + "/" + bc.where + ": ";
		if (err.rfind(where, 0) != 0 ||
		    err.find(bc.what) == std::string::npos)
			fail_msg("case %d: got '%s', want '%s...%s'", i,
				 err.c_str(), where.c_str(), bc.what);
	}
	assert_non_null(strstr(load_error(root + "/none.conf").c_str(),
			       "none.conf: cannot open"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostlists),
		cmocka_unit_test(test_slurm_conf),
		cmocka_unit_test(test_gres_conf),
		cmocka_unit_test(test_topology_conf),
		cmocka_unit_test(test_spec_csv),
		cmocka_unit_test(test_vc_csv),
		cmocka_unit_test(test_slurm_errors),
		cmocka_unit_test(test_csv_errors),
	};
	return cmocka_run_group_tests(tests, test::scratch_setup,
				      test::scratch_teardown);
}
