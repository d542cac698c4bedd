/*
 * gen_trace.cc - a synthetic trace in Tidal's CSV format for benchmarks.
 *
 *   gen-trace JOBS GPUS_TOTAL LOAD SEED > trace.csv
 *
 * Poisson arrivals; GPU counts 1/2/4/8/16/32 with Philly-like weights;
 * log-normal durations (median 30 min).  The arrival rate is set so the
 * offered load is LOAD x GPUS_TOTAL GPU-seconds per second.  The generator
 * is deterministic for a seed (its own xorshift and Box-Muller, not the
 * implementation-defined std:: distributions).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

static std::uint64_t state;

static double uniform()
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return ((state >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double normal()
{
	return std::sqrt(-2 * std::log(uniform())) *
	       std::cos(2 * M_PI * uniform());
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		std::fprintf(stderr, "usage: gen-trace JOBS GPUS_TOTAL LOAD SEED\n");
		return 2;
	}
	long jobs = std::atol(argv[1]);
	double gpus_total = std::atof(argv[2]);
	double load = std::atof(argv[3]);
	state = std::strtoull(argv[4], nullptr, 10) * 2654435761u + 88172645463325252ull;
	if (jobs <= 0 || gpus_total <= 0 || load <= 0) {
		std::fprintf(stderr, "gen-trace: JOBS, GPUS_TOTAL and LOAD must be positive\n");
		return 2;
	}
	static const int sizes[] = {1, 2, 4, 8, 16, 32};
	static const double weights[] = {0.62, 0.12, 0.12, 0.10, 0.03, 0.01};
	const double median = 1800, sigma = 1.2;
	/* Mean GPU-seconds per job, for the arrival rate. */
	double mean_gpus = 0;
	for (int i = 0; i < 6; i++)
		mean_gpus += sizes[i] * weights[i];
	double mean_dur = median * std::exp(sigma * sigma / 2);
	double rate = load * gpus_total / (mean_gpus * mean_dur);
	double t = 0;
	std::printf("id,submit,gpus,duration\n");
	for (long i = 0; i < jobs; i++) {
		t += -std::log(uniform()) / rate;
		double u = uniform(), acc = 0;
		int g = 1;
		for (int k = 0; k < 6; k++) {
			acc += weights[k];
			if (u <= acc) {
				g = sizes[k];
				break;
			}
		}
		double d = std::round(median * std::exp(sigma * normal()));
		if (d < 1)
			d = 1;
		std::printf("%ld,%.3f,%d,%.0f\n", i, t, g, d);
	}
	return 0;
}
