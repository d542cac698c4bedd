/*
 * train_cuda.cc - the GPU side of tidal-train, built only with HAVE_CUDA:
 * the start-up probe (any CUDA error means "no GPU": the caller falls back
 * to CPU + Gloo) and --bench-gemm, which times cuBLAS SGEMM at the model's
 * shapes against the whole forward + backward GEMM sequence of one step.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cstdio>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "trainer/train.h"

namespace tidal::train {

int bench_gemm_cpu(const Options &o);

namespace {

std::string cuda_err(const char *what, cudaError_t e)
{
	return std::string(what) + ": " + cudaGetErrorString(e);
}

/* C[m,n] = A[m,k] B[k,n] row-major through column-major cuBLAS: compute
 * C^T = B^T A^T, with the transposes chosen per GEMM kind like the CPU path. */
void sgemm(cublasHandle_t h, bool ta, bool tb, int m, int n, int k,
	   const float *a, const float *b, float *c)
{
	const float one = 1, zero = 0;
	cublasSgemm(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
		    ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &one, b,
		    tb ? k : n, a, ta ? m : k, &zero, c, n);
}

} /* namespace */

bool cuda_usable(int local_rank, std::string &why)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess) {
		why = cuda_err("cudaGetDeviceCount", e);
		return false;
	}
	if (n <= local_rank) {
		why = std::to_string(n) + " visible GPUs, local rank " +
		      std::to_string(local_rank) + " needs one more";
		return false;
	}
	if ((e = cudaSetDevice(local_rank)) != cudaSuccess ||
	    (e = cudaFree(nullptr)) != cudaSuccess) {
		why = cuda_err("cudaSetDevice", e);
		return false;
	}
	cudaDeviceProp p;
	cudaGetDeviceProperties(&p, local_rank);
	why = p.name;
	return true;
}

/* Time cuBLAS at the model's shapes: the single hidden x hidden GEMM and
 * every GEMM of one forward + backward (3 per layer, 2 for the first). */
int bench_gemm_cuda(const Options &o)
{
	std::vector<size_t> d = o.shape.dims();
	int b = (int)o.global_batch;
	size_t wmax = 0, amax = 0;
	for (size_t l = 0; l + 1 < d.size(); l++) {
		wmax = std::max(wmax, d[l] * d[l + 1]);
		amax = std::max(amax, d[l + 1] * (size_t)b + d[l] * (size_t)b);
	}
	float *w, *x, *y, *g;
	cublasHandle_t h;
	if (cudaMalloc(&w, wmax * 4) || cudaMalloc(&g, wmax * 4) ||
	    cudaMalloc(&x, amax * 4) || cudaMalloc(&y, amax * 4) ||
	    cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
		fprintf(stderr, "tidal-train: --bench-gemm: GPU allocation failed\n");
		return 1;
	}
	cudaMemset(w, 0, wmax * 4);
	cudaMemset(x, 0, amax * 4);
	cudaEvent_t e0, e1;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	auto time = [&](auto fn) {
		fn(); /* warm-up */
		cudaEventRecord(e0);
		for (int r = 0; r < 20; r++)
			fn();
		cudaEventRecord(e1);
		cudaEventSynchronize(e1);
		float ms = 0;
		cudaEventElapsedTime(&ms, e0, e1);
		return ms / 20;
	};
	int hd = o.shape.hidden;
	float one_ms = time([&] { sgemm(h, false, true, b, hd, hd, x, w, y); });
	float step_ms = time([&] {
		for (size_t l = 0; l + 1 < d.size(); l++) {
			int n = (int)d[l + 1], k = (int)d[l];
			sgemm(h, false, true, b, n, k, x, w, y); /* forward */
			sgemm(h, true, false, n, k, b, y, x, g); /* dW */
			if (l > 0)
				sgemm(h, false, false, b, k, n, y, w, x); /* dX */
		}
	});
	cudaDeviceProp p;
	cudaGetDeviceProperties(&p, 0);
	printf("backend cuda  %s  shape %s  batch %d\n", p.name,
	       o.shape.name().c_str(), b);
	printf("cublas sgemm %dx%dx%d  %.3f ms  %.2f TFLOP/s\n", b, hd, hd,
	       one_ms, 2.0 * b * hd * hd / (one_ms / 1e3) / 1e12);
	printf("train step GEMMs (fwd+bwd)  %.3f ms  %.2f TFLOP/s\n", step_ms,
	       o.shape.flops(b) / (step_ms / 1e3) / 1e12);
	cublasDestroy(h);
	return 0;
}

} /* namespace tidal::train */

int bench_gemm(const tidal::train::Options &o)
{
	std::string why;
	if (!tidal::train::cuda_usable(0, why)) {
		fprintf(stderr, "tidal-train: no GPU (%s): CPU GEMM instead\n",
			why.c_str());
		return tidal::train::bench_gemm_cpu(o);
	}
	return tidal::train::bench_gemm_cuda(o);
}
