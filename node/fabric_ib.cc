/*
 * fabric_ib.cc - walk libibnetdisc's node list into a core Fabric.
 *
 * Every cable appears twice in libibnetdisc (once from each end); it is
 * kept once, from the end with the lower (GUID, port).  A link's rate is
 * its active width times the active lane speed (the extended speed field
 * when the port reports one: FDR and faster).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "node/fabric_ib.h"

#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#ifdef TIDAL_HAVE_IBNETDISC
#include <infiniband/ibnetdisc.h>
#include <infiniband/mad.h>
#endif

namespace tidal::topo {

#ifdef TIDAL_HAVE_IBNETDISC

namespace {

/* Per-lane data rate in Gb/s after line coding. */
double link_gbps(ibnd_port_t *p)
{
	unsigned width = mad_get_field(p->info, 0, IB_PORT_LINK_WIDTH_ACTIVE_F);
	unsigned speed = mad_get_field(p->info, 0, IB_PORT_LINK_SPEED_ACTIVE_F);
	unsigned ext = mad_get_field(p->info, 0,
				     IB_PORT_LINK_SPEED_EXT_ACTIVE_F);
	int lanes = width == 1 ? 1 : width == 2 ? 4 : width == 4 ? 8
		  : width == 8 ? 12 : width == 16 ? 2 : 0;
	double lane = speed == 1 ? 2.0 : speed == 2 ? 4.0 : speed == 4 ? 8.0 : 0;
	if (ext)
		lane = ext == 1 ? 13.64 : ext == 2 ? 25.0 : ext == 4 ? 50.0
		     : ext == 8 ? 100.0 : lane;
	return lanes * lane;
}

std::string desc_of(ibnd_node_t *n)
{
	size_t len = strnlen(n->nodedesc, sizeof(n->nodedesc));
	std::string s(n->nodedesc, len);
	while (!s.empty() && (s.back() == ' ' || s.back() == '\0'))
		s.pop_back();
	return s;
}

void add_links(ibnd_node_t *n, fabric::Fabric *f)
{
	for (int i = 1; i <= n->numports; i++) {
		ibnd_port_t *p = n->ports ? n->ports[i] : nullptr;
		if (!p || !p->remoteport || !p->remoteport->node)
			continue;
		ibnd_port_t *r = p->remoteport;
		std::pair<uint64_t, int> me{n->guid, p->portnum},
			them{r->node->guid, r->portnum};
		if (them < me)
			continue; /* the other end records it */
		f->links.push_back({n->guid, p->portnum, r->node->guid,
				    r->portnum, link_gbps(p)});
	}
}

} /* namespace */

fabric::Fabric discover_fabric(const FabricOptions &opt)
{
	ibnd_config_t cfg;
	std::memset(&cfg, 0, sizeof(cfg));
	cfg.timeout_ms = opt.timeout_ms;
	cfg.retries = opt.retries;
	std::vector<char> ca(opt.ca.begin(), opt.ca.end());
	ca.push_back('\0');
	errno = 0;
	ibnd_fabric_t *raw = ibnd_discover_fabric(
		opt.ca.empty() ? nullptr : ca.data(), opt.port, nullptr, &cfg);
	if (!raw)
		throw std::runtime_error(
			std::string("ibnd_discover_fabric") +
			(opt.ca.empty() ? "" : " from " + opt.ca) +
			" failed" + (errno ? std::string(": ") +
					     std::strerror(errno) : "") +
			"; HINT: needs an InfiniBand HCA with an active port "
			"and read/write access to /dev/infiniband/umad* (or "
			"ibsim with LD_PRELOAD=libumad2sim.so)");
	std::unique_ptr<ibnd_fabric_t, void (*)(ibnd_fabric_t *)> fab(
		raw, ibnd_destroy_fabric);
	fabric::Fabric f;
	f.source = "ibnetdisc";
	for (ibnd_node_t *n = fab->nodes; n; n = n->next) {
		if (n->type == IB_NODE_SWITCH)
			f.switches.push_back({n->guid, desc_of(n), n->numports});
		else if (n->type == IB_NODE_CA)
			f.cas.push_back({n->guid, desc_of(n), n->numports});
		else
			continue; /* routers: not part of a Slurm tree */
		add_links(n, &f);
	}
	return f;
}

#else /* !TIDAL_HAVE_IBNETDISC */

fabric::Fabric discover_fabric(const FabricOptions &)
{
	throw std::runtime_error("built without libibnetdisc "
				 "(config.mk HAVE_IBNETDISC=0)");
}

#endif

} /* namespace tidal::topo */
