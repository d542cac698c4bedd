/*
 * test_topo.cc - nodeagent/topo on XML topologies, since no GPU exists here.
 *
 * (a) tests/node/data/dgx-8gpu.xml (written by gen-dgx-xml, checked to be
 *     its current output): 2 sockets, 8 GPUs, 8 rail HCAs whose names are
 *     swapped within each PCIe switch (GPU i's nearest is mlx5_(i^1)), a
 *     storage HCA no GPU should pick, 6 NVSwitches.
 * (b) hwloc's own test XMLs (scripts/hwloc-src.sh fetches them): packages,
 *     PUs, NUMA nodes, GPUs and HCAs, and each GPU's CPUs and NUMA node,
 *     all compared with what hwloc-calc and lstopo report on the same file.
 *     Skipped with a line saying why when the source cannot be fetched.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "node/topo.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "tests/unit/unit.h"

using namespace tidal::topo;

static const char kDgx[] = "tests/node/data/dgx-8gpu.xml";

/* Standard output of CMD, or nullopt when it fails. */
static std::optional<std::string> run(const std::string &cmd)
{
	FILE *p = popen(cmd.c_str(), "r");
	if (!p)
		return std::nullopt;
	std::string out;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		out.append(buf, n);
	if (pclose(p) != 0)
		return std::nullopt;
	return out;
}

static std::string slurp(const char *path)
{
	std::ifstream f(path);
	std::stringstream s;
	s << f.rdbuf();
	return s.str();
}

static void test_dgx_generator_current(void **)
{
	auto out = run("tests/node/data/gen-dgx-xml");
	assert_true(out.has_value());
	assert_true(*out == slurp(kDgx));
}

static void test_dgx_summary(void **)
{
	Summary s = summarize_xml(kDgx);
	assert_int_equal(s.packages, 2);
	assert_int_equal(s.cores, 32);
	assert_int_equal(s.pus, 64);
	assert_int_equal(s.numa.size(), 2);
	assert_string_equal(s.numa[0].cpus.c_str(), "0-15,32-47");
	assert_string_equal(s.numa[1].cpus.c_str(), "16-31,48-63");
	assert_true(s.nvswitch());
	assert_int_equal(s.nvswitches, 6);
	assert_int_equal(s.hcas.size(), 9);
	assert_int_equal(s.gpus.size(), 8);
	const char *bus[] = {"0000:0b:00.0", "0000:1b:00.0", "0000:43:00.0",
			     "0000:53:00.0", "0000:8b:00.0", "0000:9b:00.0",
			     "0000:c3:00.0", "0000:d3:00.0"};
	for (int i = 0; i < 8; i++) {
		const Gpu &g = s.gpus[i];
		assert_int_equal(g.index, i);
		assert_string_equal(g.pci_bus_id.c_str(), bus[i]);
		assert_string_equal(g.pci_id.c_str(), "10de:20b0");
		/* GPUs 0-3 on socket 0, 4-7 on socket 1. */
		assert_int_equal(g.numa, i / 4);
		assert_string_equal(g.cpus.c_str(), s.numa[i / 4].cpus.c_str());
		/* Same PCIe sub-switch: mlx5_(i^1), not mlx5_i. */
		std::string want = "mlx5_" + std::to_string(i ^ 1);
		assert_string_equal(g.hca.c_str(), want.c_str());
		assert_int_equal((int)g.hca_path, (int)Path::PciSwitch);
		assert_true(g.osdevs == std::vector<std::string>(
			{"cuda" + std::to_string(i), "nvml" + std::to_string(i)}));
	}
	/* Every HCA's NUMA node; the storage HCA sits on socket 1. */
	for (const Hca &h : s.hcas) {
		int n = std::atoi(h.name.c_str() + 5);
		assert_int_equal(h.numa, n == 8 ? 1 : n / 4);
		assert_int_equal(h.ports, 1);
	}
}

static void test_dgx_affinity_and_json(void **)
{
	Summary s = summarize_xml(kDgx);
	auto a = gpu_affinity(s, 5);
	assert_true(a.has_value());
	assert_int_equal(a->cpus.size(), 32);
	assert_int_equal(a->cpus.front(), 16);
	assert_int_equal(a->cpus.back(), 63);
	assert_string_equal(a->cpu_list.c_str(), "16-31,48-63");
	assert_int_equal(a->numa, 1);
	assert_string_equal(a->hca.c_str(), "mlx5_4");
	assert_false(gpu_affinity(s, 8).has_value());
	std::string js = to_json(s);
	assert_non_null(strstr(js.c_str(), "\"nvswitch\":true"));
	assert_non_null(strstr(js.c_str(),
			       "{\"index\":0,\"pci_bus_id\":\"0000:0b:00.0\""));
	assert_non_null(strstr(js.c_str(), "\"hca\":\"mlx5_1\","
					   "\"hca_path\":\"pci-switch\""));
}

static void test_cpu_list(void **)
{
	std::vector<int> v;
	assert_true(parse_cpu_list("0-3,8,10-11", &v));
	assert_true(v == std::vector<int>({0, 1, 2, 3, 8, 10, 11}));
	assert_true(parse_cpu_list("", &v) && v.empty());
	assert_false(parse_cpu_list("3-1", &v));
	assert_false(parse_cpu_list("1;2", &v));
	assert_false(parse_cpu_list("a", &v));
	/* A range past any machine's CPUs, not a list of a billion. */
	assert_false(parse_cpu_list("0-2000000000", &v));
	assert_true(parse_cpu_list("65535", &v));
	assert_false(parse_cpu_list("x", &v));
}

static void test_errors_and_live(void **)
{
	try {
		summarize_xml("tests/node/data/no-such.xml");
		fail_msg("no exception for a missing file");
	} catch (const std::runtime_error &e) {
		assert_non_null(strstr(e.what(), "tests/node/data/no-such.xml"));
	}
	/* This machine: whatever it has, at least one PU and NUMA node. */
	Summary live = summarize_live();
	assert_true(live.pus >= 1);
	assert_true(live.numa.size() >= 1);
	/* No RDMA hardware here is an empty list, not an error. */
	std::vector<std::string> warn;
	std::vector<VerbsHca> v = hcas_from_verbs(&warn);
	assert_true(verbs_to_json(v).front() == '[');
}

/* ---------------------------------------------------------------- (b) */

static int count_lines(const std::string &text, const std::string &a,
		       const std::string &b = "")
{
	int n = 0;
	std::istringstream in(text);
	for (std::string line; std::getline(in, line);)
		if (line.find(a) != std::string::npos &&
		    line.find(b) != std::string::npos)
			n++;
	return n;
}

static int calc_number(const std::string &f, const char *type)
{
	auto out = run("hwloc-calc --if xml -i '" + f + "' --number-of " +
		       type + " all 2>/dev/null");
	assert_true(out.has_value());
	return std::atoi(out->c_str());
}

/* One hwloc test file: our summary against hwloc's own tools. */
static void check_hwloc_file(const std::string &f)
{
	Summary s = summarize_xml(f);
	std::printf("# %s: %d packages, %d PUs, %zu NUMA, %zu GPUs, %zu HCAs\n",
		    f.substr(f.rfind('/') + 1).c_str(), s.packages, s.pus,
		    s.numa.size(), s.gpus.size(), s.hcas.size());
	assert_int_equal(s.packages, calc_number(f, "package"));
	assert_int_equal(s.pus, calc_number(f, "pu"));
	assert_int_equal((int)s.numa.size(), calc_number(f, "numanode"));
	auto pci = run("lstopo-no-graphics --if xml -i '" + f +
		       "' --only pcidev -v 2>/dev/null");
	auto os = run("lstopo-no-graphics --if xml -i '" + f +
		      "' --only osdev 2>/dev/null");
	assert_true(pci && os);
	/* NVIDIA display-class devices: class=0300(VGA), 0302(3D). */
	assert_int_equal((int)s.gpus.size(),
			 count_lines(*pci, "id=10de:", "class=03"));
	assert_int_equal((int)s.hcas.size(), count_lines(*os, "OpenFabrics"));
	for (const Gpu &g : s.gpus) {
		std::string loc = "pci=" + g.pci_bus_id;
		auto pus = run("hwloc-calc --if xml -i '" + f + "' " + loc +
			       " --intersect pu --physical-output 2>/dev/null");
		auto mem = run("hwloc-calc --if xml -i '" + f + "' " + loc +
			       " --local-memory --physical-output 2>/dev/null");
		assert_true(pus && mem);
		std::vector<int> want, got;
		std::istringstream in(*pus);
		for (std::string t; std::getline(in, t, ',');)
			if (t.find_first_of("0123456789") != std::string::npos)
				want.push_back(std::atoi(t.c_str()));
		std::sort(want.begin(), want.end());
		assert_true(parse_cpu_list(g.cpus, &got));
		assert_true(got == want);
		if (mem->find(',') == std::string::npos)
			assert_int_equal(g.numa, std::atoi(mem->c_str()));
		else
			assert_int_equal(g.numa, -1);
	}
}

static void test_hwloc_xmls(void **)
{
	const char *env = std::getenv("TIDAL_HWLOC_XML_DIR");
	std::string dir = env ? env : "";
	if (dir.empty()) {
		auto out = run("scripts/hwloc-src.sh 2>/dev/null | tail -n 1");
		dir = out ? out->substr(0, out->find('\n')) : "";
	}
	if (dir.empty() || !run("command -v hwloc-calc lstopo-no-graphics >/dev/null")) {
		std::printf("# SKIP hwloc test XMLs: scripts/hwloc-src.sh could "
			    "not fetch the hwloc source package, or hwloc-calc "
			    "is missing\n");
		skip();
	}
	const char *files[] = {
		"24em64t-2n6c2t-pci.xml",
		"32em64t-2n8c2t-pci-normalio.xml",
		"64intel64-3g2n+2n-irregulargroups+pci.xml",
		"96em64t-4n4d3ca2co-pci.xml",
		"16intel64-manyVFs.xml",
		"power8gpudistances.xml",
	};
	for (const char *f : files)
		check_hwloc_file(dir + "/" + f);
	/* Hand-checked: the one HCA of 32em64t hangs below the same PCIe
	 * bridge as GPU 2, on the other host bridge from GPU 0. */
	Summary s = summarize_xml(dir + "/32em64t-2n8c2t-pci-normalio.xml");
	assert_int_equal((int)s.gpus[2].hca_path, (int)Path::PciSwitch);
	assert_int_equal((int)s.gpus[1].hca_path, (int)Path::HostBridge);
	assert_int_equal((int)s.gpus[0].hca_path, (int)Path::System);
	assert_true(s.gpus[2].osdevs == std::vector<std::string>({"cuda0"}));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dgx_generator_current),
		cmocka_unit_test(test_dgx_summary),
		cmocka_unit_test(test_dgx_affinity_and_json),
		cmocka_unit_test(test_cpu_list),
		cmocka_unit_test(test_errors_and_live),
		cmocka_unit_test(test_hwloc_xmls),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
