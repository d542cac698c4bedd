/*
 * metrics_http.cc - bridge.h's tidal_metrics_serve/_stop/_log_drain: the
 * plugin's metrics (metrics.cc) on MetricsAddress:MetricsPort, served by
 * proto/http.h's MetricsServer from libmicrohttpd's thread.
 *
 * A port another process holds is tried again every half second for up
 * to 60 s from a thread of this file: Slurm 24.11's reconfigure starts
 * a new slurmctld while the old one still listens, as for CtlPort
 * (ctl_server.c).  What happened is queued for slurmctld's log, drained
 * by the scheduling thread each cycle.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "plugin/sched/c_api.h"
#include "plugin/sched/metrics.h"
#include "proto/http.h"

namespace
{

constexpr int kRetryTenths = 600; /* 60 s, in steps of 0.1 s */

struct Serving {
	std::mutex mu;
	std::condition_variable cv;
	tidal::wire::MetricsServer server;
	std::string addr; /* what is wanted */
	int port = 0;
	std::thread retry;
	bool retrying = false, stop = false;
	std::string log;
};

Serving &serving()
{
	static Serving *s = new Serving; /* lives as long as slurmctld */
	return *s;
}

std::string render()
{
	return tidal::plugin::metrics().render();
}

/* S.mu held.  RET true once started (or given up on, said so). */
bool try_start(Serving &s, bool last_try, bool say_busy)
{
	std::string err;
	if (s.server.start(s.addr, s.port, render, &err)) {
		s.log += "note: metrics at http://" + s.server.where() +
			 "/metrics\n";
		return true;
	}
	bool busy = err.find("in use") != std::string::npos;
	if (busy && !last_try) {
		if (say_busy)
			s.log += "note: " + err + "; trying again for 60 s\n";
		return false;
	}
	s.log += "MetricsPort=" + std::to_string(s.port) + ": " + err +
		 "; no metrics are served\n";
	return true;
}

void join_retry(Serving &s, std::unique_lock<std::mutex> &g)
{
	if (!s.retry.joinable())
		return;
	s.stop = true;
	s.cv.notify_all();
	g.unlock();
	s.retry.join();
	g.lock();
	s.stop = false;
}

void retry_loop()
{
	Serving &s = serving();
	std::unique_lock<std::mutex> g(s.mu);
	for (int i = 1; i <= kRetryTenths && !s.stop; i++) {
		s.cv.wait_for(g, std::chrono::milliseconds(100));
		if (s.stop || (i % 5 && i != kRetryTenths))
			continue;
		if (try_start(s, i == kRetryTenths, false))
			break;
	}
	s.retrying = false;
}

} /* namespace */

using tidal::plugin::guarded;

extern "C" void tidal_metrics_serve(void)
{
	guarded([] {
		int port = tidal_engine_metrics_port();
		char *a = tidal_engine_metrics_addr();
		std::string addr = a ? a : "";
		std::free(a);
		Serving &s = serving();
		std::unique_lock<std::mutex> g(s.mu);
		bool same = port == s.port && addr == s.addr;
		if (same && (s.server.running() || s.retrying || !port))
			return;
		join_retry(s, g);
		if (s.server.running()) {
			s.log += "note: metrics no longer at http://" +
				 s.server.where() + "/metrics\n";
			s.server.stop();
		}
		s.addr = addr;
		s.port = port;
		if (!port)
			return;
		tidal::plugin::metrics(); /* its families, before a scrape */
		if (try_start(s, false, true))
			return;
		s.retrying = true;
		s.retry = std::thread(retry_loop);
	});
}

extern "C" void tidal_metrics_stop(void)
{
	guarded([] {
		Serving &s = serving();
		std::unique_lock<std::mutex> g(s.mu);
		join_retry(s, g);
		s.server.stop();
		s.port = 0;
		s.addr.clear();
	});
}

extern "C" char *tidal_metrics_log_drain(void)
{
	return guarded((char *)nullptr, [] {
		Serving &s = serving();
		std::lock_guard<std::mutex> g(s.mu);
		if (s.log.empty())
			return (char *)nullptr;
		char *c = tidal::plugin::c_string(s.log);
		s.log.clear();
		return c;
	});
}
