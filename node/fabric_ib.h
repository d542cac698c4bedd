/*
 * fabric_ib.h - InfiniBand fabric discovery with libibnetdisc.
 *
 * discover_fabric() sends directed-route SMPs out of a local HCA port (no
 * subnet manager needed) and returns every switch, channel adapter and
 * cable it reaches, as core/placement/fabric.h's Fabric;
 * fabric::build_tree() and fabric::to_json() turn that into the switch
 * tree and the JSON tidald reports.  Under ibsim the same code runs with
 * LD_PRELOAD=libumad2sim.so.
 *
 * Built without libibnetdisc (config.mk HAVE_IBNETDISC=0) it throws.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <string>

#include "core/placement/fabric.h"

namespace tidal::topo {

struct FabricOptions {
	std::string ca;       /* HCA to send from, "" = the first one */
	int port = 0;         /* its port, 0 = the first active one */
	unsigned timeout_ms = 0; /* per SMP, 0 = libibmad's default */
	unsigned retries = 0;
};

/* Throws std::runtime_error saying what failed and what to check. */
fabric::Fabric discover_fabric(const FabricOptions &opt = FabricOptions());

} /* namespace tidal::topo */
