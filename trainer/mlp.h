/*
 * mlp.h - the trainer's model: a ReLU multilayer perceptron regressing the
 * outputs of a fixed random "teacher" network, on data generated from
 * (seed, sample index) alone, so any rank at any world size can produce any
 * sample and a run resumes exactly where it stopped.
 *
 * Parameters live in one flat vector (layer by layer: W [out x in] row-major,
 * then b), gradients in another of the same layout, so the collectives and
 * the checkpoint see one contiguous block.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tidal::train {

struct MlpShape {
	int in = 64;      /* input features */
	int hidden = 256; /* width of every hidden layer */
	int layers = 2;   /* hidden layers */
	int out = 16;     /* regression outputs */

	/* "mlp:in=64,hidden=256,layers=2,out=16" (checkpoints check it) */
	std::string name() const;
	std::vector<size_t> dims() const; /* in, hidden..., out */
	size_t params() const;
	/* Floating-point operations of forward + backward for B samples. */
	double flops(size_t b) const;
};

/* Uniform in [-1, 1) from a counter: splitmix64 of (seed, stream, index). */
float hash_uniform(uint64_t seed, uint64_t stream, uint64_t index);

class Mlp {
public:
	Mlp(const MlpShape &shape, uint64_t seed);

	const MlpShape &shape() const { return shape_; }
	size_t size() const { return n_params_; }
	/* Deterministic He-uniform initialisation of PARAMS (size()). */
	void init(float *params) const;
	/* Samples FIRST..FIRST+COUNT of the data set: X [count x in],
	 * Y [count x out] (the teacher's outputs). */
	void make_batch(uint64_t first, size_t count, float *x, float *y) const;
	/* Forward and backward over B samples; adds the per-sample gradient
	 * SUM into GRAD.  RET the summed loss (0.5 * squared error). */
	double train_batch(const float *params, const float *x, const float *y,
			   size_t b, float *grad);

private:
	MlpShape shape_;
	uint64_t seed_;
	std::vector<size_t> dims_, w_off_, b_off_;
	size_t n_params_ = 0;
	std::vector<float> teacher_w1_, teacher_w2_;
	std::vector<std::vector<float>> act_; /* activations per layer */
	std::vector<float> delta_, delta_prev_, scratch_;
};

/* Adam (Kingma & Ba) on flat vectors; GRAD holds the batch gradient SUM,
 * scaled by INV_BATCH here; T is the 1-based step. */
void adam_step(float *params, const float *grad, float *m, float *v, size_t n,
	       float lr, float inv_batch, uint64_t t);

} /* namespace tidal::train */
