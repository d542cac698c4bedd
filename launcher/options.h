/*
 * options.h - tidal-launch's configuration: command line first, then the
 * Slurm environment of the step it runs in, then defaults.
 *
 *   job        --job,        else SLURM_JOB_ID               (required)
 *   node       --node/-N,    else SLURMD_NODENAME, else the short hostname
 *   node index --node-index, else SLURM_NODEID,  else 0
 *   nodes      --nodes,      else SLURM_NNODES,  else 1
 *   ranks      --ranks,      else the count of CUDA_VISIBLE_DEVICES,
 *                            else SLURM_GPUS_ON_NODE, else 1
 *   store      --store HOST:PORT, else SLURM_LAUNCH_NODE_IPADDR (or
 *              127.0.0.1) and --store-port (default the first of
 *              SLURM_STEP_RESV_PORTS, else LO + job % (HI - LO + 1) of
 *              TIDAL_STORE_PORTS=LO-HI, default 29400-29899)
 *   store auth --store-auth (auto, munge, none; default auto: MUNGE if
 *              munged answers, at AuthInfo=socket= of slurm.conf or
 *              TIDAL_MUNGE_SOCKET, else none with a warning)
 *   run dir    --run-dir,    else TIDAL_RUN_DIR, else /run/tidal
 *   ckpt root  --ckpt-dir,   else tidald's "hello" (resolved later, in
 *              resume.cc), else TIDAL_CKPT_DIR, else /var/lib/tidal/ckpt
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <string>
#include <vector>

namespace tidal::launch {

struct Options {
	std::string job;
	std::string node;
	int node_index = 0;
	int nodes = 1;
	int ranks = 1;
	std::string store_host;
	int store_port = 0;
	std::string store_auth = "auto"; /* auto, munge, none */
	std::string run_dir;
	std::string ckpt_root;      /* empty: ask tidald, then the env */
	int restart_budget = 3;
	double stop_grace_s = 300;
	double rdzv_timeout_s = 300;
	bool bind_cpus = true;      /* hwloc binding, where built */
	std::string topology_xml;   /* bind from this hwloc XML (tests) */
	std::vector<std::string> trainer; /* TRAINER [ARGS...] */
	std::string ctl_op;         /* --ctl OP: be a control client */
};

/* Parse ARGV and the environment.  Exits 0 for --help/--version and 2
 * with a message naming the option, the value and the rule on bad usage. */
Options parse_options(int argc, char **argv);

/* The number of devices in a CUDA_VISIBLE_DEVICES-style list ("0,1,3");
 * 0 for an empty list.  Exposed for the tests. */
int count_devices(const std::string &list);

} /* namespace tidal::launch */
