/*
 * node_ops.cc - the node agents' (tidald's) ops on sched/tidal's listener,
 * over the registry of registry.h.
 *
 * One request per MUNGE-authenticated connection (proto/wire.h,
 * ctl_server.c), root/SlurmUser only:
 *
 *   node_register  {node, addr, agent_version, ckpt_dir, ckpt_free_bytes,
 *                   heartbeat_s, topology, [fabric]}       -> {ok}
 *   node_heartbeat {node, jobs:[{job, step, it_s, loss, ..., last_ckpt}],
 *                   ckpt_free_bytes}     -> {ok, commands:[{id, op, job}],
 *                                            keep:[{job, step}]}
 *                   an unknown node gets {ok:false, register:true}
 *   node_ack       {node, id, job, ok, step, path, bytes, ms, error}
 *   ckpt_where     {job}                 -> {ok, node, addr, step, path,
 *                                            holders:[{node, addr, step}]}
 *
 * A heartbeat's reply carries the node's queued commands (commands.cc) and
 * "keep": the checkpoint of each job that the plugin's state on disk
 * names for that node, which tidald must not rotate away (registry.cc).
 * An ack that a resize waits for wakes the scheduling thread through the
 * callback of tidal_agent_on_awaited_ack().
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <json.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "plugin/sched/agents/registry.h"
#include "plugin/sched/bridge.h"
#include "plugin/sched/c_api.h"
#include "plugin/sched/engine.h"
#include "proto/json.h"
#include "proto/messages.h"

namespace tidal::plugin::agents
{

namespace
{

/* tidal_agent_on_awaited_ack()'s callback. */
std::atomic<void (*)(void)> awaited_ack_wake{ nullptr };

/* "" if every count Q carries (job, id, step, bytes, free bytes) is an
 * integer in range, else what is wrong. */
std::string bad_count(json_object *q)
{
	static const struct {
		const char *key;
		int64_t max;
	} keys[] = { { "job", UINT32_MAX },
		     { "id", INT64_MAX },
		     { "step", INT64_MAX },
		     { "bytes", INT64_MAX },
		     { "ckpt_free_bytes", INT64_MAX } };
	for (const auto &k : keys) {
		json_object *v;
		if (!json_object_object_get_ex(q, k.key, &v))
			continue;
		int64_t n = json_object_is_type(v, json_type_int)
				    ? json_object_get_int64(v) : -1;
		if (n < 0 || n > k.max)
			return std::string("\"") + k.key +
			       "\" must be an integer from 0 to " +
			       std::to_string(k.max);
	}
	return "";
}

json_object *reply(bool ok)
{
	json_object *o = wire::new_message();
	json_object_object_add(o, "ok", json_object_new_boolean(ok));
	return o;
}

std::string fail(const std::string &msg, bool reregister = false)
{
	json_object *o = reply(false);
	json_object_object_add(o, "error", json_object_new_string(msg.c_str()));
	if (reregister)
		json_object_object_add(o, "register",
				       json_object_new_boolean(1));
	return wire::to_line(o);
}

std::string do_register(Registry &r, json_object *q, const std::string &node,
			const std::string &peer, double now)
{
	AgentInfo a;
	a.addr = wire::get_str(q, "addr");
	/* ":PORT" (tidald listens on a wildcard): the address it came from. */
	if (a.addr.empty() || a.addr[0] == ':')
		a.addr = peer + a.addr;
	/* Saved with the checkpoint locations as one word (state lines). */
	if (!state_word(a.addr, 255) || a.addr.find(':') == std::string::npos)
		return fail("node_register: \"addr\" must be HOST:PORT, "
			    "at most 255 characters, no spaces (got '" +
			    a.addr + "')");
	a.version = wire::get_str(q, "agent_version");
	a.ckpt_dir = wire::get_str(q, "ckpt_dir");
	a.ckpt_free = (uint64_t)wire::get_integer(q, "ckpt_free_bytes");
	a.heartbeat_s = std::max(0.2, wire::get_num(q, "heartbeat_s", 10));
	json_object *t;
	if (json_object_object_get_ex(q, "topology", &t) && t)
		a.topology = json_object_to_json_string_ext(
			t, JSON_C_TO_STRING_PLAIN);
	if (json_object_object_get_ex(q, "fabric", &t) && t)
		a.fabric = json_object_to_json_string_ext(
			t, JSON_C_TO_STRING_PLAIN);
	a.registered = a.last_seen = now;
	auto old = r.agents.find(node);
	a.registrations =
		old != r.agents.end() ? old->second.registrations + 1 : 1;
	logl(r, "agent " + node + " registered (" +
			(a.registrations > 1 ? "again, " : "") + "tidald " +
			a.version + ", peer " + a.addr + ", checkpoints in " +
			a.ckpt_dir + ")");
	r.agents[node] = a;
	/* A restarted tidald forgot what it was doing: send it again (one
	 * that only re-registered ignores ids it has seen). */
	for (auto &[id, c] : r.commands)
		if (c.node == node && c.state == 0)
			c.sent = false;
	/* Where it serves from may have changed: so has every address. */
	for (auto &[id, j] : r.jobs) {
		auto h = j.held.find(node);
		if (h != j.held.end()) {
			h->second.addr = a.addr;
			newest(j);
		}
	}
	return wire::to_line(reply(true));
}

std::string do_heartbeat(Registry &r, json_object *q, const std::string &node,
			 double now)
{
	wire::HeartbeatReply out;
	auto it = r.agents.find(node);
	if (it == r.agents.end()) {
		out.error = "node " + node +
			    " is not registered (slurmctld restarted?): "
			    "register first";
		out.reregister = true;
		return wire::encode(out);
	}
	AgentInfo &a = it->second;
	a.last_seen = now;
	a.ckpt_free = (uint64_t)wire::get_integer(q, "ckpt_free_bytes",
						  (int64_t)a.ckpt_free);
	a.heartbeat_s =
		std::max(0.2, wire::get_num(q, "heartbeat_s", a.heartbeat_s));
	json_object *jobs, *lc;
	std::vector<uint32_t> here;
	if (json_object_object_get_ex(q, "jobs", &jobs) &&
	    json_object_get_type(jobs) == json_type_array)
		for (size_t i = 0; i < json_object_array_length(jobs); i++) {
			json_object *e = json_object_array_get_idx(jobs, i);
			uint32_t job = (uint32_t)wire::get_integer(e, "job");
			if (!job)
				continue;
			here.push_back(job);
			JobInfo &j = r.jobs[job];
			/* Every node of a job reports it, but only node 0's
			 * launcher (rank 0) has its progress: the others'
			 * reports do not replace that one while it is fresh. */
			bool progress = wire::get_num(e, "it_s") > 0 ||
					wire::get_integer(e, "step") > 0;
			if (progress || j.status_node == node ||
			    now - j.status_seen > kStatusFresh) {
				j.status = json_object_to_json_string_ext(
					e, JSON_C_TO_STRING_PLAIN);
				j.status_node = node;
				j.status_seen = now;
			}
			j.seen = now;
			if (json_object_object_get_ex(e, "last_ckpt", &lc) &&
			    json_object_get_type(lc) == json_type_object &&
			    path_ok(wire::get_str(lc, "path")))
				saw_ckpt(
					r, job, node,
					(uint64_t)wire::get_integer(lc, "step"),
					wire::get_str(lc, "path"), now);
		}
	trim(r);
	out.ok = true;
	for (auto &[id, c] : r.commands) {
		if (c.node != node || c.sent || c.state)
			continue;
		out.commands.push_back({ id, c.op, c.job });
		c.sent = true;
		note(r, c.job, now,
		     c.op + " delivered to " + node + "'s tidald");
	}
	/* What this node must keep of the jobs running on it: the step the
	 * saved state records as its newest (its trainer may rotate it away
	 * otherwise, and after a restart this record would name a file that
	 * is gone).  Older ones it may release. */
	for (uint32_t job : here) {
		auto ji = r.jobs.find(job);
		if (ji == r.jobs.end())
			continue;
		auto h = ji->second.held.find(node);
		if (h == ji->second.held.end() || !h->second.saved)
			continue;
		out.keep.emplace_back(job, h->second.saved);
	}
	return wire::encode(out);
}

/* *AWAITED: whether a resize waits for this ack (its command is queued). */
std::string do_ack(Registry &r, json_object *q, const std::string &node,
		   double now, bool *awaited)
{
	uint64_t id = (uint64_t)wire::get_integer(q, "id");
	uint32_t job = (uint32_t)wire::get_integer(q, "job");
	json_object *okv;
	bool ok = json_object_object_get_ex(q, "ok", &okv) &&
		  json_object_get_boolean(okv);
	/* An id nobody waits for any more (called off, or timed out): its
	 * checkpoint still counts, nothing else is kept. */
	*awaited = r.commands.count(id) != 0;
	Command gone, &c = *awaited ? r.commands[id] : gone;
	c.id = id;
	c.job = job ? job : c.job;
	c.node = node;
	c.state = ok ? 1 : -1;
	c.step = (uint64_t)wire::get_integer(q, "step");
	c.path = wire::get_str(q, "path");
	c.error = wire::get_str(q, "error");
	char msg[512];
	if (ok && !path_ok(c.path)) { /* a state line would break */
		ok = false;
		c.state = -1;
		c.error = "checkpoint path is not an absolute path on one line";
		c.path.clear();
	}
	if (ok) {
		saw_ckpt(r, c.job, node, c.step, c.path, now);
		std::snprintf(msg, sizeof(msg),
			      "checkpoint at step %llu on %s (%.1f MB in %.0f "
			      "ms): %s",
			      (unsigned long long)c.step, node.c_str(),
			      wire::get_integer(q, "bytes") / 1e6,
			      wire::get_num(q, "ms"), c.path.c_str());
	} else {
		std::snprintf(msg, sizeof(msg), "%s on %s failed: %s",
			      c.op.empty() ? "command" : c.op.c_str(),
			      node.c_str(), c.error.c_str());
	}
	note(r, c.job, now, msg);
	logl(r, "job " + std::to_string(c.job) + ": agent " + node +
			" acked command " + std::to_string(id) + ": " + msg);
	return wire::to_line(reply(true));
}

/* UID: the job's owner (the engine's last cycle), -1 if unknown; tidald
 * lets only the owner (or root) copy a checkpoint. */
std::string do_where(Registry &r, json_object *q, int64_t uid)
{
	uint32_t job = (uint32_t)wire::get_integer(q, "job");
	auto it = r.jobs.find(job);
	if (it == r.jobs.end() || it->second.step == 0)
		return fail("no checkpoint of job " + std::to_string(job) +
			    " is known to sched/tidal");
	const JobInfo &j = it->second;
	json_object *o = reply(true);
	json_object_object_add(o, "job", json_object_new_int64(job));
	json_object_object_add(o, "node",
			       json_object_new_string(j.node.c_str()));
	json_object_object_add(o, "addr",
			       json_object_new_string(j.addr.c_str()));
	json_object_object_add(o, "step",
			       json_object_new_int64((int64_t)j.step));
	json_object_object_add(o, "path",
			       json_object_new_string(j.path.c_str()));
	/* Every node known to hold one, newest first: a fetch asks each
	 * what it holds now and copies from the newest reachable. */
	std::vector<std::pair<std::string, const Held *>> hs;
	for (const auto &[n, h] : j.held)
		hs.emplace_back(n, &h);
	std::stable_sort(hs.begin(), hs.end(), [](const auto &a, const auto &b) {
		return a.second->step > b.second->step;
	});
	json_object *arr = json_object_new_array();
	for (const auto &[n, h] : hs) {
		json_object *e = json_object_new_object();
		json_object_object_add(e, "node",
				       json_object_new_string(n.c_str()));
		json_object_object_add(e, "addr",
				       json_object_new_string(h->addr.c_str()));
		json_object_object_add(e, "step",
				       json_object_new_int64((int64_t)h->step));
		json_object_array_add(arr, e);
	}
	json_object_object_add(o, "holders", arr);
	if (uid >= 0)
		json_object_object_add(o, "uid", json_object_new_int64(uid));
	return wire::to_line(o);
}

/* *WAKE: an ack came in that a resize waits for. */
std::string handle(const char *request, uint32_t uid, bool admin,
		   const char *peer, bool *mine, const char **refused,
		   bool *wake)
{
	json_object *q = json_tokener_parse(request);
	std::string op = wire::get_str(q, "op");
	*mine = op == "node_register" || op == "node_heartbeat" ||
		op == "node_ack" || op == "ckpt_where";
	std::string out;
	*refused = nullptr;
	if (!*mine) {
	} else if (!admin) {
		*refused = "node ops need root or SlurmUser";
		out = fail(op +
			   " is for node agents: it needs root or "
			   "SlurmUser (you are uid " +
			   std::to_string(uid) + ")");
	} else if (wire::version_of(q) != TIDAL_WIRE_VERSION) {
		*refused = "a wire version this plugin does not speak";
		out = fail("wire version " +
			   std::to_string(wire::version_of(q)) +
			   " not supported (this plugin speaks " +
			   std::to_string(TIDAL_WIRE_VERSION) + ")");
	} else {
		/* Before the registry's lock: the engine's lock is taken
		 * first elsewhere (engine -> registry, never the reverse). */
		int64_t owner =
			op == "ckpt_where"
				? engine().job_uid(
					  (uint32_t)wire::get_integer(q, "job"))
				: -1;
		Registry &r = reg();
		std::lock_guard<std::mutex> g(r.mu);
		std::string node = wire::get_str(q, "node");
		double now = wall_now();
		std::string bad = bad_count(q);
		if (!bad.empty())
			out = fail(op + ": " + bad);
		else if (op == "ckpt_where")
			out = do_where(r, q, owner);
		else if (!state_word(node, 128))
			out = fail(op + ": \"node\" must be a node name (1 "
					"to 128 characters, no spaces)");
		else if (op == "node_register")
			out = do_register(r, q, node, peer ? peer : "", now);
		else if (op == "node_heartbeat")
			out = do_heartbeat(r, q, node, now);
		else
			out = do_ack(r, q, node, now, wake);
	}
	if (q)
		json_object_put(q);
	return out;
}
} /* namespace */

} /* namespace tidal::plugin::agents */

using namespace tidal::plugin;
using namespace tidal::plugin::agents;

extern "C" char *tidal_agent_request(const char *request, uint32_t uid,
				     int admin, const char *peer_host,
				     const char **refused)
{
	try {
		bool mine = false, wake_cycle = false;
		const char *why = nullptr;
		std::string out = handle(request ? request : "", uid,
					 admin != 0, peer_host, &mine, &why,
					 &wake_cycle);
		if (refused)
			*refused = why;
		/* After handle() let go of the registry's lock. */
		if (wake_cycle)
			if (void (*wake)(void) = awaited_ack_wake.load())
				wake();
		return mine ? c_string(out) : nullptr;
	} catch (...) {
		return internal_error_reply();
	}
}

extern "C" void tidal_agent_on_awaited_ack(void (*wake)(void))
{
	awaited_ack_wake.store(wake);
}
