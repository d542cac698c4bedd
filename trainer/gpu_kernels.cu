/*
 * gpu_kernels.cu - the GPU backend's kernels: bias + activation, the loss
 * gradient, bias gradients, the ReLU mask, a deterministic sum of squares
 * (loss, gradient norms) and Adam.  Element-wise arithmetic comes from
 * gpu_math.h so a host test checks the same rules; no kernel uses atomics,
 * so a step gives the same bits every run on the same GPU.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "trainer/gpu_kernels.h"

#include "trainer/gpu_math.h"

namespace tidal::train::gpu {

namespace {

constexpr int kThreads = 256;

unsigned grid_for(size_t count)
{
	size_t g = (count + kThreads - 1) / kThreads;
	return (unsigned)(g < 65535 * 32 ? (g ? g : 1) : 65535 * 32);
}

__global__ void bias_act_kernel(float *z, const float *bias, size_t b,
				size_t n, bool relu)
{
	size_t count = b * n;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	     i < count; i += (size_t)gridDim.x * blockDim.x)
		z[i] = bias_act(z[i], bias[i % n], relu);
}

__global__ void out_delta_kernel(const float *pred, const float *y,
				 size_t count, float *d)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	     i < count; i += (size_t)gridDim.x * blockDim.x)
		d[i] = pred[i] - y[i];
}

__global__ void bias_grad_kernel(const float *d, size_t b, size_t n,
				 float *db)
{
	size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	if (j >= n)
		return;
	float s = 0;
	for (size_t r = 0; r < b; r++)
		s += d[r * n + j];
	db[j] = s;
}

__global__ void relu_mask_kernel(const float *act, size_t count, float *d)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	     i < count; i += (size_t)gridDim.x * blockDim.x)
		d[i] = relu_mask(act[i], d[i]);
}

/* Tree sum of one block's values in shared memory (fixed order). */
__device__ double block_sum(double x)
{
	__shared__ double sh[kThreads];
	sh[threadIdx.x] = x;
	__syncthreads();
	for (int w = kThreads / 2; w > 0; w /= 2) {
		if ((int)threadIdx.x < w)
			sh[threadIdx.x] += sh[threadIdx.x + w];
		__syncthreads();
	}
	return sh[0];
}

__global__ void sumsq_partial_kernel(const float *a, size_t n,
				     double *partial)
{
	double s = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		s += (double)a[i] * a[i];
	double t = block_sum(s);
	if (threadIdx.x == 0)
		partial[blockIdx.x] = t;
}

__global__ void sumsq_final_kernel(const double *partial, double scale,
				   float *out_f, double *out_d)
{
	double x = (int)threadIdx.x < kReduceBlocks ? partial[threadIdx.x] : 0;
	double t = block_sum(x);
	if (threadIdx.x == 0) {
		if (out_f)
			*out_f = (float)(t * scale);
		if (out_d)
			*out_d = t;
	}
}

__global__ void adam_kernel(float *p, const float *g, float *m, float *v,
			    size_t n, float lr, float inv_batch, float c1,
			    float c2)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		adam(p[i], m[i], v[i], g[i], lr, inv_batch, c1, c2);
}

} /* namespace */

static_assert(kReduceBlocks <= kThreads, "the final pass is one block");

void launch_bias_act(float *z, const float *bias, size_t b, size_t n,
		     bool relu, cudaStream_t s)
{
	bias_act_kernel<<<grid_for(b * n), kThreads, 0, s>>>(z, bias, b, n,
							     relu);
}

void launch_out_delta(const float *pred, const float *y, size_t count,
		      float *d, cudaStream_t s)
{
	out_delta_kernel<<<grid_for(count), kThreads, 0, s>>>(pred, y, count, d);
}

void launch_bias_grad(const float *d, size_t b, size_t n, float *db,
		      cudaStream_t s)
{
	bias_grad_kernel<<<grid_for(n), kThreads, 0, s>>>(d, b, n, db);
}

void launch_relu_mask(const float *act, size_t count, float *d,
		      cudaStream_t s)
{
	relu_mask_kernel<<<grid_for(count), kThreads, 0, s>>>(act, count, d);
}

void launch_sumsq(const float *a, size_t n, double *partial, double scale,
		  float *out_f, double *out_d, cudaStream_t s)
{
	sumsq_partial_kernel<<<kReduceBlocks, kThreads, 0, s>>>(a, n, partial);
	sumsq_final_kernel<<<1, kThreads, 0, s>>>(partial, scale, out_f, out_d);
}

void launch_adam(float *p, const float *g_sum, float *m, float *v, size_t n,
		 float lr, float inv_batch, float c1, float c2,
		 cudaStream_t s)
{
	adam_kernel<<<grid_for(n), kThreads, 0, s>>>(p, g_sum, m, v, n, lr,
						      inv_batch, c1, c2);
}

} /* namespace tidal::train::gpu */
