/*
 * main.cc - tidal-sim: replay a trace on a cluster with one or more
 * policies and compare them side by side.  See tidal-sim(1).
 *
 * Exit status: 0 done; 1 bad input (file contents, parameter values or
 * keys), thrown as InputError; 2 bad usage (an unknown option, a missing
 * one, an unknown name of a preset, policy or trace format), reported by
 * usage_error().  Names are checked before any file is read, and every
 * policy is built and its parameters read (RunMode::Check) before the
 * first replay, so that a wrong name, value or key costs no replay.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <getopt.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/model/policy.h"
#include "core/model/suggest.h"
#include "core/version.h"
#include "sim/cluster_io.h"
#include "sim/csv.h"
#include "sim/live.h"
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
	"  --trace-format F       muri, elasticflow, lucid, pollux, gavel, sacct,\n"
	"                         tidal, ub (see --list)\n"
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
	"  --speedup F            replay the trace F times faster: every time\n"
	"                         divided by F (for a live replay)\n"
	"  --submit-plan FILE     the trace's jobs as sbatch submissions, for\n"
	"                         scripts/sim_live.sh (live replay)\n"
	"  --live-result FILE     sacct's record of the live replay (sacct -a -D\n"
	"                         -X --parsable2): its metrics beside the replay's\n"
	"  --acct-out FILE        every job's Submit/Start/End as sacct --parsable2\n"
	"  --live DIR             live replay: the trace through a throwaway Slurm\n"
	"                         cluster with sched/tidal (as root), beside the\n"
	"                         replay; plan, sacct record and cluster in DIR\n"
	"  --quiet                no table, no progress bar\n"
	"  --list                 list presets, policies and trace formats\n"
	"  --help, --version\n";

struct Options {
	std::string preset = "tidal";
	std::string cluster, trace, trace_format, policies, profiles;
	std::string policy_config, estimates, json, jobs_csv, timeseries_csv,
		plot, submit_plan, live_result, acct_out, live;
	double speedup = 1;
	std::vector<std::string> params;
	std::uint64_t seed = 1;
	bool quiet = false;
	bool policy_given = false; /* "--policy ''" is not a missing one */
};

[[noreturn]] void usage_error(const std::string &msg)
{
	std::fprintf(stderr, "tidal-sim: %s\n"
			     "Try 'tidal-sim --help' for the options.\n",
		     msg.c_str());
	std::exit(2);
}

void warn(const std::string &msg)
{
	std::fprintf(stderr, "tidal-sim: warning: %s\n", msg.c_str());
}

std::string join(const std::vector<std::string> &v)
{
	std::string out;
	for (const std::string &s : v)
		out += (out.empty() ? "" : ", ") + s;
	return out;
}

bool has_name(const std::vector<std::string> &names, const std::string &n)
{
	for (const std::string &x : names)
		if (lower(x) == lower(n))
			return true;
	return false;
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

/* A directory removed at exit (the sped-up tables of --speedup). */
std::string scratch_dir()
{
	static std::string made;
	char tmpl[] = "/tmp/tidal-sim.XXXXXX";
	if (!mkdtemp(tmpl))
		throw InputError(std::string("cannot make a scratch directory: ") +
				 std::strerror(errno));
	made = tmpl;
	std::atexit([] {
		std::error_code ec;
		std::filesystem::remove_all(made, ec);
	});
	return made;
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
	std::printf("formats:\n");
	for (const TraceFormat &f : trace_formats())
		std::printf("  %-22s %s\n", f.name.c_str(), f.what.c_str());
}

/* getopt_long's own messages are off (opterr = 0), so that a bad option
 * is reported once, here: ARG is the word it stopped at, MISSING_VALUE
 * true when it lacked its value. */
[[noreturn]] void bad_option(const struct option *longopts, const char *arg,
			     bool missing_value)
{
	std::string word = arg ? arg : "?";
	std::string name = word.substr(0, word.find('='));
	if (missing_value)
		usage_error("option '" + name + "' needs a value");
	if (name.rfind("--", 0) != 0)
		usage_error("unknown option '" + word + "'");
	std::vector<std::string> all, prefixed;
	for (const struct option *o = longopts; o->name; o++) {
		std::string n = std::string("--") + o->name;
		all.push_back(n);
		if (n == name && o->has_arg == no_argument)
			usage_error("option '" + name + "' takes no value");
		if (n.rfind(name, 0) == 0)
			prefixed.push_back(n);
	}
	if (prefixed.size() > 1)
		usage_error("option '" + name + "' is ambiguous (" +
			    join(prefixed) + ")");
	if (prefixed.size() == 1)
		usage_error("option '" + prefixed[0] + "' takes no value");
	usage_error("unknown option '" + name + "'" + did_you_mean(name, all));
}

Options parse_args(int argc, char **argv)
{
	enum {
		O_PRESET = 256, O_CLUSTER, O_TRACE, O_TFMT, O_POLICY, O_PROF,
		O_PCONF, O_EST, O_JSON, O_JOBS, O_TS, O_PLOT, O_SEED, O_QUIET,
		O_LIST, O_HELP, O_VERSION, O_PARAM, O_SPEEDUP, O_PLAN, O_LIVE_RESULT,
		O_ACCT, O_LIVE,
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
		{"speedup", required_argument, nullptr, O_SPEEDUP},
		{"submit-plan", required_argument, nullptr, O_PLAN},
		{"live-result", required_argument, nullptr, O_LIVE_RESULT},
		{"acct-out", required_argument, nullptr, O_ACCT},
		{"live", required_argument, nullptr, O_LIVE},
		{"quiet", no_argument, nullptr, O_QUIET},
		{"list", no_argument, nullptr, O_LIST},
		{"help", no_argument, nullptr, O_HELP},
		{"version", no_argument, nullptr, O_VERSION},
		{nullptr, 0, nullptr, 0},
	};
	Options o;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", longopts, nullptr)) != -1) {
		switch (c) {
		case O_PRESET: o.preset = optarg; break;
		case O_CLUSTER: o.cluster = optarg; break;
		case O_TRACE: o.trace = optarg; break;
		case O_TFMT: o.trace_format = optarg; break;
		case O_POLICY:
			o.policies = optarg;
			o.policy_given = true;
			break;
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
		case O_SPEEDUP: {
			char *end;
			errno = 0;
			double v = std::strtod(optarg, &end);
			if (errno || *end || !*optarg || !(v > 0) || v > 1e6)
				usage_error(std::string("--speedup ") + optarg +
					    ": must be a number in (0, 1000000]");
			o.speedup = v;
			break;
		}
		case O_PLAN: o.submit_plan = optarg; break;
		case O_LIVE_RESULT: o.live_result = optarg; break;
		case O_ACCT: o.acct_out = optarg; break;
		case O_LIVE: o.live = optarg; break;
		case O_QUIET: o.quiet = true; break;
		case O_LIST: list_all(); std::exit(0);
		case O_HELP: std::fputs(kUsage, stdout); std::exit(0);
		case O_VERSION: std::puts("tidal-sim " TIDAL_VERSION); std::exit(0);
		case ':':
			bad_option(longopts, argv[std::min(optind, argc) - 1],
				   true);
		default:
			bad_option(longopts, argv[std::min(optind, argc) - 1],
				   false);
		}
	}
	if (optind < argc)
		usage_error(std::string("unexpected argument '") + argv[optind] + "'");
	if (o.cluster.empty())
		usage_error("--cluster FILE is required");
	if (o.trace.empty())
		usage_error("--trace FILE is required");
	if (!o.policy_given)
		usage_error("--policy P[,P...] is required");
	return o;
}

/* The preset named by --preset; an unknown name is a usage error. */
std::unique_ptr<Preset> preset_of(const Options &o)
{
	std::vector<std::string> names = preset_names();
	if (!has_name(names, o.preset))
		usage_error("--preset " + o.preset + ": unknown preset" +
			    did_you_mean(o.preset, names) + "; known: " +
			    join(names));
	std::string err;
	return make_preset(o.preset, &err);
}

/* A preset other than EXCEPT that has POLICY, or "". */
std::string preset_having(const std::string &policy, const std::string &except)
{
	for (const std::string &n : preset_names()) {
		std::string err;
		if (n != except &&
		    has_name(make_preset(n, &err)->policy_names(), policy))
			return n;
	}
	return "";
}

/* The names of --policy, each one PRESET has. */
std::vector<std::string> policies_of(const Options &o, const Preset &preset)
{
	std::vector<std::string> out = split(o.policies, ',');
	if (out.empty())
		usage_error("--policy '" + o.policies + "' names no policy; "
			    "give P[,P...]");
	std::vector<std::string> known = preset.policy_names();
	for (const std::string &p : out) {
		if (has_name(known, p))
			continue;
		std::string hint = did_you_mean(p, known);
		std::string other = preset_having(p, preset.name());
		if (hint.empty() && !other.empty())
			hint = " (the " + other + " preset has it: --preset " +
			       other + ")";
		usage_error("--policy " + p + ": the " + preset.name() +
			    " preset has no such policy" + hint +
			    "; known: " + join(known));
	}
	return out;
}

void check_trace_format(const Options &o)
{
	if (o.trace_format.empty())
		return;
	std::vector<std::string> names;
	for (const TraceFormat &f : trace_formats())
		names.push_back(f.name);
	if (!has_name(names, o.trace_format))
		usage_error("--trace-format " + o.trace_format +
			    ": unknown trace format" +
			    did_you_mean(o.trace_format, names) +
			    "; known: " + join(names));
}

/* --policy-config, then every --param over it. */
Params policy_config(const Options &o)
{
	Params cfg;
	const std::string &path = o.policy_config;
	if (path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0)
		cfg.set("PolicyConfig.Json", path, "--policy-config");
	else if (!path.empty())
		cfg = Params::parse(read_file(path), path);
	for (const std::string &kv : o.params) {
		size_t eq = kv.find('=');
		if (eq == std::string::npos || eq == 0)
			usage_error("--param " + kv + ": must be KEY=VALUE");
		cfg.set(kv.substr(0, eq), kv.substr(eq + 1), "--param");
	}
	if (!cfg.errors().empty())
		throw InputError(cfg.errors().front());
	return cfg;
}

/* Who reads KEY besides the selected policies: a policy of the registry
 * or another preset; "" if nobody (a typo). */
std::string reader_of(const std::string &key, const Params &cfg)
{
	for (const PolicyInfo *i : all_policies()) {
		Params probe; /* same values, nothing asked yet */
		for (const auto &[k, v] : cfg.items())
			probe.set(k, v);
		i->make(probe);
		if (has_name(probe.asked(), key))
			return "policy " + i->name;
	}
	for (const std::string &n : preset_names()) {
		std::string err;
		if (has_name(make_preset(n, &err)->keys(), key))
			return "the " + n + " preset";
	}
	return "";
}

/* Keys of --policy-config and --param that neither PRESET nor any of
 * POLICIES read (CFG has every key they asked for).  A key that another
 * policy or preset reads is a warning - a file of keys may serve several
 * runs - any other is an error: it is a typo or a key Tidal does not
 * have, and going on would silently run something else than asked. */
void check_unused(const Params &cfg, const Preset &preset,
		  const std::vector<std::string> &policies)
{
	if (cfg.unused().empty())
		return;
	std::vector<std::string> known = cfg.asked();
	known.insert(known.end(), policy_keys().begin(), policy_keys().end());
	for (const std::string &n : preset_names()) {
		std::string err;
		for (const std::string &k : make_preset(n, &err)->keys())
			known.push_back(k);
	}
	std::string errors, self = "the " + preset.name() + " preset";
	std::string selected = (policies.size() > 1 ? "policies " : "policy ") +
			       join(policies);
	for (const Params::Unused &u : cfg.unused()) {
		/* The JSON file is a key only inside (policy_config()). */
		std::string what = u.pair.rfind("--policy-config ", 0) == 0
					   ? "--policy-config " + u.value
					   : u.pair;
		std::string reader = reader_of(u.key, cfg);
		if (reader == self)
			warn(what + ": ignored: " + self + " reads it for " +
			     "other policies than " + join(policies));
		else if (!reader.empty())
			warn(what + ": ignored: not read by " + self +
			     " or its " + selected + "; a key of " + reader);
		else
			errors += (errors.empty() ? "" : "\ntidal-sim: ") +
				  what + ": unknown key" +
				  did_you_mean(u.key, known);
	}
	if (!errors.empty())
		throw InputError(errors);
}

/* --live's model of the live cluster where the user gave none: the
 * cycle that the live tidal.conf gets, and the start latency and the
 * costs of a preemption measured on the 2-core loopback cluster
 * (tidal-sim(1), LIVE REPLAY). */
void live_defaults(Params &cfg)
{
	static const char *const defaults[][2] = {
		{"Tidal.CycleInterval", "1"},
		{"Tidal.RestartOverhead", "0.2"},
		{"Tidal.RequeueDelay", "3"},
		{"Tidal.PreemptRelease", "0.5"},
		{"Tidal.RankStart", "0.05"},
	};
	for (const auto &[key, value] : defaults)
		if (!cfg.has(key))
			cfg.set(key, value, "--live (default)");
}

/* --live: bring up the cluster and replay PLAN on it through
 * scripts/sim_live.sh (beside the build directory tidal-sim runs from,
 * or TIDAL_SIM_LIVE), with a tidal.conf of POLICY and its parameters. */
void run_live(const Options &o, const SimInput &in, const Preset &preset,
	      const std::string &policy, const std::string &plan)
{
	const Cluster &c = in.cluster;
	int per = c.nodes.empty() ? 0 : c.nodes[0].gpus;
	for (const Node &n : c.nodes)
		if (n.gpus != per)
			throw InputError(
				"--live: the live cluster has the same GPUs on "
				"every node, but " + in.cluster_path + " has " +
				std::to_string(per) + " on " + c.nodes[0].name +
				" and " + std::to_string(n.gpus) + " on " +
				n.name);
	std::string exe = std::filesystem::read_symlink("/proc/self/exe");
	std::string build = std::filesystem::path(exe).parent_path();
	const char *env = std::getenv("TIDAL_SIM_LIVE");
	std::string script = env && *env ? env : build + "/../scripts/sim_live.sh";
	if (!std::filesystem::exists(script))
		throw InputError("--live: no " + script +
				 " (a live replay runs from a checkout, "
				 "beside its build directory; or set "
				 "TIDAL_SIM_LIVE=PATH)");
	Params params = preset.policy_params(policy);
	params.merge(in.policy_config);
	std::string conf = "Policy=" + policy + "\nCycleInterval=" +
			   params.get_str("Tidal.CycleInterval", "1") + "\n";
	for (const auto &[k, v] : params.items())
		if (k.rfind("tidal.", 0) != 0 && k != "policyconfig.json")
			conf += k + "=" + v + "\n";
	/* The tables the replay counts every job's time by (the tidal
	 * preset), for the live policy too. */
	if (!in.profiles_path.empty())
		conf += "Profiles=" + in.profiles_path + "\n";
	std::string nodes;
	for (size_t i = 1; i <= c.nodes.size(); i++)
		nodes += (i > 1 ? " n" : "n") + std::to_string(i);
	/* Deadlines go to sbatch for a policy that admits by them; for the
	 * others they count in the deadline ratio only (as in the replay,
	 * where Slurm's cancelling of a job whose time limit cannot end by
	 * its deadline has no part). */
	std::string err;
	std::unique_ptr<Policy> built = make_policy(policy, params, &err);
	bool deadlines = built && built->admits_by_deadline();
	bool any = std::any_of(in.trace.jobs.begin(), in.trace.jobs.end(),
			       [](const Job &j) { return j.has_deadline(); });
	std::fprintf(stderr, "tidal-sim: --live: %zu nodes x %d GPUs, %s%s\n",
		     c.nodes.size(), per, policy.c_str(),
		     any && !deadlines ? " (deadlines not submitted: it does "
					 "not read them)"
				       : "");
	std::fflush(nullptr);
	pid_t pid = fork();
	if (pid < 0)
		throw InputError(std::string("--live: fork: ") +
				 std::strerror(errno));
	if (pid == 0) {
		dup2(2, 1); /* its lines are progress: stdout is the table */
		setenv("NODES", nodes.c_str(), 1);
		setenv("GPUS_PER_NODE", std::to_string(per).c_str(), 1);
		setenv("BUILD", build.c_str(), 1);
		setenv("DEADLINES", deadlines ? "submit" : "ignore", 1);
		std::string run = o.live + "/run";
		execlp("bash", "bash", script.c_str(), plan.c_str(), run.c_str(),
		       conf.c_str(), (char *)nullptr);
		std::fprintf(stderr, "tidal-sim: --live: bash: %s\n",
			     std::strerror(errno));
		_exit(127);
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		throw InputError("--live: " + script + " failed (" +
				 (WIFEXITED(status)
					  ? "exit " + std::to_string(WEXITSTATUS(status))
					  : std::string("killed")) +
				 "); what it said is above");
}

int run(const Options &o)
{
	std::unique_ptr<Preset> preset = preset_of(o);
	std::vector<std::string> policies = policies_of(o, *preset);
	check_trace_format(o);
	if (!o.live_result.empty() && policies.size() != 1)
		usage_error("--live-result: the live run is of one policy; "
			    "--policy names " + std::to_string(policies.size()));
	if (!o.live.empty() && policies.size() != 1)
		usage_error("--live: the live run is of one policy; --policy "
			    "names " + std::to_string(policies.size()));
	if (!o.live.empty() && !o.live_result.empty())
		usage_error("--live makes its own live result; drop --live-result");
	if (!o.live.empty() && lower(preset->name()) != "tidal")
		usage_error("--live runs sched/tidal, which the tidal preset "
			    "models; drop --preset " + o.preset);
	/* --live: the plan, and the live run's record, in its directory. */
	std::string plan = o.submit_plan;
	if (!o.live.empty()) {
		std::error_code ec;
		std::filesystem::create_directories(o.live, ec);
		if (ec)
			throw InputError("--live " + o.live +
					 ": cannot make the directory: " +
					 ec.message());
		/* Absolute: slurmctld reads the tables from its own
		 * directory. */
		plan = std::filesystem::absolute(o.live).string() + "/plan.tsv";
	}

	SimInput in;
	in.cluster_path = o.cluster;
	in.trace_path = o.trace;
	in.profiles_path = o.profiles;
	in.estimates_path = o.estimates;
	in.seed = o.seed;
	in.policy_config = policy_config(o);
	if (!o.live.empty())
		live_defaults(in.policy_config);

	in.cluster = load_cluster(o.cluster);
	in.trace = load_trace(o.trace, lower(o.trace_format));
	compress_time(in.trace, o.speedup);
	/* A live trainer steps at most kLiveMaxStepRate times a second:
	 * its work is counted in steps of K iterations, and the tables it
	 * runs by are sped up by SPEEDUP / K. */
	ThroughputTable tables;
	double tables_speedup = o.speedup;
	const bool live_run = !plan.empty() || !o.live_result.empty();
	if (!o.profiles.empty() && live_run) {
		std::string err;
		if (!tables.load_dir(o.profiles, &err))
			throw InputError("--profiles " + err);
		long k = live_step_size(in.trace, tables, o.speedup,
					kLiveMaxStepRate);
		count_in_steps(in.trace, tables, k);
		tables_speedup = o.speedup / (double)k;
		if (k > 1)
			std::fprintf(stderr,
				     "tidal-sim: a live trainer's step stands "
				     "for %ld iterations of the trace (at most "
				     "%g steps a second)\n",
				     k, kLiveMaxStepRate);
	}
	/* Deadlines in whole seconds: sbatch --deadline's unit (the live
	 * replay starts on a whole second). */
	if (live_run)
		for (Job &j : in.trace.jobs)
			if (j.deadline != kNoDeadline)
				j.deadline = std::floor(j.deadline);
	if (!o.profiles.empty() && (tables_speedup != 1 || !plan.empty())) {
		/* The tables sped up too, where the plan's live run finds
		 * them (PLAN.profiles) or in a scratch directory. */
		in.profiles_path = !plan.empty() ? plan + ".profiles"
						 : scratch_dir();
		speed_up_profiles(o.profiles, tables_speedup, in.profiles_path);
	}
	preset->prepare(in);
	if (in.trace.skipped > 0) {
		std::fprintf(stderr, "tidal-sim: warning: skipped %ld job(s) of %s",
			     in.trace.skipped, o.trace.c_str());
		if (!in.trace.warnings.empty())
			std::fprintf(stderr, " (first: %s)",
				     in.trace.warnings.front().c_str());
		std::fprintf(stderr, "\n");
	}

	/* Every policy built and its parameters read before any replay. */
	for (const std::string &name : policies) {
		Params params = preset->policy_params(name);
		params.merge(in.policy_config);
		RunResult c = preset->run(in, name, params, {}, RunMode::Check);
		if (!params.errors().empty())
			throw InputError(params.errors().front());
		for (const std::string &w : c.warnings)
			warn(w);
		in.policy_config.add_asked(params);
	}
	check_unused(in.policy_config, *preset, policies);
	if (!plan.empty())
		write_to(plan, "submit plan", [&](std::ostream &out) {
			write_submit_plan(out, in, tables);
		});
	std::string live_record = o.live_result;
	if (!o.live.empty()) {
		run_live(o, in, *preset, policies[0], plan);
		live_record = o.live + "/run/slurm_acct.out";
		/* The replay on the live cluster's own slurm.conf. */
		in.cluster_path = o.live + "/run/etc/slurm.conf";
		in.cluster = load_cluster(in.cluster_path);
	}

	/* Beside a live run, the replay takes each job in when slurmctld
	 * did (live_submit_delays). */
	std::map<JobId, double> delays;
	SimInput shifted;
	const SimInput *replay_in = &in;
	if (!live_record.empty())
		delays = live_submit_delays(live_record, in);
	if (!delays.empty()) {
		std::vector<double> d;
		for (const auto &[id, v] : delays)
			d.push_back(v);
		std::sort(d.begin(), d.end());
		std::fprintf(stderr,
			     "tidal-sim: the replay takes each job in when "
			     "slurmctld did (%zu jobs, %.3f s late at the "
			     "median, %.3f s at worst: submit.log)\n",
			     d.size(), d[d.size() / 2], d.back());
		shifted = in;
		shift_submits(shifted, delays);
		replay_in = &shifted;
	}
	bool tty = !o.quiet && isatty(2);
	Bar bar(tty);
	std::vector<RunResult> runs;
	std::vector<Summary> sums;
	for (const std::string &name : policies) {
		Params params = preset->policy_params(name);
		params.merge(in.policy_config);
		double t0 = cpu_now();
		RunResult r =
			preset->run(*replay_in, name, params,
				    bar.for_policy(name), RunMode::Replay);
		double cpu = cpu_now() - t0;
		unshift_results(r, delays);
		if (!params.errors().empty())
			throw InputError(params.errors().front());
		Summary s = summarize(r, preset->metric_rules());
		s.cpu_seconds = cpu;
		r.policy = name;
		s.policy = name;
		runs.push_back(std::move(r));
		sums.push_back(s);
	}

	if (!live_record.empty()) {
		/* The live run first, so that each output reads live, then
		 * the replay of the same input. */
		RunResult live = live_result(live_record, in,
					     "live:" + policies[0]);
		for (const std::string &w : live.warnings)
			warn(w);
		Summary s = summarize(live, preset->metric_rules());
		s.policy = live.policy;
		runs.insert(runs.begin(), std::move(live));
		sums.insert(sums.begin(), s);
	}
	if (!o.quiet && o.json != "-") {
		std::printf("tidal-sim: preset %s, %zu jobs, %d GPUs on %zu nodes",
			    preset->name().c_str(), in.trace.jobs.size(),
			    in.cluster.total_gpus(), in.cluster.nodes.size());
		if (o.speedup != 1)
			std::printf(", times divided by %g", o.speedup);
		std::printf("\n");
		if (!live_record.empty())
			write_comparison(std::cout, sums[0], sums[1]);
		else
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
	if (!o.acct_out.empty())
		write_to(o.acct_out, "sacct-style record", [&](std::ostream &out) {
			write_acct(out, runs, in.trace.epoch);
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
