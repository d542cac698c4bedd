/*
 * topo.h - what a node's hardware looks like to the scheduler and the
 * launcher: GPUs, NUMA nodes and InfiniBand HCAs, and which GPU sits near
 * which CPUs and which HCA.
 *
 * summarize_live() reads this machine through hwloc 2; summarize_xml()
 * reads an hwloc XML export (lstopo --of xml), which is how the tests see a
 * DGX on a machine without GPUs.  tidald sends to_json() to the plugin at
 * registration; tidal-launch binds each rank with gpu_affinity().
 * hcas_from_verbs() asks libibverbs for the HCAs' ports (a machine without
 * InfiniBand has none: an empty list, not an error).
 *
 * Built without hwloc (config.mk HAVE_HWLOC=0) the summarize functions
 * throw; without libibverbs hcas_from_verbs() returns an empty list.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tidal::topo {

/* How close a GPU is to its HCA, best first. */
enum class Path : std::uint8_t {
	PciSwitch,  /* below the same PCIe switch (GPUDirect RDMA path) */
	HostBridge, /* the same PCIe root complex */
	Numa,       /* the same NUMA node, different root complexes */
	System,     /* across the inter-socket link */
	None,       /* no HCA on this node */
};
const char *path_name(Path p);

struct Gpu {
	int index = 0;          /* in PCI bus id order (CUDA_DEVICE_ORDER=PCI_BUS_ID) */
	std::string pci_bus_id; /* "0000:07:00.0"; "" for an OS device only */
	std::string pci_id;     /* "10de:20b0" */
	std::string model;      /* hwloc's GPUModel or PCIDevice, if known */
	int numa = -1;          /* OS index of its NUMA node; -1 = several/none */
	std::string cpus;       /* local CPUs as a list, "0-15,32-47" */
	std::string hca;        /* nearest HCA's name, "" if none */
	Path hca_path = Path::None;
	std::vector<std::string> osdevs; /* "cuda0", "nvml0", ... */
};

struct NumaNode {
	int os_index = 0;
	std::string cpus;
	std::uint64_t mem_bytes = 0;
};

struct Hca {
	std::string name;       /* "mlx5_0" */
	std::string pci_bus_id;
	int numa = -1;
	int ports = 0;          /* ports hwloc knows of (Port<N>State infos) */
	std::string node_guid;  /* "248a:0703:001e:39fe" from hwloc, if known */
};

struct Summary {
	std::string source;     /* "live" or the XML path */
	int packages = 0, cores = 0, pus = 0;
	std::vector<NumaNode> numa;
	std::vector<Gpu> gpus;
	std::vector<Hca> hcas;
	int nvswitches = 0;     /* NVIDIA bridge-class PCI devices */
	bool nvswitch() const { return nvswitches > 0; }
};

/* Throw std::runtime_error naming the source and hwloc's failure. */
Summary summarize_live();
Summary summarize_xml(const std::string &path);

/* {"v":1,"source":..,"packages":..,"numa_nodes":[..],"gpus":[..],
 *  "hcas":[..],"nvswitch":bool,"nvswitches":n} (tidald(8) documents it). */
std::string to_json(const Summary &s);

/* CPU and NIC binding for the GPU with INDEX (Gpu::index). */
struct GpuAffinity {
	std::vector<int> cpus;  /* OS CPU numbers, for sched_setaffinity */
	std::string cpu_list;   /* the same as "0-15,32-47" */
	int numa = -1;
	std::string hca;        /* for NCCL_IB_HCA / UCX_NET_DEVICES */
};
std::optional<GpuAffinity> gpu_affinity(const Summary &s, int index);

/* "0-3,8,10-11" -> {0,1,2,3,8,10,11} ("" -> {}).  RET false on a
 * malformed list, or a CPU above kMaxCpu.  In cpu_list.cc, which needs
 * no hwloc. */
constexpr long kMaxCpu = 65535;
bool parse_cpu_list(const std::string &list, std::vector<int> *out);

/* ---- libibverbs ---- */
struct VerbsPort {
	int num = 0;
	std::string state;      /* "ACTIVE", "DOWN", ... */
	std::string link_layer; /* "InfiniBand", "Ethernet" */
	int lid = 0;
	double gbps = 0;        /* active width x speed, 0 = unknown */
};
struct VerbsHca {
	std::string name;
	std::string node_guid;  /* "0x248a0703001e39fe" */
	int numa = -1;          /* from sysfs, -1 = unknown */
	std::vector<VerbsPort> ports;
};
/* Every RDMA device libibverbs lists; none (or no kernel support) -> empty.
 * A device that fails to open is skipped with a line in WARNINGS. */
std::vector<VerbsHca> hcas_from_verbs(std::vector<std::string> *warnings =
					      nullptr);
std::string verbs_to_json(const std::vector<VerbsHca> &hcas);

} /* namespace tidal::topo */
