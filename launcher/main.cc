/*
 * main.cc - tidal-launch: runs and restarts the trainer ranks of one node
 * inside a Slurm job (see launcher.h and man/man1/tidal-launch.1).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "launcher/launcher.h"
#include "launcher/options.h"

int main(int argc, char **argv)
{
	tidal::launch::Options o = tidal::launch::parse_options(argc, argv);
	tidal::launch::Launcher l(o);
	return l.run();
}
