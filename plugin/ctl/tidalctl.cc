/*
 * tidalctl.cc - query and steer sched/tidal, in the manner of scontrol.
 *
 *   tidalctl [-o] [--json] show jobs | job ID | nodes | policy | decisions
 *   tidalctl [-o] [--json] explain ID
 *   tidalctl set policy NAME              (root or SlurmUser)
 *   tidalctl check [--min-free SIZE]      preflight: one line per check
 *
 * Finds the plugin from the configuration: slurm.conf ($SLURM_CONF or
 * /etc/slurm/slurm.conf) gives SlurmctldHost, AuthInfo=socket= and
 * MessageTimeout; the tidal.conf beside it gives CtlPort (and CtlHost, to
 * override the host).  A missing slurm.conf is an error, as it is for
 * scontrol: guessing localhost would talk to the wrong cluster or to none.
 * Each connection carries a MUNGE credential; see plugin/sched/ctl_server.c
 * for the wire.
 *
 * Exit status (tidalctl(1)): 0 done; 1 the configuration, the connection
 * or the plugin said no (a message on stderr), or a check failed; 2 a
 * usage error.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <json.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/model/number_text.h"
#include "core/version.h"
#include "proto/messages.h"
#include "proto/wire.h"

namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr int kDefaultMessageTimeout = 10; /* slurm.conf(5)'s, seconds */

/* tidalctl check asks on after a failure: there die() throws this. */
struct Fatal : std::runtime_error {
	using std::runtime_error::runtime_error;
};
bool g_soft = false;

[[noreturn]] void die(const std::string &msg)
{
	if (g_soft)
		throw Fatal(msg);
	std::fprintf(stderr, "tidalctl: error: %s\n", msg.c_str());
	std::exit(kExitError);
}

const char *const kUsage =
	"usage: tidalctl [-o|--oneliner] [--json] show jobs|job ID|"
	"nodes|policy|config|decisions\n"
	"       tidalctl [-o] [--json] explain JOBID\n"
	"       tidalctl set policy NAME   (root or SlurmUser)\n"
	"       tidalctl check [--min-free SIZE]\n"
	"       tidalctl -h|--help|-V|--version\n";

[[noreturn]] void usage_error(const std::string &msg)
{
	std::fprintf(stderr, "tidalctl: error: %s\n%s", msg.c_str(), kUsage);
	std::exit(kExitUsage);
}

/* ---- where the plugin listens ---- */

struct Target {
	tidal::wire::Endpoint ep;
	std::string munge_socket;
	std::string port_from; /* "CtlPort=N in FILE", for messages */
	int timeout_s = kDefaultMessageTimeout;
};

bool is_uint(const std::string &s)
{
	return !s.empty() && s.size() <= 9 &&
	       s.find_first_not_of("0123456789") == std::string::npos;
}

/* Die unless PATH can be read; WHY says where the path came from. */
void need_file(const std::string &path, const std::string &why)
{
	FILE *f = std::fopen(path.c_str(), "r");
	if (f) {
		std::fclose(f);
		return;
	}
	die(why + ": " + std::strerror(errno) +
	    "\nHINT: tidalctl finds sched/tidal through slurm.conf "
	    "(SlurmctldHost) and the tidal.conf beside it (CtlPort); set "
	    "SLURM_CONF to the cluster's slurm.conf");
}

Target find_plugin()
{
	const char *env = std::getenv("SLURM_CONF");
	if (env && !*env)
		die("SLURM_CONF is set but empty: no slurm.conf to read");
	if (env)
		need_file(env, std::string("SLURM_CONF=") + env);
	else
		need_file("/etc/slurm/slurm.conf",
			  "SLURM_CONF is not set and /etc/slurm/slurm.conf "
			  "cannot be read");
	tidal::wire::SlurmSide side = tidal::wire::read_slurm_side();
	std::string dir =
		side.slurm_conf.substr(0, side.slurm_conf.rfind('/') + 1);
	std::string tidal_conf = dir + "tidal.conf";
	using tidal::wire::conf_value;
	if (conf_value(side.slurm_conf, "SlurmctldHost").empty() &&
	    conf_value(side.slurm_conf, "ControlMachine").empty() &&
	    conf_value(tidal_conf, "CtlHost").empty())
		die(side.slurm_conf + ": no SlurmctldHost (and no CtlHost in " +
		    tidal_conf + "): cannot tell where slurmctld runs");

	Target t;
	t.ep = side.plugin;
	t.munge_socket = side.munge_socket;
	std::string port = conf_value(tidal_conf, "CtlPort");
	if (port.empty()) {
		/* the plugin's default, tidal.conf(5) */
		t.ep.port = TIDAL_CTL_PORT_STR;
		t.port_from = "CtlPort=" + t.ep.port + " (the default: " +
			      tidal_conf + " sets none)";
	} else if (is_uint(port) && std::stol(port) == 0) {
		die(tidal_conf + ": CtlPort=0: sched/tidal's tidalctl port is "
		    "off; CtlPort must be a port number in 1-65535");
	} else if (!is_uint(port) || std::stol(port) > 65535) {
		die(tidal_conf + ": CtlPort=" + port +
		    ": must be a port number in 1-65535");
	} else {
		t.ep.port = std::to_string(std::stol(port));
		t.port_from = "CtlPort=" + t.ep.port + " in " + tidal_conf;
	}
	std::string mt = conf_value(side.slurm_conf, "MessageTimeout");
	if (is_uint(mt) && std::stol(mt) > 0)
		t.timeout_s = (int)std::min(std::stol(mt), 3600L);
	return t;
}

/* ---- one request, one reply ---- */

/* TEXT as a short quoted excerpt, control bytes escaped. */
std::string excerpt(const std::string &text)
{
	std::string out = "\"";
	for (size_t i = 0; i < text.size() && i < 60; i++) {
		unsigned char c = text[i];
		char buf[8];
		if (c == '\n')
			out += "\\n";
		else if (c == '"' || c == '\\')
			out += std::string("\\") + (char)c;
		else if (c < 0x20 || c >= 0x7f) {
			std::snprintf(buf, sizeof(buf), "\\x%02x", c);
			out += buf;
		} else
			out += (char)c;
	}
	return out + (text.size() > 60 ? "\"..." : "\"");
}

/* Send REQUEST with a MUNGE credential to the plugin and read its whole
 * reply (a long `show jobs` may be megabytes).  What went wrong is told
 * apart: nothing listening, no answer, a peer that closes at once or
 * answers in another protocol (slurmctld's own port, say). */
std::string ask_plugin(const Target &t, const std::string &request)
{
	std::string cred, err;
	if (!tidal::wire::munge_credential(t.munge_socket, &cred, &err))
		die(err);
	const std::string where = t.ep.str();
	const std::string hint = "is " + t.port_from +
				 " the port sched/tidal listens on?";
	int fd = tidal::wire::tcp_connect(t.ep, t.timeout_s * 1000, &err);
	if (fd < 0) {
		auto ends_with = [&](int e) {
			std::string s = std::strerror(e);
			return err.size() >= s.size() &&
			       err.compare(err.size() - s.size(), s.size(),
					   s) == 0;
		};
		if (ends_with(ECONNREFUSED))
			die(where + " refused the connection: nothing listens "
			    "there.\nHINT: is slurmctld running with "
			    "SchedulerType=sched/tidal, and " + hint);
		if (ends_with(ETIMEDOUT))
			die(where + " did not answer within " +
			    std::to_string(t.timeout_s) +
			    " s (MessageTimeout): is the host up, and the "
			    "port open to this machine?");
		die("sched/tidal: " + err);
	}
	if (!tidal::wire::write_all(fd, cred + "\n" + request + "\n")) {
		int e = errno;
		close(fd);
		die(where + " closed the connection before the request was "
		    "sent (" + std::strerror(e) + "): " + hint);
	}
	/* The plugin may be inside a long cycle: three MessageTimeouts. */
	const int wait_ms = 3 * t.timeout_s * 1000;
	std::string reply;
	char buf[65536];
	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};
		int rc = poll(&p, 1, wait_ms);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc == 0) {
			close(fd);
			die(where + " accepted the connection but sent " +
			    (reply.empty() ? "no reply"
					   : "only part of a reply") +
			    " within " + std::to_string(wait_ms / 1000) +
			    " s: " + hint);
		}
		ssize_t n = rc > 0 ? read(fd, buf, sizeof(buf)) : -1;
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0) {
			reply.append(buf, n);
			continue;
		}
		if (n < 0 && reply.empty()) {
			int e = errno;
			close(fd);
			die(where + " closed the connection without a reply (" +
			    std::strerror(e) + "): " + hint);
		}
		break; /* end of the reply */
	}
	close(fd);
	if (reply.empty())
		die(where + " closed the connection without a reply: " + hint);
	return reply;
}

/* The reply as a JSON object with "ok", or die saying what came. */
tidal::wire::CtlReply parse_reply(const Target &t, const std::string &reply)
{
	json_object *r = tidal::wire::parse_object(reply), *ok;
	bool is_reply = r && json_object_object_get_ex(r, "ok", &ok);
	if (r)
		json_object_put(r);
	tidal::wire::CtlReply out;
	if (!is_reply || !tidal::wire::decode(reply, &out))
		die(t.ep.str() + " replied " + excerpt(reply) +
		    ", which is not sched/tidal's JSON reply: is " +
		    t.port_from + " the port sched/tidal listens on?");
	return out;
}

/* ---- records ---- */

/* Keys whose numbers are times (epoch seconds), printed as scontrol
 * prints them.  Records come from plugin/sched/ctl_engine.cc (Submit,
 * Deadline, LastCycle) and decisions' numbers from core's policies
 * (elasticflow's deadline and planned_end). */
const std::set<std::string> kTimeKeys = {"Submit", "Deadline", "LastCycle",
					 "deadline", "planned_end"};

/* As scontrol: YYYY-MM-DDTHH:MM:SS in local time; None for none (0). */
std::string time_str(double t)
{
	if (!(t > 0) || !std::isfinite(t))
		return "None";
	time_t s = (time_t)std::llround(t);
	struct tm tm;
	char buf[32];
	if (!localtime_r(&s, &tm) ||
	    !std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm))
		return "None";
	return buf;
}

/* Whole numbers as they are; others to three decimals, trailing zeros
 * dropped (a value too small for that keeps three significant digits). */
std::string number_str(double v)
{
	char buf[64];
	if (v == std::floor(v) && std::fabs(v) < 1e15) {
		std::snprintf(buf, sizeof(buf), "%.0f", v);
		return buf;
	}
	return tidal::decimal_text(v);
}

std::string value_str(const std::string &key, const tidal::wire::CtlValue &v)
{
	using tidal::wire::CtlValue;
	double d = v.kind == CtlValue::Integer ? (double)v.integer
		   : v.kind == CtlValue::Number
			   ? std::strtod(v.text.c_str(), nullptr)
			   : 0;
	switch (v.kind) {
	case CtlValue::None:
		return "None";
	case CtlValue::Text:
		return v.text;
	case CtlValue::Integer:
	case CtlValue::Number:
		return kTimeKeys.count(key) ? time_str(d) : number_str(d);
	}
	return "None";
}

/* scontrol layout: Key=Value pairs, a few per line, 3-space continuation;
 * a long Reason gets a line of its own. */
void print_record(const tidal::wire::CtlRecord &rec, bool one_line)
{
	std::string line, out;
	int on_line = 0;
	for (const auto &[key, val] : rec) {
		std::string kv = key + "=" + value_str(key, val);
		bool alone = !one_line && kv.size() > 60;
		if (!one_line && on_line > 0 && (on_line == 4 || alone)) {
			out += line + "\n";
			line = "   ";
			on_line = 0;
		}
		line += (on_line ? " " : "") + kv;
		on_line++;
		if (!one_line && alone) {
			out += line + "\n";
			line = "   ";
			on_line = 0;
		}
	}
	if (on_line)
		out += line + "\n";
	std::fputs(out.c_str(), stdout);
	if (!one_line)
		std::fputs("\n", stdout);
}

/* ---- the command line ---- */

long long job_id(const std::string &cmd, const std::string &s)
{
	char *end = nullptr;
	errno = 0;
	long long v = std::strtoll(s.c_str(), &end, 10);
	if (s.empty() || *end || errno || v <= 0 || v > 0xffffffffLL)
		usage_error(cmd + ": '" + s +
			    "' is not a job id (a number from 1 to 4294967295)");
	return v;
}

/* The request for WORDS (after the options), or a usage error. */
tidal::wire::CtlRequest build_request(const std::vector<std::string> &words)
{
	tidal::wire::CtlRequest req;
	const std::string &cmd = words[0];
	size_t n = words.size();
	auto extra = [&](size_t used) {
		std::string given;
		for (size_t i = 0; i < used && i < n; i++)
			given += (i ? " " : "") + words[i];
		if (n > used)
			usage_error(given + ": unexpected '" + words[used] +
				    "' after it");
	};
	if (cmd == "show") {
		static const std::set<std::string> what = {
			"jobs", "job", "nodes", "policy", "config", "decisions"};
		if (n < 2)
			usage_error("show what? jobs, job ID, nodes, policy, "
				    "config or decisions");
		if (!what.count(words[1]))
			usage_error("show: '" + words[1] +
				    "' is not one of jobs, job ID, nodes, "
				    "policy, config, decisions");
		req.op = "show";
		req.what = words[1];
		if (words[1] == "job") {
			if (n < 3)
				usage_error("show job: which job? "
					    "(show job ID)");
			req.id = job_id("show job", words[2]);
			extra(3);
		} else {
			extra(2);
		}
	} else if (cmd == "explain") {
		if (n < 2)
			usage_error("explain: which job? (explain JOBID)");
		req.op = "explain";
		req.id = job_id("explain", words[1]);
		extra(2);
	} else if (cmd == "set") {
		if (n < 2 || words[1] != "policy")
			usage_error(n < 2 ? "set what? (set policy NAME)"
					  : "set: '" + words[1] +
						    "' cannot be set (set "
						    "policy NAME)");
		if (n < 3)
			usage_error("set policy: which policy? "
				    "(set policy NAME)");
		req.op = "set";
		req.what = "policy";
		req.policy = words[2];
		extra(3);
	} else {
		usage_error("'" + cmd + "' is not a command (show, explain, "
				       "set or check)");
	}
	return req;
}

/* ---- tidalctl check ---- */

/* SIZE as bytes: a number with an optional K, M, G, T or P (powers of
 * 1024); -1 if it is not one. */
double size_bytes(const std::string &s)
{
	char *end = nullptr;
	double v = std::strtod(s.c_str(), &end);
	if (s.empty() || end == s.c_str() || !(v >= 0) || !std::isfinite(v))
		return -1;
	std::string unit = end;
	const std::string units = "KMGTP";
	if (unit.size() == 2 && (unit[1] == 'B' || unit[1] == 'b'))
		unit.pop_back();
	if (unit.empty())
		return v;
	size_t u = unit.size() == 1
			   ? units.find((char)std::toupper((unsigned char)unit[0]))
			   : std::string::npos;
	if (u == std::string::npos)
		return -1;
	return v * std::pow(1024.0, (double)u + 1);
}

/* The text value of KEY in REC ("" if absent or None). */
std::string field(const tidal::wire::CtlRecord &rec, const std::string &key)
{
	for (const auto &[k, v] : rec)
		if (k == key)
			return v.kind == tidal::wire::CtlValue::None
				       ? std::string()
				       : value_str(k, v);
	return "";
}

/* What COMMAND prints on stdout and stderr; false if it could not run or
 * exited non-zero. */
bool run_command(const std::string &command, std::string *out)
{
	out->clear();
	FILE *p = popen((command + " 2>&1").c_str(), "r");
	if (!p)
		return false;
	char buf[4096];
	size_t n;
	while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0)
		out->append(buf, n);
	int rc = pclose(p);
	return rc == 0;
}

struct Checks {
	int failed = 0, warned = 0;
	void line(const char *what, const char *result, const std::string &detail)
	{
		std::printf("%-12s %-5s %s\n", what, result, detail.c_str());
		std::fflush(stdout);
	}
	void ok(const char *what, const std::string &d) { line(what, "ok", d); }
	void warn(const char *what, const std::string &d)
	{
		warned++;
		line(what, "WARN", d);
	}
	void fail(const char *what, const std::string &d)
	{
		failed++;
		line(what, "FAIL", d);
	}
};

/* The plugin's reply to show WHAT (die() on no reply). */
tidal::wire::CtlReply ask_show(const Target &t, const std::string &what)
{
	tidal::wire::CtlRequest q;
	q.op = "show";
	q.what = what;
	std::string req = tidal::wire::encode(q);
	req.pop_back(); /* its newline: ask_plugin() frames it */
	return parse_reply(t, ask_plugin(t, req));
}

/* The preflight of tidalctl(1), CHECK: each line is ok, WARN or FAIL;
 * RET the exit status (1 if any failed). */
int check(double min_free)
{
	Checks c;
	g_soft = true;
	std::printf("%-12s %-5s %s\n", "CHECK", "", "DETAIL");
	Target t;
	try {
		t = find_plugin();
	} catch (const Fatal &e) {
		c.fail("config", e.what());
		std::printf("%d failed, %d warned\n", c.failed, c.warned);
		return kExitError;
	}
	tidal::wire::SlurmSide side = tidal::wire::read_slurm_side();
	std::string sched = tidal::wire::conf_value(side.slurm_conf,
						    "SchedulerType");
	if (sched == "sched/tidal")
		c.ok("config", side.slurm_conf + ": SchedulerType=sched/tidal; " +
				       t.port_from);
	else
		c.fail("config", side.slurm_conf + ": SchedulerType=" +
					 (sched.empty() ? "sched/backfill (the default)"
							: sched) +
					 ": slurmctld does not load sched/tidal");

	/* The plugin, and what it was built for. */
	tidal::wire::CtlRecord policy;
	try {
		tidal::wire::CtlReply r = ask_show(t, "policy");
		if (!r.ok || r.records.empty())
			die(r.ok ? "no policy record" : r.error);
		policy = r.records[0];
		std::string last = field(policy, "LastCycle");
		c.ok("plugin", "sched/tidal " + field(policy, "Version") +
				       " answers at " + t.ep.str() + ": Policy=" +
				       field(policy, "Policy") + ", " +
				       field(policy, "Cycles") + " cycles, the last at " +
				       (last.empty() ? "None" : last));
	} catch (const Fatal &e) {
		c.fail("plugin", e.what());
	}
	std::string built = field(policy, "SlurmVersion"), running, out;
	if (run_command("scontrol show config", &out)) {
		size_t at = out.find("SLURM_VERSION");
		if (at != std::string::npos) {
			size_t eq = out.find('=', at);
			size_t nl = out.find('\n', at);
			if (eq != std::string::npos && eq < nl) {
				running = out.substr(eq + 1, nl - eq - 1);
				running.erase(0, running.find_first_not_of(" \t"));
				running.erase(running.find_last_not_of(" \t\r") + 1);
			}
		}
	}
	if (policy.empty())
		c.fail("slurm", "sched/tidal did not answer: cannot tell the "
				"Slurm version it was built for");
	else if (built.empty())
		c.warn("slurm", "sched/tidal " + field(policy, "Version") +
					" does not say which Slurm it was built for");
	else if (running.empty())
		c.warn("slurm", "built for Slurm " + built +
					"; scontrol show config did not say "
					"which Slurm slurmctld runs (" +
					excerpt(out) + ")");
	else if (running == built)
		c.ok("slurm", "built for Slurm " + built + "; slurmctld runs " +
				      running);
	else
		c.fail("slurm", "built for Slurm " + built + ", but slurmctld "
				"runs " + running + ": rebuild Tidal against it");

	/* sbatch on this host registers Tidal's options. */
	std::string plugstack = tidal::wire::conf_value(side.slurm_conf,
							"PlugStackConfig");
	if (plugstack.empty())
		plugstack = side.slurm_conf.substr(
				    0, side.slurm_conf.rfind('/') + 1) +
			    "plugstack.conf";
	if (!run_command("sbatch --help", &out) && out.empty())
		c.fail("spank", "sbatch --help did not run here");
	else if (out.find("--elastic-gpus") != std::string::npos)
		c.ok("spank", "sbatch --help lists --elastic-gpus "
			      "(spank_tidal.so, through " + plugstack + ")");
	else
		c.fail("spank", "sbatch --help lacks --elastic-gpus: " +
					plugstack + " does not load "
					"spank_tidal.so (required /path/"
					"spank_tidal.so)");

	/* The agents, on every node with GPUs, and their checkpoint space. */
	if (policy.empty()) {
		c.fail("agents", "sched/tidal did not answer");
	} else {
		try {
			tidal::wire::CtlReply r = ask_show(t, "nodes");
			if (!r.ok)
				die(r.error);
			std::string down, unwritable, low, least_node;
			int gpu_nodes = 0, up = 0;
			double least = -1;
			for (const tidal::wire::CtlRecord &n : r.records) {
				std::string name = field(n, "NodeName");
				if (std::strtod(field(n, "GPUs").c_str(), nullptr) <= 0)
					continue;
				gpu_nodes++;
				std::string agent = field(n, "Agent");
				if (agent != "UP") {
					down += (down.empty() ? "" : ",") + name +
						(agent.empty() ? " (none)" : " (" + agent + ")");
					continue;
				}
				up++;
				std::string w = field(n, "CkptWritable");
				if (w.rfind("no", 0) == 0)
					unwritable += (unwritable.empty() ? "" : "; ") +
						      name + ": " + w;
				double free = size_bytes(field(n, "CkptFree"));
				if (free >= 0 && (least < 0 || free < least))
					least = free, least_node = name;
				if (free >= 0 && free < min_free)
					low += (low.empty() ? "" : ",") + name + " (" +
					       field(n, "CkptFree") + ")";
			}
			std::string counted = std::to_string(up) + " of " +
					      std::to_string(gpu_nodes) +
					      " GPU nodes have their tidald UP";
			if (!gpu_nodes)
				c.warn("agents", "no node with GPUs seen yet");
			else if (!down.empty())
				c.fail("agents", counted + "; not: " + down);
			else
				c.ok("agents", counted);
			if (!unwritable.empty())
				c.fail("ckpt", unwritable);
			else if (!low.empty())
				c.warn("ckpt", "less than " +
						       tidal::bytes_text(min_free) +
						       " free: " + low);
			else if (up)
				c.ok("ckpt", "every agent's checkpoint directory "
					     "is writable; the least free is " +
					     tidal::bytes_text(least) + " (" +
					     least_node + ")");
		} catch (const Fatal &e) {
			c.fail("agents", e.what());
		}
	}
	std::printf("%d failed, %d warned\n", c.failed, c.warned);
	return c.failed ? kExitError : 0;
}

} /* namespace */

int main(int argc, char **argv)
{
	bool one_line = false, as_json = false;
	std::string check_min_free;
	std::vector<std::string> words;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if (a == "-o" || a == "--oneliner")
			one_line = true;
		else if (a == "--json")
			as_json = true;
		else if (a == "--min-free" || a.rfind("--min-free=", 0) == 0) {
			if (a == "--min-free" && i + 1 >= argc)
				usage_error("--min-free needs a size");
			check_min_free = a == "--min-free" ? argv[++i]
							   : a.substr(11);
		}
		else if (a == "-h" || a == "--help") {
			std::fputs(kUsage, stdout);
			return 0;
		} else if (a == "-V" || a == "--version") {
			std::puts("tidalctl " TIDAL_VERSION);
			return 0;
		} else if (a.size() > 1 && a[0] == '-')
			usage_error("unknown option '" + a + "'");
		else
			words.push_back(a);
	}
	if (words.empty())
		usage_error("no command given");
	if (words[0] == "check") {
		double min_free = 10.0 * 1024 * 1024 * 1024;
		if (one_line || as_json)
			usage_error("check prints one line per check: -o and "
				    "--json are not for it");
		for (size_t i = 1; i < words.size(); i++)
			usage_error("check: unexpected '" + words[i] + "'");
		if (!check_min_free.empty() &&
		    (min_free = size_bytes(check_min_free)) < 0)
			usage_error("--min-free '" + check_min_free +
				    "': a size (bytes, or a number with K, "
				    "M, G, T or P)");
		return check(min_free);
	}
	if (!check_min_free.empty())
		usage_error("--min-free is an option of check");
	std::string request = tidal::wire::encode(build_request(words));
	request.pop_back(); /* its newline: ask_plugin() frames it */

	Target target = find_plugin();
	std::string reply = ask_plugin(target, request);
	tidal::wire::CtlReply r = parse_reply(target, reply);
	if (as_json)
		std::fputs(reply.c_str(), stdout);
	if (!r.ok)
		die(r.error);
	if (!as_json) {
		if (r.records.empty() && words[0] == "show")
			std::puts(words[1] == "nodes" ? "No nodes seen yet"
						      : "No jobs under Tidal");
		for (const tidal::wire::CtlRecord &rec : r.records)
			print_record(rec, one_line);
	}
	return 0;
}
