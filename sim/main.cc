/*
 * main.cc - tidal-sim: replay a trace on a cluster with one or more
 * policies and compare them side by side.  See tidal-sim(1).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <getopt.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/policy.h"
#include "sim/cluster_io.h"
#include "sim/csv.h"
#include "sim/preset.h"
#include "sim/report.h"
#include "sim/trace.h"

using namespace tidal;
using namespace tidal::sim;

namespace {

const char *kUsage =
	"usage: tidal-sim --cluster FILE --trace FILE --policy P[,P...] [options]\n"
	"\n"
	"  --preset NAME          cluster model: tidal (default), muri, elasticflow,\n"
	"                         lucid, pollux, gavel (see --list)\n"
	"  --cluster FILE         slurm.conf (gres.conf/topology.conf beside it),\n"
	"                         an anchor cluster-spec CSV, or a VC config CSV\n"
	"  --trace FILE           job trace; the format is detected\n"
	"  --trace-format F       muri, elasticflow, lucid, pollux, gavel, sacct, tidal\n"
	"  --policy P[,P...]      policies to compare (see --list)\n"
	"  --profiles PATH        throughput tables in the anchor's own form\n"
	"  --policy-config FILE   policy parameters: Key=Value lines or a JSON file\n"
	"  --param KEY=VALUE      one policy parameter (repeatable; wins over files)\n"
	"  --estimates FILE       duration estimates (job_id,priority CSV)\n"
	"  --json FILE|-          summary as JSON\n"
	"  --jobs-csv FILE        one row per job and policy\n"
	"  --timeseries-csv FILE  busy GPUs over time per policy\n"
	"  --plot FILE.svg        JCT CDF and GPU utilisation per policy\n"
	"  --seed N               seed for randomised policies (default 1)\n"
	"  --quiet                no table, no progress bar\n"
	"  --list                 list presets and policies\n"
	"  --help, --version\n";

struct Options {
	std::string preset = "tidal";
	std::string cluster, trace, trace_format, policies, profiles;
	std::string policy_config, estimates, json, jobs_csv, timeseries_csv,
		plot;
	std::vector<std::string> params;
	std::uint64_t seed = 1;
	bool quiet = false;
};

[[noreturn]] void usage_error(const std::string &msg)
{
	std::fprintf(stderr, "tidal-sim: %s\n%s", msg.c_str(), kUsage);
	std::exit(2);
}

std::vector<std::string> split(const std::string &s, char sep)
{
	std::vector<std::string> out;
	std::stringstream in(s);
	std::string item;
	while (std::getline(in, item, sep))
		if (!item.empty())
			out.push_back(item);
	return out;
}

double cpu_now()
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A progress bar on a terminal; silent otherwise. */
class Bar {
public:
	explicit Bar(bool on) : on_(on) {}
	Progress for_policy(const std::string &name)
	{
		if (!on_)
			return {};
		return [this, name](long done, long total) {
			int pct = total ? (int)(100 * done / total) : 100;
			if (pct == last_ && done != total)
				return;
			last_ = pct;
			int fill = pct / 4;
			std::fprintf(stderr, "\r%-14.14s [%.*s%*s] %3d%% %ld/%ld jobs",
				     name.c_str(), fill,
				     "#########################", 25 - fill, "",
				     pct, done, total);
			if (done == total)
				std::fprintf(stderr, "\n");
		};
	}

private:
	bool on_;
	int last_ = -1;
};

void write_to(const std::string &path, const std::string &what,
	      const std::function<void(std::ostream &)> &fn)
{
	if (path == "-") {
		fn(std::cout);
		return;
	}
	/* A device, FIFO or /dev/stdout is written in place: renaming a
	 * temporary file over /dev/null would replace the device. */
	struct stat st;
	if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
		std::ofstream out(path);
		if (out)
			fn(out);
		if (!out)
			throw InputError(path + ": cannot write " + what + ": " +
					 std::strerror(errno));
		return;
	}
	/* Regular files are replaced atomically: a reader never sees half. */
	std::string tmp = path + ".tmp";
	std::ofstream out(tmp);
	if (!out)
		throw InputError(path + ": cannot write " + what + ": " +
				 std::strerror(errno));
	fn(out);
	out.close();
	if (!out || std::rename(tmp.c_str(), path.c_str()) != 0)
		throw InputError(path + ": cannot write " + what + ": " +
				 std::strerror(errno));
}

void list_all()
{
	std::printf("presets:\n");
	for (const std::string &n : preset_names()) {
		std::string err;
		auto p = make_preset(n, &err);
		std::printf("  %-22s %s\n", n.c_str(), p->summary().c_str());
	}
	std::printf("policies:\n");
	for (const PolicyInfo *p : all_policies())
		std::printf("  %-22s %s\n", p->name.c_str(), p->summary.c_str());
}

Options parse_args(int argc, char **argv)
{
	enum {
		O_PRESET = 256, O_CLUSTER, O_TRACE, O_TFMT, O_POLICY, O_PROF,
		O_PCONF, O_EST, O_JSON, O_JOBS, O_TS, O_PLOT, O_SEED, O_QUIET,
		O_LIST, O_HELP, O_VERSION, O_PARAM,
	};
	static const struct option longopts[] = {
		{"preset", required_argument, nullptr, O_PRESET},
		{"cluster", required_argument, nullptr, O_CLUSTER},
		{"trace", required_argument, nullptr, O_TRACE},
		{"trace-format", required_argument, nullptr, O_TFMT},
		{"policy", required_argument, nullptr, O_POLICY},
		{"profiles", required_argument, nullptr, O_PROF},
		{"policy-config", required_argument, nullptr, O_PCONF},
		{"param", required_argument, nullptr, O_PARAM},
		{"estimates", required_argument, nullptr, O_EST},
		{"json", required_argument, nullptr, O_JSON},
		{"jobs-csv", required_argument, nullptr, O_JOBS},
		{"timeseries-csv", required_argument, nullptr, O_TS},
		{"plot", required_argument, nullptr, O_PLOT},
		{"seed", required_argument, nullptr, O_SEED},
		{"quiet", no_argument, nullptr, O_QUIET},
		{"list", no_argument, nullptr, O_LIST},
		{"help", no_argument, nullptr, O_HELP},
		{"version", no_argument, nullptr, O_VERSION},
		{nullptr, 0, nullptr, 0},
	};
	Options o;
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, nullptr)) != -1) {
		switch (c) {
		case O_PRESET: o.preset = optarg; break;
		case O_CLUSTER: o.cluster = optarg; break;
		case O_TRACE: o.trace = optarg; break;
		case O_TFMT: o.trace_format = optarg; break;
		case O_POLICY: o.policies = optarg; break;
		case O_PROF: o.profiles = optarg; break;
		case O_PCONF: o.policy_config = optarg; break;
		case O_PARAM: o.params.push_back(optarg); break;
		case O_EST: o.estimates = optarg; break;
		case O_JSON: o.json = optarg; break;
		case O_JOBS: o.jobs_csv = optarg; break;
		case O_TS: o.timeseries_csv = optarg; break;
		case O_PLOT: o.plot = optarg; break;
		case O_SEED: {
			char *end;
			errno = 0;
			unsigned long long v = std::strtoull(optarg, &end, 10);
			if (errno || *end || !*optarg)
				usage_error(std::string("--seed ") + optarg +
					    ": must be a non-negative integer");
			o.seed = v;
			break;
		}
		case O_QUIET: o.quiet = true; break;
		case O_LIST: list_all(); std::exit(0);
		case O_HELP: std::fputs(kUsage, stdout); std::exit(0);
		case O_VERSION: std::puts("tidal-sim 0.1"); std::exit(0);
		default: usage_error("bad option");
		}
	}
	if (optind < argc)
		usage_error(std::string("unexpected argument '") + argv[optind] + "'");
	if (o.cluster.empty())
		usage_error("--cluster FILE is required");
	if (o.trace.empty())
		usage_error("--trace FILE is required");
	if (o.policies.empty())
		usage_error("--policy P[,P...] is required");
	return o;
}

int run(const Options &o)
{
	std::string err;
	std::unique_ptr<Preset> preset = make_preset(o.preset, &err);
	if (!preset)
		usage_error(err);

	SimInput in;
	in.cluster_path = o.cluster;
	in.trace_path = o.trace;
	in.profiles_path = o.profiles;
	in.estimates_path = o.estimates;
	in.seed = o.seed;
	if (!o.policy_config.empty()) {
		if (o.policy_config.size() > 5 &&
		    o.policy_config.compare(o.policy_config.size() - 5, 5,
					    ".json") == 0)
			in.policy_config.set("PolicyConfig.Json", o.policy_config);
		else
			in.policy_config = Params::parse(read_file(o.policy_config),
							 o.policy_config);
	}
	for (const std::string &kv : o.params) {
		size_t eq = kv.find('=');
		if (eq == std::string::npos || eq == 0)
			usage_error("--param " + kv + ": must be KEY=VALUE");
		in.policy_config.set(kv.substr(0, eq), kv.substr(eq + 1));
	}
	if (!in.policy_config.errors().empty())
		throw InputError(in.policy_config.errors().front());

	in.cluster = load_cluster(o.cluster);
	in.trace = load_trace(o.trace, o.trace_format);
	preset->prepare(in);
	if (in.trace.skipped > 0) {
		std::fprintf(stderr, "tidal-sim: warning: skipped %ld job(s) of %s",
			     in.trace.skipped, o.trace.c_str());
		if (!in.trace.warnings.empty())
			std::fprintf(stderr, " (first: %s)",
				     in.trace.warnings.front().c_str());
		std::fprintf(stderr, "\n");
	}

	bool tty = !o.quiet && isatty(2);
	Bar bar(tty);
	std::vector<RunResult> runs;
	std::vector<Summary> sums;
	for (const std::string &name : split(o.policies, ',')) {
		Params params = preset->policy_params(name);
		params.merge(in.policy_config);
		double t0 = cpu_now();
		RunResult r = preset->run(in, name, params, bar.for_policy(name));
		double cpu = cpu_now() - t0;
		if (!params.errors().empty())
			throw InputError(params.errors().front());
		Summary s = summarize(r, preset->metric_rules());
		s.cpu_seconds = cpu;
		r.policy = name;
		s.policy = name;
		runs.push_back(std::move(r));
		sums.push_back(s);
	}

	if (!o.quiet && o.json != "-") {
		std::printf("tidal-sim: preset %s, %zu jobs, %d GPUs on %zu nodes\n",
			    preset->name().c_str(), in.trace.jobs.size(),
			    in.cluster.total_gpus(), in.cluster.nodes.size());
		write_table(std::cout, sums);
	}
	if (!o.json.empty())
		write_to(o.json, "JSON", [&](std::ostream &out) {
			out << summaries_json(sums);
		});
	if (!o.jobs_csv.empty())
		write_to(o.jobs_csv, "job CSV",
			 [&](std::ostream &out) { write_jobs_csv(out, runs); });
	if (!o.timeseries_csv.empty())
		write_to(o.timeseries_csv, "time series", [&](std::ostream &out) {
			write_timeseries_csv(out, runs);
		});
	if (!o.plot.empty())
		write_to(o.plot, "plot", [&](std::ostream &out) {
			write_svg(out, runs,
				  "tidal-sim: " + o.trace + " (" + preset->name() +
					  " preset)");
		});
	return 0;
}

} /* namespace */

int main(int argc, char **argv)
{
	Options o = parse_args(argc, argv);
	try {
		return run(o);
	} catch (const InputError &e) {
		std::fprintf(stderr, "tidal-sim: %s\n", e.what());
		return 1;
	} catch (const std::bad_alloc &) {
		std::fprintf(stderr, "tidal-sim: out of memory\n");
		return 1;
	}
}
