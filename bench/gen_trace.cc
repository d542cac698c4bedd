/*
 * gen_trace.cc - a synthetic trace in Tidal's CSV format for benchmarks.
 *
 *   gen-trace JOBS GPUS_TOTAL LOAD SEED [PROFILES_DIR] > trace.csv
 *
 * Poisson arrivals; GPU counts 1/2/4/8/16/32 with Philly-like weights;
 * log-normal durations (median 30 min).  The arrival rate is set so the
 * offered load is LOAD x GPUS_TOTAL GPU-seconds per second.  The generator
 * is deterministic for a seed (its own xorshift and Box-Muller, not the
 * implementation-defined std:: distributions).
 *
 * Without PROFILES_DIR: Tidal's CSV (id,submit,gpus,duration).
 *
 * With PROFILES_DIR (ElasticFlow's throughput tables, one MODEL.csv each:
 * global_batch_size,1,2,4,...): ElasticFlow's generated-trace format
 * (job_id,submit_time,iteration,model_name,ddl,batch_size,num_gpu,
 * duration,best_effort), which every policy replays, the elastic ones by
 * iterations and throughput.  A job's model is one of the tables (in name
 * order, uniformly), its batch size one of the table's rows, its GPU
 * count one of the table's columns up to 8 (Philly's weights, 16 and 32
 * folded into 8); its iterations are what the drawn duration runs at that
 * size, its duration those iterations' time again (whole seconds), and
 * its deadline submit + 1.5 x duration, as in ElasticFlow's Fig 10 trace.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "core/profiles/throughput_table.h"

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

/* A model's batch sizes with a measured column, and those columns:
 * what a job of that model may draw. */
struct Model {
	std::string name;
	std::vector<int> batches;
	std::map<int, std::vector<int>> gpus; /* by batch, ascending */
};

/* The tables of DIR (core's reader, as the replay reads them); exits 2
 * with its message if they do not load. */
static std::vector<Model> load_models(const char *dir, tidal::ThroughputTable &t)
{
	std::string err;
	if (!t.load_dir(dir, &err)) {
		std::fprintf(stderr, "gen-trace: %s\n", err.c_str());
		std::exit(2);
	}
	std::vector<Model> models;
	for (const std::string &name : t.models()) {
		Model m;
		m.name = name;
		for (int b : t.batches(name)) {
			const tidal::ThroughputRow *row = t.row(name, b);
			for (size_t k = 0; k < row->gpus.size(); k++)
				if (row->tput[k] > 0)
					m.gpus[b].push_back(row->gpus[k]);
			if (!m.gpus[b].empty())
				m.batches.push_back(b);
		}
		if (!m.batches.empty())
			models.push_back(std::move(m));
	}
	if (models.empty()) {
		std::fprintf(stderr, "gen-trace: %s: no throughput table (MODEL.csv)\n", dir);
		std::exit(2);
	}
	return models;
}

int main(int argc, char **argv)
{
	if (argc != 5 && argc != 6) {
		std::fprintf(stderr, "usage: gen-trace JOBS GPUS_TOTAL LOAD SEED [PROFILES_DIR]\n");
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
	/* With throughput tables: up to 8 GPUs, 16 and 32 folded into 8. */
	static const int esizes[] = {1, 2, 4, 8};
	static const double eweights[] = {0.62, 0.12, 0.12, 0.14};
	const double median = 1800, sigma = 1.2;
	/* Mean GPU-seconds per job, for the arrival rate. */
	double mean_gpus = 0;
	for (int i = 0; i < 6; i++)
		mean_gpus += argc == 6 ? (i < 4 ? esizes[i] * eweights[i] : 0)
				       : sizes[i] * weights[i];
	double mean_dur = median * std::exp(sigma * sigma / 2);
	double rate = load * gpus_total / (mean_gpus * mean_dur);
	double t = 0;
	if (argc == 6) {
		tidal::ThroughputTable table;
		std::vector<Model> models = load_models(argv[5], table);
		std::printf("job_id,submit_time,iteration,model_name,ddl,batch_size,"
			    "num_gpu,duration,best_effort\n");
		for (long i = 0; i < jobs; i++) {
			t += -std::log(uniform()) / rate;
			const Model &m = models[(size_t)(uniform() * models.size())];
			int b = m.batches[(size_t)(uniform() * m.batches.size())];
			const std::vector<int> &cols = m.gpus.at(b);
			double u = uniform(), acc = 0;
			int g = cols.front();
			for (int k = 0; k < 4; k++) {
				acc += eweights[k];
				if (u <= acc) {
					/* the largest the table has up to that size */
					for (int n : cols)
						if (n <= esizes[k])
							g = n;
					break;
				}
			}
			double want = std::max(1.0, std::round(median * std::exp(sigma * normal())));
			double tp = table.lookup(m.name, b, g);
			long iters = std::max(1L, std::lround(want * tp));
			long dur = std::max(1L, std::lround(iters / tp));
			long submit = std::lround(t);
			std::printf("%ld,%ld,%ld,%s,%ld,%d,%d,%ld,0\n", i, submit, iters,
				    m.name.c_str(), submit + std::lround(1.5 * dur), b, g,
				    dur);
		}
		return 0;
	}
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
