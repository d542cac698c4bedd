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
 *                   held:[{job, step, path}], ckpt_free_bytes}
 *                                        -> {ok, commands:[{id, op, job}],
 *                                            keep:[{job, step}]}
 *                   an unknown node gets {ok:false, register:true}
 *   node_ack       {node, id, job, ok, step, path, bytes, ms, error}
 *   ckpt_where     {job}                 -> {ok, node, addr, step, path,
 *                                            holders:[{node, addr, step}]}
 *   job_plan       {job}                 -> {ok, job, batch[, group_size,
 *                                             share]}
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

#include "plugin/sched/agents.h"
#include "plugin/sched/agents/registry.h"
#include "plugin/sched/bridge.h"
#include "plugin/sched/c_api.h"
#include "proto/json.h"
#include "proto/messages.h"

namespace tidal::plugin::agents
{

namespace
{

/* tidal_agent_on_awaited_ack()'s callback. */
std::atomic<void (*)(void)> awaited_ack_wake{ nullptr };
/* agent_set_owner_lookup()'s and agent_set_plan_lookup()'s. */
std::atomic<int64_t (*)(uint32_t)> owner_lookup{ nullptr };
std::atomic<JobPlanInfo (*)(uint32_t)> plan_lookup{ nullptr };

std::string fail(const std::string &msg, bool reregister = false)
{
	wire::HeartbeatReply r; /* the envelope every failed op shares */
	r.error = msg;
	r.reregister = reregister;
	return wire::encode(r);
}

std::string ok_line()
{
	return wire::to_line(wire::ok_reply());
}

std::string do_register(Registry &r, const wire::NodeRegister &q,
			const std::string &peer, double now)
{
	const std::string &node = q.node;
	AgentInfo a;
	a.addr = q.addr;
	/* ":PORT" (tidald listens on a wildcard): the address it came from. */
	if (a.addr.empty() || a.addr[0] == ':')
		a.addr = peer + a.addr;
	/* Saved with the checkpoint locations as one word (state lines). */
	if (!state_word(a.addr, 255) || a.addr.find(':') == std::string::npos)
		return fail("node_register: \"addr\" must be HOST:PORT, "
			    "at most 255 characters, no spaces (got '" +
			    a.addr + "')");
	a.version = q.agent_version;
	a.ckpt_dir = q.ckpt_dir;
	a.ckpt_free = q.ckpt_free_bytes;
	a.heartbeat_s = std::max(0.2, q.heartbeat_s);
	a.topology = q.topology;
	a.fabric = q.fabric;
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
	return ok_line();
}

std::string do_heartbeat(Registry &r, const wire::NodeHeartbeat &q, double now)
{
	const std::string &node = q.node;
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
	a.ckpt_free = q.ckpt_free_bytes.value_or(a.ckpt_free);
	a.ckpt_error = q.ckpt_error.value_or(a.ckpt_error);
	a.heartbeat_s = std::max(0.2, q.heartbeat_s.value_or(a.heartbeat_s));
	std::vector<uint32_t> here;
	for (const wire::JobReport &e : q.jobs) {
		uint32_t job = (uint32_t)e.job;
		here.push_back(job);
		JobInfo &j = r.jobs[job];
		/* Every node of a job reports it, but only node 0's launcher
		 * (rank 0) has its progress: the others' reports do not
		 * replace that one while it is fresh. */
		bool progress = e.status.it_s > 0 || e.status.step > 0;
		if (progress || j.status_node == node ||
		    now - j.status_seen > kStatusFresh) {
			j.status = e.status;
			j.has_status = true;
			j.status_node = node;
			j.status_seen = now;
		}
		j.seen = now;
		const wire::CkptRef &lc = e.status.last_ckpt;
		if (lc.step && path_ok(lc.path))
			saw_ckpt(r, job, node, lc.step, lc.path, now);
	}
	/* Copies fetched here of jobs that run elsewhere (or nowhere): a
	 * holder as any other, for the next fetch's ckpt_where. */
	for (const wire::HeldCkpt &h : q.held) {
		uint32_t job = (uint32_t)h.job;
		if (!path_ok(h.ckpt.path))
			continue;
		bool known = false;
		if (auto ji = r.jobs.find(job); ji != r.jobs.end()) {
			auto hi = ji->second.held.find(node);
			known = hi != ji->second.held.end() &&
				hi->second.step >= h.ckpt.step;
		}
		saw_ckpt(r, job, node, h.ckpt.step, h.ckpt.path, now);
		if (!known)
			note(r, job, now,
			     "checkpoint step " + std::to_string(h.ckpt.step) +
				     " copied to " + node);
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
std::string do_ack(Registry &r, const wire::NodeAck &q, double now,
		   bool *awaited)
{
	const std::string &node = q.node;
	uint64_t id = q.id;
	bool ok = q.ok;
	/* An id nobody waits for any more (called off, or timed out): its
	 * checkpoint still counts, nothing else is kept. */
	*awaited = r.commands.count(id) != 0;
	Command gone, &c = *awaited ? r.commands[id] : gone;
	c.id = id;
	c.job = q.job ? (uint32_t)q.job : c.job;
	c.node = node;
	c.state = ok ? 1 : -1;
	c.step = q.ckpt.step;
	c.path = q.ckpt.path;
	c.error = q.error;
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
			      (double)q.bytes / 1e6, q.ms, c.path.c_str());
	} else {
		std::snprintf(msg, sizeof(msg), "%s on %s failed: %s",
			      c.op.empty() ? "command" : c.op.c_str(),
			      node.c_str(), c.error.c_str());
	}
	note(r, c.job, now, msg);
	logl(r, "job " + std::to_string(c.job) + ": agent " + node +
			" acked command " + std::to_string(id) + ": " + msg);
	return ok_line();
}

/* UID: the job's owner (the engine's last cycle), -1 if unknown; tidald
 * lets only the owner (or root) copy a checkpoint. */
std::string do_where(Registry &r, const wire::CkptWhere &q, int64_t uid)
{
	uint32_t job = (uint32_t)q.job;
	auto it = r.jobs.find(job);
	if (it == r.jobs.end() || it->second.step == 0)
		return fail("no checkpoint of job " + std::to_string(job) +
			    " is known to sched/tidal");
	const JobInfo &j = it->second;
	wire::CkptWhereReply o;
	o.ok = true;
	o.job = job;
	o.newest = { j.node, j.addr, j.step };
	o.path = j.path;
	o.uid = uid;
	/* Every node known to hold one, newest first: a fetch asks each
	 * what it holds now and copies from the newest reachable. */
	for (const auto &[n, h] : j.held)
		o.holders.push_back({ n, h.addr, h.step });
	std::stable_sort(
		o.holders.begin(), o.holders.end(),
		[](const auto &a, const auto &b) { return a.step > b.step; });
	return wire::encode(o);
}

/* Decode Q as a T and run DO on it, or the error naming OP. */
template <typename T, typename F>
std::string typed(json_object *q, const std::string &op, F &&run)
{
	T m;
	std::string err;
	if (!wire::decode(q, &m, &err))
		return fail(op + ": " + err);
	return run(m);
}

/* *WAKE: an ack came in that a resize waits for. */
std::string handle(const char *request, uint32_t uid, bool admin,
		   const char *peer, bool *mine, const char **refused,
		   bool *wake)
{
	json_object *q = wire::parse_object(request);
	std::string op = wire::get_string(q, "op");
	*mine = op == "node_register" || op == "node_heartbeat" ||
		op == "node_ack" || op == "ckpt_where" || op == "job_plan";
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
		int64_t job, owner = -1;
		JobPlanInfo plan;
		auto lookup = owner_lookup.load();
		bool has_job = wire::get_integer_in(q, "job", 1,
						    wire::kMaxJobId, &job) > 0;
		if (op == "ckpt_where" && lookup && has_job)
			owner = lookup((uint32_t)job);
		auto plookup = plan_lookup.load();
		if (op == "job_plan" && plookup && has_job)
			plan = plookup((uint32_t)job);
		Registry &r = reg();
		std::lock_guard<std::mutex> g(r.mu);
		std::string node = wire::get_string(q, "node");
		double now = wall_now();
		if (op == "ckpt_where")
			out = typed<wire::CkptWhere>(q, op, [&](auto &m) {
				return do_where(r, m, owner);
			});
		else if (op == "job_plan")
			out = typed<wire::JobPlan>(q, op, [&](auto &m) {
				if (!m.job)
					return fail("job_plan: \"job\" must be "
						    "a job id > 0");
				wire::JobPlanReply o;
				o.ok = true;
				o.job = m.job;
				o.batch = std::max<int64_t>(0, plan.batch);
				if (plan.group_size >= 1 &&
				    plan.group_size <= 4)
					o.group_size = plan.group_size;
				o.share = plan.share;
				return wire::encode(o);
			});
		else if (!state_word(node, 128))
			out = fail(op + ": \"node\" must be a node name (1 "
					"to 128 characters, no spaces)");
		else if (op == "node_register")
			out = typed<wire::NodeRegister>(q, op, [&](auto &m) {
				return do_register(r, m, peer ? peer : "", now);
			});
		else if (op == "node_heartbeat")
			out = typed<wire::NodeHeartbeat>(q, op, [&](auto &m) {
				return do_heartbeat(r, m, now);
			});
		else
			out = typed<wire::NodeAck>(q, op, [&](auto &m) {
				return do_ack(r, m, now, wake);
			});
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

void tidal::plugin::agent_set_owner_lookup(int64_t (*lookup)(uint32_t))
{
	owner_lookup.store(lookup);
}

void tidal::plugin::agent_set_plan_lookup(JobPlanInfo (*lookup)(uint32_t))
{
	plan_lookup.store(lookup);
}

extern "C" void tidal_agent_on_awaited_ack(void (*wake)(void))
{
	awaited_ack_wake.store(wake);
}
