/*
 * report.h - tidal-sim's outputs: the side-by-side table, JSON, per-job
 * CSV, a utilisation time series, and an SVG plot.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "sim/preset.h"

namespace tidal::sim {

/* One column per policy, one row per metric. */
void write_table(std::ostream &out, const std::vector<Summary> &s);
/* {"policies": {"<policy>": {"jobs": N, "avg_jct": s, ...}}} */
std::string summaries_json(const std::vector<Summary> &s);
/* A live run (tidal-sim --live-result) beside the replay of the same
 * input: each metric, and the difference (relative for times, absolute
 * for ratios). */
void write_comparison(std::ostream &out, const Summary &live,
		      const Summary &sim);
void write_jobs_csv(std::ostream &out, const std::vector<RunResult> &runs);
void write_timeseries_csv(std::ostream &out,
			  const std::vector<RunResult> &runs);
/* JCT CDF per policy (left) and GPU utilisation over time (right). */
void write_svg(std::ostream &out, const std::vector<RunResult> &runs,
	       const std::string &title);

} /* namespace tidal::sim */
