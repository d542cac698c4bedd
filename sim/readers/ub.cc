/*
 * ub.cc - the UB CCR Slurm Simulator's events file (slurm_sim_tools'
 * "*.events"): one event per line,
 *
 *   -dt 16 -e submit_batch_job | -J jobid_1004 -sim-walltime 21
 *       --uid=user3 -t 00:01:00 -n 24 --ntasks-per-node=12 -A account1
 *       -p normal -q normal --gres=gpu:2 pseudo.job
 *
 * (one line in the file).  Before the '|': -dt, the submit time in seconds
 * from the start of the replay, and -e, the event; only submit_batch_job
 * events are jobs, others are skipped with a warning.  After it, sbatch's
 * options as the simulator's sbatch takes them:
 *
 *   -sim-walltime W  the run time, seconds; -1 = until the time limit
 *   -t, --time       the time limit (Slurm's forms: M, M:S, H:M:S, D-H,
 *                    D-H:M, D-H:M:S); the job's estimate
 *   -J, --job-name   the name; "jobid_N" gives the job id N, any other
 *                    name an id past the largest
 *   --gres=gpu[:TYPE]:N, --gpus-per-node=N   GPUs on each node
 *   -G, --gpus=N     GPUs in all (wins over the per-node forms)
 *   -N, --nodes      nodes; without it, ntasks over ntasks-per-node
 *   -n, --ntasks, --ntasks-per-node, -c, --cpus-per-task   CPUs
 *   --uid            the user;  -A, --account: the group when -p is absent
 *   -p, --partition  the group (the job's virtual cluster)
 *
 * Other options are read past (with their value where sbatch gives them
 * one) and the last word, the script, is ignored.  As with sacct's
 * history, jobs with no GPU or no run time are skipped and counted in a
 * warning.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>
#include <unordered_set>

#include "sim/csv.h"
#include "sim/trace.h"

namespace tidal::sim {

namespace {

std::vector<std::string> words(const std::string &s)
{
	std::vector<std::string> out;
	std::stringstream in(s);
	std::string w;
	while (in >> w)
		out.push_back(w);
	return out;
}

/* The short options of sbatch that take a value in the next word. */
bool short_with_value(char c)
{
	return std::string("AabBcCdDeFGiJLMmNnopqStwx").find(c) !=
	       std::string::npos;
}

/* Long options of sbatch that take a value, given as "--opt VALUE". */
bool long_with_value(const std::string &name)
{
	static const std::set<std::string> known = {
		"account", "array", "begin", "chdir", "constraint",
		"cpus-per-gpu", "cpus-per-task", "deadline", "dependency",
		"error", "exclude", "gres", "gpus", "gpus-per-node",
		"gpus-per-task", "input", "job-name", "licenses", "mem",
		"mem-per-cpu", "mem-per-gpu", "nodelist", "nodes", "ntasks",
		"ntasks-per-node", "output", "partition", "qos", "reservation",
		"time", "time-min", "uid", "gid", "wckey", "comment",
		"sim-walltime"};
	return known.count(name) != 0;
}

/* A whole non-negative decimal of at most 9 digits. */
bool count_of(const std::string &s, long *out)
{
	if (s.empty() || s.size() > 9 ||
	    s.find_first_not_of("0123456789") != std::string::npos)
		return false;
	*out = std::atol(s.c_str());
	return true;
}

/* sbatch -t: "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S".  RET:
 * seconds, or -1 for "UNLIMITED"/"INFINITE" or anything malformed. */
double time_limit(const std::string &t)
{
	long v;
	if (count_of(t, &v))
		return v * 60.0; /* minutes alone */
	size_t dash = t.find('-');
	if (dash == std::string::npos)
		return slurm_duration(t);
	long d;
	if (!count_of(t.substr(0, dash), &d))
		return -1;
	std::vector<long> f;
	std::stringstream in(t.substr(dash + 1));
	std::string part;
	while (std::getline(in, part, ':')) {
		if (!count_of(part, &v))
			return -1;
		f.push_back(v);
	}
	if (f.empty() || f.size() > 3 || t.back() == ':')
		return -1;
	while (f.size() < 3)
		f.push_back(0);
	return ((d * 24.0 + f[0]) * 60 + f[1]) * 60 + f[2];
}

/* GPUs per node in a --gres list ("gpu:2", "gpu:a100:4,shard:1");
 * 0 = none. */
long gres_gpus(const std::string &list)
{
	std::stringstream in(list);
	std::string item;
	long n = 0;
	while (std::getline(in, item, ',')) {
		if (item != "gpu" && item.rfind("gpu:", 0) != 0)
			continue;
		size_t c = item.rfind(':');
		long v = 1; /* "gpu" alone and "gpu:TYPE" mean one */
		if (c != std::string::npos && c > 2)
			if (!count_of(item.substr(c + 1), &v))
				v = 1;
		n += v;
	}
	return n;
}

struct Request {
	std::string name, user, account, partition;
	double walltime = -2; /* -2 = not given */
	double limit = -1;
	long gpus = -1, gpus_per_node = -1, nodes = -1, ntasks = -1,
	     per_node = -1, cpus_per_task = 1;
};

} /* namespace */

bool detect_ub(const std::string &head)
{
	std::string first = head.substr(0, head.find('\n'));
	return first.rfind("-dt ", 0) == 0 &&
	       first.find(" -e ") != std::string::npos &&
	       first.find('|') != std::string::npos;
}

void read_ub(const std::string &path, const std::string &text, Trace &t)
{
	std::stringstream in(text);
	std::string line;
	long lineno = 0;
	std::vector<long> named; /* jobid_N of each job, or -1 */
	while (std::getline(in, line)) {
		lineno++;
		if (!line.empty() && line.back() == '\r')
			line.pop_back();
		if (line.find_first_not_of(" \t") == std::string::npos ||
		    line[line.find_first_not_of(" \t")] == '#')
			continue;
		size_t bar = line.find('|');
		if (bar == std::string::npos)
			input_error(path, lineno,
				    "no '|' between the event and its sbatch "
				    "options (expected '-dt SECONDS -e "
				    "submit_batch_job | OPTIONS')");
		std::vector<std::string> ev = words(line.substr(0, bar));
		double dt = -1;
		std::string event;
		for (size_t i = 0; i < ev.size(); i++) {
			bool last = i + 1 == ev.size();
			if (ev[i] == "-dt" && !last) {
				char *end = nullptr;
				const std::string &v = ev[++i];
				dt = std::strtod(v.c_str(), &end);
				if (end == v.c_str() || *end || !std::isfinite(dt) ||
				    dt < 0)
					input_error(path, lineno,
						    "-dt '" + v +
							    "' is not a number of "
							    "seconds >= 0");
			} else if (ev[i] == "-e" && !last) {
				event = ev[++i];
			} else {
				input_error(path, lineno,
					    "unexpected '" + ev[i] +
						    "' before '|' (expected -dt "
						    "SECONDS -e EVENT)");
			}
		}
		if (dt < 0)
			input_error(path, lineno, "the event has no -dt");
		if (event != "submit_batch_job") {
			t.skip(path + ":" + std::to_string(lineno) + ": event '" +
			       event + "' is not a job submission; skipped");
			continue;
		}
		std::vector<std::string> w = words(line.substr(bar + 1));
		Request q;
		for (size_t i = 0; i < w.size(); i++) {
			std::string opt = w[i], val;
			bool has_value = false;
			if (opt.rfind("--", 0) == 0 || opt == "-sim-walltime") {
				std::string name = opt.substr(opt[1] == '-' ? 2 : 1);
				size_t eq = name.find('=');
				if (eq != std::string::npos) {
					val = name.substr(eq + 1);
					name = name.substr(0, eq);
					has_value = true;
				} else if (long_with_value(name)) {
					if (i + 1 >= w.size())
						input_error(path, lineno,
							    opt + " has no value");
					val = w[++i];
					has_value = true;
				}
				opt = name;
			} else if (opt.size() >= 2 && opt[0] == '-') {
				char c = opt[1];
				if (short_with_value(c)) {
					if (opt.size() > 2) {
						val = opt.substr(2);
					} else {
						if (i + 1 >= w.size())
							input_error(path, lineno,
								    opt + " has no value");
						val = w[++i];
					}
					has_value = true;
				}
				opt = std::string(1, c);
			} else {
				continue; /* the script, or a stray word */
			}
			if (!has_value)
				continue; /* a flag: --exclusive, -H, ... */
			auto count = [&](long *out) {
				if (!count_of(val, out))
					input_error(path, lineno,
						    "--" + opt + "=" + val +
							    ": not a whole number");
			};
			if (opt == "sim-walltime") {
				char *end = nullptr;
				q.walltime = std::strtod(val.c_str(), &end);
				if (end == val.c_str() || *end ||
				    !std::isfinite(q.walltime) ||
				    (q.walltime < 0 && q.walltime != -1))
					input_error(path, lineno,
						    "-sim-walltime '" + val +
							    "' is not seconds >= 0 "
							    "or -1 (until the time "
							    "limit)");
			} else if (opt == "t" || opt == "time") {
				q.limit = time_limit(val);
				if (q.limit < 0 && val != "UNLIMITED" &&
				    val != "INFINITE" && val != "infinite")
					input_error(path, lineno,
						    "time limit '" + val +
							    "' is not one of Slurm's "
							    "forms (M, M:S, H:M:S, "
							    "D-H, D-H:M, D-H:M:S)");
			} else if (opt == "J" || opt == "job-name") {
				q.name = val;
			} else if (opt == "uid") {
				q.user = val;
			} else if (opt == "A" || opt == "account") {
				q.account = val;
			} else if (opt == "p" || opt == "partition") {
				q.partition = val;
			} else if (opt == "gres") {
				q.gpus_per_node = gres_gpus(val);
			} else if (opt == "gpus-per-node") {
				count(&q.gpus_per_node);
			} else if (opt == "G" || opt == "gpus") {
				/* "--gpus=a100:4": the count after the type */
				size_t c = val.rfind(':');
				if (c != std::string::npos)
					val = val.substr(c + 1);
				count(&q.gpus);
			} else if (opt == "N" || opt == "nodes") {
				/* "-N 2-4": the smallest count */
				val = val.substr(0, val.find('-'));
				count(&q.nodes);
			} else if (opt == "n" || opt == "ntasks") {
				count(&q.ntasks);
			} else if (opt == "ntasks-per-node") {
				count(&q.per_node);
			} else if (opt == "c" || opt == "cpus-per-task") {
				count(&q.cpus_per_task);
			}
		}
		std::string job = q.name.empty() ? "the job" : "job " + q.name;
		std::string where = path + ":" + std::to_string(lineno) + ": " +
				    job;
		long nodes = q.nodes;
		if (nodes < 1)
			nodes = q.ntasks > 0 && q.per_node > 0
					? (q.ntasks + q.per_node - 1) / q.per_node
					: 1;
		long gpus = q.gpus >= 0 ? q.gpus
			    : q.gpus_per_node > 0 ? q.gpus_per_node * nodes
						  : 0;
		if (gpus <= 0) {
			t.skip(where + " uses no GPU; skipped");
			continue;
		}
		if (gpus > 1000000)
			input_error(path, lineno,
				    job + " asks for " +
					    std::to_string(gpus) +
					    " GPUs (more than 1,000,000)");
		if (q.walltime == -2)
			input_error(path, lineno,
				    job + " has no -sim-walltime (its run time)");
		double run = q.walltime;
		if (run == -1) {
			if (q.limit <= 0)
				input_error(path, lineno,
					    job + " runs until its time limit "
						    "(-sim-walltime -1) but has "
						    "no -t");
			run = q.limit;
		}
		if (run <= 0) {
			t.skip(where + " runs 0 s; skipped");
			continue;
		}
		Job j;
		j.index = t.jobs.size();
		j.name = q.name;
		j.job_name = q.name;
		j.submit = dt;
		j.gpus = (int)gpus;
		j.duration = run;
		j.iterations = run;
		j.iter_time = 1;
		j.estimate = q.limit > 0 ? q.limit : -1;
		j.user = q.user;
		j.group = !q.partition.empty() ? q.partition : q.account;
		long tasks = q.ntasks > 0 ? q.ntasks
			     : q.per_node > 0 ? q.per_node * nodes
					      : 1;
		j.cpus = (int)std::min(tasks * std::max(1L, q.cpus_per_task),
				       1000000L);
		long id = -1;
		if (q.name.rfind("jobid_", 0) == 0 &&
		    !count_of(q.name.substr(6), &id))
			id = -1;
		named.push_back(id);
		t.row_lines.push_back(lineno); /* index = position */
		t.jobs.push_back(std::move(j));
	}
	/* jobid_N names give the ids; the others, and names used twice, get
	 * fresh ones past the largest. */
	JobId next = 0;
	for (long id : named)
		next = std::max<JobId>(next, id + 1);
	std::unordered_set<JobId> seen;
	for (size_t k = 0; k < t.jobs.size(); k++) {
		Job &j = t.jobs[k];
		j.id = named[k];
		if (j.id < 0 || !seen.insert(j.id).second)
			j.id = next++;
		if (j.name.empty())
			j.name = std::to_string(j.id);
	}
}

} /* namespace tidal::sim */
