/*
 * ranks.cc - spawning trainer processes and reading their events.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "launcher/ranks.h"
#include "node/topo.h"
#include "proto/wire.h"

#include <cmath>

#include <fcntl.h>
#include <json.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "proto/json.h"

extern char **environ;

namespace tidal::launch {

namespace {

constexpr int kEventFd = 3;

/* The child's environment: ours with SPEC's variables replacing any of
 * the same name.  Built before fork (the child may only make async-
 * signal-safe calls: the store server runs in another thread). */
std::vector<std::string> child_env(const SpawnSpec &spec)
{
	std::vector<std::string> env;
	for (char **e = environ; *e; e++) {
		const char *eq = std::strchr(*e, '=');
		size_t n = eq ? eq - *e + 1 : std::strlen(*e);
		bool replaced = false;
		for (const std::string &s : spec.env)
			replaced |= s.compare(0, n, *e, n) == 0;
		for (const std::string &s : spec.unset)
			replaced |= s.size() + 1 == n &&
				    s.compare(0, s.size(), *e, s.size()) == 0;
		if (!replaced)
			env.push_back(*e);
	}
	env.insert(env.end(), spec.env.begin(), spec.env.end());
	return env;
}

std::vector<char *> c_strings(std::vector<std::string> &v)
{
	std::vector<char *> p;
	for (std::string &s : v)
		p.push_back(s.data());
	p.push_back(nullptr);
	return p;
}

} /* namespace */

bool parse_event(const std::string &line, Event &out, std::string &err)
{
	json_object *o = json_tokener_parse(line.c_str());
	if (!o || !json_object_is_type(o, json_type_object)) {
		if (o)
			json_object_put(o);
		err = "not a JSON object";
		return false;
	}
	out = Event();
	out.ev = wire::get_string(o, "ev");
	bool has;
	out.rank = (int)wire::get_number(o, "rank", 0, &has);
	if (!has)
		out.rank = -1;
	out.step = (uint64_t)wire::get_number(o, "step");
	out.loss = wire::get_number(o, "loss", 0, &out.has_loss);
	out.it_s = wire::get_number(o, "it_s");
	out.samples_s = wire::get_number(o, "samples_s");
	double g = wire::get_number(o, "gns", 0, &has);
	if (has)
		out.gns = g;
	int64_t batch;
	if (wire::get_integer_in(o, "batch", 1, 1000000000, &batch) > 0)
		out.batch = batch;
	for (auto [key, v] : {std::pair{"progress", &out.progress},
			      std::pair{"grad_sqr", &out.grad_sqr},
			      std::pair{"grad_var", &out.grad_var}}) {
		double x = wire::get_number(o, key, 0, &has);
		if (has && std::isfinite(x) && x >= 0)
			*v = x;
	}
	json_object *st;
	if (json_object_object_get_ex(o, "stages", &st) && st &&
	    json_object_is_type(st, json_type_object)) {
		out.stages.present = true;
		out.stages.data = wire::get_number(st, "data");
		out.stages.compute = wire::get_number(st, "compute");
		out.stages.comm = wire::get_number(st, "comm");
	}
	json_object *gu;
	if (json_object_object_get_ex(o, "gpu", &gu) && gu &&
	    json_object_is_type(gu, json_type_object)) {
		double u = wire::get_number(gu, "util", -1);
		double m = wire::get_number(gu, "mem_mb", -1);
		if (std::isfinite(u) && u >= 0 && u <= 100 &&
		    std::isfinite(m) && m >= 0 && m <= 1e9)
			out.gpu = { true, u, m };
	}
	out.path = wire::get_string(o, out.ev == "start" ? "resumed" : "path");
	out.bytes = (uint64_t)wire::get_number(o, "bytes");
	out.ms = wire::get_number(o, "ms");
	out.mb_s = wire::get_number(o, "mb_s");
	out.backend = wire::get_string(o, "backend");
	out.error = wire::get_string(o, "error");
	json_object_put(o);
	if (out.ev.empty()) {
		err = "no \"ev\" member";
		return false;
	}
	return true;
}

bool spawn_rank(Rank &r, const SpawnSpec &spec, std::string &err)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		err = std::string("pipe: ") + std::strerror(errno);
		return false;
	}
	std::vector<std::string> env = child_env(spec);
	std::vector<std::string> args = spec.argv;
	std::vector<char *> envp = c_strings(env), argv = c_strings(args);
	cpu_set_t set;
	CPU_ZERO(&set);
	std::vector<int> cpus;
	bool bind = topo::parse_cpu_list(spec.cpus, &cpus) && !cpus.empty();
	for (int c : cpus)
		if (c < CPU_SETSIZE)
			CPU_SET(c, &set);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		err = std::string("fork: ") + std::strerror(errno);
		close(p[0]);
		close(p[1]);
		return false;
	}
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, nullptr);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		if (p[1] == kEventFd)
			fcntl(kEventFd, F_SETFD, 0);
		else if (dup2(p[1], kEventFd) < 0)
			_exit(127);
		/* Store sockets, the control socket, other ranks' pipes. */
		syscall(SYS_close_range, kEventFd + 1, ~0U, 0);
		if (bind)
			sched_setaffinity(0, sizeof set, &set);
		execvpe(argv[0], argv.data(), envp.data());
		const char *e = std::strerror(errno);
		const char *m1 = "tidal-launch: cannot run ";
		ssize_t w = write(2, m1, std::strlen(m1));
		w = write(2, argv[0], std::strlen(argv[0]));
		w = write(2, ": ", 2);
		w = write(2, e, std::strlen(e));
		w = write(2, "\n", 1);
		(void)w;
		_exit(127);
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	r.pid = pid;
	r.event_fd = p[0];
	r.partial.clear();
	r.started = r.exited = r.stopped = r.done = false;
	r.status = 0;
	return true;
}

void read_events(Rank &r, std::vector<Event> &out)
{
	if (r.event_fd < 0)
		return;
	/* A trainer's event lines are short; a runaway one is cut off. */
	int rc = wire::read_lines(
		r.event_fd, &r.partial, 1 << 20, [&](const std::string &line) {
			Event e;
			std::string err;
			if (line.empty())
				return;
			if (parse_event(line, e, err))
				out.push_back(e);
			else
				std::fprintf(stderr,
					     "tidal-launch: rank %d: bad event "
					     "line '%s': %s\n",
					     r.global, line.c_str(),
					     err.c_str());
		});
	if (rc == 0) {
		close(r.event_fd);
		r.event_fd = -1;
	} else if (rc < 0) {
		std::fprintf(stderr,
			     "tidal-launch: rank %d: an event line over 1 MiB; "
			     "dropped\n",
			     r.global);
		r.partial.clear();
	}
}

std::string describe_status(int status)
{
	if (WIFEXITED(status))
		return "exit status " + std::to_string(WEXITSTATUS(status));
	if (WIFSIGNALED(status))
		return "killed by signal " + std::to_string(WTERMSIG(status)) +
		       " (" + strsignal(WTERMSIG(status)) + ")";
	return "status " + std::to_string(status);
}

} /* namespace tidal::launch */
