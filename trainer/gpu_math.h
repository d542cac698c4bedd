/*
 * gpu_math.h - the GPU backend's arithmetic in one place: the element-wise
 * rules its CUDA kernels apply, the mapping of the trainer's row-major
 * products onto column-major cuBLAS, and the order of operations of one
 * forward + backward pass.
 *
 * Why a header of its own: the same code drives the device (gpu_kernels.cu,
 * gpu_trainer.cc) and a host re-enactment (tests/node/test_gpu_math.cc)
 * that checks, on a machine without a GPU, that the transposes, leading
 * dimensions and parameter offsets give the CPU path's gradients.
 *
 * Layout (as the CPU path, mlp.h): parameters layer by layer, W [out x in]
 * row-major then b [out]; activations and deltas [batch x width] row-major.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "trainer/mlp.h"

#ifdef __CUDACC__
#define TIDAL_HD __host__ __device__
#else
#define TIDAL_HD
#endif

namespace tidal::train::gpu {

/* ---- element-wise rules (the CPU path's, mlp.cc) ---- */

/* Hidden layers are ReLU (NaN -> 0 like the CPU's v > 0 ? v : 0), the top
 * layer is linear. */
TIDAL_HD inline float bias_act(float z, float bias, bool relu)
{
	float v = z + bias;
	return relu ? (v > 0 ? v : 0.0f) : v;
}

/* ReLU's derivative applied to a delta: zero where the unit was off. */
TIDAL_HD inline float relu_mask(float act, float delta)
{
	return act <= 0 ? 0.0f : delta;
}

/* Adam on one element; G is the batch gradient SUM, C1 and C2 the bias
 * corrections of step t (adam_corrections()). */
TIDAL_HD inline void adam(float &p, float &m, float &v, float g_sum, float lr,
			  float inv_batch, float c1, float c2)
{
	const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
	float g = g_sum * inv_batch;
	m = b1 * m + (1 - b1) * g;
	v = b2 * v + (1 - b2) * g * g;
	p -= lr * (m * c1) / (sqrtf(v * c2) + eps);
}

/* Host side, exactly as adam_step() in mlp.cc computes them. */
inline void adam_corrections(uint64_t t, float &c1, float &c2)
{
	c1 = 1.0f / (1.0f - std::pow(0.9f, (float)t));
	c2 = 1.0f / (1.0f - std::pow(0.999f, (float)t));
}

/* ---- row-major products on column-major cuBLAS ----
 *
 * The trainer's C[m,n] = op(A) op(B) is row-major.  A row-major matrix is
 * its transpose in column-major, so cuBLAS computes C^T = op(B)^T op(A)^T:
 * the operands swap places, the transposes stay with their operands.
 *
 *   cublasSgemm(h, op_a_t ? T : N, op_b_t ? T : N, m, n, k, &alpha,
 *               B, lda, A, ldb, &beta, C, ldc)     <- note B first
 */
struct CmGemm {
	bool op_a_t, op_b_t;
	int m, n, k, lda, ldb, ldc;
};

/* TA: A is stored [k x m] (use A^T); TB: B is stored [n x k] (use B^T). */
inline CmGemm rowmajor_to_cublas(bool ta, bool tb, int m, int n, int k)
{
	return {tb, ta, n, m, k, tb ? k : n, ta ? m : k, n};
}

/* ---- one forward + backward ---- */

struct MlpLayout {
	std::vector<size_t> dims, w_off, b_off;
	size_t params = 0, widest = 0;

	explicit MlpLayout(const MlpShape &s) : dims(s.dims())
	{
		for (size_t l = 0; l + 1 < dims.size(); l++) {
			w_off.push_back(params);
			params += dims[l] * dims[l + 1];
			b_off.push_back(params);
			params += dims[l + 1];
			widest = std::max(widest, dims[l + 1]);
		}
	}
	size_t layers() const { return dims.size() - 1; }
};

/*
 * Forward and backward of B samples, writing (not adding) the gradient SUM
 * into GRAD.  ACT[0] holds the input, ACT[l] (l = 1..layers) receives layer
 * l's output; DELTA and DELTA_PREV hold B x widest floats each.  OPS:
 *
 *   gemm(ta, tb, m, n, k, A, B, C)   C = op(A) op(B), row-major, beta 0
 *   bias_act(z, bias, b, n, relu)    z[s,j] = bias_act(z[s,j], bias[j])
 *   out_delta(pred, y, count, d)     d = pred - y
 *   loss(d, count)                   0.5 * sum d^2 (into the loss slot)
 *   bias_grad(d, b, n, db)           db[j] = sum_s d[s,j]
 *   relu_mask(act, count, d)         d = relu_mask(act, d)
 */
template <class Ops>
void forward_backward(Ops &ops, const MlpLayout &L, const float *params,
		      float *const *act, const float *y, size_t b,
		      float *delta, float *delta_prev, float *grad)
{
	size_t nl = L.layers();
	for (size_t l = 0; l < nl; l++) {
		size_t n = L.dims[l + 1], k = L.dims[l];
		ops.gemm(false, true, b, n, k, act[l], params + L.w_off[l],
			 act[l + 1]);
		ops.bias_act(act[l + 1], params + L.b_off[l], b, n, l + 1 < nl);
	}
	size_t out = L.dims.back();
	ops.out_delta(act[nl], y, b * out, delta);
	ops.loss(delta, b * out);
	for (size_t l = nl; l-- > 0;) {
		size_t n = L.dims[l + 1], k = L.dims[l];
		/* dW [n x k] = delta^T [n x b] . in [b x k] */
		ops.gemm(true, false, n, k, b, delta, act[l], grad + L.w_off[l]);
		ops.bias_grad(delta, b, n, grad + L.b_off[l]);
		if (l == 0)
			break;
		/* delta_prev [b x k] = delta [b x n] . W [n x k] */
		ops.gemm(false, false, b, k, n, delta, params + L.w_off[l],
			 delta_prev);
		ops.relu_mask(act[l], b * k, delta_prev);
		std::swap(delta, delta_prev);
	}
}

} /* namespace tidal::train::gpu */
