/*
 * train.h - tidal-train's options and training loop (program entry in
 * train_main.cc, loop in train_loop.cc).
 *
 * One step, on every rank:
 *
 *   data     make this rank's share of the global batch from
 *            (seed, sample index)
 *   compute  forward + backward: per-sample gradient SUM
 *   comm     all-reduce [gradients | loss | ckpt flag | stop flag | |g|^2]
 *   update   Adam with gradient / global batch (same on every rank)
 *   then     checkpoint (rank 0 writes) when due or when any rank's flag
 *            was set; stop after it when any rank's stop flag was set
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <string>

#include "trainer/mlp.h"

namespace tidal::train {

struct Options {
	MlpShape shape;
	uint64_t global_batch = 64;
	uint64_t iters = 100;
	double lr = 1e-3;
	uint64_t seed = 1;
	uint64_t ckpt_every = 0;  /* steps; 0 = off */
	double ckpt_every_s = 0;  /* seconds; 0 = off */
	uint64_t log_every = 10;
	std::string profile, profile_model;
	std::string backend = "auto"; /* auto | cpu | cuda */
	int timeout_s = 120;          /* rendezvous and collectives */
	bool quiet = false;
};

/* What the launcher tells a rank through the environment. */
struct Env {
	int rank = 0, world = 1, local_rank = 0;
	std::string store, prefix = "tidal", ckpt_dir, resume;
	int event_fd = 1; /* stdout when TIDAL_EVENT_FD is unset */
};

/* RET false with ERR naming the variable, its value and the rule. */
bool read_env(Env &env, std::string &err);

/* Train; RET the exit code (0 done or stopped, 1 error). */
int run_training(const Options &opt, const Env &env);

/* Set by the signal handlers (SIGUSR1: checkpoint; SIGUSR2/SIGTERM:
 * checkpoint and stop). */
void install_signal_handlers();

} /* namespace tidal::train */
