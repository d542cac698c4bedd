/*
 * options.cc - command line and Slurm environment of tidal-launch.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "launcher/options.h"

#include <getopt.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/version.h"

namespace tidal::launch {

namespace {

const char kUsage[] =
	"usage: tidal-launch [options] -- TRAINER [ARGS...]\n"
	"       tidal-launch --srun [options] -- TRAINER [ARGS...]\n"
	"\n"
	"Runs one TRAINER process per local GPU inside a Slurm job step and\n"
	"restarts them all from the newest checkpoint when one fails.\n"
	"With --srun (first), in the batch script: srun one launcher per node\n"
	"with all the job holds there (srun --whole), whatever size the job\n"
	"was submitted at (sbatch's stale SLURM_GPUS_PER_NODE etc. unset).\n"
	"\n"
	"  -J, --job ID            job id (default $SLURM_JOB_ID)\n"
	"  -N, --node NAME         node name (default $SLURMD_NODENAME, else\n"
	"                          the short hostname)\n"
	"      --node-index I      this node's index (default $SLURM_NODEID)\n"
	"      --nodes N           nodes in the job (default $SLURM_NNODES)\n"
	"      --ranks N           trainer ranks on this node (default: one per\n"
	"                          GPU of $CUDA_VISIBLE_DEVICES or\n"
	"                          $SLURM_GPUS_ON_NODE, else 1)\n"
	"      --store HOST:PORT   rendezvous store (node 0 serves it)\n"
	"      --store-port P      store port on $SLURM_LAUNCH_NODE_IPADDR\n"
	"                          (default: the first of the step's ports\n"
	"                          Slurm reserved, $SLURM_STEP_RESV_PORTS, with\n"
	"                          MpiParams=ports=...; else LO + job %% (HI -\n"
	"                          LO + 1) of $TIDAL_STORE_PORTS=LO-HI, by\n"
	"                          default 29400-29899)\n"
	"      --store-auth MODE   who may use the store: munge (this job's\n"
	"                          uid only, both ways), none, or auto\n"
	"                          (default: munge if munged answers, else\n"
	"                          none, with a warning)\n"
	"      --ckpt-dir D        checkpoint root (default: tidald's, else\n"
	"                          $TIDAL_CKPT_DIR, else /var/lib/tidal/ckpt)\n"
	"      --run-dir D         sockets (default $TIDAL_RUN_DIR or /run/tidal)\n"
	"      --restart-budget N  restarts after failures (default 3)\n"
	"      --stop-grace S      after checkpoint_stop, resume if no SIGTERM\n"
	"                          comes within S seconds (default 300)\n"
	"      --rdzv-timeout S    wait for the other nodes (default 300)\n"
	"      --no-bind           do not bind ranks to their GPU's CPUs\n"
	"      --topology-xml F    bind from this hwloc XML, not the machine\n"
	"\n"
	"  tidal-launch --ctl OP [-J ID] [-N NAME] [--run-dir D]\n"
	"      send OP (status, checkpoint, checkpoint_stop) to the running\n"
	"      launcher's control socket and print its JSON reply\n"
	"      --help, --version\n";

[[noreturn]] void usage_error(const std::string &msg)
{
	std::fprintf(stderr, "tidal-launch: error: %s\n"
			     "Try 'tidal-launch --help'.\n", msg.c_str());
	std::exit(2);
}

std::string env_or(const char *name, const std::string &dflt)
{
	const char *v = std::getenv(name);
	return v && *v ? v : dflt;
}

/* A whole decimal integer in [LO, HI]; WHAT names it in the error. */
long parse_int(const std::string &what, const std::string &s, long lo,
	       long hi)
{
	char *end;
	errno = 0;
	long v = std::strtol(s.c_str(), &end, 10);
	if (errno || *end || s.empty() || v < lo || v > hi)
		usage_error(what + " '" + s + "': must be an integer from " +
			    std::to_string(lo) + " to " + std::to_string(hi));
	return v;
}

double parse_seconds(const std::string &what, const std::string &s)
{
	char *end;
	errno = 0;
	double v = std::strtod(s.c_str(), &end);
	if (errno || *end || s.empty() || !(v >= 0) || v > 1e7)
		usage_error(what + " '" + s +
			    "': must be a number of seconds from 0 to 1e7");
	return v;
}

void split_store(Options &o, const std::string &s)
{
	size_t colon = s.rfind(':');
	if (colon == std::string::npos || colon == 0)
		usage_error("--store '" + s + "': must be HOST:PORT");
	o.store_host = s.substr(0, colon);
	o.store_port = (int)parse_int("--store port", s.substr(colon + 1), 1,
				      65535);
}

std::string short_hostname()
{
	char h[256] = "";
	gethostname(h, sizeof h - 1);
	std::string s = h;
	return s.substr(0, s.find('.'));
}

/* Fill what the command line left open from the Slurm environment. */
/* The store's port when none is given: the first port Slurm reserved for
 * this step (MpiParams=ports=LO-HI in slurm.conf; SLURM_STEP_RESV_PORTS is
 * "P", "P-Q" or a list), which no other step on the node holds; else one
 * derived from the job id within TIDAL_STORE_PORTS=LO-HI (29400-29899),
 * which two jobs whose ids differ by a multiple of the range's size would
 * share on the same first node. */
int default_store_port(const std::string &job)
{
	const char *resv = getenv("SLURM_STEP_RESV_PORTS");
	if (resv && *resv >= '0' && *resv <= '9') {
		long p = std::strtol(resv, nullptr, 10);
		if (p > 0 && p < 65536)
			return (int)p;
	}
	int lo = 29400, hi = 29899;
	if (const char *r = getenv("TIDAL_STORE_PORTS"); r && *r) {
		std::string v = r, what = "$TIDAL_STORE_PORTS=" + v;
		size_t dash = v.find('-');
		if (dash == std::string::npos)
			usage_error(what + ": expected LO-HI, two ports");
		lo = (int)parse_int(what + " (LO)", v.substr(0, dash), 1, 65535);
		hi = (int)parse_int(what + " (HI)", v.substr(dash + 1), lo,
				    65535);
	}
	char *end;
	unsigned long id = std::strtoul(job.c_str(), &end, 10);
	return lo + (int)(id % (unsigned long)(hi - lo + 1));
}

void from_environment(Options &o, bool have_ranks, bool have_index,
		      bool have_nodes, bool have_port)
{
	if (o.job.empty())
		o.job = env_or("SLURM_JOB_ID", "");
	if (o.job.empty())
		usage_error("no job id: not in a Slurm job ($SLURM_JOB_ID "
			    "unset) and no --job given");
	if (o.job.find_first_of("/ ") != std::string::npos)
		usage_error("--job '" + o.job + "': must not contain '/' or ' '");
	if (o.node.empty())
		o.node = env_or("SLURMD_NODENAME", short_hostname());
	if (!have_index)
		o.node_index = (int)parse_int("$SLURM_NODEID",
					      env_or("SLURM_NODEID", "0"), 0,
					      100000);
	if (!have_nodes)
		o.nodes = (int)parse_int("$SLURM_NNODES",
					 env_or("SLURM_NNODES", "1"), 1,
					 100000);
	if (o.node_index >= o.nodes)
		usage_error("node index " + std::to_string(o.node_index) +
			    ": must be below the node count " +
			    std::to_string(o.nodes));
	if (!have_ranks) {
		int n = count_devices(env_or("CUDA_VISIBLE_DEVICES", ""));
		if (!n)
			n = (int)parse_int("$SLURM_GPUS_ON_NODE",
					   env_or("SLURM_GPUS_ON_NODE", "1"), 0,
					   1024);
		o.ranks = n ? n : 1;
	}
	if (o.store_host.empty()) {
		o.store_host = env_or("SLURM_LAUNCH_NODE_IPADDR", "127.0.0.1");
		if (!have_port)
			o.store_port = default_store_port(o.job);
	}
	if (o.run_dir.empty())
		o.run_dir = env_or("TIDAL_RUN_DIR", "/run/tidal");
}

} /* namespace */

int count_devices(const std::string &list)
{
	if (list.empty() || list == "NoDevFiles")
		return 0;
	int n = 1;
	for (char c : list)
		n += c == ',';
	return n;
}

Options parse_options(int argc, char **argv)
{
	enum {
		O_INDEX = 256, O_NODES, O_RANKS, O_STORE, O_PORT, O_CKPT,
		O_RUN, O_BUDGET, O_GRACE, O_RDZV, O_NOBIND, O_TOPO, O_CTL, O_HELP, O_VERSION,
		O_AUTH,
	};
	static const struct option longopts[] = {
		{"job", required_argument, nullptr, 'J'},
		{"node", required_argument, nullptr, 'N'},
		{"node-index", required_argument, nullptr, O_INDEX},
		{"nodes", required_argument, nullptr, O_NODES},
		{"ranks", required_argument, nullptr, O_RANKS},
		{"store", required_argument, nullptr, O_STORE},
		{"store-port", required_argument, nullptr, O_PORT},
		{"store-auth", required_argument, nullptr, O_AUTH},
		{"ckpt-dir", required_argument, nullptr, O_CKPT},
		{"run-dir", required_argument, nullptr, O_RUN},
		{"restart-budget", required_argument, nullptr, O_BUDGET},
		{"stop-grace", required_argument, nullptr, O_GRACE},
		{"rdzv-timeout", required_argument, nullptr, O_RDZV},
		{"no-bind", no_argument, nullptr, O_NOBIND},
		{"ctl", required_argument, nullptr, O_CTL},
		{"topology-xml", required_argument, nullptr, O_TOPO},
		{"help", no_argument, nullptr, O_HELP},
		{"version", no_argument, nullptr, O_VERSION},
		{nullptr, 0, nullptr, 0},
	};
	Options o;
	bool have_ranks = false, have_index = false, have_nodes = false;
	bool have_port = false;
	int c;
	/* "+": stop at the first non-option, the trainer. */
	while ((c = getopt_long(argc, argv, "+J:N:", longopts, nullptr)) != -1) {
		switch (c) {
		case 'J': o.job = optarg; break;
		case 'N': o.node = optarg; break;
		case O_INDEX:
			o.node_index = (int)parse_int("--node-index", optarg, 0,
						      100000);
			have_index = true;
			break;
		case O_NODES:
			o.nodes = (int)parse_int("--nodes", optarg, 1, 100000);
			have_nodes = true;
			break;
		case O_RANKS:
			o.ranks = (int)parse_int("--ranks", optarg, 1, 1024);
			have_ranks = true;
			break;
		case O_STORE: split_store(o, optarg); break;
		case O_PORT:
			o.store_port = (int)parse_int("--store-port", optarg, 1,
						      65535);
			have_port = true;
			break;
		case O_AUTH:
			o.store_auth = optarg;
			if (o.store_auth != "auto" && o.store_auth != "munge" &&
			    o.store_auth != "none")
				usage_error("--store-auth '" + o.store_auth +
					    "': expected auto, munge or none");
			break;
		case O_CKPT: o.ckpt_root = optarg; break;
		case O_RUN: o.run_dir = optarg; break;
		case O_BUDGET:
			o.restart_budget = (int)parse_int("--restart-budget",
							  optarg, 0, 1000000);
			break;
		case O_GRACE:
			o.stop_grace_s = parse_seconds("--stop-grace", optarg);
			break;
		case O_RDZV:
			o.rdzv_timeout_s = parse_seconds("--rdzv-timeout", optarg);
			break;
		case O_NOBIND: o.bind_cpus = false; break;
		case O_CTL: o.ctl_op = optarg; break;
		case O_TOPO: o.topology_xml = optarg; break;
		case O_HELP: std::fputs(kUsage, stdout); std::exit(0);
		case O_VERSION: std::puts("tidal-launch " TIDAL_VERSION); std::exit(0);
		default: usage_error("bad option");
		}
	}
	for (int i = optind; i < argc; i++)
		o.trainer.push_back(argv[i]);
	if (o.trainer.empty() && o.ctl_op.empty())
		usage_error("no trainer: give it after '--', e.g. "
			    "'tidal-launch -- tidal-train --iters 100'");
	from_environment(o, have_ranks, have_index, have_nodes, have_port);
	return o;
}

} /* namespace tidal::launch */
