/*
 * agent.h - tidald, the per-node agent: its options and the Agent object
 * shared by its threads.
 *
 *   main thread     register with sched/tidal, then heartbeat every
 *                   --heartbeat s (plugin_link.cc); commands from the
 *                   heartbeat reply run in threads of their own
 *   local thread    RUN_DIR/<node>/tidald.sock: hello, fetch, job_plan
 *                   (serve.cc); interleave keeps its connection for the
 *                   group's turns (interleave.cc), pack for the pack's
 *                   members (pack.cc)
 *   peer thread     --listen ADDR:PORT: ckpt_get from peer tidalds,
 *                   MUNGE-authenticated (serve.cc)
 *   metrics thread  --metrics ADDR:PORT: Prometheus scrapes, served by
 *                   libmicrohttpd (proto/http.h; metrics.h)
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/version.h"
#include "proto/http.h"
#include "proto/messages.h"
#include "proto/wire.h"

namespace tidal::agent
{

#define TIDALD_VERSION TIDAL_VERSION

struct Options {
	std::string node;
	wire::Endpoint plugin;
	wire::Endpoint listen{ "0.0.0.0", "6830" };
	/* --metrics: Prometheus metrics there (port 0 = any free one) */
	wire::Endpoint metrics;
	bool metrics_on = false;
	std::string run_dir = "/run/tidal";
	std::string ckpt_dir = "/var/lib/tidal/ckpt";
	double heartbeat = 10; /* seconds */
	std::string munge_socket;
	std::string topology_xml;
	bool foreground = false;
	uid_t slurm_user = 0;
};

/* "tidald[NODE]: ..." to stderr (-D) or syslog. */
void logf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_to_syslog(const std::string &node);
void log_set_node(const std::string &node);

class Agent
{
public:
	explicit Agent(const Options &o) : opt_(o) {}
	/* Bind both sockets; RET false with *ERR. */
	bool open_sockets(std::string *err);
	/* Until stop(): servers in threads, the plugin link here. */
	void run();
	void stop();

	/* ---- plugin_link.cc ---- */
	bool register_node(std::string *err);
	/* RET false if the plugin does not know us (re-register). */
	bool heartbeat(std::string *err);
	void run_command(uint64_t id, const std::string &op, uint64_t job);
	/* ---- pins.cc: JOB's checkpoints here that rotation must keep ---- */
	/* Pin and RET the checkpoint of JOB here to report to the plugin
	 * (0: none), OUT *PATH. */
	uint64_t pin_for_report(uint64_t job, std::string *path);
	/* The report of STEP went out (SENT) or never left. */
	void report_done(uint64_t job, uint64_t step, bool sent);
	/* The plugin's saved state records STEP as this node's newest of
	 * JOB: older pins go. */
	void recorded(uint64_t job, uint64_t step);
	/* A resize waits for STEP: pinned until the plugin's record passes
	 * it. */
	void pin_acked(uint64_t job, uint64_t step);
	/* A fetch copied REF of JOB here: reported as held (heartbeat)
	 * until the plugin has answered a heartbeat that carried it. */
	void copied(uint64_t job, const wire::CkptRef &ref);
	/* Each launcher's status, as a heartbeat's job entries. */
	std::vector<wire::JobReport> launcher_status();
	bool plugin_request(const std::string &req, std::string *reply,
			    std::string *err, int timeout_ms = 5000,
			    bool *sent = nullptr);

	/* ---- serve.cc ---- */
	void local_loop();
	void peer_loop();
	std::string handle_local(const std::string &req, uid_t uid);
	void serve_peer(int fd);
	std::string fetch(uint64_t job, const std::string &peer, uint64_t step,
			  uid_t uid);

	/* ---- interleave.cc: the interleaving groups ---- */
	struct Group;
	/* A trainer joined with J on FD: its turns until it goes. */
	void serve_interleave(int fd, const wire::InterleaveJoin &j, uid_t uid);

	/* ---- pack.cc: the packs of jobs that run at once on a GPU ---- */
	struct Pack;
	/* A trainer joined with J on FD: told the pack's members at every
	 * change, until it goes. */
	void serve_pack(int fd, const wire::PackJoin &j, uid_t uid);

	std::string node_dir() const { return opt_.run_dir + "/" + opt_.node; }
	std::string addr() const; /* what peers connect to */

private:
	bool sleep_for(double secs);

	Options opt_;
	int local_fd_ = -1, peer_fd_ = -1, metrics_fd_ = -1;
	int peer_port_ = 0;
	wire::MetricsServer metrics_server_; /* metrics.cc's, on metrics_fd_ */
	std::atomic<bool> stop_{ false };
	std::mutex mu_;
	std::condition_variable cv_;
	std::set<uint64_t> commands_seen_; /* ids ever received, by mu_ */
	/* Per job (pins.cc): the step the plugin's saved state records for
	 * this node, and the one being reported until it does (SENT: a
	 * request with it has left). */
	struct Pins {
		uint64_t recorded = 0;
		uint64_t reporting = 0;
		bool sent = false;
	};
	std::mutex pin_mu_;
	std::map<uint64_t, Pins> pins_; /* by pin_mu_ */
	/* Copies fetched here, not yet told to the plugin (by pin_mu_). */
	std::map<uint64_t, wire::CkptRef> copies_;
	/* interleave.cc: by name; a group's own state under its lock,
	 * taken before groups_mu_ when both are held */
	std::mutex groups_mu_;
	std::map<std::string, std::shared_ptr<Group>> groups_;
	/* pack.cc: the same for packs, taken in the same order */
	std::mutex packs_mu_;
	std::map<std::string, std::shared_ptr<Pack>> packs_;
};

} /* namespace tidal::agent */
