/*
 * tidald.cc - the per-node agent's entry point: options, logging, sockets
 * and the register/heartbeat loop (see agent.h for the threads, tidald(8)
 * for the options).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <getopt.h>
#include <signal.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>

#include "nodeagent/agent.h"
#include "nodeagent/ckpt_local.h"
#include "nodeagent/metrics.h"

namespace tidal::agent
{

static bool use_syslog;
static std::string log_node = "?";
static std::mutex log_mu;

void log_set_node(const std::string &node)
{
	log_node = node;
}

void log_to_syslog(const std::string &node)
{
	use_syslog = true;
	openlog("tidald", LOG_PID, LOG_DAEMON);
}

void logf(const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* One line each: what a peer sent (an op name, say) cannot forge
	 * another. */
	for (char *c = msg; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = '?';
	if (use_syslog) {
		syslog(LOG_INFO, "[%s] %s", log_node.c_str(), msg);
		return;
	}
	/* Milliseconds: the steps of a resize are timed from these lines
	 * (bench/resize.sh). */
	char ts[32];
	struct timespec now;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &now);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S",
		 localtime_r(&now.tv_sec, &tm));
	std::lock_guard<std::mutex> g(log_mu);
	std::fprintf(stderr, "%s.%03ld tidald[%s]: %s\n", ts,
		     now.tv_nsec / 1000000, log_node.c_str(), msg);
}

std::string Agent::addr() const
{
	/* A wildcard address means "whatever the plugin saw us come from". */
	std::string h = opt_.listen.host;
	if (h == "0.0.0.0" || h == "::" || h == "*")
		h = "";
	return h + ":" + std::to_string(peer_port_);
}

static bool make_dir(const std::string &d, mode_t mode, std::string *err)
{
	std::string cur;
	size_t at = 0;
	while (at != std::string::npos) {
		at = d.find('/', at + 1);
		cur = d.substr(0, at);
		if (mkdir(cur.c_str(), mode) && errno != EEXIST) {
			*err = cur + ": " + std::strerror(errno);
			return false;
		}
	}
	return true;
}

bool Agent::open_sockets(std::string *err)
{
	/* Launchers run as the job's user: they must reach tidald.sock, and
	 * trainers write under CKPT_ROOT/<job>. */
	if (!make_dir(node_dir(), 0755, err) ||
	    !make_dir(opt_.ckpt_dir, 0755, err))
		return false;
	chmod(opt_.ckpt_dir.c_str(), 01777);
	std::string path = node_dir() + "/tidald.sock";
	if ((local_fd_ = wire::unix_listen(path, err)) < 0)
		return false;
	chmod(path.c_str(), 0666);
	if ((peer_fd_ = wire::tcp_listen(opt_.listen, err)) < 0)
		return false;
	peer_port_ = wire::bound_port(peer_fd_);
	logf("listening on %s (launchers) and %s:%d (peers); checkpoints in %s",
	     path.c_str(), opt_.listen.host.c_str(), peer_port_,
	     opt_.ckpt_dir.c_str());
	if (opt_.metrics_on) {
		if (!wire::metrics_http_built()) {
			*err = "--metrics: this tidald was built without "
			       "libmicrohttpd (libmicrohttpd-dev)";
			return false;
		}
		if ((metrics_fd_ = wire::tcp_listen(opt_.metrics, err)) < 0) {
			*err = "--metrics: " + *err;
			return false;
		}
	}
	return true;
}

bool Agent::sleep_for(double secs)
{
	std::unique_lock<std::mutex> g(mu_);
	cv_.wait_for(g, std::chrono::duration<double>(secs),
		     [this] { return stop_.load(); });
	return !stop_;
}

void Agent::stop()
{
	{
		/* Under the lock: sleep_for cannot miss the wake-up. */
		std::lock_guard<std::mutex> g(mu_);
		stop_ = true;
	}
	cv_.notify_all();
}

void Agent::run()
{
	std::thread local(&Agent::local_loop, this),
		peer(&Agent::peer_loop, this);
	bool registered = false, reachable = true;
	std::string err;
	agent_metrics(opt_.node);
	if (metrics_fd_ >= 0) {
		/* After daemon(): libmicrohttpd's thread would not survive
		 * its fork. */
		if (metrics_server_.serve(
			    metrics_fd_, opt_.metrics.host,
			    [] { return agent_metrics().render(); }, &err))
			logf("metrics at http://%s/metrics",
			     metrics_server_.where().c_str());
		else
			logf("no metrics: %s", err.c_str());
		metrics_fd_ = -1; /* the server's now */
	}
	logf("plugin at %s, heartbeat every %.1f s", opt_.plugin.str().c_str(),
	     opt_.heartbeat);
	while (!stop_) {
		if (!registered) {
			registered = register_node(&err);
			if (registered)
				logf("registered with sched/tidal at %s as %s "
				     "(peer address %s)",
				     opt_.plugin.str().c_str(),
				     opt_.node.c_str(), addr().c_str());
			else if (reachable)
				logf("cannot register with sched/tidal at %s: "
				     "%s; retrying every %.0f s",
				     opt_.plugin.str().c_str(), err.c_str(),
				     std::min(opt_.heartbeat, 5.0));
			reachable = registered;
			if (!sleep_for(registered
					       ? opt_.heartbeat
					       : std::min(opt_.heartbeat, 5.0)))
				break;
			continue;
		}
		if (!heartbeat(&err)) {
			logf("sched/tidal does not know this node (%s): "
			     "registering again",
			     err.c_str());
			registered = false;
			continue;
		}
		if (!err.empty() && reachable)
			logf("heartbeat to %s failed: %s; retrying",
			     opt_.plugin.str().c_str(), err.c_str());
		else if (err.empty() && !reachable)
			logf("sched/tidal at %s reachable again",
			     opt_.plugin.str().c_str());
		reachable = err.empty();
		sleep_for(opt_.heartbeat);
	}
	local.join();
	peer.join();
	metrics_server_.stop();
	close(local_fd_);
	close(peer_fd_);
	unlink((node_dir() + "/tidald.sock").c_str());
	logf("stopped");
}

} /* namespace tidal::agent */

using namespace tidal::agent;

[[noreturn]] static void usage(FILE *f, int rc)
{
	std::fputs(
		"usage: tidald -N NODE [--plugin HOST:PORT] [--listen "
		"ADDR:PORT]\n"
		"              [--run-dir D] [--ckpt-dir D] [--heartbeat S]\n"
		"              [--munge-socket P] [--topology-xml F] "
		"[--metrics ADDR:PORT] [-D]\n"
		"Tidal's per-node agent: registers with sched/tidal, reports "
		"the\n"
		"node's training jobs, checkpoints them on the scheduler's "
		"order\n"
		"and serves checkpoints to peer agents.  See tidald(8).\n"
		"  -N, --node NODE       node name (default $SLURMD_NODENAME, "
		"else the\n"
		"                        short hostname)\n"
		"  --plugin HOST:PORT    sched/tidal (default SlurmctldHost "
		"of\n"
		"                        $SLURM_CONF and CtlPort of "
		"tidal.conf)\n"
		"  --listen ADDR:PORT    peer port (default 0.0.0.0:6830; port "
		"0 =\n"
		"                        any free one)\n"
		"  --run-dir D           sockets under D/NODE (default "
		"/run/tidal,\n"
		"                        or $TIDAL_RUN_DIR)\n"
		"  --ckpt-dir D          checkpoint root (default "
		"/var/lib/tidal/ckpt)\n"
		"  --heartbeat S         seconds between heartbeats (default "
		"10)\n"
		"  --munge-socket P      munged socket (default "
		"AuthInfo=socket= of\n"
		"                        slurm.conf, else MUNGE's default)\n"
		"  --topology-xml F      hwloc XML instead of this machine's "
		"topology\n"
		"  --metrics ADDR:PORT   Prometheus metrics at "
		"http://ADDR:PORT/metrics\n"
		"                        (default none; port 0 = any free "
		"one)\n"
		"  -D, --foreground      stay in the foreground, log to "
		"stderr\n"
		"  -h, --help, -V, --version\n",
		f);
	std::exit(rc);
}

[[noreturn]] static void die(const std::string &msg)
{
	std::fprintf(stderr, "tidald: error: %s\n", msg.c_str());
	std::exit(2);
}

static Options parse(int argc, char **argv)
{
	static const option longs[] = { { "node", 1, nullptr, 'N' },
					{ "plugin", 1, nullptr, 'p' },
					{ "listen", 1, nullptr, 'l' },
					{ "run-dir", 1, nullptr, 'r' },
					{ "ckpt-dir", 1, nullptr, 'c' },
					{ "heartbeat", 1, nullptr, 'b' },
					{ "munge-socket", 1, nullptr, 'm' },
					{ "topology-xml", 1, nullptr, 't' },
					{ "metrics", 1, nullptr, 'M' },
					{ "foreground", 0, nullptr, 'D' },
					{ "help", 0, nullptr, 'h' },
					{ "version", 0, nullptr, 'V' },
					{ nullptr, 0, nullptr, 0 } };
	Options o;
	tidal::wire::SlurmSide s = tidal::wire::read_slurm_side();
	o.plugin = s.plugin;
	o.munge_socket = s.munge_socket;
	o.slurm_user = s.slurm_user;
	if (const char *e = std::getenv("SLURMD_NODENAME"))
		o.node = e;
	if (const char *e = std::getenv("TIDAL_RUN_DIR"))
		o.run_dir = e;
	std::string err;
	int c;
	while ((c = getopt_long(argc, argv, "N:DhV", longs, nullptr)) != -1) {
		std::string a = optarg ? optarg : "";
		switch (c) {
		case 'N':
			o.node = a;
			break;
		case 'p':
			if (!tidal::wire::parse_endpoint(a, &o.plugin, &err))
				die("--plugin " + err);
			break;
		case 'l':
			if (!tidal::wire::parse_endpoint(a, &o.listen, &err))
				die("--listen " + err);
			break;
		case 'r':
			o.run_dir = a;
			break;
		case 'c':
			o.ckpt_dir = a;
			break;
		case 'b': {
			char *end;
			o.heartbeat = std::strtod(a.c_str(), &end);
			if (*end ||
			    !(o.heartbeat >= 0.2 && o.heartbeat <= 3600))
				die("--heartbeat '" + a +
				    "': seconds, 0.2 to 3600");
			break;
		}
		case 'm':
			o.munge_socket = a;
			break;
		case 't':
			o.topology_xml = a;
			break;
		case 'M':
			if (!tidal::wire::parse_endpoint(a, &o.metrics, &err))
				die("--metrics " + err);
			o.metrics_on = true;
			break;
		case 'D':
			o.foreground = true;
			break;
		case 'h':
			usage(stdout, 0);
		case 'V':
			std::printf("tidald %s\n", TIDALD_VERSION);
			std::exit(0);
		default:
			usage(stderr, 2);
		}
	}
	if (optind < argc)
		die(std::string("unexpected argument '") + argv[optind] + "'");
	if (o.node.empty()) {
		char h[256] = "";
		gethostname(h, sizeof(h) - 1);
		o.node = std::string(h).substr(0, std::string(h).find('.'));
	}
	if (o.node.empty() || o.node.find('/') != std::string::npos)
		die("node name '" + o.node + "' is empty or has a '/'");
	return o;
}

int main(int argc, char **argv)
{
	Options o = parse(argc, argv);
	log_set_node(o.node);
	signal(SIGPIPE, SIG_IGN);
	/* TERM/INT are taken by one thread (sigwait), so stopping never runs
	 * inside a signal handler. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, nullptr);
	Agent agent(o);
	std::string err;
	/* Sockets first, so that a bad option or a busy port is reported to
	 * whoever started us, with the exit status; no thread runs yet, so
	 * the fork in daemon() is safe. */
	if (!agent.open_sockets(&err)) {
		std::fprintf(stderr, "tidald: error: %s\n", err.c_str());
		return 1;
	}
	if (!o.foreground) {
		if (daemon(0, 0))
			die(std::string("daemon: ") + std::strerror(errno));
		log_to_syslog(o.node);
	}
	std::thread([&agent, set] {
		int sig;
		sigwait(&set, &sig);
		logf("signal %d: stopping", sig);
		agent.stop();
	}).detach();
	logf("tidald %s starting", TIDALD_VERSION);
	agent.run();
	return 0;
}
