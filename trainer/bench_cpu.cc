/*
 * bench_cpu.cc - tidal-train --bench-gemm without CUDA: the CPU GEMM at the
 * model's shapes against a training step, in GFLOP/s.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <chrono>
#include <cstdio>
#include <vector>

#include "trainer/gemm.h"
#include "trainer/train.h"

namespace tidal::train {

int bench_gemm_cpu(const Options &o)
{
	using clk = std::chrono::steady_clock;
	Mlp mlp(o.shape, o.seed);
	size_t b = o.global_batch, h = o.shape.hidden;
	std::vector<float> a(b * h, 0.5f), w(h * h, 0.25f), c(b * h), s(h * h);
	auto t0 = clk::now();
	int reps = 3;
	for (int r = 0; r < reps; r++)
		gemm_nt(b, h, h, a.data(), w.data(), c.data(), s.data());
	double g = std::chrono::duration<double>(clk::now() - t0).count() / reps;
	std::vector<float> p(mlp.size()), grad(mlp.size()), x(b * o.shape.in),
		y(b * o.shape.out);
	mlp.init(p.data());
	mlp.make_batch(0, b, x.data(), y.data());
	t0 = clk::now();
	mlp.train_batch(p.data(), x.data(), y.data(), b, grad.data());
	double st = std::chrono::duration<double>(clk::now() - t0).count();
	printf("backend cpu  shape %s  batch %zu\n", o.shape.name().c_str(), b);
	printf("gemm %zux%zux%zu  %.3f ms  %.2f GFLOP/s\n", b, h, h, g * 1e3,
	       2.0 * b * h * h / g / 1e9);
	printf("train step (fwd+bwd)  %.3f ms  %.2f GFLOP/s\n", st * 1e3,
	       o.shape.flops(b) / st / 1e9);
	return 0;
}

} /* namespace tidal::train */

#ifndef TIDAL_HAVE_CUDA
int bench_gemm(const tidal::train::Options &o)
{
	return tidal::train::bench_gemm_cpu(o);
}
#endif
