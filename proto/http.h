/*
 * http.h - the metrics endpoint: Prometheus' scrapes over HTTP, served by
 * libmicrohttpd from a thread of its own (sched/tidal inside slurmctld,
 * tidald on each node).
 *
 *   GET /metrics   the text RENDER returns, as
 *                  "text/plain; version=0.0.4; charset=utf-8"
 *   GET /          a line that says where the metrics are
 *   anything else  404 (another path) or 405 (another method than GET
 *                  and HEAD)
 *
 * RENDER runs in the server's thread, one scrape at a time; it must not
 * throw.  At most 16 connections at once, each closed after 10 s idle.
 * Built without libmicrohttpd (configure's MHD), start() refuses with a
 * message that says so.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <functional>
#include <mutex>
#include <string>

namespace tidal::wire
{

class MetricsServer {
public:
	MetricsServer() = default;
	MetricsServer(const MetricsServer &) = delete;
	MetricsServer &operator=(const MetricsServer &) = delete;
	~MetricsServer() { stop(); }

	/* Listen on ADDR:PORT ("" = every address; port 0 = any free one)
	 * and serve RENDER.  RET false with *ERR naming the address and the
	 * system's reason; a server already running is stopped first. */
	bool start(const std::string &addr, int port,
		   std::function<std::string()> render, std::string *err);
	/* The same on FD, a socket already listening (a daemon binds
	 * before it forks, and starts serving after): it is closed by
	 * stop(), or here on failure. */
	bool serve(int fd, const std::string &addr,
		   std::function<std::string()> render, std::string *err);
	void stop();
	bool running() const { return daemon_ != nullptr; }
	/* The port it listens on (the one chosen for port 0); 0 if none. */
	int port() const { return port_; }
	/* "ADDR:PORT" as listened on, for logs; "" if not running. */
	std::string where() const { return where_; }

	/* For the handler (http.cc). */
	std::string render();

private:
	void *daemon_ = nullptr; /* struct MHD_Daemon */
	int fd_ = -1;
	int port_ = 0;
	std::string where_;
	std::function<std::string()> render_;
	std::mutex render_mu_;
};

/* Whether this build serves metrics (libmicrohttpd was found). */
bool metrics_http_built();

} /* namespace tidal::wire */
