/*
 * mlp.cc - the MLP's data, initialisation, forward/backward pass and Adam.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "trainer/mlp.h"

#include <cmath>
#include <cstring>

#include "trainer/gemm.h"

namespace tidal::train {

namespace {

constexpr int kTeacherHidden = 32;
enum Stream : uint64_t { kInit = 1, kInput = 2, kTeacher1 = 3, kTeacher2 = 4 };

uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

} /* namespace */

float hash_uniform(uint64_t seed, uint64_t stream, uint64_t index)
{
	uint64_t h = splitmix64(splitmix64(seed ^ (stream << 56)) ^ index);
	return (float)((double)(h >> 40) * 0x1p-23 - 1.0);
}

std::string MlpShape::name() const
{
	return "mlp:in=" + std::to_string(in) + ",hidden=" +
	       std::to_string(hidden) + ",layers=" + std::to_string(layers) +
	       ",out=" + std::to_string(out);
}

std::vector<size_t> MlpShape::dims() const
{
	std::vector<size_t> d{(size_t)in};
	for (int l = 0; l < layers; l++)
		d.push_back((size_t)hidden);
	d.push_back((size_t)out);
	return d;
}

size_t MlpShape::params() const
{
	std::vector<size_t> d = dims();
	size_t n = 0;
	for (size_t l = 0; l + 1 < d.size(); l++)
		n += d[l] * d[l + 1] + d[l + 1];
	return n;
}

double MlpShape::flops(size_t b) const
{
	std::vector<size_t> d = dims();
	double f = 0;
	for (size_t l = 0; l + 1 < d.size(); l++)
		f += 2.0 * (double)(d[l] * d[l + 1]) * (double)b *
		     (l == 0 ? 2 : 3); /* no input gradient for layer 0 */
	return f;
}

Mlp::Mlp(const MlpShape &shape, uint64_t seed)
	: shape_(shape), seed_(seed), dims_(shape.dims())
{
	for (size_t l = 0; l + 1 < dims_.size(); l++) {
		w_off_.push_back(n_params_);
		n_params_ += dims_[l] * dims_[l + 1];
		b_off_.push_back(n_params_);
		n_params_ += dims_[l + 1];
	}
	size_t in = dims_.front(), out = dims_.back();
	teacher_w1_.resize(in * kTeacherHidden);
	teacher_w2_.resize(kTeacherHidden * out);
	for (size_t i = 0; i < teacher_w1_.size(); i++)
		teacher_w1_[i] = hash_uniform(seed, kTeacher1, i) *
				 std::sqrt(3.0f / (float)in);
	for (size_t i = 0; i < teacher_w2_.size(); i++)
		teacher_w2_[i] = hash_uniform(seed, kTeacher2, i) *
				 std::sqrt(3.0f / kTeacherHidden);
	act_.resize(dims_.size());
}

void Mlp::init(float *params) const
{
	memset(params, 0, n_params_ * sizeof(float));
	for (size_t l = 0; l + 1 < dims_.size(); l++) {
		float bound = std::sqrt((l + 2 < dims_.size() ? 6.0f : 1.0f) /
					(float)dims_[l]);
		size_t n = dims_[l] * dims_[l + 1];
		for (size_t i = 0; i < n; i++)
			params[w_off_[l] + i] =
				bound * hash_uniform(seed_, kInit, w_off_[l] + i);
	}
}

void Mlp::make_batch(uint64_t first, size_t count, float *x, float *y) const
{
	size_t in = dims_.front(), out = dims_.back();
	float h[kTeacherHidden];
	for (size_t s = 0; s < count; s++) {
		float *xs = x + s * in, *ys = y + s * out;
		for (size_t i = 0; i < in; i++)
			xs[i] = 1.7320508f *
				hash_uniform(seed_, kInput, (first + s) * in + i);
		for (int k = 0; k < kTeacherHidden; k++) {
			float z = 0;
			for (size_t i = 0; i < in; i++)
				z += teacher_w1_[i * kTeacherHidden + k] * xs[i];
			h[k] = std::tanh(z);
		}
		for (size_t o = 0; o < out; o++) {
			float z = 0;
			for (int k = 0; k < kTeacherHidden; k++)
				z += teacher_w2_[k * out + o] * h[k];
			ys[o] = z;
		}
	}
}

double Mlp::train_batch(const float *params, const float *x, const float *y,
			size_t b, float *grad)
{
	size_t nl = dims_.size() - 1;
	size_t widest = 0, biggest_w = 0;
	for (size_t l = 0; l < nl; l++) {
		widest = std::max(widest, dims_[l + 1]);
		biggest_w = std::max(biggest_w, dims_[l] * dims_[l + 1]);
	}
	scratch_.resize(biggest_w);
	/* forward: act[l+1] = relu(act[l] W_l^T + b_l), linear at the top */
	const float *a = x;
	for (size_t l = 0; l < nl; l++) {
		size_t n = dims_[l + 1];
		std::vector<float> &z = act_[l + 1];
		z.resize(b * n);
		for (size_t s = 0; s < b; s++)
			memcpy(&z[s * n], params + b_off_[l], n * sizeof(float));
		gemm_nt(b, n, dims_[l], a, params + w_off_[l], z.data(),
			scratch_.data());
		if (l + 1 < nl)
			for (float &v : z)
				v = v > 0 ? v : 0;
		a = z.data();
	}
	/* loss and its gradient at the output */
	size_t out = dims_.back();
	double loss = 0;
	delta_.resize(b * widest);
	for (size_t i = 0; i < b * out; i++) {
		float d = act_[nl][i] - y[i];
		delta_[i] = d;
		loss += 0.5 * (double)d * d;
	}
	/* backward */
	delta_prev_.resize(b * widest);
	for (size_t l = nl; l-- > 0;) {
		size_t n = dims_[l + 1], k = dims_[l];
		const float *in = l == 0 ? x : act_[l].data();
		gemm_tn(n, k, b, delta_.data(), in, grad + w_off_[l]);
		for (size_t s = 0; s < b; s++)
			for (size_t j = 0; j < n; j++)
				grad[b_off_[l] + j] += delta_[s * n + j];
		if (l == 0)
			break;
		std::fill(delta_prev_.begin(), delta_prev_.begin() + b * k, 0.0f);
		gemm_nn(b, k, n, delta_.data(), params + w_off_[l],
			delta_prev_.data());
		for (size_t i = 0; i < b * k; i++)
			if (act_[l][i] <= 0)
				delta_prev_[i] = 0;
		delta_.swap(delta_prev_);
	}
	return loss;
}

void adam_step(float *params, const float *grad, float *m, float *v, size_t n,
	       float lr, float inv_batch, uint64_t t)
{
	const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
	const float c1 = 1.0f / (1.0f - std::pow(b1, (float)t));
	const float c2 = 1.0f / (1.0f - std::pow(b2, (float)t));
	for (size_t i = 0; i < n; i++) {
		float g = grad[i] * inv_batch;
		m[i] = b1 * m[i] + (1 - b1) * g;
		v[i] = b2 * v[i] + (1 - b2) * g * g;
		params[i] -= lr * (m[i] * c1) / (std::sqrt(v[i] * c2) + eps);
	}
}

} /* namespace tidal::train */
