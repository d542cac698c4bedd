/*
 * topo.cc - the node summary from hwloc 2: GPUs, NUMA nodes, HCAs and
 * NVSwitches, and each GPU's nearest HCA.
 *
 * GPUs are found two ways, because either may be missing: as PCI devices
 * (vendor 0x10de, display class 0x03xx; present whenever hwloc sees the PCI
 * bus) and as CUDA/NVML OS devices (present when hwloc was built with those
 * backends and a driver runs).  An OS device below a GPU's PCI device only
 * adds its name to that GPU.
 *
 * The nearest HCA is the one sharing the deepest PCI ancestor (same PCIe
 * switch, then same root complex), then the same NUMA node; among equals
 * the one fewer GPUs already picked, so that on a DGX each GPU gets its own
 * rail; then the lowest index.  GPUs are taken in index order, so the
 * answer is deterministic.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "node/topo.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <tuple>

#include <json-c/json.h>

#ifdef TIDAL_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace tidal::topo {

const char *path_name(Path p)
{
	switch (p) {
	case Path::PciSwitch: return "pci-switch";
	case Path::HostBridge: return "host-bridge";
	case Path::Numa: return "numa";
	case Path::System: return "system";
	case Path::None: break;
	}
	return "none";
}

std::optional<GpuAffinity> gpu_affinity(const Summary &s, int index)
{
	for (const Gpu &g : s.gpus) {
		if (g.index != index)
			continue;
		GpuAffinity a;
		a.cpu_list = g.cpus;
		a.numa = g.numa;
		a.hca = g.hca;
		if (!parse_cpu_list(g.cpus, &a.cpus))
			return std::nullopt;
		return a;
	}
	return std::nullopt;
}

/* ---------------------------------------------------------------- JSON */

static json_object *jstr(const std::string &s)
{
	return json_object_new_string(s.c_str());
}

static json_object *gpu_json(const Gpu &g)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "index", json_object_new_int(g.index));
	json_object_object_add(o, "pci_bus_id", jstr(g.pci_bus_id));
	json_object_object_add(o, "pci_id", jstr(g.pci_id));
	json_object_object_add(o, "model", jstr(g.model));
	json_object_object_add(o, "numa", json_object_new_int(g.numa));
	json_object_object_add(o, "cpus", jstr(g.cpus));
	json_object_object_add(o, "hca", g.hca.empty() ? nullptr : jstr(g.hca));
	json_object_object_add(o, "hca_path", jstr(path_name(g.hca_path)));
	json_object *os = json_object_new_array();
	for (const std::string &n : g.osdevs)
		json_object_array_add(os, jstr(n));
	json_object_object_add(o, "osdevs", os);
	return o;
}

std::string to_json(const Summary &s)
{
	std::unique_ptr<json_object, decltype(&json_object_put)> o(
		json_object_new_object(), json_object_put);
	json_object *r = o.get();
	json_object_object_add(r, "v", json_object_new_int(1));
	json_object_object_add(r, "source", jstr(s.source));
	json_object_object_add(r, "packages", json_object_new_int(s.packages));
	json_object_object_add(r, "cores", json_object_new_int(s.cores));
	json_object_object_add(r, "pus", json_object_new_int(s.pus));
	json_object *numa = json_object_new_array();
	for (const NumaNode &n : s.numa) {
		json_object *j = json_object_new_object();
		json_object_object_add(j, "os_index",
				       json_object_new_int(n.os_index));
		json_object_object_add(j, "cpus", jstr(n.cpus));
		json_object_object_add(j, "mem_bytes",
				       json_object_new_int64((int64_t)n.mem_bytes));
		json_object_array_add(numa, j);
	}
	json_object_object_add(r, "numa_nodes", numa);
	json_object *gpus = json_object_new_array();
	for (const Gpu &g : s.gpus)
		json_object_array_add(gpus, gpu_json(g));
	json_object_object_add(r, "gpus", gpus);
	json_object *hcas = json_object_new_array();
	for (const Hca &h : s.hcas) {
		json_object *j = json_object_new_object();
		json_object_object_add(j, "name", jstr(h.name));
		json_object_object_add(j, "pci_bus_id", jstr(h.pci_bus_id));
		json_object_object_add(j, "numa", json_object_new_int(h.numa));
		json_object_object_add(j, "ports", json_object_new_int(h.ports));
		json_object_object_add(j, "node_guid", jstr(h.node_guid));
		json_object_array_add(hcas, j);
	}
	json_object_object_add(r, "hcas", hcas);
	json_object_object_add(r, "nvswitch",
			       json_object_new_boolean(s.nvswitch()));
	json_object_object_add(r, "nvswitches",
			       json_object_new_int(s.nvswitches));
	return json_object_to_json_string_ext(
		r, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

#ifdef TIDAL_HAVE_HWLOC

namespace {

using TopoPtr = std::unique_ptr<hwloc_topology, void (*)(hwloc_topology_t)>;

std::string list_of(hwloc_const_bitmap_t set)
{
	char *s = nullptr;
	if (!set || hwloc_bitmap_list_asprintf(&s, set) < 0 || !s)
		return "";
	std::string r(s);
	std::free(s);
	return r;
}

std::string bus_id(hwloc_obj_t pci)
{
	char b[32];
	const auto &a = pci->attr->pcidev;
	std::snprintf(b, sizeof(b), "%04x:%02x:%02x.%01x", a.domain, a.bus,
		      a.dev, a.func);
	return b;
}

std::string pci_id(hwloc_obj_t pci)
{
	char b[16];
	std::snprintf(b, sizeof(b), "%04x:%04x", pci->attr->pcidev.vendor_id,
		      pci->attr->pcidev.device_id);
	return b;
}

std::string info(hwloc_obj_t o, const char *name)
{
	const char *v = hwloc_obj_get_info_by_name(o, name);
	return v ? v : "";
}

hwloc_obj_t pci_parent(hwloc_obj_t o)
{
	for (o = o->parent; o; o = o->parent)
		if (o->type == HWLOC_OBJ_PCI_DEVICE)
			return o;
	return nullptr;
}

/* OS index of the single NUMA node local to I/O object O, else -1. */
int numa_of(hwloc_topology_t t, hwloc_obj_t o)
{
	hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(t, o);
	if (!a || !a->nodeset)
		return -1;
	hwloc_obj_t found = nullptr, n = nullptr;
	while ((n = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, n)))
		if (hwloc_bitmap_isincluded(n->nodeset, a->nodeset)) {
			if (found)
				return -1;
			found = n;
		}
	return found ? (int)found->os_index : -1;
}

std::string cpus_of(hwloc_topology_t t, hwloc_obj_t o)
{
	hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(t, o);
	return a ? list_of(a->cpuset) : "";
}

bool is_nvidia_gpu(hwloc_obj_t pci)
{
	return pci->attr->pcidev.vendor_id == 0x10de &&
	       (pci->attr->pcidev.class_id >> 8) == 0x03;
}

/* A GPU being collected, with the hwloc object its locality comes from. */
struct Found {
	Gpu gpu;
	hwloc_obj_t obj;
};

void find_pci(hwloc_topology_t t, Summary *s, std::vector<Found> *gpus)
{
	hwloc_obj_t o = nullptr;
	while ((o = hwloc_get_next_pcidev(t, o))) {
		const auto &a = o->attr->pcidev;
		if (a.vendor_id == 0x10de && (a.class_id >> 8) == 0x06)
			s->nvswitches++;
		if (!is_nvidia_gpu(o))
			continue;
		Found f{Gpu(), o};
		f.gpu.pci_bus_id = bus_id(o);
		f.gpu.pci_id = pci_id(o);
		f.gpu.model = info(o, "PCIDevice");
		gpus->push_back(f);
	}
	o = nullptr;
	while ((o = hwloc_get_next_bridge(t, o)))
		if (o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI &&
		    o->attr->bridge.upstream.pci.vendor_id == 0x10de)
			s->nvswitches++;
}

/* CUDA/NVML OS devices: name the PCI GPU above them, or stand alone. */
void find_osdevs(hwloc_topology_t t, Summary *s, std::vector<Found> *gpus)
{
	hwloc_obj_t o = nullptr;
	while ((o = hwloc_get_next_osdev(t, o))) {
		const char *sub = o->subtype ? o->subtype : "";
		if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS) {
			Hca h;
			h.name = o->name ? o->name : "";
			hwloc_obj_t p = pci_parent(o);
			h.pci_bus_id = p ? bus_id(p) : "";
			h.numa = numa_of(t, o);
			h.node_guid = info(o, "NodeGUID");
			while (!info(o, ("Port" + std::to_string(h.ports + 1) +
					 "State").c_str()).empty())
				h.ports++;
			s->hcas.push_back(h);
			continue;
		}
		if (std::strcmp(sub, "CUDA") && std::strcmp(sub, "NVML"))
			continue;
		hwloc_obj_t p = pci_parent(o);
		auto it = std::find_if(gpus->begin(), gpus->end(), [&](auto &f) {
			return p && f.obj == p;
		});
		if (it == gpus->end() && (p || !std::strcmp(sub, "NVML")))
			continue; /* a non-GPU parent; an orphan NVML twin */
		if (it == gpus->end()) {
			gpus->push_back({Gpu(), o});
			it = gpus->end() - 1;
		}
		it->gpu.osdevs.push_back(o->name ? o->name : "");
		if (!info(o, "GPUModel").empty())
			it->gpu.model = info(o, "GPUModel");
	}
}

/* Ancestors of O, nearest first. */
std::vector<hwloc_obj_t> chain(hwloc_obj_t o)
{
	std::vector<hwloc_obj_t> c;
	for (o = o->parent; o; o = o->parent)
		c.push_back(o);
	return c;
}

/* (path, minus depth of the common ancestor): smaller is nearer. */
std::pair<Path, int> distance(hwloc_obj_t a, hwloc_obj_t b, int numa_a,
			      int numa_b)
{
	std::vector<hwloc_obj_t> ca = chain(a), cb = chain(b);
	std::set<hwloc_obj_t> in_a(ca.begin(), ca.end());
	for (hwloc_obj_t x : cb) {
		if (!in_a.count(x))
			continue;
		int depth = (int)chain(x).size();
		if (x->type == HWLOC_OBJ_PCI_DEVICE ||
		    (x->type == HWLOC_OBJ_BRIDGE &&
		     x->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI))
			return {Path::PciSwitch, -depth};
		if (x->type == HWLOC_OBJ_BRIDGE)
			return {Path::HostBridge, -depth};
		break;
	}
	bool same = numa_a >= 0 && numa_a == numa_b;
	return {same ? Path::Numa : Path::System, 0};
}

void pair_hcas(hwloc_topology_t t, const std::vector<hwloc_obj_t> &hca_objs,
	       std::vector<Found> *gpus, Summary *s)
{
	std::vector<int> load(s->hcas.size(), 0);
	for (Found &f : *gpus) {
		int best = -1;
		std::tuple<Path, int, int> best_key{Path::None, 0, 0};
		for (size_t h = 0; h < s->hcas.size(); h++) {
			hwloc_obj_t ho = hca_objs[h];
			hwloc_obj_t hp = pci_parent(ho);
			auto [path, depth] = distance(f.obj, hp ? hp : ho,
						      f.gpu.numa,
						      s->hcas[h].numa);
			std::tuple<Path, int, int> key{path, depth, load[h]};
			if (best < 0 || key < best_key)
				best = (int)h, best_key = key;
		}
		if (best < 0)
			continue;
		load[best]++;
		f.gpu.hca = s->hcas[best].name;
		f.gpu.hca_path = std::get<0>(best_key);
	}
}

void count_cpus(hwloc_topology_t t, Summary *s)
{
	/* Packages with CPUs: some firmware lists empty ones (hwloc-calc
	 * does not count those either). */
	hwloc_obj_t pk = nullptr;
	while ((pk = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PACKAGE, pk)))
		if (pk->cpuset && !hwloc_bitmap_iszero(pk->cpuset))
			s->packages++;
	s->cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
	s->pus = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
	hwloc_obj_t n = nullptr;
	while ((n = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, n))) {
		NumaNode nn;
		nn.os_index = (int)n->os_index;
		nn.cpus = list_of(n->cpuset);
		nn.mem_bytes = n->attr->numanode.local_memory;
		s->numa.push_back(nn);
	}
}

Summary summarize(hwloc_topology_t t, const std::string &source)
{
	Summary s;
	s.source = source;
	count_cpus(t, &s);
	std::vector<Found> gpus;
	find_pci(t, &s, &gpus);
	find_osdevs(t, &s, &gpus);
	std::vector<hwloc_obj_t> hca_objs;
	hwloc_obj_t o = nullptr;
	while ((o = hwloc_get_next_osdev(t, o)))
		if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS)
			hca_objs.push_back(o);
	/* PCI GPUs by bus id, then OS-device-only ones by name. */
	std::stable_sort(gpus.begin(), gpus.end(), [](auto &a, auto &b) {
		bool pa = !a.gpu.pci_bus_id.empty(), pb = !b.gpu.pci_bus_id.empty();
		if (pa != pb)
			return pa;
		return pa ? a.gpu.pci_bus_id < b.gpu.pci_bus_id
			  : a.gpu.osdevs < b.gpu.osdevs;
	});
	for (size_t i = 0; i < gpus.size(); i++) {
		gpus[i].gpu.index = (int)i;
		gpus[i].gpu.numa = numa_of(t, gpus[i].obj);
		gpus[i].gpu.cpus = cpus_of(t, gpus[i].obj);
	}
	pair_hcas(t, hca_objs, &gpus, &s);
	for (Found &f : gpus)
		s.gpus.push_back(std::move(f.gpu));
	return s;
}

/* Load with every I/O object kept: KEEP_IMPORTANT would drop NVSwitches
 * (PCI class 0x0680, "other bridge"). */
TopoPtr load(const std::string &xml)
{
	hwloc_topology_t t;
	if (hwloc_topology_init(&t) < 0)
		throw std::runtime_error("hwloc_topology_init failed");
	TopoPtr p(t, hwloc_topology_destroy);
	hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (!xml.empty() && hwloc_topology_set_xml(t, xml.c_str()) < 0)
		throw std::runtime_error(xml + ": hwloc cannot read it as an "
					 "XML topology: " + std::strerror(errno));
	if (hwloc_topology_load(t) < 0)
		throw std::runtime_error((xml.empty() ? "this machine"
						      : xml) +
					 ": hwloc_topology_load failed: " +
					 std::strerror(errno));
	return p;
}

} /* namespace */

Summary summarize_live()
{
	TopoPtr t = load("");
	return summarize(t.get(), "live");
}

Summary summarize_xml(const std::string &path)
{
	if (path.empty())
		throw std::runtime_error("summarize_xml: empty path");
	TopoPtr t = load(path);
	return summarize(t.get(), path);
}

#else /* !TIDAL_HAVE_HWLOC */

Summary summarize_live()
{
	throw std::runtime_error("built without hwloc (config.mk HAVE_HWLOC=0)");
}

Summary summarize_xml(const std::string &path)
{
	throw std::runtime_error(path + ": built without hwloc "
				 "(config.mk HAVE_HWLOC=0)");
}

#endif

} /* namespace tidal::topo */
