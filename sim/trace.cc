/*
 * trace.cc - trace format detection, common checks, and the readers for
 * the anchors' CSV formats.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "sim/trace.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "core/model/suggest.h"
#include "sim/csv.h"

namespace tidal::sim {

void Trace::skip(const std::string &why)
{
	skipped++;
	if (warnings.size() < 20)
		warnings.push_back(why);
}

bool parse_datetime(const std::string &s, double *out)
{
	int y, mo, d, h, mi, sec, used = 0;
	char sep;
	if (std::sscanf(s.c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d%n", &y, &mo, &d,
			&sep, &h, &mi, &sec, &used) != 7 ||
	    (sep != ' ' && sep != 'T') || mo < 1 || mo > 12 || d < 1 ||
	    d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 ||
	    sec > 60)
		return false;
	/* Nothing but blanks may follow ("...:00xyz" is not a time). */
	if (s.find_first_not_of(" \t\r", (size_t)used) != std::string::npos)
		return false;
	struct tm tm = {};
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	*out = (double)timegm(&tm);
	return true;
}

/* A non-negative decimal of at most 9 digits at S; advances S. */
static bool small_number(const char *&s, long *out)
{
	const char *b = s;
	long v = 0;
	while (*s >= '0' && *s <= '9' && s - b < 9)
		v = v * 10 + (*s++ - '0');
	if (s == b || (*s >= '0' && *s <= '9'))
		return false;
	*out = v;
	return true;
}

/* "[D-]HH:MM:SS", "MM:SS" (sacct's forms).  RET: seconds, or -1 for
 * anything else ("UNLIMITED", "Partition_Limit", ""). */
double slurm_duration(const std::string &text)
{
	long f[3] = {0, 0, 0}, d = 0;
	int n = 0;
	const char *s = text.c_str();
	bool days = std::strchr(s, '-') != nullptr;
	if (days && (!small_number(s, &d) || *s++ != '-'))
		return -1;
	while (n < 3) {
		if (!small_number(s, &f[n++]))
			return -1;
		if (*s != ':')
			break;
		s++;
	}
	if (*s || n < 2 || (days && n != 3))
		return -1;
	long h = n == 3 ? f[0] : 0, m = f[n - 2], sec = f[n - 1];
	return ((d * 24.0 + h) * 60 + m) * 60 + sec;
}

void JobIdSet::add(const Csv &csv, size_t row, JobId id)
{
	auto [it, fresh] = lines.emplace(id, csv.line(row));
	if (!fresh)
		csv.fail(row, "job id " + std::to_string(id) +
				      " is already used on line " +
				      std::to_string(it->second));
}

static bool starts_with(const std::string &s, const std::string &p)
{
	return s.rfind(p, 0) == 0;
}

/* Readers whose Job::index is the CSV row: every row's line. */
static void note_lines(const Csv &csv, Trace &t)
{
	t.row_lines.resize(csv.rows());
	for (size_t r = 0; r < csv.rows(); r++)
		t.row_lines[r] = csv.line(r);
}

/* Shared row checks: non-negative time, positive GPU count. */
static void check_job(const Csv &csv, size_t r, const Job &j)
{
	if (j.submit < 0)
		csv.fail(r, "negative submit time " + std::to_string(j.submit));
	if (j.gpus <= 0)
		csv.fail(r, "GPU count must be positive, got " +
				    std::to_string(j.gpus));
	if (j.duration < 0 || j.iterations < 0)
		csv.fail(r, "negative duration or work");
}

/* --- Muri / Tiresias --- */

static void read_muri(const std::string &path, const std::string &text,
		      Trace &t)
{
	Csv csv(path, text);
	note_lines(csv, t);
	int c_id = csv.need("job_id"), c_gpu = csv.need("num_gpu"),
	    c_sub = csv.need("submit_time"), c_it = csv.need("iterations"),
	    c_model = csv.need("model_name"), c_bs = csv.col("batch_size"),
	    c_dur = csv.need("duration"), c_itt = csv.need("iteration_time"),
	    c_pri = csv.col("priority");
	int c_st[3] = {csv.col("resource_time_0"), csv.col("resource_time_1"),
		       csv.col("resource_time_2")};
	JobIdSet ids;
	t.jobs.reserve(t.jobs.size() + csv.rows());
	for (size_t r = 0; r < csv.rows(); r++) {
		Job j;
		j.index = r;
		j.id = csv.integer(r, c_id);
		ids.add(csv, r, j.id);
		j.name = csv.str(r, c_id);
		j.gpus = csv.small_integer(r, c_gpu);
		j.submit = csv.num(r, c_sub) / 1000.0;
		j.iterations = csv.num(r, c_it);
		j.model = csv.str(r, c_model);
		j.batch = c_bs >= 0 ? csv.small_integer(r, c_bs) : 0;
		/* int(float(ms)) / 1000, as the anchor reads it */
		j.duration = std::trunc(csv.num(r, c_dur)) / 1000.0;
		j.iter_time = csv.num(r, c_itt) / 1000.0;
		for (int s = 0; s < 3; s++)
			if (c_st[s] >= 0)
				j.stages[s] = csv.num(r, c_st[s]) / 1000.0;
		j.priority_class = c_pri >= 0 ? csv.small_integer(r, c_pri) : 0;
		check_job(csv, r, j);
		t.jobs.push_back(std::move(j));
	}
}

/* --- ElasticFlow (generated and ITP cluster traces) --- */

/* ITP traces name jobs by UUID; ElasticFlow itself numbers jobs by row
 * (job_idx), so a name that is not a plain integer gets the row number. */
static JobId numeric_id_or_row(const Csv &csv, size_t r, int c)
{
	const std::string &s = csv.str(r, c);
	if (!s.empty() && s.size() < 16 &&
	    s.find_first_not_of("0123456789") == std::string::npos)
		return std::stoll(s);
	return (JobId)r;
}

static void read_elasticflow(const std::string &path, const std::string &text,
			     Trace &t)
{
	Csv csv(path, text);
	note_lines(csv, t);
	auto pick = [&](const char *a, const char *b) {
		int c = csv.col(a);
		return c >= 0 ? c : csv.need(b);
	};
	int c_id = csv.need("job_id"),
	    c_sub = pick("submit_time", "submission_time"),
	    c_it = pick("iteration", "num_iteration"),
	    c_model = csv.need("model_name"), c_ddl = pick("ddl", "deadline"),
	    c_bs = csv.need("batch_size"), c_gpu = csv.need("num_gpu"),
	    c_dur = csv.need("duration"), c_be = csv.col("best_effort");
	JobIdSet ids;
	t.jobs.reserve(t.jobs.size() + csv.rows());
	for (size_t r = 0; r < csv.rows(); r++) {
		Job j;
		j.index = r;
		j.id = numeric_id_or_row(csv, r, c_id);
		ids.add(csv, r, j.id);
		j.name = csv.str(r, c_id);
		j.submit = csv.num(r, c_sub);
		j.iterations = csv.num(r, c_it);
		j.model = csv.str(r, c_model);
		j.batch = csv.small_integer(r, c_bs);
		j.gpus = csv.small_integer(r, c_gpu);
		j.duration = std::trunc(csv.num(r, c_dur));
		j.best_effort = c_be >= 0 && csv.str(r, c_be) == "1";
		j.deadline = j.best_effort ? kNoDeadline : csv.num(r, c_ddl);
		j.min_gpus = 1;
		j.max_gpus = j.gpus;
		j.iter_time = j.iterations > 0 ? j.duration / j.iterations : 0;
		check_job(csv, r, j);
		t.jobs.push_back(std::move(j));
	}
}

/* --- Helios / Lucid --- */

static void read_lucid(const std::string &path, const std::string &text,
		       Trace &t)
{
	Csv csv(path, text);
	note_lines(csv, t);
	int c_id = csv.need("job_id"), c_user = csv.need("user"),
	    c_vc = csv.need("vc"), c_gpu = csv.need("gpu_num"),
	    c_sub = csv.need("submit_time"), c_dur = csv.need("duration"),
	    c_model = csv.col("model"), c_bs = csv.col("batchsize"),
	    c_util = csv.col("gpu_util"), c_gmem = csv.col("gmem"),
	    c_ds = csv.col("dataset"), c_amp = csv.col("amp"),
	    c_cpu = csv.col("cpu_num"), c_jname = csv.col("jobname");
	JobIdSet ids;
	t.jobs.reserve(t.jobs.size() + csv.rows());
	for (size_t r = 0; r < csv.rows(); r++) {
		int gpus = csv.small_integer(r, c_gpu);
		if (gpus <= 0) {
			t.skip(csv.file() + ":" + std::to_string(csv.line(r)) +
			       ": job " + csv.str(r, c_id) +
			       " asks for no GPU; skipped");
			continue;
		}
		Job j;
		j.index = r;
		j.id = csv.integer(r, c_id);
		ids.add(csv, r, j.id);
		j.name = csv.str(r, c_id);
		j.user = csv.str(r, c_user);
		j.group = csv.str(r, c_vc);
		j.gpus = gpus;
		j.cpus = c_cpu >= 0 ? csv.small_integer(r, c_cpu) : 0;
		j.job_name = c_jname >= 0 ? csv.str(r, c_jname) : "";
		if (!parse_datetime(csv.str(r, c_sub), &j.submit))
			csv.fail(r, "submit_time '" + csv.str(r, c_sub) +
					    "' is not YYYY-MM-DD HH:MM:SS");
		j.duration = (double)csv.integer(r, c_dur);
		j.iterations = j.duration;
		j.iter_time = 1;
		if (c_model >= 0) {
			/* Profile key: model/dataset/batch/amp */
			j.model = csv.str(r, c_model);
			if (c_ds >= 0)
				j.model += "/" + csv.str(r, c_ds);
			if (c_bs >= 0)
				j.model += "/" + csv.str(r, c_bs);
			if (c_amp >= 0)
				j.model += "/" + csv.str(r, c_amp);
		}
		j.batch = c_bs >= 0 ? csv.small_integer(r, c_bs) : 0;
		j.gpu_util = c_util >= 0 ? csv.num(r, c_util) : 0;
		j.gpu_mem_mb = c_gmem >= 0 ? csv.num(r, c_gmem) : 0;
		if (j.duration < 0)
			csv.fail(r, "negative duration");
		t.jobs.push_back(std::move(j));
	}
}

/* --- Pollux workloads --- */

static void read_pollux(const std::string &path, const std::string &text,
			Trace &t)
{
	Csv csv(path, text);
	note_lines(csv, t);
	int c_name = csv.need("name"), c_time = csv.need("time"),
	    c_app = csv.need("application"), c_rep = csv.need("num_replicas"),
	    c_bs = csv.need("batch_size");
	t.jobs.reserve(t.jobs.size() + csv.rows());
	for (size_t r = 0; r < csv.rows(); r++) {
		Job j;
		j.index = r;
		j.id = (JobId)r;
		j.name = csv.str(r, c_name);
		j.submit = csv.num(r, c_time);
		j.model = csv.str(r, c_app);
		j.gpus = csv.small_integer(r, c_rep);
		j.batch = csv.small_integer(r, c_bs);
		j.min_gpus = 0;
		j.max_gpus = 64;
		check_job(csv, r, j);
		t.jobs.push_back(std::move(j));
	}
}

/* --- Tidal's own CSV: id,submit,gpus,duration[,user,model,batch,
 *     iterations,deadline,min_gpus,max_gpus] --- */

static void read_tidal(const std::string &path, const std::string &text,
		       Trace &t)
{
	Csv csv(path, text);
	note_lines(csv, t);
	int c_id = csv.need("id"), c_sub = csv.need("submit"),
	    c_gpu = csv.need("gpus"), c_dur = csv.need("duration"),
	    c_user = csv.col("user"), c_model = csv.col("model"),
	    c_bs = csv.col("batch"), c_it = csv.col("iterations"),
	    c_ddl = csv.col("deadline"), c_min = csv.col("min_gpus"),
	    c_max = csv.col("max_gpus");
	t.jobs.reserve(csv.rows());
	JobIdSet ids;
	for (size_t r = 0; r < csv.rows(); r++) {
		Job j;
		j.index = r;
		j.id = csv.integer(r, c_id);
		ids.add(csv, r, j.id);
		j.submit = csv.num(r, c_sub);
		j.gpus = csv.small_integer(r, c_gpu);
		j.duration = csv.num(r, c_dur);
		if (c_user >= 0)
			j.user = csv.str(r, c_user);
		if (c_model >= 0)
			j.model = csv.str(r, c_model);
		if (c_bs >= 0 && !csv.str(r, c_bs).empty())
			j.batch = csv.small_integer(r, c_bs);
		j.iterations = c_it >= 0 && !csv.str(r, c_it).empty()
				       ? csv.num(r, c_it)
				       : j.duration;
		j.iter_time = j.iterations > 0 ? j.duration / j.iterations : 1;
		if (c_ddl >= 0 && !csv.str(r, c_ddl).empty())
			j.deadline = csv.num(r, c_ddl);
		if (c_min >= 0 && !csv.str(r, c_min).empty())
			j.min_gpus = csv.small_integer(r, c_min);
		if (c_max >= 0 && !csv.str(r, c_max).empty())
			j.max_gpus = csv.small_integer(r, c_max);
		check_job(csv, r, j);
		if (j.min_gpus < 0 || j.max_gpus < 0 ||
		    (j.max_gpus && j.min_gpus > j.max_gpus))
			csv.fail(r, "min_gpus must be in [0, max_gpus]");
		t.jobs.push_back(std::move(j));
	}
}

void read_gavel(const std::string &path, const std::string &text, Trace &t);
void read_sacct(const std::string &path, const std::string &text, Trace &t);
bool detect_gavel(const std::string &head);
bool detect_sacct(const std::string &head);
void read_ub(const std::string &path, const std::string &text, Trace &t);
bool detect_ub(const std::string &head);

const std::vector<TraceFormat> &trace_formats()
{
	static const std::vector<TraceFormat> formats = {
		{"muri",
		 [](const std::string &h) {
			 return starts_with(h, "job_id,num_gpu,submit_time,");
		 },
		 read_muri,
		 {"job_id", "num_gpu", "submit_time", "iterations",
		  "model_name", "duration", "iteration_time"},
		 ',',
		 "Muri/Tiresias CSV (job_id,num_gpu,submit_time,...; ms)"},
		{"elasticflow",
		 [](const std::string &h) {
			 return starts_with(h, "job_id,submit_time,iteration,") ||
				starts_with(h, "job_id,submission_time,");
		 },
		 read_elasticflow,
		 {"job_id", "submit_time|submission_time",
		  "iteration|num_iteration", "model_name", "ddl|deadline",
		  "batch_size", "num_gpu", "duration"},
		 ',',
		 "ElasticFlow CSV (job_id,submit_time,iteration,...) and the "
		 "ITP traces"},
		{"lucid",
		 [](const std::string &h) {
			 return starts_with(h, "job_id,user,vc,");
		 },
		 read_lucid,
		 {"job_id", "user", "vc", "gpu_num", "submit_time",
		  "duration"},
		 ',',
		 "Helios/Lucid CSV (job_id,user,vc,...; datetimes)"},
		{"pollux",
		 [](const std::string &h) {
			 return starts_with(h, "name,time,application,");
		 },
		 read_pollux,
		 {"name", "time", "application", "num_replicas", "batch_size"},
		 ',',
		 "Pollux workload CSV (name,time,application,...)"},
		{"gavel", detect_gavel, read_gavel, {}, ',',
		 "Gavel/Shockwave .trace (12 tab-separated columns)"},
		{"sacct", detect_sacct, read_sacct, {"JobID", "Submit"}, '|',
		 "Slurm's history: sacct --parsable2 with JobID and Submit"},
		{"tidal",
		 [](const std::string &h) {
			 return starts_with(h, "id,submit,gpus,duration");
		 },
		 read_tidal,
		 {"id", "submit", "gpus", "duration"},
		 ',',
		 "Tidal's own CSV (id,submit,gpus,duration[,...])"},
		{"ub", detect_ub, read_ub, {}, ',',
		 "the UB Slurm Simulator's events file (-dt S -e "
		 "submit_batch_job | OPTIONS)"},
	};
	return formats;
}

static std::vector<std::string> split_on(const std::string &s, char sep)
{
	std::vector<std::string> out;
	size_t start = 0;
	for (;;) {
		size_t end = s.find(sep, start);
		out.push_back(s.substr(start, end - start));
		if (end == std::string::npos)
			return out;
		start = end + 1;
	}
}

/* What FORMAT's columns lack in HEADER: "'a'", "'b' (or 'c')", each with
 * the header's nearest cell when it looks like a typo of it. */
static std::vector<std::string>
missing_columns(const TraceFormat &f, const std::vector<std::string> &header)
{
	std::vector<std::string> out;
	for (const std::string &need : f.columns) {
		std::vector<std::string> alts = split_on(need, '|');
		bool found = false;
		for (const std::string &a : alts)
			found |= std::find(header.begin(), header.end(), a) !=
				 header.end();
		if (found)
			continue;
		std::string m = "'" + alts[0] + "'";
		for (size_t i = 1; i < alts.size(); i++)
			m += " (or '" + alts[i] + "')";
		std::string near = nearest(alts[0], header);
		if (!near.empty())
			m += " (the header has '" + near + "')";
		out.push_back(m);
	}
	return out;
}

/* No format recognised FIRST (the first line of PATH): say which format
 * it comes closest to - the one with the largest share of its columns,
 * at least half of them - and what that one lacks. */
[[noreturn]] static void unknown_format(const std::string &path,
					const std::string &first)
{
	std::string known;
	for (const TraceFormat &f : trace_formats())
		known += (known.empty() ? "" : ", ") + f.name;
	const TraceFormat *best = nullptr;
	std::vector<std::string> best_missing;
	double best_share = 0;
	for (const TraceFormat &f : trace_formats()) {
		if (f.columns.empty() || first.find(f.sep) == std::string::npos)
			continue;
		std::vector<std::string> header = split_on(first, f.sep);
		for (std::string &h : header)
			h.erase(std::remove(h.begin(), h.end(), '\r'), h.end());
		std::vector<std::string> miss = missing_columns(f, header);
		size_t have = f.columns.size() - miss.size();
		double share = (double)have / (double)f.columns.size();
		if (have >= 1 && share >= 0.5 && share > best_share) {
			best = &f;
			best_missing = miss;
			best_share = share;
		}
	}
	if (best && best_missing.empty())
		input_error(path, 1,
			    "the header has the columns of the " +
				    best->name +
				    " format, in another order than detection "
				    "expects; give --trace-format " +
				    best->name);
	if (best) {
		std::string miss;
		for (const std::string &m : best_missing)
			miss += (miss.empty() ? "" : ", ") + m;
		input_error(path, 1,
			    "cannot tell the trace format: the header is "
			    "closest to the " + best->name +
				    " format but lacks column" +
				    (best_missing.size() > 1 ? "s " : " ") +
				    miss);
	}
	if (first.find('\t') != std::string::npos &&
	    first.find("(batch size") != std::string::npos)
		input_error(path, 1,
			    "cannot tell the trace format: the line looks like "
			    "a gavel trace, which has 12 tab-separated "
			    "columns, not " +
				    std::to_string(
					    split_on(first, '\t').size()));
	input_error(path, 1,
		    "cannot tell the trace format from the first line; give "
		    "--trace-format (known: " + known + ")");
}

Trace load_trace(const std::string &path, const std::string &format)
{
	std::string text = read_file(path);
	if (text.find_first_not_of(" \t\r\n") == std::string::npos)
		input_error(path, 0,
			    text.empty() ? "the trace is empty"
					 : "the trace holds only blank lines");
	std::string head = text.substr(0, std::min<size_t>(text.size(), 4096));
	Trace t;
	t.path = path;
	for (const TraceFormat &f : trace_formats()) {
		if (format.empty() ? !f.detect(head) : f.name != format)
			continue;
		t.format = f.name;
		f.read(path, text, t);
		if (t.jobs.empty())
			input_error(path, 0, "the trace holds no usable job");
		return t;
	}
	if (!format.empty()) {
		std::string known;
		for (const TraceFormat &f : trace_formats())
			known += (known.empty() ? "" : ", ") + f.name;
		input_error(path, 0,
			    "unknown trace format '" + format + "' (known: " +
				    known + ")");
	}
	unknown_format(path, head.substr(0, head.find('\n')));
}

} /* namespace tidal::sim */
