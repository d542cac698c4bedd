/*
 * profile_gavel.h - measured throughputs in the Gavel (OSDI'20) format,
 * which Shockwave (NSDI'23) and its baselines also read
 * (tacc_throughputs.json, wisr_throughputs.json, actual_throughputs.json).
 *
 *   {worker_type: {"('<job_type>', <sf>)": {
 *        "null": <isolated steps/s>,
 *        "('<other_job_type>', <sf>)": [tput_self, tput_other], ...}}}
 *
 * The inner keys are Python reprs of (job_type, scale_factor) tuples.
 * job_type reads "<Model> (batch size <B>)" or just "<Model>" (A3C,
 * CycleGAN); the scale factor is the job's GPU count.  "null" is the job
 * alone on the worker type; every other key is the job space-shared with
 * that other job, self's throughput first.
 *
 * Loading never throws: errors come back as "file: worker: key \"k\": what
 * is wrong" so that tidal-sim presets (--profiles FILE.json) and the plugin
 * can decide what is fatal.  A failed load leaves the table unchanged.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <compare>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tidal {

/* One (job_type, scale_factor) tuple key. */
struct GavelJobKey {
	std::string job_type;
	int scale_factor = 0;

	auto operator<=>(const GavelJobKey &) const = default;
};

/* Two jobs packed on one worker: steps/s of each. */
struct GavelPair {
	double self = 0;  /* the job whose entry this is */
	double other = 0; /* the job named by the inner key */
};

struct GavelEntry {
	std::optional<double> isolated; /* "null"; absent if not measured */
	std::map<GavelJobKey, GavelPair> packed;
};

/* A job type split into its parts: "ResNet-18 (batch size 16)" ->
 * {"ResNet-18", 16}; "A3C" -> {"A3C", 0}. */
struct GavelJobType {
	std::string model;
	int batch_size = 0; /* 0: the name carries no batch size */
};

/* Parse a tuple key "('ResNet-18 (batch size 16)', 1)".  Accepts either
 * quote (Python's repr switches to "..." when the name holds a '), the
 * escapes \\ \' \" and blanks around the parts; the scale factor must be
 * a positive integer.
 * RET: false with *why saying what is wrong (not naming the key). */
bool parse_gavel_key(const std::string &key, GavelJobKey *out,
		     std::string *why);

/* The inverse, as Python's repr writes it for plain names. */
std::string gavel_key_str(const GavelJobKey &k);

/* Split on a trailing " (batch size <B>)" with B a positive integer; any
 * other name is all model.  For every name in the shipped tables the
 * model equals the text before the first space, the anchors' rule. */
GavelJobType split_gavel_job_type(const std::string &job_type);

/* "<model> (batch size <batch>)": the key of a batch-size change. */
std::string gavel_job_type(const std::string &model, int batch_size);

class GavelThroughputs {
public:
	/* Read and parse PATH.  RET: false with *err = "PATH: ...". */
	bool load(const std::string &path, std::string *err);
	/* Parse TEXT; NAME is the file name used in errors. */
	bool parse(const std::string &name, const std::string &text,
		   std::string *err);

	/* Steps/s of JOB_TYPE on SF GPUs of WORKER, running alone. */
	std::optional<double> isolated(const std::string &worker,
				       const std::string &job_type,
				       int sf) const;
	/* Steps/s of A and B packed together, from A's entry (the shipped
	 * tables list every pair both ways, swapped). */
	std::optional<GavelPair> packed(const std::string &worker,
					const std::string &a, int sf_a,
					const std::string &b, int sf_b) const;
	/* The whole entry, or nullptr. */
	const GavelEntry *entry(const std::string &worker,
				const std::string &job_type, int sf) const;

	/* Worker types in file order. */
	const std::vector<std::string> &worker_types() const
	{
		return workers_;
	}
	bool has_worker(const std::string &worker) const;
	/* Job types of WORKER, or of all workers if "", sorted, unique. */
	std::vector<std::string> job_types(const std::string &worker = "") const;
	/* Scale factors measured for JOB_TYPE on WORKER, ascending. */
	std::vector<int> scale_factors(const std::string &worker,
				       const std::string &job_type) const;
	bool empty() const { return workers_.empty(); }

private:
	std::vector<std::string> workers_;
	std::map<std::string, std::map<GavelJobKey, GavelEntry>> table_;
};

} /* namespace tidal */
