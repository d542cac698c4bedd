/*
 * topo_verbs.cc - HCAs and their ports as libibverbs reports them.
 *
 * hwloc names the HCAs and places them; verbs adds what only the driver
 * knows: port state, LID, link layer and active rate.  A machine without
 * RDMA hardware (or without the kernel modules) lists no device, which is a
 * normal answer: an empty list, no error.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "node/topo.h"

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <memory>

#include <arpa/inet.h>
#include <endian.h>
#include <json-c/json.h>

#ifdef TIDAL_HAVE_IBVERBS
#include <infiniband/verbs.h>
#endif

namespace tidal::topo {

#ifdef TIDAL_HAVE_IBVERBS

namespace {

const char *port_state(ibv_port_state s)
{
	const char *n = ibv_port_state_str(s);
	switch (s) {
	case IBV_PORT_DOWN: return "DOWN";
	case IBV_PORT_INIT: return "INIT";
	case IBV_PORT_ARMED: return "ARMED";
	case IBV_PORT_ACTIVE: return "ACTIVE";
	default: return n ? n : "UNKNOWN";
	}
}

/* Lanes x per-lane data rate (after 8b/10b or 64b/66b coding). */
double rate_gbps(uint8_t width, uint32_t speed)
{
	int lanes = width == 1 ? 1 : width == 2 ? 4 : width == 4 ? 8
		  : width == 8 ? 12 : width == 16 ? 2 : 0;
	double lane = speed == 1 ? 2.0 : speed == 2 ? 4.0 : speed == 4 ? 8.0
		    : speed == 8 ? 10.3125 : speed == 16 ? 13.64
		    : speed == 32 ? 25.0 : speed == 64 ? 50.0
		    : speed == 128 ? 100.0 : 0;
	return lanes * lane;
}

int sysfs_numa(const ibv_device *d)
{
	std::ifstream f(std::string("/sys/class/infiniband/") +
			ibv_get_device_name(const_cast<ibv_device *>(d)) +
			"/device/numa_node");
	int n = -1;
	return f >> n ? n : -1;
}

bool one_device(ibv_device *d, VerbsHca *out, std::string *why)
{
	out->name = ibv_get_device_name(d);
	char g[24];
	std::snprintf(g, sizeof(g), "0x%016" PRIx64,
		      (uint64_t)be64toh(ibv_get_device_guid(d)));
	out->node_guid = g;
	out->numa = sysfs_numa(d);
	std::unique_ptr<ibv_context, int (*)(ibv_context *)> ctx(
		ibv_open_device(d), ibv_close_device);
	if (!ctx) {
		*why = out->name + ": ibv_open_device failed";
		return false;
	}
	ibv_device_attr attr;
	if (ibv_query_device(ctx.get(), &attr)) {
		*why = out->name + ": ibv_query_device failed";
		return false;
	}
	for (int p = 1; p <= attr.phys_port_cnt; p++) {
		ibv_port_attr pa;
		if (ibv_query_port(ctx.get(), (uint8_t)p, &pa))
			continue;
		VerbsPort vp;
		vp.num = p;
		vp.state = port_state(pa.state);
		vp.link_layer = pa.link_layer == IBV_LINK_LAYER_ETHERNET
					? "Ethernet" : "InfiniBand";
		vp.lid = pa.lid;
		vp.gbps = rate_gbps(pa.active_width, pa.active_speed);
		out->ports.push_back(vp);
	}
	return true;
}

} /* namespace */

std::vector<VerbsHca> hcas_from_verbs(std::vector<std::string> *warnings)
{
	std::vector<VerbsHca> out;
	int n = 0;
	ibv_device **list = ibv_get_device_list(&n);
	if (!list)
		return out; /* ENOSYS: no RDMA kernel support */
	for (int i = 0; i < n; i++) {
		VerbsHca h;
		std::string why;
		if (one_device(list[i], &h, &why))
			out.push_back(h);
		else if (warnings)
			warnings->push_back(why + "; skipped");
	}
	ibv_free_device_list(list);
	return out;
}

#else /* !TIDAL_HAVE_IBVERBS */

std::vector<VerbsHca> hcas_from_verbs(std::vector<std::string> *)
{
	return {};
}

#endif

std::string verbs_to_json(const std::vector<VerbsHca> &hcas)
{
	std::unique_ptr<json_object, decltype(&json_object_put)> arr(
		json_object_new_array(), json_object_put);
	for (const VerbsHca &h : hcas) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "name",
				       json_object_new_string(h.name.c_str()));
		json_object_object_add(o, "node_guid",
				       json_object_new_string(h.node_guid.c_str()));
		json_object_object_add(o, "numa", json_object_new_int(h.numa));
		json_object *ports = json_object_new_array();
		for (const VerbsPort &p : h.ports) {
			json_object *j = json_object_new_object();
			json_object_object_add(j, "num", json_object_new_int(p.num));
			json_object_object_add(j, "state",
					       json_object_new_string(p.state.c_str()));
			json_object_object_add(
				j, "link_layer",
				json_object_new_string(p.link_layer.c_str()));
			json_object_object_add(j, "lid", json_object_new_int(p.lid));
			json_object_object_add(j, "gbps",
					       json_object_new_double(p.gbps));
			json_object_array_add(ports, j);
		}
		json_object_object_add(o, "ports", ports);
		json_object_array_add(arr.get(), o);
	}
	return json_object_to_json_string_ext(
		arr.get(), JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

} /* namespace tidal::topo */
