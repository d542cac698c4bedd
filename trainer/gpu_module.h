/*
 * gpu_module.h - the cuda-nccl backend as a module that tidal-train loads
 * only when it may train on a GPU (gpu_loader.cc), so that a rank on CPU +
 * Gloo never maps CUDA, cuBLAS and NCCL (about 0.4 s and 220 MB of a
 * rank's start, per rank, on the 2-core loopback cluster).
 *
 *   tidal-train-cuda.so   gpu_trainer.cc, bench_gpu.cc, gpu_kernels.cu and
 *                         the static libraries they use; it exports one
 *                         symbol, tidal_train_gpu_module (gpu_module.map)
 *
 * Looked for in $TIDAL_TRAIN_GPU_MODULE, else beside the executable (the
 * build tree), else in ../lib/tidal/ from it (make install).  Built by the
 * same build as the executable: the table carries the sizes of the types
 * it passes, and a module of another build is refused.
 *
 * Also here: the vote every rank of a world takes before it trains on a
 * GPU (gpu_vote.cc), which a rank that cannot load the module takes too.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "trainer/gpu.h"
#include "trainer/train.h"

namespace tidal::store {
class Client;
}

namespace tidal::train {

inline constexpr int kGpuModuleAbi = 1;

struct GpuModule {
	int abi;
	std::size_t setup_size, options_size; /* sizeof GpuSetup, Options */
	/* make_gpu_trainer() on CUDA (gpu.h). */
	std::unique_ptr<GpuTrainer> (*make)(const GpuSetup &s,
					    std::string &why);
	/* --bench-gemm on local rank 0's GPU: RET the exit code, or -1 with
	 * WHY (the CUDA error) when no GPU can be used. */
	int (*bench)(const Options &o, std::string &why);
};

/* Every rank posts "ok" or "no:<why>" under KEY.<rank>, and one that is
 * ok reads them all: one failing rank makes the whole world fall back
 * together.  RET "" when all are ok, MINE when this rank fails, else the
 * first failure ("rank R: why"). */
std::string agree(store::Client &c, const std::string &key, const GpuSetup &s,
		  const std::string &mine);

/* Connect to S's store (TIDAL_STORE) within its timeout.  RET "" or why
 * not. */
std::string connect_store(store::Client &c, const GpuSetup &s);

/* A rank of a world > 1 that cannot train on a GPU for LOCAL_ERR: its
 * "no" in the device vote, so that the other ranks fall back with it.
 * RET the reason to report (never ""). */
std::string vote_no(const GpuSetup &s, const std::string &local_err);

/* Inside the module: the table's two entries (gpu_trainer.cc,
 * bench_gpu.cc). */
std::unique_ptr<GpuTrainer> make_cuda_trainer(const GpuSetup &s,
					      std::string &why);
int bench_gemm_gpu(const Options &o, std::string &why);

} /* namespace tidal::train */

/* The module's one export. */
extern "C" const tidal::train::GpuModule *tidal_train_gpu_module(void);
