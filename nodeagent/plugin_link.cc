/*
 * plugin_link.cc - tidald's side of the conversation with sched/tidal:
 *
 *   node_register   once, and again whenever a heartbeat reply says the
 *                   plugin does not know us (slurmctld restarted)
 *   node_heartbeat  every --heartbeat s, with each launcher's status;
 *                   the reply carries commands for this node
 *   node_ack        when a command is done (or failed)
 *
 * Launchers are found by scanning RUN_DIR/<node>/launch-*.sock, so a
 * restarted tidald picks its jobs up again without any state of its own.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <dirent.h>
#include <json.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "nodeagent/agent.h"
#include "nodeagent/ckpt_local.h"
#include "nodeagent/metrics.h"
#include "nodeagent/requests.h"

#include "core/placement/fabric.h"
#include "node/fabric_ib.h"
#include "node/topo.h"

namespace tidal::agent
{

using namespace tidal::wire;

bool Agent::plugin_request(const std::string &req, std::string *reply,
			   std::string *err, int timeout_ms, bool *sent)
{
	return munge_request(opt_.plugin, opt_.munge_socket, req, reply,
			     timeout_ms, err, sent);
}

/* O as plain JSON text; takes O's reference. */
static std::string to_text(json_object *o)
{
	std::string s = to_line(o);
	s.pop_back();
	return s;
}

/* The node's hwloc/verbs summary (node/topo.h); {} if hwloc fails.
 * OUT *HCAS: how many RDMA devices the verbs list. */
static json_object *topology(const Options &opt, size_t *hcas)
{
	*hcas = 0;
	try {
		auto s = opt.topology_xml.empty()
				 ? topo::summarize_live()
				 : topo::summarize_xml(opt.topology_xml);
		if (json_object *t = parse_object(topo::to_json(s))) {
			/* Ports and link states as the verbs see them (none
			 * without InfiniBand: an empty list, no error). */
			auto verbs = topo::hcas_from_verbs();
			*hcas = verbs.size();
			json_object *v = json_tokener_parse(
				topo::verbs_to_json(verbs).c_str());
			if (v)
				json_object_object_add(t, "verbs_hcas", v);
			return t;
		}
	} catch (const std::exception &e) {
		logf("topology: %s; registering without it", e.what());
	}
	return json_object_new_object();
}

/* The InfiniBand fabric as seen from this node (libibnetdisc), for the
 * plugin's switch tree when topology.conf gives none; NULL without HCAs
 * or when discovery fails (said once in the log). */
static json_object *fabric_report(size_t hcas)
{
	static bool said;
	if (hcas == 0)
		return nullptr;
	try {
		fabric::Fabric f = topo::discover_fabric();
		return parse_object(fabric::to_json(f, nullptr));
	} catch (const std::exception &e) {
		if (!said)
			logf("fabric discovery: %s; registering without it",
			     e.what());
		said = true;
	}
	return nullptr;
}

bool Agent::register_node(std::string *err)
{
	NodeRegister m;
	m.node = opt_.node;
	m.addr = addr();
	m.agent_version = TIDALD_VERSION;
	m.ckpt_dir = opt_.ckpt_dir;
	m.ckpt_free_bytes = free_bytes(opt_.ckpt_dir);
	m.heartbeat_s = opt_.heartbeat;
	size_t hcas;
	m.topology = to_text(topology(opt_, &hcas));
	if (json_object *f = fabric_report(hcas))
		m.fabric = to_text(f);
	std::string reply;
	if (!plugin_request(encode(m), &reply, err))
		return false;
	json_object *r = parse_object(reply);
	bool ok = reply_ok(r, err);
	if (r)
		json_object_put(r);
	return ok;
}

/* A launcher's status as a heartbeat job entry; false if it is gone. */
static bool job_entry(const std::string &sock, uint64_t job, JobReport *e)
{
	std::string reply, err;
	if (!unix_request(sock, encode(ControlRequest{ "status" }), &reply,
			  2000, &err))
		return false; /* gone: its job ended, or not up yet */
	json_object *r = parse_object(reply);
	if (!r)
		return false;
	json_object_put(r);
	LauncherStatus s;
	e->job = job;
	if (decode(reply, &s, &err))
		e->status = s.status;
	else
		e->status.state = "unknown";
	return true;
}

std::vector<JobReport> Agent::launcher_status()
{
	std::vector<JobReport> jobs;
	DIR *d = opendir(node_dir().c_str());
	while (d) {
		struct dirent *e = readdir(d);
		if (!e)
			break;
		unsigned long long job;
		char tail[8] = "";
		if (std::sscanf(e->d_name, "launch-%llu%7s", &job, tail) != 2 ||
		    std::strcmp(tail, ".sock") || job == 0 ||
		    job > (unsigned long long)kMaxJobId)
			continue;
		JobReport j;
		if (job_entry(node_dir() + "/" + e->d_name, job, &j))
			jobs.push_back(j);
	}
	if (d)
		closedir(d);
	return jobs;
}

bool Agent::heartbeat(std::string *err)
{
	NodeHeartbeat m;
	m.node = opt_.node;
	m.jobs = launcher_status();
	m.ckpt_free_bytes = free_bytes(opt_.ckpt_dir);
	/* Read-only, gone, or not ours to write any more: said with each
	 * heartbeat (tidalctl check). */
	m.ckpt_error = access(opt_.ckpt_dir.c_str(), W_OK | X_OK)
			       ? opt_.ckpt_dir + ": " + std::strerror(errno)
			       : std::string();
	m.heartbeat_s = opt_.heartbeat;
	/* Each job's newest complete checkpoint here, pinned before the
	 * report leaves (pins.cc): what the plugin records stays true. */
	std::vector<std::pair<uint64_t, uint64_t>> reported;
	for (JobReport &e : m.jobs) {
		std::string path;
		uint64_t step = pin_for_report(e.job, &path);
		if (!step)
			continue; /* the launcher's own stands */
		e.status.last_ckpt = { step, path };
		reported.emplace_back(e.job, step);
	}
	{ /* copies fetched here of jobs with no launcher here (one that
	   * has a launcher here is reported through it) */
		std::lock_guard<std::mutex> g(pin_mu_);
		for (auto it = copies_.begin(); it != copies_.end();) {
			uint64_t job = it->first;
			if (std::any_of(m.jobs.begin(), m.jobs.end(),
					[&](const JobReport &e) {
						return e.job == job;
					})) {
				it = copies_.erase(it);
				continue;
			}
			m.held.push_back({ job, it->second });
			++it;
		}
	}
	std::string reply;
	bool sent;
	bool answered = plugin_request(encode(m), &reply, err, 5000, &sent);
	for (const auto &[job, step] : reported)
		report_done(job, step, sent);
	if (!answered) {
		metrics_heartbeat(m.jobs, m.ckpt_free_bytes, false);
		return true; /* unreachable: keep trying, nothing to redo */
	}
	HeartbeatReply hr;
	if (!decode(reply, &hr) || !hr.ok) {
		metrics_heartbeat(m.jobs, m.ckpt_free_bytes, false);
		*err = hr.error;
		return !hr.reregister;
	}
	metrics_heartbeat(m.jobs, m.ckpt_free_bytes, true);
	err->clear();
	{ /* told: a copy replaced meanwhile by a newer one stays */
		std::lock_guard<std::mutex> g(pin_mu_);
		for (const HeldCkpt &h : m.held)
			if (auto it = copies_.find(h.job);
			    it != copies_.end() && it->second == h.ckpt)
				copies_.erase(it);
	}
	/* The checkpoints the plugin has recorded as ours: kept from
	 * rotation, so that what it tells a restarting node stays true. */
	for (const auto &[job, step] : hr.keep)
		recorded(job, step);
	for (const AgentCommand &c : hr.commands) {
		{
			std::lock_guard<std::mutex> g(mu_);
			if (!commands_seen_.insert(c.id).second)
				continue; /* delivered twice */
		}
		std::thread(&Agent::run_command, this, c.id, c.op, c.job)
			.detach();
	}
	return true;
}

/* Ask the launcher at SOCK for OP; fill the ack A. */
static void ask_launcher(const std::string &sock, const std::string &op,
			 NodeAck *a)
{
	std::string reply, err;
	CkptDone done;
	/* A checkpoint of a big model to a slow disk takes a while; the
	 * plugin's CheckpointTimeout bounds the resize anyway. */
	if (!unix_request(sock, encode(ControlRequest{ op }), &reply,
			  3600 * 1000, &err))
		done.error = err;
	else if (!decode(reply, &done))
		done.error = "launcher's reply is not a JSON object";
	a->ok = done.ok;
	a->ckpt = done.ckpt;
	a->bytes = done.bytes;
	a->ms = done.ms;
	a->error = done.error;
}

void Agent::run_command(uint64_t id, const std::string &op, uint64_t job)
{
	std::string sock =
		node_dir() + "/launch-" + std::to_string(job) + ".sock";
	NodeAck a;
	a.node = opt_.node;
	a.id = id;
	a.job = job;
	auto t0 = std::chrono::steady_clock::now();
	if (op != "checkpoint" && op != "checkpoint_stop") {
		a.error = "unknown command '" + op + "'";
	} else {
		logf("command %llu: %s of job %llu via %s",
		     (unsigned long long)id, op.c_str(),
		     (unsigned long long)job, sock.c_str());
		ask_launcher(sock, op, &a);
	}
	double secs = std::chrono::duration<double>(
			      std::chrono::steady_clock::now() - t0)
			      .count();
	if (op == "checkpoint" || op == "checkpoint_stop") {
		obs::Registry &mr = agent_metrics();
		mr.add("tidal_agent_checkpoints_total", { a.ok ? "ok" : "failed" });
		if (a.ok) {
			mr.observe("tidal_agent_checkpoint_seconds", {}, secs);
			mr.add("tidal_agent_checkpoint_bytes_total", {},
			       (double)a.bytes);
		}
	}
	if (a.ok) {
		/* Pinned before the plugin hears of it: a resize waits for
		 * exactly this checkpoint. */
		pin_acked(job, a.ckpt.step);
		logf("command %llu: job %llu checkpointed at step %llu in %.2f "
		     "s: %s",
		     (unsigned long long)id, (unsigned long long)job,
		     (unsigned long long)a.ckpt.step, secs,
		     a.ckpt.path.c_str());
	} else
		logf("command %llu: %s of job %llu failed: %s",
		     (unsigned long long)id, op.c_str(),
		     (unsigned long long)job, a.error.c_str());
	std::string req = encode(a), reply, err;
	for (int tries = 0; tries < 30 && !stop_; tries++) {
		if (plugin_request(req, &reply, &err)) {
			json_object *r = parse_object(reply);
			if (!reply_ok(r, &err))
				logf("command %llu: ack refused: %s",
				     (unsigned long long)id, err.c_str());
			if (r)
				json_object_put(r);
			return;
		}
		if (tries == 0)
			logf("command %llu: cannot ack yet: %s; retrying",
			     (unsigned long long)id, err.c_str());
		std::this_thread::sleep_for(std::chrono::seconds(1));
	}
	logf("command %llu: ack given up: %s", (unsigned long long)id,
	     err.c_str());
}

} /* namespace tidal::agent */
