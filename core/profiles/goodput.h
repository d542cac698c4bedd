/*
 * goodput.h - Pollux's goodput model (OSDI'21, adaptdl goodput.py and
 * speedup.py): what the scheduler believes about a job, learned from the
 * step times the job has reported.
 *
 *   observed (nodes, replicas, atomic_bsz) -> (accum time, optim time)
 *        |  fit_perf_params: bounded quasi-Newton on the RMS log error
 *        v
 *   PerfParams ---> throughput(n, r, atomic, accum)   samples / s
 *   GradParams ---> efficiency(batch)                 progress / sample
 *                   goodput = throughput x efficiency
 *                   optimize(n, r): best (atomic, accum) of 50 batch sizes
 *   SpeedupFunction(n, r) = best goodput at (n, r) / a base goodput
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <array>
#include <map>
#include <vector>

namespace tidal
{

/* T_acc = alpha_c + beta_c atomic_bsz
 * T_net = alpha_n + beta_n max(r - 2, 1e-8)  (more than one node)
 *         alpha_r + beta_r max(r - 2, 1e-8)  (one node, r > 1)
 * T_opt = (T_acc^gamma + T_net^gamma)^(1 / gamma) */
struct PerfParams {
	double alpha_c = 0, beta_c = 0, alpha_n = 0, beta_n = 0;
	double alpha_r = 0, beta_r = 0, gamma = 1;

	std::array<double, 7> vec() const
	{
		return { alpha_c, beta_c, alpha_n, beta_n,
			 alpha_r, beta_r, gamma };
	}
	static PerfParams from(const std::array<double, 7> &v)
	{
		return { v[0], v[1], v[2], v[3], v[4], v[5], v[6] };
	}
};

struct GradParams {
	double sqr = 0, var = 0;
};

/* One observed configuration: accum = step - sync, optim = step time. */
struct PerfSample {
	int nodes = 1, replicas = 1, atomic_bsz = 1;
	double accum_time = 0, optim_time = 0;
};

double predict_accum_time(const PerfParams &p, double atomic_bsz);
double predict_network_time(const PerfParams &p, int nodes, int replicas);
double predict_optim_time(const PerfParams &p, double accum, double network);

/* The fitting loss at X (goodput.py _obj_fn): RMSE of log accum time plus
 * RMSE of log optim time plus 1e-3 (gamma - 1)^2 plus
 * 1e-2 ((beta_n / alpha_n)^2 + (beta_r / alpha_r)^2).
 * OUT: grad (if not null) = the analytic gradient. */
double perf_loss(const std::array<double, 7> &x,
		 const std::vector<PerfSample> &samples,
		 std::array<double, 7> *grad);

struct FitStats {
	int iterations = 0;
	int evaluations = 0;
	double loss = 0;
};

/* fit_perf_params: start [0.1, 0.01] x 3 + [1.001], bounds [1e-8, inf) for
 * the six linear terms and [1, 10] for gamma, with the artifact's pinning
 * (alpha_c at mean(accum)/2 if one atomic size was seen; the network terms
 * that no sample can inform at 1e-8) and its prior alpha_n, beta_n >=
 * 1.1 x alpha_r, beta_r without multi-node samples.  SAMPLES must not be
 * empty and all times must be > 0. */
PerfParams fit_perf_params(const std::vector<PerfSample> &samples,
			   FitStats *stats = nullptr);

struct GoodputChoice {
	double goodput = 0;
	int atomic_bsz = 0, accum_steps = 0;
};

class GoodputFunction
{
public:
	GoodputFunction(const PerfParams &perf, const GradParams &grad,
			int init_batch_size)
	    : perf_(perf), grad_(grad), init_bsz_(init_batch_size)
	{
	}

	/* Samples per second. */
	double throughput(int nodes, int replicas, int atomic_bsz,
			  int accum_steps) const;
	/* Progress per sample relative to init_batch_size: gain / scale. */
	double efficiency(double batch) const;
	double evaluate(int nodes, int replicas, int atomic_bsz,
			int accum_steps) const;
	/* The best of 50 geometrically spaced total batch sizes from
	 * max(init, min_atomic r) to MAX_BATCH; configurations whose atomic
	 * size falls outside [min_atomic, max_atomic] score 0; the first
	 * best wins. */
	GoodputChoice optimize(int nodes, int replicas, int max_batch,
			       int min_atomic, int max_atomic,
			       bool accumulation) const;
	int init_batch_size() const { return init_bsz_; }

private:
	PerfParams perf_;
	GradParams grad_;
	int init_bsz_;
};

/* speedup(n, r) = optimize(n, r).goodput / base; 0 at (0, 0); memoised.
 * The base starts as optimize(1, 1); Pollux replaces it by the goodput
 * at the fair share (set_base). */
class SpeedupFunction
{
public:
	SpeedupFunction(const GoodputFunction &fn, int max_batch,
			int min_atomic, int max_atomic, bool accumulation);
	double operator()(int nodes, int replicas);
	void set_base(int nodes, int replicas);
	double base() const { return base_; }

private:
	GoodputFunction fn_;
	int max_batch_, min_atomic_, max_atomic_;
	bool accumulation_;
	double base_;
	std::map<std::pair<int, int>, double> memo_;
};

} /* namespace tidal */
