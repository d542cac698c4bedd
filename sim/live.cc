/*
 * live.cc - the trace as sbatch submissions, and sacct's record of the
 * live run as a RunResult (live.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "sim/live.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

#include "core/profiles/throughput_table.h"
#include "sim/csv.h"

namespace tidal::sim {

void compress_time(Trace &t, double speedup)
{
	if (speedup == 1)
		return;
	for (Job &j : t.jobs) {
		j.submit /= speedup;
		j.duration /= speedup;
		if (j.iter_time > 0)
			j.iter_time /= speedup;
		if (j.deadline != kNoDeadline)
			j.deadline /= speedup;
		if (j.estimate > 0)
			j.estimate /= speedup;
	}
}

bool live_trainer(const Job &j, const ThroughputTable &tables)
{
	return !j.model.empty() && j.batch > 0 && j.iterations > 0 &&
	       tables.row(j.model, j.batch) != nullptr;
}

long live_step_size(const Trace &t, const ThroughputTable &tables,
		    double speedup, double max_rate)
{
	double fastest = 0;
	for (const Job &j : t.jobs) {
		if (!live_trainer(j, tables))
			continue;
		/* At any size up to its largest (between two columns it runs
		 * at a speed between theirs). */
		const ThroughputRow &r = *tables.row(j.model, j.batch);
		int cap = j.max_gpus > 0 ? j.max_gpus : j.gpus;
		for (size_t c = 0; c < r.gpus.size(); c++)
			if (std::isfinite(r.tput[c]) &&
			    (r.gpus[c] <= cap || (c > 0 && r.gpus[c - 1] < cap)))
				fastest = std::max(fastest, r.tput[c]);
	}
	return std::max(1L, (long)std::ceil(fastest * speedup / max_rate - 1e-9));
}

void count_in_steps(Trace &t, const ThroughputTable &tables, long k)
{
	if (k <= 1)
		return;
	for (Job &j : t.jobs) {
		if (!live_trainer(j, tables))
			continue;
		double steps = std::max(1.0, std::round(j.iterations / k));
		if (j.iter_time > 0)
			j.iter_time *= j.iterations / steps;
		j.iterations = steps;
	}
}

void speed_up_profiles(const std::string &src, double speedup,
		       const std::string &dst)
{
	ThroughputTable check;
	std::string err;
	if (!check.load_dir(src, &err))
		throw InputError("--profiles " + err +
				 " (--speedup scales a directory of "
				 "<model>.csv throughput tables)");
	std::error_code ec;
	std::filesystem::create_directories(dst, ec);
	if (ec)
		throw InputError(dst + ": cannot make the directory: " +
				 ec.message());
	for (const auto &e : std::filesystem::directory_iterator(src)) {
		if (e.path().extension() != ".csv")
			continue;
		std::stringstream in(read_file(e.path().string()));
		std::string line, out;
		for (int n = 0; std::getline(in, line); n++) {
			if (!line.empty() && line.back() == '\r')
				line.pop_back();
			if (n == 0 || line.empty()) { /* the GPU counts */
				out += line + "\n";
				continue;
			}
			/* Every cell, the empty ones too (getline would drop
			 * an empty last one). */
			size_t at = 0;
			for (int c = 0; at <= line.size(); c++) {
				size_t comma = line.find(',', at);
				if (comma == std::string::npos)
					comma = line.size();
				std::string cell = line.substr(at, comma - at);
				at = comma + 1;
				char *end = nullptr;
				double v = std::strtod(cell.c_str(), &end);
				if (c > 0 && !cell.empty() && end && !*end &&
				    std::isfinite(v)) {
					char b[32];
					std::snprintf(b, sizeof b, "%.9g", v * speedup);
					cell = b;
				}
				out += (c ? "," : "") + cell;
			}
			out += "\n";
		}
		std::string to = dst + "/" + e.path().filename().string();
		std::ofstream f(to, std::ios::trunc);
		f << out;
		if (!f)
			throw InputError(to + ": cannot write: " +
					 std::strerror(errno));
	}
}

static std::string seconds(double s)
{
	char b[32];
	std::snprintf(b, sizeof b, "%.3f", s);
	return b;
}

void write_submit_plan(std::ostream &out, const SimInput &in,
		       const ThroughputTable &tables)
{
	std::vector<const Job *> order;
	for (const Job &j : in.trace.jobs)
		order.push_back(&j);
	std::stable_sort(order.begin(), order.end(),
			 [](const Job *a, const Job *b) {
				 return a->submit < b->submit;
			 });
	out << "# tidal-sim submit plan of " << in.trace.path << " ("
	    << order.size() << " jobs) on " << in.cluster_path << "\n"
	    << "at\tname\toptions\trun\tdeadline\n";
	for (const Job *j : order) {
		/* Work at the traced size: the replay's own speed model. */
		double run = j->iter_time > 0 ? j->iterations * j->iter_time
					      : j->duration;
		/* Minutes, with room for a slow start: the limit must never
		 * be what ends the job. */
		long limit = (long)std::ceil(run * 1.5 / 60) + 1;
		out << seconds(j->submit) << "\ttidal-" << j->id << "\t--gpus="
		    << j->gpus << " -t " << limit;
		if (j->elastic())
			out << " --elastic-gpus=" << std::max(j->min_gpus, 1)
			    << "-" << j->max_gpus;
		if (live_trainer(*j, tables))
			out << " --train-model=" << j->model
			    << " --train-batch=" << j->batch
			    << " --train-iters=" << (long long)j->iterations;
		out << "\t" << seconds(run) << "\t"
		    << (j->deadline != kNoDeadline ? seconds(j->deadline) : "-")
		    << "\n";
	}
}

namespace {

struct Runs {
	double submit = INFINITY, start = INFINITY, end = -INFINITY;
	int gpus = 0;
	int runs = 0;      /* rows with a start */
	bool open = false; /* a run with a start and no end */
	std::string state; /* sacct's state of its last run (latest end) */
	std::vector<std::pair<double, double>> spans; /* each run */
};

} /* namespace */

/* sim_live.sh's work.tsv: "# start EPOCH", then "tidal-ID<TAB>START<TAB>
 * END" per run of a job's process.  Each job's runs and ends become those;
 * sacct's whole seconds stay where the file has nothing. */
static void refine(const std::string &path,
		   const std::unordered_map<JobId, const Job *> &by_id,
		   std::map<JobId, Runs> &seen, double *zero)
{
	std::stringstream in(read_file(path));
	std::string line;
	std::map<JobId, std::vector<std::pair<double, double>>> runs;
	for (long n = 1; std::getline(in, line); n++) {
		if (line.rfind("# start ", 0) == 0) {
			char *end = nullptr;
			double z = std::strtod(line.c_str() + 8, &end);
			if (end == line.c_str() + 8 || !std::isfinite(z))
				input_error(path, n, "'# start' is not a time");
			*zero = z;
			continue;
		}
		if (line.empty() || line[0] == '#')
			continue;
		std::stringstream cells(line);
		std::string name;
		double a, b;
		if (!std::getline(cells, name, '\t') || !(cells >> a >> b) ||
		    name.rfind("tidal-", 0) != 0 || !(b >= a))
			input_error(path, n,
				    "expected 'tidal-ID<TAB>START<TAB>END' "
				    "with END >= START");
		JobId id = std::atoll(name.c_str() + 6);
		if (!by_id.count(id) || !seen.count(id))
			input_error(path, n, "job " + name +
						     " is in no record beside it");
		runs[id].push_back({a, b});
	}
	for (auto &[id, spans] : runs) {
		Runs &x = seen[id];
		x.spans = spans;
		x.start = INFINITY;
		x.end = -INFINITY;
		for (const auto &[a, b] : spans) {
			x.start = std::min(x.start, a);
			x.end = std::max(x.end, b);
		}
	}
}

std::map<JobId, double> live_submit_delays(const std::string &path,
					   const SimInput &in)
{
	std::map<JobId, double> out;
	std::string log = std::filesystem::path(path).parent_path() /
			  "submit.log";
	if (!std::filesystem::exists(log))
		return out;
	std::unordered_map<JobId, const Job *> by_id;
	for (const Job &j : in.trace.jobs)
		by_id.emplace(j.id, &j);
	std::stringstream text(read_file(log));
	std::string line;
	long n = 0;
	while (std::getline(text, line)) {
		n++;
		unsigned long long id;
		double planned, actual;
		if (std::sscanf(line.c_str(), "tidal-%llu\t%lf\t%lf", &id,
				&planned, &actual) != 3 ||
		    !std::isfinite(planned) || !std::isfinite(actual))
			input_error(log, n, "expected 'tidal-ID<TAB>planned "
					    "s<TAB>actual s', got '" + line +
					    "'");
		if (by_id.count((JobId)id))
			out[(JobId)id] = std::max(0.0, actual - planned);
	}
	return out;
}

void shift_submits(SimInput &in, const std::map<JobId, double> &delay)
{
	for (Job &j : in.trace.jobs)
		if (auto it = delay.find(j.id); it != delay.end())
			j.submit += it->second;
	std::stable_sort(in.trace.jobs.begin(), in.trace.jobs.end(),
			 [](const Job &a, const Job &b) {
				 return a.submit < b.submit;
			 });
}

void unshift_results(RunResult &r, const std::map<JobId, double> &delay)
{
	for (JobResult &j : r.jobs)
		if (auto it = delay.find(j.id); it != delay.end()) {
			j.submit -= it->second;
			j.jct += it->second;
			j.queue += it->second;
		}
}

RunResult live_result(const std::string &path, const SimInput &in,
		      const std::string &policy)
{
	Csv csv = Csv::load(path, '|');
	int c_name = csv.need("JobName"), c_sub = csv.need("Submit"),
	    c_start = csv.need("Start"), c_end = csv.need("End"),
	    c_alloc = csv.col("AllocTRES"), c_id = csv.need("JobID"),
	    c_state = csv.col("State");
	std::unordered_map<JobId, const Job *> by_id;
	for (const Job &j : in.trace.jobs)
		by_id.emplace(j.id, &j);
	std::map<JobId, Runs> seen;
	for (size_t r = 0; r < csv.rows(); r++) {
		if (csv.str(r, c_id).find('.') != std::string::npos)
			continue; /* a step */
		const std::string &name = csv.str(r, c_name);
		if (name.rfind("tidal-", 0) != 0)
			continue; /* not one of ours */
		const std::string num = name.substr(6);
		if (num.empty() || num.size() > 12 ||
		    num.find_first_not_of("0123456789") != std::string::npos)
			continue;
		JobId id = std::atoll(num.c_str());
		if (!by_id.count(id))
			csv.fail(r, "job " + name + " is not in the trace " +
					    in.trace.path);
		Runs &x = seen[id];
		/* Unix seconds; false for "Unknown", "None", "". */
		double sub, st, en;
		if (!parse_datetime(csv.str(r, c_sub), &sub))
			csv.fail(r, "Submit '" + csv.str(r, c_sub) +
					    "' is not YYYY-MM-DDTHH:MM:SS");
		x.submit = std::min(x.submit, sub);
		bool started = parse_datetime(csv.str(r, c_start), &st);
		bool ended = parse_datetime(csv.str(r, c_end), &en);
		/* Cancelled while pending (rejected by the policy): sacct
		 * gives it the cancel time as Start, and no allocation. */
		if (c_alloc >= 0 && c_state >= 0 &&
		    csv.str(r, c_alloc).empty() &&
		    csv.str(r, c_state).rfind("CANCELLED", 0) == 0)
			started = ended = false;
		if (started) {
			x.runs++;
			x.start = std::min(x.start, st);
			if (ended) {
				if (c_state >= 0 && en >= x.end)
					x.state = csv.str(r, c_state);
				x.end = std::max(x.end, en);
				x.spans.push_back({st, en});
			} else {
				x.open = true;
			}
		}
		if (c_alloc >= 0) {
			const std::string &tres = csv.str(r, c_alloc);
			size_t at = tres.find("gres/gpu=");
			if (at != std::string::npos)
				x.gpus = std::atoi(tres.c_str() + at + 9);
		}
	}
	for (const Job &j : in.trace.jobs)
		if (!seen.count(j.id))
			input_error(path, 0,
				    "job tidal-" + std::to_string(j.id) +
					    " of the trace is not in this "
					    "record (submitted? sacct -a -D "
					    "-X?)");
	/* Time 0 of the live run: the earliest live submit less its trace
	 * submit (sbatch ran at most a moment after the plan said). */
	double zero = INFINITY;
	for (const auto &[id, x] : seen)
		zero = std::min(zero, x.submit - by_id[id]->submit);
	/* The processes' own times, to the microsecond, where the paced jobs
	 * left them (work.tsv beside the record): time 0 and each run. */
	std::string work = std::filesystem::path(path).parent_path() /
			   "work.tsv";
	if (std::filesystem::exists(work))
		refine(work, by_id, seen, &zero);
	RunResult out;
	out.policy = policy;
	out.total_gpus = in.cluster.total_gpus();
	std::vector<std::pair<double, int>> steps; /* +/- GPUs at a time */
	for (const auto &[id, x] : seen) {
		const Job &j = *by_id[id];
		if (x.open)
			input_error(path, 0,
				    "job tidal-" + std::to_string(id) +
					    " has a run that has not ended: "
					    "take the record once every job "
					    "has ended");
		if (x.runs == 0) {
			out.jobs.push_back(rejected_result(j));
			continue;
		}
		Job done = j;
		done.start = x.start - zero;
		done.preemptions = x.runs - 1;
		JobResult r = completed_result(done, x.end - zero);
		if (x.gpus > 0)
			r.gpus = x.gpus;
		/* sacct's state of its last run ("CANCELLED by 0" keeps its
		 * first word): a job that did not complete its work has not
		 * met its deadline, whenever it ended. */
		std::string state = x.state.substr(0, x.state.find(' '));
		if (!state.empty() && state != "COMPLETED") {
			r.unfinished = true;
			out.warnings.push_back(
				"live: job tidal-" + std::to_string(id) +
				" ended " + state +
				" without finishing its work: it counts as "
				"missing any deadline it had");
		}
		/* Waiting: from its submit to its end, less its runs. */
		double ran = 0;
		for (const auto &[a, b] : x.spans) {
			ran += b - a;
			steps.push_back({a - zero, r.gpus});
			steps.push_back({b - zero, -r.gpus});
		}
		r.queue = std::max(0.0, r.jct - ran);
		out.jobs.push_back(r);
	}
	std::sort(steps.begin(), steps.end());
	int busy = 0;
	out.util.push_back({0, 0});
	for (const auto &[t, d] : steps) {
		busy += d;
		if (out.util.back().t == t)
			out.util.back().busy = busy;
		else
			out.util.push_back({t, busy});
	}
	return out;
}

static std::string datetime(double epoch, double t)
{
	time_t s = (time_t)std::llround(epoch + t);
	struct tm tm;
	gmtime_r(&s, &tm);
	char b[32];
	std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
	return b;
}

static std::string elapsed(double s)
{
	long v = std::max(0L, std::lround(s));
	char b[48];
	if (v >= 86400)
		std::snprintf(b, sizeof b, "%ld-%02ld:%02ld:%02ld", v / 86400,
			      v / 3600 % 24, v / 60 % 60, v % 60);
	else
		std::snprintf(b, sizeof b, "%02ld:%02ld:%02ld", v / 3600,
			      v / 60 % 60, v % 60);
	return b;
}

void write_acct(std::ostream &out, const std::vector<RunResult> &runs,
		double epoch)
{
	out << "JobID|JobName|Policy|Submit|Start|End|Elapsed|State|"
	       "AllocTRES|Preemptions\n";
	for (const RunResult &r : runs) {
		std::vector<const JobResult *> by_submit;
		for (const JobResult &j : r.jobs)
			by_submit.push_back(&j);
		std::stable_sort(by_submit.begin(), by_submit.end(),
				 [](const JobResult *a, const JobResult *b) {
					 return a->submit < b->submit ||
						(a->submit == b->submit &&
						 a->id < b->id);
				 });
		for (const JobResult *p : by_submit) {
			const JobResult &j = *p;
			out << j.id << "|"
			    << (j.name.empty() ? "tidal-" + std::to_string(j.id)
					       : j.name)
			    << "|" << r.policy << "|"
			    << datetime(epoch, j.submit) << "|";
			if (j.rejected)
				out << "Unknown|Unknown|00:00:00|CANCELLED||";
			else
				out << datetime(epoch, j.start) << "|"
				    << datetime(epoch, j.end) << "|"
				    << elapsed(j.end - j.start) << "|COMPLETED|"
				    << "gres/gpu=" << j.gpus << "|";
			out << j.preemptions << "\n";
		}
	}
}

} /* namespace tidal::sim */
