/*
 * main.cc - tidal-launch: runs and restarts the trainer ranks of one node
 * inside a Slurm job (see launcher.h and man/man1/tidal-launch.1); with
 * --ctl, a client of a running launcher's control socket.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "launcher/control.h"
#include "launcher/launcher.h"
#include "launcher/options.h"
#include "proto/messages.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

/* A checkpoint may take a while to become durable. */
constexpr double kCtlTimeoutS = 600;

int control_client(const tidal::launch::Options &o)
{
	std::string sock = o.run_dir + "/" + o.node + "/launch-" + o.job +
			   ".sock";
	std::string reply, err;
	if (!tidal::wire::unix_request(
		    sock,
		    tidal::wire::encode(
			    tidal::wire::ControlRequest{ o.ctl_op }),
		    &reply, kCtlTimeoutS * 1000, &err)) {
		std::fprintf(stderr, "tidal-launch: error: %s\n", err.c_str());
		return 1;
	}
	std::puts(reply.c_str());
	return reply.find("\"ok\":true") != std::string::npos ? 0 : 1;
}

/* The variables sbatch exported from the submission that would make srun
 * ask for the job's first size after a resize (or for per-node GPUs a
 * per-job count cannot split): without them a step gets every GPU the
 * job holds on each node. */
const char *const kStaleSrunVars[] = {
	"SLURM_GPUS_PER_NODE", "SLURM_GPUS",	       "SLURM_GPUS_PER_TASK",
	"SLURM_NTASKS",	       "SLURM_NPROCS",	       "SLURM_NTASKS_PER_NODE",
	"SLURM_TRES_PER_TASK", "SLURM_GPUS_PER_SOCKET",
};

/* tidal-launch --srun ARGS...: in the batch script, start one launcher
 * per node of this run of the job with everything the job holds there
 * (srun --whole), whatever size the job was submitted at. */
int run_srun(int argc, char **argv)
{
	const char *nodes = std::getenv("SLURM_JOB_NUM_NODES");
	if (!nodes || !*nodes) {
		std::fprintf(stderr, "tidal-launch: error: --srun needs "
				     "$SLURM_JOB_NUM_NODES: run it in a Slurm "
				     "batch script\n");
		return 2;
	}
	for (const char *v : kStaleSrunVars)
		unsetenv(v);
	std::string ntasks = std::string("--ntasks=") + nodes;
	std::vector<char *> av = { (char *)"srun", (char *)"--whole",
				   ntasks.data(),
				   (char *)"--ntasks-per-node=1", argv[0] };
	for (int i = 2; i < argc; i++)
		av.push_back(argv[i]);
	av.push_back(nullptr);
	execvp("srun", av.data());
	std::fprintf(stderr, "tidal-launch: error: cannot run srun: %s\n",
		     std::strerror(errno));
	return 1;
}

} /* namespace */

int main(int argc, char **argv)
{
	if (argc > 1 && !std::strcmp(argv[1], "--srun"))
		return run_srun(argc, argv);
	tidal::launch::Options o = tidal::launch::parse_options(argc, argv);
	if (!o.ctl_op.empty())
		return control_client(o);
	tidal::launch::Launcher l(o);
	int rc = l.run();
	if (int sig = l.interrupted_by()) {
		/* Die by it: an exit status of 0 would tell Slurm the training
		 * finished. */
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, sig);
		std::signal(sig, SIG_DFL);
		sigprocmask(SIG_UNBLOCK, &set, nullptr);
		raise(sig);
	}
	return rc;
}
