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

#include <cstdio>

namespace {

/* A checkpoint may take a while to become durable. */
constexpr double kCtlTimeoutS = 600;

int control_client(const tidal::launch::Options &o)
{
	std::string sock = o.run_dir + "/" + o.node + "/launch-" + o.job +
			   ".sock";
	std::string reply, err;
	if (!tidal::launch::unix_request(sock, "{\"v\":1,\"op\":\"" +
						       o.ctl_op + "\"}",
					 kCtlTimeoutS, reply, err)) {
		std::fprintf(stderr, "tidal-launch: error: %s\n", err.c_str());
		return 1;
	}
	std::puts(reply.c_str());
	return reply.find("\"ok\":true") != std::string::npos ? 0 : 1;
}

} /* namespace */

int main(int argc, char **argv)
{
	tidal::launch::Options o = tidal::launch::parse_options(argc, argv);
	if (!o.ctl_op.empty())
		return control_client(o);
	tidal::launch::Launcher l(o);
	return l.run();
}
