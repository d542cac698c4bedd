/*
 * bench_gpu.cc - tidal-train --bench-gemm on a GPU, built only with
 * HAVE_CUDA: cuBLAS SGEMM alone at each of the model's GEMM shapes and at
 * the device's peak (one 8192^3 product), against a whole training step of
 * the cuda-nccl backend (world 1), and the checkpoint's write and read rates
 * with the device copies included.  Part of the GPU module
 * (gpu_module.h).
 * Printed as a table so a session with a GPU gets every number from one
 * command (bench/gpu.sh).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "node/checkpoint.h"
#include "trainer/gpu.h"
#include "trainer/gpu_module.h"
#include "trainer/gpu_math.h"
#include "trainer/train.h"

namespace tidal::train {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0)
{
	return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Gemm {
	const char *what;
	bool ta, tb;
	size_t m, n, k;
	int count; /* how many of one step have this shape */
	double ms = 0;
};

/* The GEMMs of one step, in gpu_math.h's order, equal shapes merged. */
std::vector<Gemm> step_gemms(const MlpShape &shape, size_t b)
{
	std::vector<size_t> d = shape.dims();
	std::vector<Gemm> g;
	auto add = [&](const char *what, bool ta, bool tb, size_t m, size_t n,
		       size_t k) {
		for (Gemm &x : g)
			if (x.ta == ta && x.tb == tb && x.m == m && x.n == n &&
			    x.k == k) {
				x.count++;
				return;
			}
		g.push_back({what, ta, tb, m, n, k, 1});
	};
	for (size_t l = 0; l + 1 < d.size(); l++)
		add("forward  Y=X.W^T", false, true, b, d[l + 1], d[l]);
	for (size_t l = d.size() - 1; l-- > 0;) {
		add("weights  dW=dY^T.X", true, false, d[l + 1], d[l], b);
		if (l > 0)
			add("inputs   dX=dY.W", false, false, b, d[l], d[l + 1]);
	}
	return g;
}

/* Time each shape with cuBLAS alone (buffers of a small nonzero value). */
bool time_gemms(std::vector<Gemm> &gs)
{
	size_t most = 1;
	for (const Gemm &g : gs)
		most = std::max({most, g.m * g.k, g.k * g.n, g.m * g.n});
	float *a = nullptr, *b = nullptr, *c = nullptr;
	cublasHandle_t h = nullptr;
	cudaEvent_t e0, e1;
	if (cudaMalloc(&a, most * 4) || cudaMalloc(&b, most * 4) ||
	    cudaMalloc(&c, most * 4) || cublasCreate(&h) ||
	    cudaEventCreate(&e0) || cudaEventCreate(&e1)) {
		fprintf(stderr, "tidal-train: --bench-gemm: GPU allocation of "
			"3 x %zu floats failed\n", most);
		return false;
	}
	cudaMemset(a, 0x3c, most * 4); /* 0x3c3c3c3c = 0.0115f */
	cudaMemset(b, 0x3c, most * 4);
	const float one = 1, zero = 0;
	for (Gemm &g : gs) {
		gpu::CmGemm cm = gpu::rowmajor_to_cublas(g.ta, g.tb, (int)g.m,
							 (int)g.n, (int)g.k);
		auto run = [&] {
			return cublasSgemm(h, cm.op_a_t ? CUBLAS_OP_T : CUBLAS_OP_N,
					   cm.op_b_t ? CUBLAS_OP_T : CUBLAS_OP_N,
					   cm.m, cm.n, cm.k, &one, b, cm.lda, a,
					   cm.ldb, &zero, c, cm.ldc);
		};
		for (int r = 0; r < 3; r++)
			run();
		const int reps = 20;
		cudaEventRecord(e0);
		for (int r = 0; r < reps; r++)
			run();
		cudaEventRecord(e1);
		cudaEventSynchronize(e1);
		float ms = 0;
		cudaEventElapsedTime(&ms, e0, e1);
		g.ms = ms / reps;
	}
	cudaError_t e = cudaGetLastError();
	cublasDestroy(h);
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);
	if (e != cudaSuccess)
		fprintf(stderr, "tidal-train: --bench-gemm: %s\n",
			cudaGetErrorString(e));
	return e == cudaSuccess;
}

double tflops(double flops, double ms) { return flops / (ms / 1e3) / 1e12; }

/* The square SGEMM that stands for the device's FP32 peak (3 x 256 MB). */
constexpr size_t kPeakN = 8192;

/* Checkpoint write (D2H + file) and read (file + H2D) through the real
 * checkpoint code, in a fresh directory under $TIDAL_BENCH_DIR or /tmp. */
void bench_checkpoint(const Options &o, GpuTrainer &t, size_t n)
{
	const char *base = getenv("TIDAL_BENCH_DIR");
	std::string tmpl = std::string(base && *base ? base : "/tmp") +
			   "/tidal-bench-gpu-XXXXXX";
	if (!mkdtemp(tmpl.data())) {
		perror(tmpl.c_str());
		return;
	}
	ckpt::State s;
	s.step = 1;
	s.global_batch = o.global_batch;
	s.world = 1;
	s.model = o.shape.name();
	s.rng = {o.seed};
	s.lr = o.lr;
	std::vector<float> p(n), m(n), v(n);
	auto t0 = Clock::now();
	t.download(p.data(), m.data(), v.data());
	double d2h = since(t0);
	s.tensors = {{"params", std::move(p)}, {"adam.m", std::move(m)},
		     {"adam.v", std::move(v)}};
	std::string path, err;
	try {
		t0 = Clock::now();
		path = ckpt::write(tmpl, s);
	} catch (const std::exception &ex) {
		fprintf(stderr, "tidal-train: --bench-gemm: %s\n", ex.what());
		std::filesystem::remove_all(tmpl);
		return;
	}
	double wr = since(t0);
	ckpt::State back;
	t0 = Clock::now();
	bool ok = ckpt::read(path, back, err);
	double rd = since(t0);
	double h2d = 0;
	if (ok) {
		t0 = Clock::now();
		t.upload(back.tensors[0].second.data(),
			 back.tensors[1].second.data(),
			 back.tensors[2].second.data());
		h2d = since(t0);
	}
	double mb = (double)std::filesystem::file_size(path) / 1e6;
	std::filesystem::remove_all(tmpl);
	if (!ok) {
		fprintf(stderr, "tidal-train: --bench-gemm: %s\n", err.c_str());
		return;
	}
	printf("\n  checkpoint (%.1f MB, %s)        ms     MB/s\n", mb,
	       tmpl.c_str());
	printf("  %-40s %8.2f %8.1f\n", "write: D2H", d2h * 1e3, mb / d2h);
	printf("  %-40s %8.2f %8.1f\n", "write: file (fsync, rename, marker)",
	       wr * 1e3, mb / wr);
	printf("  %-40s %8.2f %8.1f\n", "write: D2H + file", (d2h + wr) * 1e3,
	       mb / (d2h + wr));
	printf("  %-40s %8.2f %8.1f\n", "read: file (CRC32C verified)", rd * 1e3,
	       mb / rd);
	printf("  %-40s %8.2f %8.1f\n", "read: H2D", h2d * 1e3, mb / h2d);
	printf("  %-40s %8.2f %8.1f\n", "read: file + H2D", (rd + h2d) * 1e3,
	       mb / (rd + h2d));
}

/* A whole step of the cuda-nccl backend at world 1 (no NCCL call): RET
 * ms per step, OUT DATA_MS the host's data generation per step. */
double time_steps(const Options &o, GpuTrainer &t, const Mlp &mlp,
		  double &data_ms)
{
	size_t b = o.global_batch;
	std::vector<float> x(b * o.shape.in), y(b * o.shape.out);
	auto t0 = Clock::now();
	mlp.make_batch(0, b, x.data(), y.data());
	data_ms = since(t0) * 1e3;
	float ctrl[kSlots];
	double big, comm_s;
	float inv = 1.0f / (float)b;
	uint64_t step = 1;
	auto one = [&] {
		t.compute(x.data(), y.data(), b);
		t.reduce_update(0, 0, (float)o.lr, inv, step++, ctrl, big, comm_s);
	};
	for (int r = 0; r < 3; r++)
		one();
	const int reps = 20;
	t0 = Clock::now();
	for (int r = 0; r < reps; r++)
		one();
	return since(t0) * 1e3 / reps;
}

} /* namespace */

bool cuda_usable(int local_rank, std::string &why)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess) {
		why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
		return false;
	}
	if (n <= 0) {
		why = "no visible CUDA device";
		return false;
	}
	int dev = local_rank % n;
	if ((e = cudaSetDevice(dev)) != cudaSuccess ||
	    (e = cudaFree(nullptr)) != cudaSuccess) {
		why = std::string("cudaSetDevice: ") + cudaGetErrorString(e);
		return false;
	}
	cudaDeviceProp p;
	cudaGetDeviceProperties(&p, dev);
	why = p.name;
	return true;
}

int bench_gemm_cuda(const Options &o)
{
	size_t b = o.global_batch;
	Mlp mlp(o.shape, o.seed);
	size_t n = mlp.size();
	std::vector<float> p(n), m(n, 0.0f), v(n, 0.0f);
	mlp.init(p.data());
	GpuSetup s;
	s.shape = o.shape;
	s.max_batch = b;
	s.timeout_s = o.timeout_s;
	s.params = p.data();
	s.m = m.data();
	s.v = v.data();
	std::string why;
	std::unique_ptr<GpuTrainer> t = make_cuda_trainer(s, why);
	std::vector<Gemm> gs = step_gemms(o.shape, b);
	if (!t || !time_gemms(gs)) {
		fprintf(stderr, "tidal-train: --bench-gemm: %s\n", why.c_str());
		return 1;
	}
	double data_ms = 0, step_ms;
	try {
		step_ms = time_steps(o, *t, mlp, data_ms);
	} catch (const std::exception &ex) {
		fprintf(stderr, "tidal-train: --bench-gemm: %s\n", ex.what());
		return 1;
	}
	printf("tidal-train --bench-gemm: %s, FP32 (no TF32)\n",
	       t->device().c_str());
	printf("model %s (%zu parameters), batch %zu\n\n",
	       o.shape.name().c_str(), n, b);
	printf("  %-40s %8s %8s\n", "cuBLAS SGEMM alone (row-major M x N x K)",
	       "ms", "TFLOP/s");
	double gemm_ms = 0;
	for (const Gemm &g : gs) {
		char what[96];
		snprintf(what, sizeof what, "%s %zux%zux%zu x%d", g.what, g.m,
			 g.n, g.k, g.count);
		printf("  %-40s %8.3f %8.2f\n", what, g.ms,
		       tflops(2.0 * g.m * g.n * g.k, g.ms));
		gemm_ms += g.ms * g.count;
	}
	double flops = o.shape.flops(b);
	printf("  %-40s %8.3f %8.2f\n", "all GEMMs of one step", gemm_ms,
	       tflops(flops, gemm_ms));
	printf("  %-40s %8.3f %8.2f  (%.0f%% of the GEMM-only rate)\n",
	       "training step (fwd+bwd+Adam, world 1)", step_ms,
	       tflops(flops, step_ms), 100 * gemm_ms / step_ms);
	/* The device's SGEMM peak: one large square product, the best FP32
	 * rate cuBLAS reaches here, so the step's rate has a ceiling. */
	std::vector<Gemm> peak = {{"peak", false, false, kPeakN, kPeakN,
				   kPeakN, 1}};
	if (time_gemms(peak)) {
		double top = tflops(2.0 * kPeakN * kPeakN * kPeakN, peak[0].ms);
		char what[64];
		snprintf(what, sizeof what, "cuBLAS SGEMM peak %zux%zux%zu",
			 kPeakN, kPeakN, kPeakN);
		printf("  %-40s %8.3f %8.2f  (the step: %.0f%% of it)\n", what,
		       peak[0].ms, top, 100 * tflops(flops, step_ms) / top);
	}
	printf("  %-40s %8.3f\n", "host data generation per step", data_ms);
	bench_checkpoint(o, *t, n);
	return 0;
}

/* The module's --bench-gemm (gpu_module.h): -1 with WHY where no GPU can
 * be used, and tidal-train says so (gpu_loader.cc). */
int bench_gemm_gpu(const Options &o, std::string &why)
{
	if (!cuda_usable(0, why))
		return -1;
	return bench_gemm_cuda(o);
}

} /* namespace tidal::train */
