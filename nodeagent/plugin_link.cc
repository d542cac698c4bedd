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

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "nodeagent/agent.h"
#include "nodeagent/ckpt_local.h"
#include "nodeagent/requests.h"

#include "core/placement/fabric.h"
#include "node/fabric_ib.h"
#include "node/topo.h"

namespace tidal::agent
{

using namespace tidal::wire;

static json_object *new_request(const char *op, const std::string &node)
{
	json_object *o = new_message(op);
	json_object_object_add(o, "node", json_object_new_string(node.c_str()));
	return o;
}

bool Agent::plugin_request(const std::string &req, std::string *reply,
			   std::string *err, int timeout_ms, bool *sent)
{
	return munge_request(opt_.plugin, opt_.munge_socket, req, reply,
			     timeout_ms, err, sent);
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
	json_object *o = new_request("node_register", opt_.node);
	json_object_object_add(o, "addr",
			       json_object_new_string(addr().c_str()));
	json_object_object_add(o, "agent_version",
			       json_object_new_string(TIDALD_VERSION));
	json_object_object_add(o, "ckpt_dir",
			       json_object_new_string(opt_.ckpt_dir.c_str()));
	json_object_object_add(
		o, "ckpt_free_bytes",
		json_object_new_int64((int64_t)free_bytes(opt_.ckpt_dir)));
	json_object_object_add(o, "heartbeat_s",
			       json_object_new_double(opt_.heartbeat));
	size_t hcas;
	json_object_object_add(o, "topology", topology(opt_, &hcas));
	if (json_object *f = fabric_report(hcas))
		json_object_object_add(o, "fabric", f);
	std::string reply;
	if (!plugin_request(to_line(o), &reply, err))
		return false;
	json_object *r = parse_object(reply);
	bool ok = reply_ok(r, err);
	if (r)
		json_object_put(r);
	return ok;
}

/* A launcher's status reply as a heartbeat job entry (its fields as they
 * are, less the envelope), or NULL. */
static json_object *job_entry(const std::string &sock, uint64_t job)
{
	std::string reply, err;
	if (!unix_request(sock, "{\"v\":1,\"op\":\"status\"}", &reply, 2000,
			  &err))
		return nullptr; /* gone: its job ended, or not up yet */
	json_object *r = parse_object(reply);
	if (!r)
		return nullptr;
	json_object *e = json_object_new_object();
	json_object_object_add(e, "job", json_object_new_int64((int64_t)job));
	json_object_object_foreach(r, k, v)
	{
		if (!std::strcmp(k, "v") || !std::strcmp(k, "ok") ||
		    !std::strcmp(k, "job"))
			continue;
		json_object_object_add(e, k, json_object_get(v));
	}
	if (!get_bool(r, "ok"))
		json_object_object_add(e, "state",
				       json_object_new_string("unknown"));
	json_object_put(r);
	return e;
}

std::string Agent::launcher_status()
{
	json_object *jobs = json_object_new_array();
	DIR *d = opendir(node_dir().c_str());
	while (d) {
		struct dirent *e = readdir(d);
		if (!e)
			break;
		unsigned long long job;
		char tail[8] = "";
		if (std::sscanf(e->d_name, "launch-%llu%7s", &job, tail) != 2 ||
		    std::strcmp(tail, ".sock"))
			continue;
		if (json_object *j =
			    job_entry(node_dir() + "/" + e->d_name, job))
			json_object_array_add(jobs, j);
	}
	if (d)
		closedir(d);
	std::string s = json_object_to_json_string_ext(
		jobs, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	json_object_put(jobs);
	return s;
}

bool Agent::heartbeat(std::string *err)
{
	json_object *o = new_request("node_heartbeat", opt_.node);
	json_object *jobs = json_tokener_parse(launcher_status().c_str());
	/* Each job's newest complete checkpoint here, pinned before the
	 * report leaves (pins.cc): what the plugin records stays true. */
	std::vector<std::pair<uint64_t, uint64_t>> reported;
	for (size_t i = 0; jobs && i < json_object_array_length(jobs); i++) {
		json_object *e = json_object_array_get_idx(jobs, i);
		uint64_t job = (uint64_t)get_int(e, "job"), step;
		std::string path;
		if (!job || !(step = pin_for_report(job, &path)))
			continue;
		json_object *lc = json_object_new_object();
		json_object_object_add(lc, "step",
				       json_object_new_int64((int64_t)step));
		json_object_object_add(lc, "path",
				       json_object_new_string(path.c_str()));
		json_object_object_add(e, "last_ckpt", lc);
		reported.emplace_back(job, step);
	}
	json_object_object_add(o, "jobs", jobs);
	json_object_object_add(
		o, "ckpt_free_bytes",
		json_object_new_int64((int64_t)free_bytes(opt_.ckpt_dir)));
	json_object_object_add(o, "heartbeat_s",
			       json_object_new_double(opt_.heartbeat));
	std::string reply;
	bool sent;
	bool answered = plugin_request(to_line(o), &reply, err, 5000, &sent);
	for (const auto &[job, step] : reported)
		report_done(job, step, sent);
	if (!answered)
		return true; /* unreachable: keep trying, nothing to redo */
	HeartbeatReply hr;
	if (!decode(reply, &hr) || !hr.ok) {
		*err = hr.error;
		return !hr.reregister;
	}
	err->clear();
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

/* Ask the launcher of JOB for OP; fill the ack A. */
static void ask_launcher(const std::string &sock, const std::string &op,
			 json_object *a)
{
	std::string reply, err;
	std::string req = "{\"v\":1,\"op\":\"" + op + "\"}";
	/* A checkpoint of a big model to a slow disk takes a while; the
	 * plugin's CheckpointTimeout bounds the resize anyway. */
	bool ok = unix_request(sock, req, &reply, 3600 * 1000, &err);
	json_object *r = ok ? parse_object(reply) : nullptr;
	if (ok)
		ok = reply_ok(r, &err);
	json_object_object_add(a, "ok", json_object_new_boolean(ok));
	if (ok) {
		for (const char *k : { "step", "path", "bytes", "ms" }) {
			json_object *v;
			if (json_object_object_get_ex(r, k, &v))
				json_object_object_add(a, k,
						       json_object_get(v));
		}
	} else {
		json_object_object_add(a, "error",
				       json_object_new_string(err.c_str()));
	}
	if (r)
		json_object_put(r);
}

void Agent::run_command(uint64_t id, const std::string &op, uint64_t job)
{
	std::string sock =
		node_dir() + "/launch-" + std::to_string(job) + ".sock";
	json_object *a = new_request("node_ack", opt_.node);
	json_object_object_add(a, "id", json_object_new_int64((int64_t)id));
	json_object_object_add(a, "job", json_object_new_int64((int64_t)job));
	auto t0 = std::chrono::steady_clock::now();
	if (op != "checkpoint" && op != "checkpoint_stop") {
		json_object_object_add(a, "ok", json_object_new_boolean(0));
		json_object_object_add(
			a, "error",
			json_object_new_string(
				("unknown command '" + op + "'").c_str()));
	} else {
		logf("command %llu: %s of job %llu via %s",
		     (unsigned long long)id, op.c_str(),
		     (unsigned long long)job, sock.c_str());
		ask_launcher(sock, op, a);
	}
	double secs = std::chrono::duration<double>(
			      std::chrono::steady_clock::now() - t0)
			      .count();
	if (get_bool(a, "ok")) {
		/* Pinned before the plugin hears of it: a resize waits for
		 * exactly this checkpoint. */
		pin_acked(job, (uint64_t)get_int(a, "step"));
		logf("command %llu: job %llu checkpointed at step %lld in %.2f "
		     "s: %s",
		     (unsigned long long)id, (unsigned long long)job,
		     (long long)get_int(a, "step"), secs,
		     get_str(a, "path").c_str());
	} else
		logf("command %llu: %s of job %llu failed: %s",
		     (unsigned long long)id, op.c_str(),
		     (unsigned long long)job, get_str(a, "error").c_str());
	std::string req = to_line(a), reply, err;
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
