/*
 * sacct.cc - a site's real history from `sacct --parsable2`.
 *
 * Produce it with, e.g.:
 *   sacct -a -X --parsable2 -S 2026-01-01 \
 *         -o JobID,User,Partition,Submit,Start,End,Elapsed,State,AllocTRES,ReqTRES
 *
 * Fields used (by header name, any order, any extra columns ignored):
 *   JobID      required; step rows ("123.batch", "123.0") are skipped;
 *              array tasks ("123_4") and het components ("123+1") take
 *              JobIDRaw when given; ids still not unique get fresh ones
 *              past the largest
 *   Submit     required; submit times are shifted so the first is 0
 *   Elapsed    run time ([D-]HH:MM:SS); without it End - Start
 *   AllocTRES  GPU count from gres/gpu=N (or gres/gpu:type=N); when
 *              empty (never started) ReqTRES is used
 *   User, Partition (the job's group), State, Timelimit (estimate),
 *   JobName, NCPUS (or AllocCPUS, ReqCPUS): the duration estimator's
 *   features
 * Jobs with no GPU, never started, or with zero run time are skipped and
 * counted in a warning.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <unordered_set>

#include "sim/csv.h"
#include "sim/trace.h"

namespace tidal::sim {

bool detect_sacct(const std::string &head)
{
	std::string first = head.substr(0, head.find('\n'));
	return first.find('|') != std::string::npos &&
	       first.find("JobID") != std::string::npos &&
	       first.find("Submit") != std::string::npos;
}

/* GPUs in a TRES string: "billing=8,cpu=8,gres/gpu=4,gres/gpu:a100=4". The
 * typed entry repeats the untyped one, so the untyped one wins.  Counts
 * that are not small non-negative numbers are ignored. */
static int tres_gpus(const std::string &tres)
{
	long untyped = -1, typed = 0;
	std::stringstream in(tres);
	std::string item;
	while (std::getline(in, item, ',')) {
		size_t eq = item.find('=');
		if (eq == std::string::npos)
			continue;
		std::string key = item.substr(0, eq);
		const std::string v = item.substr(eq + 1);
		if (v.empty() || v.size() > 9 ||
		    v.find_first_not_of("0123456789") != std::string::npos)
			continue;
		long n = std::atol(v.c_str());
		if (key == "gres/gpu")
			untyped = n;
		else if (key.rfind("gres/gpu:", 0) == 0)
			typed = std::min(typed + n, 999999999L);
	}
	return (int)(untyped >= 0 ? untyped : typed);
}

/* Array tasks ("123_4") and heterogeneous components ("123+1") share the
 * number before the separator; JobIDRaw, when present, is unique. */
static bool plain_id(const std::string &s, JobId *out)
{
	if (s.empty() || s.size() > 9 ||
	    s.find_first_not_of("0123456789") != std::string::npos)
		return false;
	*out = std::atol(s.c_str());
	return true;
}

void read_sacct(const std::string &path, const std::string &text, Trace &t)
{
	Csv csv(path, text, '|');
	int c_id = csv.need("JobID"), c_sub = csv.need("Submit"),
	    c_el = csv.col("Elapsed"), c_start = csv.col("Start"),
	    c_end = csv.col("End"), c_alloc = csv.col("AllocTRES"),
	    c_req = csv.col("ReqTRES"), c_user = csv.col("User"),
	    c_part = csv.col("Partition"), c_limit = csv.col("Timelimit"),
	    c_raw = csv.col("JobIDRaw"), c_jname = csv.col("JobName"),
	    c_cpus = csv.col("NCPUS");
	if (c_cpus < 0)
		c_cpus = csv.col("AllocCPUS");
	if (c_cpus < 0)
		c_cpus = csv.col("ReqCPUS");
	if (c_alloc < 0 && c_req < 0)
		input_error(path, 1, "missing column 'AllocTRES' (or 'ReqTRES'): "
				     "no way to tell GPU counts");
	if (c_el < 0 && (c_start < 0 || c_end < 0))
		input_error(path, 1, "missing column 'Elapsed' (or 'Start' and "
				     "'End')");
	double first = 0;
	for (size_t r = 0; r < csv.rows(); r++) {
		const std::string &id = csv.str(r, c_id);
		if (id.find('.') != std::string::npos)
			continue; /* job step */
		std::string where = path + ":" + std::to_string(csv.line(r)) +
				    ": job " + id;
		Job j;
		j.index = t.jobs.size();
		j.name = id;
		if (!plain_id(c_raw >= 0 ? csv.str(r, c_raw) : id, &j.id))
			j.id = -1; /* numbered below */
		if (!parse_datetime(csv.str(r, c_sub), &j.submit))
			csv.fail(r, "Submit '" + csv.str(r, c_sub) +
					    "' is not YYYY-MM-DDTHH:MM:SS");
		std::string tres = c_alloc >= 0 ? csv.str(r, c_alloc) : "";
		if (tres.empty() && c_req >= 0)
			tres = csv.str(r, c_req);
		j.gpus = tres_gpus(tres);
		if (j.gpus <= 0) {
			t.skip(where + " used no GPU; skipped");
			continue;
		}
		double run = c_el >= 0 ? slurm_duration(csv.str(r, c_el)) : -1;
		double st, en;
		if (run < 0 && c_start >= 0 && c_end >= 0 &&
		    parse_datetime(csv.str(r, c_start), &st) &&
		    parse_datetime(csv.str(r, c_end), &en))
			run = en - st;
		if (run <= 0) {
			t.skip(where + " never ran; skipped");
			continue;
		}
		j.duration = run;
		j.iterations = run;
		j.iter_time = 1;
		if (c_user >= 0)
			j.user = csv.str(r, c_user);
		if (c_jname >= 0)
			j.job_name = csv.str(r, c_jname);
		if (c_cpus >= 0)
			j.cpus = std::atoi(csv.str(r, c_cpus).c_str());
		if (c_part >= 0)
			j.group = csv.str(r, c_part);
		if (c_limit >= 0) {
			double lim = slurm_duration(csv.str(r, c_limit));
			if (lim > 0)
				j.estimate = lim;
		}
		if (t.jobs.empty() || j.submit < first)
			first = j.submit;
		t.row_lines.push_back(csv.line(r)); /* index = position */
		t.jobs.push_back(std::move(j));
	}
	/* Ids the file does not make unique (see above, and a job listed
	 * twice, e.g. by sacct -D) get fresh ones. */
	JobId next = 0;
	for (const Job &j : t.jobs)
		next = std::max(next, j.id + 1);
	std::unordered_set<JobId> seen;
	for (Job &j : t.jobs) {
		j.submit -= first;
		if (j.id < 0 || !seen.insert(j.id).second)
			j.id = next++;
	}
	t.epoch = first > 0 ? first : 0;
}

} /* namespace tidal::sim */
