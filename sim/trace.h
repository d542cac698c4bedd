/*
 * trace.h - job traces in the anchors' formats and Slurm's sacct output.
 *
 * Every reader fills Job's request fields and leaves state alone.  Raw
 * values are kept in the units the file gives after a plain unit change
 * (ms -> s); the anchors' modelling adjustments (Muri's 1.015 solo factor,
 * ElasticFlow's max_gpu rules, ...) belong to the presets, not here.
 *
 *   format       detected by                     notes
 *   muri         job_id,num_gpu,submit_time,...  ms -> s; stages in `stages`
 *   elasticflow  job_id,submit_time,iteration,.. or the ITP aliases;
 *                                                a non-numeric job_id (ITP
 *                                                UUIDs) -> the row number
 *   lucid        job_id,user,vc,jobname,...      datetimes -> s since the
 *                                                Unix epoch (UTC); the
 *                                                preset rebases them
 *   pollux       name,time,application,...
 *   gavel        12 tab-separated columns (Gavel/Shockwave .trace)
 *   sacct        '|' separated with JobID and Submit (sacct --parsable2)
 *   tidal        id,submit,gpus,duration[,...]   Tidal's own CSV
 *   ub           "-dt S -e submit_batch_job | .." the UB CCR Slurm
 *                                                Simulator's events file
 *                                                (sim/readers/ub.cc)
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/model/model.h"

namespace tidal::sim {

class Csv;

struct Trace {
	std::string path;
	std::string format;
	std::vector<Job> jobs; /* in file order; Job::index = row */
	long skipped = 0;      /* rows skipped with a warning */
	double epoch = 0;      /* Unix time of submit 0 (readers that shift) */
	std::vector<std::string> warnings;
	std::vector<long> row_lines; /* file line of each Job::index */

	void skip(const std::string &why);
	/* The line J was read from, for messages; 0 if not known. */
	long line(const Job &j) const
	{
		return j.index < row_lines.size() ? row_lines[j.index] : 0;
	}
};

struct TraceFormat {
	std::string name;
	/* Does this text (the first lines of the file) look like ours? */
	std::function<bool(const std::string &head)> detect;
	std::function<void(const std::string &path, const std::string &text,
			   Trace &out)>
		read;
	/* The header columns the reader needs ("a|b": either), separated by
	 * SEP; none for a format without a header.  Only for saying what a
	 * header that was not recognised lacks. */
	std::vector<std::string> columns;
	char sep = ',';
	std::string what; /* a line for tidal-sim --list */
};

const std::vector<TraceFormat> &trace_formats();

/* For readers: job ids must be unique, since plans and the replay key on
 * them.  add() throws "file:line: job id N is already used on line M". */
struct JobIdSet {
	std::unordered_map<JobId, long> lines;
	void add(const Csv &csv, size_t row, JobId id);
};

/* Load PATH; FORMAT "" = detect.  Throws InputError ("file:line: ..."). */
Trace load_trace(const std::string &path, const std::string &format = "");

/* Seconds since the Unix epoch for "YYYY-MM-DD HH:MM:SS" or
 * "YYYY-MM-DDTHH:MM:SS", read as UTC.  RET: false if malformed. */
bool parse_datetime(const std::string &s, double *out);

/* Seconds in a Slurm duration as sacct prints it: "[D-]HH:MM:SS" or
 * "MM:SS".  RET: -1 for anything else ("UNLIMITED", "Partition_Limit",
 * ""). */
double slurm_duration(const std::string &text);

} /* namespace tidal::sim */
