/*
 * gpu.h - the CUDA + cuBLAS + NCCL backend of tidal-train, seen from the
 * training loop (plain C++: no CUDA type leaks out).
 *
 * The loop keeps everything that is not arithmetic: data generation on the
 * host (the same samples as the CPU path), the control flags, checkpoints
 * (host float tensors, so either backend loads the other's) and events.
 * The device holds the parameters, the Adam moments, the activations and
 * the all-reduce buffer [gradient sum | control slots] (Slot, train.h).
 *
 *   compute()        H2D of x, y; forward + backward (cuBLAS SGEMM and
 *                    gpu_kernels.cu); loss and local |g|^2 into their slots
 *   reduce_update()  flags into their slots; ncclAllReduce (sum) of the
 *                    whole buffer; |G|^2 of the sum; Adam; D2H of the slots
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "trainer/mlp.h"

namespace tidal::train {

class GpuTrainer {
public:
	virtual ~GpuTrainer() = default;
	/* The device's name ("NVIDIA H100 80GB HBM3", device index). */
	virtual std::string device() const = 0;
	/* Host tensors of size() floats each, to and from the device. */
	virtual void upload(const float *params, const float *m,
			    const float *v) = 0;
	virtual void download(float *params, float *m, float *v) = 0;
	/* Enqueue one forward + backward of B samples (host X [b x in],
	 * Y [b x out]; B at most the capacity given at creation). */
	virtual void compute(const float *x, const float *y, size_t b) = 0;
	/* Set the checkpoint and stop slots, all-reduce, Adam with step T.
	 * OUT CTRL: the kSlots reduced control slots; BIG: |G|^2 of the
	 * reduced gradient sum (world > 1, else 0); COMM_S: the all-reduce's
	 * device time.  Throws std::runtime_error naming the CUDA / NCCL
	 * call, or a peer that did not answer within the timeout. */
	virtual void reduce_update(float ckpt, float stop, float lr,
				   float inv_batch, uint64_t t, float *ctrl,
				   double &big, double &comm_s) = 0;
};

struct GpuSetup {
	MlpShape shape;
	size_t max_batch = 0; /* this rank's largest share of a step */
	int local_rank = 0, rank = 0, world = 1;
	std::string store, prefix; /* NCCL unique id exchange (world > 1) */
	int timeout_s = 120;
	/* the starting tensors (size() floats each), uploaded before the
	 * ranks agree, so a failed copy is a start-up failure like any other */
	const float *params = nullptr, *m = nullptr, *v = nullptr;
	/* --backend cuda: try CUDA even where no NVIDIA driver is seen, so
	 * that the error is CUDA's own (auto skips it: gpu_loader.cc) */
	bool asked = false;
};

/* Was tidal-train built with the GPU backend? */
bool gpu_built();

/* Device LOCAL_RANK % visible count, its buffers, cuBLAS and (world > 1)
 * NCCL.  All ranks agree through the store: if any rank fails, every rank
 * gets nullptr (so the world falls back to CPU + Gloo together).
 * RET nullptr with WHY: the failing call and its error, or which rank
 * failed and why. */
std::unique_ptr<GpuTrainer> make_gpu_trainer(const GpuSetup &s,
					     std::string &why);

} /* namespace tidal::train */
