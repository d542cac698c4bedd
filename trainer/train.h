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
 * The batch may change between runs (an adaptive scheduler such as Pollux
 * decides it; TIDAL_BATCH carries it).  --global-batch is then the initial
 * batch B0, and AdaScale (Johnson et al., ICML'20, as Pollux uses it)
 * keeps training equivalent: from the gradient noise measured each step
 * (|G|^2 and tr(Sigma), smoothed), the gain at batch B is
 *
 *   r = (var + sqr) / (var / s + sqr),  s = B / B0,
 *   sqr = |G|^2, var = tr(Sigma) / B0 (the noise of a B0 gradient)
 *
 * Each step counts r steps of B0 towards --iters (the scale-invariant
 * progress, kept in the checkpoint), and the learning rate is --lr x
 * sqrt(r): Adam's update does not grow with the gradient's size, so the
 * square-root rule, not AdaScale's SGD rule lr x r.  At B = B0, r = 1.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <string>

#include "trainer/mlp.h"

namespace tidal::train {

/* Control slots after the gradients in the all-reduced buffer (both
 * backends). */
enum Slot { kLoss, kCkpt, kStop, kLocalNorm2, kSlots };

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
	std::string stage_profile; /* model,data,compute,comm (stages.h) */
	double gpu_mem_mb = 0;	   /* --gpu-mem; 0 = the model's own */
	std::string workload;	   /* --workload MODEL/DATASET/BATCH/AMP */
	std::string colocate;	   /* --colocate CSV (pack.h) */
	std::string backend = "auto"; /* auto | cpu | cuda */
	int timeout_s = 120;          /* rendezvous and collectives */
	bool quiet = false;
};

/* What the launcher tells a rank through the environment. */
struct Env {
	int rank = 0, world = 1, local_rank = 0;
	std::string store, prefix = "tidal", ckpt_dir, resume;
	int event_fd = 1; /* stdout when TIDAL_EVENT_FD is unset */
	uint64_t batch = 0; /* TIDAL_BATCH: the global batch now; 0 = B0 */
};

/* RET false with ERR naming the variable, its value and the rule. */
bool read_env(Env &env, std::string &err);

/* Train; RET the exit code (0 done or stopped, 1 error). */
int run_training(const Options &opt, const Env &env);

/* With CUDA built: can local rank LOCAL_RANK use a GPU?  OUT WHY: the
 * device name, or the CUDA error that means "no GPU".  Without CUDA built:
 * false, "built without CUDA". */
bool cuda_usable(int local_rank, std::string &why);

/* Set by the signal handlers (SIGUSR1: checkpoint; SIGUSR2/SIGTERM:
 * checkpoint and stop). */
void install_signal_handlers();

} /* namespace tidal::train */
