/*
 * gpu_kernels.h - launchers of the GPU backend's small CUDA kernels
 * (gpu_kernels.cu); the element-wise rules are gpu_math.h's.  Every
 * launcher enqueues on STREAM and returns at once; errors surface at the
 * next cudaGetLastError / synchronisation (gpu_trainer.cc checks both).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstddef>

#include <cuda_runtime.h>

namespace tidal::train::gpu {

/* Blocks of the first pass of sumsq(): its PARTIAL needs this many. */
constexpr int kReduceBlocks = 120;

/* Z[b,n] = bias_act(Z[b,n], BIAS[n], RELU) */
void launch_bias_act(float *z, const float *bias, size_t b, size_t n,
		     bool relu, cudaStream_t s);
/* D = PRED - Y over COUNT floats */
void launch_out_delta(const float *pred, const float *y, size_t count,
		      float *d, cudaStream_t s);
/* DB[j] = sum over s of D[s,j] (s ascending, one thread per column) */
void launch_bias_grad(const float *d, size_t b, size_t n, float *db,
		      cudaStream_t s);
/* D = relu_mask(ACT, D) over COUNT floats */
void launch_relu_mask(const float *act, size_t count, float *d,
		      cudaStream_t s);
/* sum of A[i]^2 in double, in a fixed order (two passes, fixed grid: the
 * same bits every run).  OUT_F (if not null) = (float)(sum * SCALE);
 * OUT_D (if not null) = sum.  PARTIAL: kReduceBlocks doubles. */
void launch_sumsq(const float *a, size_t n, double *partial, double scale,
		  float *out_f, double *out_d, cudaStream_t s);
/* Adam over N elements (gpu_math.h adam()) */
void launch_adam(float *p, const float *g_sum, float *m, float *v, size_t n,
		 float lr, float inv_batch, float c1, float c2,
		 cudaStream_t s);

} /* namespace tidal::train::gpu */
