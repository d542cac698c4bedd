/*
 * throughput_table.h - measured iterations/s per model, global batch size
 * and GPU count, looked up exactly (no interpolation).
 *
 * This is the form ElasticFlow's artifact ships (throughputs_A100/<model>.csv,
 * one file per model):
 *
 *   global_batch_size,1,2,4,8,16,32,64
 *   64,6.03,8.64,10.35,11.06,10.98,10.60,9.24
 *
 * Only the column GPU counts are legal allocations ("levels").  A cell may be
 * empty or "nan": the level exists as a column but has no measurement, and
 * must never be chosen.  Elastic planners (ElasticFlow's, the elastic EDF)
 * walk the levels with next_level()/last_level().
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <map>
#include <string>
#include <vector>

namespace tidal {

/* One (model, batch) row: levels in column order and their speeds. */
struct ThroughputRow {
	std::vector<int> gpus;    /* column GPU counts, ascending */
	std::vector<double> tput; /* iterations/s; NaN = no measurement */
	std::vector<bool> nan;    /* cell text was literally "nan" */

	/* Iterations/s at exactly GPUS, or NaN if GPUS is no column or the
	 * cell is empty. */
	double at(int gpus) const;
	/* Iterations/s of a job running on GPUS GPUs: the column's speed,
	 * or between two columns on the straight line through the nearest
	 * measured ones around it; NaN outside them.  What tidal-train's
	 * --profile paces by, and what the tidal preset replays at. */
	double paced(int gpus) const;
	bool is_level(int gpus) const;
	/* The next column after G that is <= MAX_GPU; G itself if none.
	 * next_level(0) is the first column. */
	int next_level(int g, int max_gpu) const;
	/* The largest column < G that is <= MAX_GPU, 0 if none.  Called as
	 * last_level(free + 1, max) it means "the largest level <= free". */
	int last_level(int g, int max_gpu) const;
	/* Largest column whose cell is not the literal "nan" (ElasticFlow's
	 * max_gpu rule for non-elastic policies), 0 if none. */
	int max_listed() const;
};

class ThroughputTable {
public:
	/* Parse one model's CSV.  FILE names it in errors.
	 * RET: false with *err = "file:line: what is wrong". */
	bool parse_csv(const std::string &model, const std::string &file,
		       const std::string &text, std::string *err);
	/* Load every *.csv in DIR, the model name being the file's stem. */
	bool load_dir(const std::string &dir, std::string *err);

	/* The row for (MODEL, BATCH), or nullptr. */
	const ThroughputRow *row(const std::string &model, int batch) const;
	bool has_model(const std::string &model) const;
	/* The models, and one model's batch sizes, in order (for messages
	 * that say what there is). */
	std::vector<std::string> models() const;
	std::vector<int> batches(const std::string &model) const;
	/* Iterations/s, NaN when absent. */
	double lookup(const std::string &model, int batch, int gpus) const;

private:
	std::map<std::string, std::map<int, ThroughputRow>> rows_;
};

} /* namespace tidal */
