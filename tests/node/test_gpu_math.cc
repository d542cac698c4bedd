/*
 * test_gpu_math.cc - the GPU backend's arithmetic checked on the host, with
 * no GPU: gpu_math.h's row-major -> column-major cuBLAS mapping against a
 * reference column-major SGEMM (BLAS semantics), and one forward + backward
 * in the GPU's order of operations (forward_backward() with host stand-ins
 * for cuBLAS and the kernels, using the kernels' element-wise rules) against
 * the CPU trainer's gradients and loss; Adam's element rule against
 * adam_step().
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "trainer/gpu_math.h"

#include <cmath>
#include <vector>

#include "trainer/mlp.h"

#include "tests/unit/unit.h"

using namespace tidal::train;

/* cublasSgemm's definition, column-major: C = op(A) op(B), beta 0. */
static void ref_sgemm_cm(bool ta, bool tb, int m, int n, int k, const float *a,
			 int lda, const float *b, int ldb, float *c, int ldc)
{
	for (int j = 0; j < n; j++)
		for (int i = 0; i < m; i++) {
			double s = 0;
			for (int p = 0; p < k; p++) {
				float av = ta ? a[p + i * lda] : a[i + p * lda];
				float bv = tb ? b[j + p * ldb] : b[p + j * ldb];
				s += (double)av * bv;
			}
			c[i + j * ldc] = (float)s;
		}
}

/* The trainer's call: row-major C[m,n] = op(A) op(B) through the mapping,
 * B passed first exactly as gpu_trainer.cc passes it. */
static void gemm_via_cublas(bool ta, bool tb, size_t m, size_t n, size_t k,
			    const float *a, const float *b, float *c)
{
	gpu::CmGemm g = gpu::rowmajor_to_cublas(ta, tb, (int)m, (int)n, (int)k);
	ref_sgemm_cm(g.op_a_t, g.op_b_t, g.m, g.n, g.k, b, g.lda, a, g.ldb, c,
		     g.ldc);
}

static float val(int seed, size_t i) { return hash_uniform(seed, 9, i); }

static void test_mapping(void **)
{
	const size_t m = 5, n = 7, k = 3;
	for (int ta = 0; ta < 2; ta++)
		for (int tb = 0; tb < 2; tb++) {
			/* A stored [m x k] or, transposed, [k x m]; B [k x n]
			 * or [n x k] */
			std::vector<float> a(m * k), b(k * n), c(m * n, NAN);
			for (size_t i = 0; i < a.size(); i++)
				a[i] = val(1, i);
			for (size_t i = 0; i < b.size(); i++)
				b[i] = val(2, i);
			gemm_via_cublas(ta, tb, m, n, k, a.data(), b.data(),
					c.data());
			for (size_t i = 0; i < m; i++)
				for (size_t j = 0; j < n; j++) {
					double s = 0;
					for (size_t p = 0; p < k; p++)
						s += (double)(ta ? a[p * m + i] : a[i * k + p]) *
						     (tb ? b[j * k + p] : b[p * n + j]);
					assert_true(std::fabs(c[i * n + j] - s) < 1e-6);
				}
		}
}

/* gpu_trainer.cc's DeviceOps, on the host. */
struct HostOps {
	double loss_sum = 0;

	void gemm(bool ta, bool tb, size_t m, size_t n, size_t k,
		  const float *a, const float *b, float *c)
	{
		gemm_via_cublas(ta, tb, m, n, k, a, b, c);
	}
	void bias_act(float *z, const float *bias, size_t b, size_t n, bool relu)
	{
		for (size_t i = 0; i < b * n; i++)
			z[i] = gpu::bias_act(z[i], bias[i % n], relu);
	}
	void out_delta(const float *pred, const float *y, size_t count, float *d)
	{
		for (size_t i = 0; i < count; i++)
			d[i] = pred[i] - y[i];
	}
	void loss(const float *d, size_t count)
	{
		double s = 0;
		for (size_t i = 0; i < count; i++)
			s += (double)d[i] * d[i];
		loss_sum = 0.5 * s;
	}
	void bias_grad(const float *d, size_t b, size_t n, float *db)
	{
		for (size_t j = 0; j < n; j++) {
			float s = 0;
			for (size_t r = 0; r < b; r++)
				s += d[r * n + j];
			db[j] = s;
		}
	}
	void relu_mask(const float *act, size_t count, float *d)
	{
		for (size_t i = 0; i < count; i++)
			d[i] = gpu::relu_mask(act[i], d[i]);
	}
};

static void check_step(const MlpShape &shape, size_t b)
{
	Mlp mlp(shape, 3);
	gpu::MlpLayout L(shape);
	assert_int_equal(L.params, mlp.size());
	std::vector<float> p(mlp.size()), x(b * shape.in), y(b * shape.out);
	mlp.init(p.data());
	for (size_t i = 0; i < p.size(); i++) /* nonzero biases too */
		p[i] += 0.05f * val(4, i);
	mlp.make_batch(11, b, x.data(), y.data());

	std::vector<float> g_cpu(mlp.size(), 0.0f), g_gpu(mlp.size(), NAN);
	double loss_cpu = mlp.train_batch(p.data(), x.data(), y.data(), b,
					  g_cpu.data());

	std::vector<std::vector<float>> acts{x};
	for (size_t l = 1; l < L.dims.size(); l++)
		acts.emplace_back(b * L.dims[l], NAN);
	std::vector<float *> act;
	for (auto &a : acts)
		act.push_back(a.data());
	std::vector<float> d(b * L.widest, NAN), dp(b * L.widest, NAN);
	HostOps ops;
	gpu::forward_backward(ops, L, p.data(), act.data(), y.data(), b,
			      d.data(), dp.data(), g_gpu.data());

	assert_true(std::fabs(ops.loss_sum - loss_cpu) <= 1e-5 * loss_cpu);
	double worst = 0, scale = 0;
	for (float g : g_cpu)
		scale = std::max(scale, (double)std::fabs(g));
	for (size_t i = 0; i < g_cpu.size(); i++)
		worst = std::max(worst, (double)std::fabs(g_gpu[i] - g_cpu[i]));
	if (worst > 1e-5 * scale)
		fail_msg("%s batch %zu: gradient differs by %g (largest %g)",
			 shape.name().c_str(), b, worst, scale);
}

static void test_forward_backward(void **)
{
	MlpShape s;
	s.in = 5, s.hidden = 7, s.layers = 2, s.out = 3;
	check_step(s, 4);
	check_step(s, 1);
	s.layers = 1; /* no dX GEMM between hidden layers */
	check_step(s, 6);
	s.in = 64, s.hidden = 48, s.layers = 3, s.out = 16;
	check_step(s, 30);
}

static void test_adam_rule(void **)
{
	const size_t n = 257;
	std::vector<float> p(n), g(n), m(n), v(n);
	for (size_t i = 0; i < n; i++) {
		p[i] = val(5, i);
		g[i] = 7 * val(6, i);
		m[i] = 0.01f * val(7, i);
		v[i] = 0.001f * std::fabs(val(8, i));
	}
	std::vector<float> p2 = p, m2 = m, v2 = v;
	for (uint64_t t = 1; t <= 3; t++) {
		adam_step(p.data(), g.data(), m.data(), v.data(), n, 0.003f,
			  1.0f / 30, t);
		float c1, c2;
		gpu::adam_corrections(t, c1, c2);
		for (size_t i = 0; i < n; i++)
			gpu::adam(p2[i], m2[i], v2[i], g[i], 0.003f, 1.0f / 30,
				  c1, c2);
	}
	for (size_t i = 0; i < n; i++) {
		assert_true(p[i] == p2[i]);
		assert_true(m[i] == m2[i] && v[i] == v2[i]);
	}
}

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mapping),
		cmocka_unit_test(test_forward_backward),
		cmocka_unit_test(test_adam_rule),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
