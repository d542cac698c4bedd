/*
 * agents.cc - sched/tidal's registry of node agents (tidald), the
 * commands queued for them and where each job's newest checkpoint is.
 *
 * Two threads touch it, so one mutex guards everything here (taken after
 * the engine's, never before it):
 *
 *   ctl thread (ctl_server.c)   node_register, node_heartbeat, node_ack,
 *                               ckpt_where; tidalctl's records
 *   plugin thread (resize.c,    tidal_agent_live/command/ack/note, the
 *    state.c)                   state lines
 *
 * The wire (one request per MUNGE-authenticated connection, see
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
 * A command goes out with the next heartbeat reply of its node, and again
 * after the agent registers anew (a restarted tidald); its ack (or
 * CheckpointTimeout, resize.c) ends it.  Checkpoint locations come
 * from acks and from the last_ckpt the launchers report in heartbeats, and
 * are saved with the plugin state (state.c), as are unanswered commands.
 *
 * A recorded location must stay true while the trainer goes on writing
 * and rotating checkpoints: tidald pins a checkpoint before it reports it
 * (trainer/checkpoint.h, nodeagent/pins.cc), and the heartbeat reply's
 * "keep" names the one the plugin's state on disk holds for that node, so
 * that tidald releases only checkpoints that no saved record, and thus
 * no restarted slurmctld, can name.  ckpt_where names
 * every node known to hold one (newest first), and the fetching tidald asks
 * each what it holds now (nodeagent/fetch.cc): a step recorded here is a
 * lower bound, never the only file that will do.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "plugin/sched/agents.h"

#include <json.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "plugin/sched/bridge.h"
#include "plugin/sched/c_api.h"
#include "plugin/sched/engine_state.h"
#include "proto/json.h"

namespace tidal::plugin
{

namespace
{

constexpr size_t kStoryLines = 16;  /* per job */
constexpr size_t kJobsKept = 10000; /* checkpoint locations and stories */
constexpr double kStatusFresh = 10; /* s a job's progress report stands */
constexpr size_t kHoldersKept = 8;  /* nodes remembered per job */

struct AgentInfo {
	std::string addr, version, ckpt_dir;
	std::string topology = "{}"; /* JSON as sent */
	std::string fabric;	     /* its fabric report (JSON), or "" */
	uint64_t ckpt_free = 0;
	double heartbeat_s = 10;
	double registered = 0, last_seen = 0;
	int registrations = 0;
};

struct Command {
	uint64_t id = 0;
	std::string node, op;
	uint32_t job = 0;
	long issued = 0; /* s, whole: as saved */
	bool sent = false;
	int state = 0; /* 0 waiting, 1 ok, -1 failed */
	uint64_t step = 0;
	std::string path, error;
};

/* A job's newest checkpoint known on one node. */
struct Held {
	std::string addr, path;
	uint64_t step = 0;
	long when = 0;	     /* s, whole: as saved */
	uint64_t dumped = 0; /* step in the last state dump */
	uint64_t saved = 0;  /* step in the state on disk */
};

struct JobInfo {
	/* Newest checkpoint known (step 0 = none): always the newest of
	 * HELD (newest()), so that it is what a reload of the saved held
	 * lines makes of them. */
	std::string node, addr, path;
	uint64_t step = 0;
	long when = 0;
	std::map<std::string, Held> held; /* by node */
	std::deque<std::string> story;
	std::string status; /* last heartbeat entry, JSON */
	std::string status_node;
	double status_seen = 0;
	double seen = 0; /* last heard of (status, story, checkpoint) */
};

struct Registry {
	std::mutex mu;
	std::map<std::string, AgentInfo> agents;
	std::map<uint64_t, Command> commands;
	std::map<uint32_t, JobInfo> jobs;
	uint64_t next_id = 1;
	std::string log;
	bool awaited_ack = false; /* a resize waits on it: cycle now */
};

Registry &reg()
{
	static Registry r;
	return r;
}

/* tidal_agent_on_awaited_ack()'s callback. */
std::atomic<void (*)(void)> awaited_ack_wake{ nullptr };

/* Whether an awaited ack came in since the last call (and forget it). */
bool take_awaited_ack()
{
	Registry &r = reg();
	std::lock_guard<std::mutex> g(r.mu);
	bool w = r.awaited_ack;
	r.awaited_ack = false;
	return w;
}

double wall_now()
{
	return (double)std::time(nullptr);
}

/* T as whole seconds, within what a state line's %ld can hold. */
long whole_secs(double t)
{
	if (!(t > -1e18))
		return t < 0 ? (long)-1e18 : 0; /* -inf, NaN */
	return t < 1e18 ? (long)t : (long)1e18;
}

/* A word for a state line (node name, address): nothing that its %s
 * reading would split or cut, at most MAX bytes. */
bool state_word(const std::string &s, size_t max)
{
	if (s.empty() || s.size() > max)
		return false;
	for (unsigned char c : s)
		if (c <= ' ' || c == 0x7f)
			return false;
	return true;
}

/* A checkpoint path as tidald reports it: absolute (or none), on one
 * line of the state file. */
bool path_ok(const std::string &p)
{
	if (!p.empty() && p[0] != '/')
		return false;
	for (unsigned char c : p)
		if (c < ' ' || c == 0x7f)
			return false;
	return true;
}

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

void logl(Registry &r, const std::string &s)
{
	r.log += s + "\n";
}

std::string clock_str(double t)
{
	char b[16];
	time_t tt = (time_t)t;
	struct tm tm;
	localtime_r(&tt, &tm);
	std::strftime(b, sizeof(b), "%H:%M:%S", &tm);
	return b;
}

/* Keep at most kJobsKept jobs: the one heard of longest ago goes. */
void trim(Registry &r)
{
	while (r.jobs.size() > kJobsKept) {
		auto old = r.jobs.begin();
		for (auto it = r.jobs.begin(); it != r.jobs.end(); ++it)
			if (it->second.seen < old->second.seen)
				old = it;
		r.jobs.erase(old);
	}
}

void note(Registry &r, uint32_t job, double now, const std::string &text)
{
	JobInfo &j = r.jobs[job];
	j.story.push_back(clock_str(now) + " " + text);
	while (j.story.size() > kStoryLines)
		j.story.pop_front();
	j.seen = now;
	trim(r);
}

/* The job's newest checkpoint from its holders: the highest step; of
 * equal ones the latest reported, then the first node by name. */
void newest(JobInfo &j)
{
	const Held *best = nullptr;
	const std::string *name = nullptr;
	for (const auto &[n, h] : j.held)
		if (h.step && (!best || h.step > best->step ||
			       (h.step == best->step && h.when > best->when))) {
			best = &h;
			name = &n;
		}
	if (!best) {
		j.node.clear(), j.addr.clear(), j.path.clear();
		j.step = 0, j.when = 0;
		return;
	}
	j.node = *name;
	j.addr = best->addr;
	j.step = best->step;
	j.path = best->path;
	j.when = best->when;
}

/* Remember that NODE (at ADDR) holds JOB's checkpoint STEP at PATH: as
 * that node's newest, and as the job's newest if it is. */
void hold(JobInfo &j, const std::string &node, const std::string &addr,
	  uint64_t step, const std::string &path, long when)
{
	Held &h = j.held[node];
	if (step >= h.step) {
		h.addr = addr.empty() ? h.addr : addr;
		h.step = step;
		h.path = path;
		h.when = when;
	}
	while (j.held.size() > kHoldersKept) { /* the oldest goes */
		auto old = j.held.begin();
		for (auto it = j.held.begin(); it != j.held.end(); ++it)
			if (it->second.step < old->second.step)
				old = it;
		j.held.erase(old);
	}
	newest(j);
}

void saw_ckpt(Registry &r, uint32_t job, const std::string &node, uint64_t step,
	      const std::string &path, double now)
{
	if (step == 0)
		return;
	JobInfo &j = r.jobs[job];
	auto a = r.agents.find(node);
	hold(j, node, a != r.agents.end() ? a->second.addr : "", step, path,
	     whole_secs(now));
	j.seen = now;
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
	auto it = r.agents.find(node);
	if (it == r.agents.end())
		return fail("node " + node +
				    " is not registered (slurmctld "
				    "restarted?): register first",
			    true);
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
	json_object *o = reply(true), *cmds = json_object_new_array();
	for (auto &[id, c] : r.commands) {
		if (c.node != node || c.sent || c.state)
			continue;
		json_object *e = json_object_new_object();
		json_object_object_add(e, "id",
				       json_object_new_int64((int64_t)id));
		json_object_object_add(e, "op",
				       json_object_new_string(c.op.c_str()));
		json_object_object_add(e, "job", json_object_new_int64(c.job));
		json_object_array_add(cmds, e);
		c.sent = true;
		note(r, c.job, now,
		     c.op + " delivered to " + node + "'s tidald");
	}
	json_object_object_add(o, "commands", cmds);
	/* What this node must keep of the jobs running on it: the step the
	 * saved state records as its newest (its trainer may rotate it away
	 * otherwise, and after a restart this record would name a file that
	 * is gone).  Older ones it may release. */
	json_object *keep = json_object_new_array();
	for (uint32_t job : here) {
		auto ji = r.jobs.find(job);
		if (ji == r.jobs.end())
			continue;
		auto h = ji->second.held.find(node);
		if (h == ji->second.held.end() || !h->second.saved)
			continue;
		json_object *e = json_object_new_object();
		json_object_object_add(e, "job", json_object_new_int64(job));
		json_object_object_add(
			e, "step", json_object_new_int64((int64_t)h->second.saved));
		json_object_array_add(keep, e);
	}
	json_object_object_add(o, "keep", keep);
	return wire::to_line(o);
}

std::string do_ack(Registry &r, json_object *q, const std::string &node,
		   double now)
{
	uint64_t id = (uint64_t)wire::get_integer(q, "id");
	uint32_t job = (uint32_t)wire::get_integer(q, "job");
	json_object *okv;
	bool ok = json_object_object_get_ex(q, "ok", &okv) &&
		  json_object_get_boolean(okv);
	/* An id nobody waits for any more (called off, or timed out): its
	 * checkpoint still counts, nothing else is kept. */
	bool awaited = r.commands.count(id) != 0;
	Command gone, &c = awaited ? r.commands[id] : gone;
	r.awaited_ack = r.awaited_ack || awaited;
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

std::string handle(const char *request, uint32_t uid, bool admin,
		   const char *peer, bool *mine, const char **refused)
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
			out = do_ack(r, q, node, now);
	}
	if (q)
		json_object_put(q);
	return out;
}

std::string human_bytes(uint64_t b)
{
	const char *unit = "KMGTP";
	double v = b / 1024.0;
	int u = 0;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	char s[32];
	std::snprintf(s, sizeof(s), "%.1f%c", v, unit[u]);
	return s;
}

void put(json_object *rec, const char *k, const std::string &v)
{
	json_object_object_add(
		rec, k, json_object_new_string(v.empty() ? "None" : v.c_str()));
}

} /* namespace */

void agent_node_fields(const std::string &node, json_object *rec, double now)
{
	Registry &r = reg();
	std::lock_guard<std::mutex> g(r.mu);
	auto it = r.agents.find(node);
	if (it == r.agents.end()) {
		put(rec, "Agent", "");
		return;
	}
	const AgentInfo &a = it->second;
	double age = std::max(0.0, wall_now() - a.last_seen);
	put(rec, "Agent", age <= 3 * a.heartbeat_s ? "UP" : "DOWN");
	put(rec, "HeartbeatAge", std::to_string((long)std::lround(age)) + "s");
	put(rec, "CkptFree", human_bytes(a.ckpt_free));
	json_object *t = json_tokener_parse(a.topology.c_str()), *v;
	std::string hcas, numa;
	std::vector<std::string> names;
	int gpus = -1;
	if (t && json_object_object_get_ex(t, "hcas", &v) &&
	    json_object_get_type(v) == json_type_array)
		for (size_t i = 0; i < json_object_array_length(v); i++)
			names.push_back(wire::get_str(
				json_object_array_get_idx(v, i), "name"));
	std::sort(names.begin(), names.end()); /* hwloc's order is PCI's */
	for (const std::string &h : names)
		hcas += (hcas.empty() ? "" : ",") + h;
	if (t && json_object_object_get_ex(t, "numa_nodes", &v) &&
	    json_object_get_type(v) == json_type_array)
		numa = std::to_string(json_object_array_length(v));
	if (t && json_object_object_get_ex(t, "gpus", &v) &&
	    json_object_get_type(v) == json_type_array) {
		gpus = (int)json_object_array_length(v);
		numa += gpus ? " (GPU:NUMA" : "";
		for (int i = 0; i < gpus; i++)
			numa += (i ? "," : " ") +
				std::to_string(wire::get_integer(
					json_object_array_get_idx(v, i), "numa",
					-1));
		numa += gpus ? ")" : "";
	}
	if (t)
		json_object_put(t);
	put(rec, "HCAs", hcas);
	put(rec, "TopoGPUs", gpus < 0 ? "" : std::to_string(gpus));
	put(rec, "NUMA", numa);
}

std::vector<std::string> agent_fabric_reports()
{
	Registry &r = reg();
	std::lock_guard<std::mutex> g(r.mu);
	std::vector<std::string> out;
	for (const auto &[node, a] : r.agents)
		if (!a.fabric.empty() &&
		    std::find(out.begin(), out.end(), a.fabric) == out.end())
			out.push_back(a.fabric);
	return out;
}

void agent_job_fields(uint32_t job, json_object *rec, bool full)
{
	Registry &r = reg();
	std::lock_guard<std::mutex> g(r.mu);
	auto it = r.jobs.find(job);
	if (it == r.jobs.end()) {
		if (full)
			put(rec, "Checkpoint", "");
		return;
	}
	const JobInfo &j = it->second;
	if (full || j.step)
		put(rec, "Checkpoint",
		    j.step ? "step " + std::to_string(j.step) + " on " +
				     j.node + " " + j.path
			   : "");
	if (full && !j.status.empty()) {
		json_object *s = json_tokener_parse(j.status.c_str());
		char buf[160];
		std::snprintf(buf, sizeof(buf),
			      "step %lld, %.3g it/s, loss %.4g, %s (%s)",
			      (long long)wire::get_integer(s, "step"),
			      wire::get_num(s, "it_s"),
			      wire::get_num(s, "loss"),
			      wire::get_str(s, "state").c_str(),
			      j.status_node.c_str());
		put(rec, "Training", buf);
		if (s)
			json_object_put(s);
	}
	if (full && !j.story.empty()) {
		std::string story;
		for (const std::string &l : j.story)
			story += (story.empty() ? "" : "; ") + l;
		put(rec, "ResizeStory", story);
	}
}

bool agent_job_progress(uint32_t job, double now, double max_age,
			JobProgress *p)
{
	Registry &r = reg();
	std::lock_guard<std::mutex> g(r.mu);
	auto it = r.jobs.find(job);
	if (it == r.jobs.end() || it->second.status.empty() ||
	    now - it->second.status_seen > max_age)
		return false;
	json_object *s = json_tokener_parse(it->second.status.c_str());
	if (!s)
		return false;
	bool ok = wire::get_str(s, "state") == "running" &&
		  wire::get_num(s, "it_s") > 0;
	if (ok) {
		p->step = (double)wire::get_integer(s, "step");
		p->it_s = wire::get_num(s, "it_s");
		json_object *st;
		if (json_object_object_get_ex(s, "stages", &st) && st) {
			p->stages[0] = wire::get_num(st, "data") / 1000;
			p->stages[1] = wire::get_num(st, "compute") / 1000;
			p->stages[2] = wire::get_num(st, "comm") / 1000;
		}
	}
	json_object_put(s);
	return ok;
}

} /* namespace tidal::plugin */

using namespace tidal::plugin;

extern "C" char *tidal_agent_request(const char *request, uint32_t uid,
				     int admin, const char *peer_host,
				     const char **refused)
{
	try {
		bool mine = false;
		const char *why = nullptr;
		std::string out = handle(request ? request : "", uid,
					 admin != 0, peer_host, &mine, &why);
		if (refused)
			*refused = why;
		if (mine && take_awaited_ack())
			if (void (*wake)(void) = awaited_ack_wake.load())
				wake();
		return mine ? c_string(out) : nullptr;
	} catch (...) {
		return internal_error_reply();
	}
}

extern "C" char *tidal_agent_log_drain(void)
{
	try {
		Registry &r = reg();
		std::lock_guard<std::mutex> g(r.mu);
		if (r.log.empty())
			return nullptr;
		char *p = c_string(r.log);
		r.log.clear();
		return p;
	} catch (...) { /* nothing thrown into slurmctld */
		return nullptr;
	}
}

extern "C" void tidal_agent_on_awaited_ack(void (*wake)(void))
{
	awaited_ack_wake.store(wake);
}

extern "C" int tidal_agent_live(const char *node, double now)
{
	try {
		Registry &r = reg();
		std::lock_guard<std::mutex> g(r.mu);
		auto it = r.agents.find(node ? node : "");
		return it != r.agents.end() &&
		       now - it->second.last_seen <= 3 * it->second.heartbeat_s;
	} catch (...) { /* nothing thrown into slurmctld */
		return 0;
	}
}

extern "C" uint64_t tidal_agent_command(const char *node, const char *op,
					uint32_t job, double now)
{
	try {
		Registry &r = reg();
		std::lock_guard<std::mutex> g(r.mu);
		Command c;
		c.id = r.next_id++;
		c.node = node;
		c.op = op;
		c.job = job;
		c.issued = whole_secs(now);
		r.commands[c.id] = c;
		note(r, job, now, c.op + " queued for " + c.node + "'s tidald");
		return c.id;
	} catch (...) {
		return 0;
	}
}

extern "C" int tidal_agent_ack(uint64_t id, uint64_t *step, char *path,
			       size_t path_len, char *err, size_t err_len)
{
	return guarded(0, [&] {
		Registry &r = reg();
		std::lock_guard<std::mutex> g(r.mu);
		auto it = r.commands.find(id);
		if (it == r.commands.end() || it->second.state == 0)
			return 0;
		const Command &c = it->second;
		*step = c.step;
		std::snprintf(path, path_len, "%s", c.path.c_str());
		std::snprintf(err, err_len, "%s", c.error.c_str());
		int st = c.state;
		r.commands.erase(it); /* answered: the caller has it now */
		return st;
	});
}

extern "C" void tidal_agent_cancel(uint64_t id)
{
	guarded([id] {
		Registry &r = reg();
		std::lock_guard<std::mutex> g(r.mu);
		r.commands.erase(id);
	});
}

extern "C" int tidal_agent_withdraw(uint64_t id)
{
	/* A lock that cannot be taken: the command may be out already. */
	return guarded(0, [id] {
		Registry &r = reg();
		std::lock_guard<std::mutex> g(r.mu);
		auto it = r.commands.find(id);
		if (it != r.commands.end() &&
		    (it->second.sent || it->second.state))
			return 0;
		r.commands.erase(id);
		return 1;
	});
}

extern "C" uint64_t tidal_agent_checkpoint_step(uint32_t job)
{
	try {
		Registry &r = reg();
		std::lock_guard<std::mutex> g(r.mu);
		auto it = r.jobs.find(job);
		return it != r.jobs.end() ? it->second.step : 0;
	} catch (...) {
		return 0;
	}
}

extern "C" void tidal_agent_note(uint32_t job, double now, const char *text)
{
	try {
		Registry &r = reg();
		std::lock_guard<std::mutex> g(r.mu);
		note(r, job, now, text ? text : "");
	} catch (...) {
	}
}

extern "C" char *tidal_agent_state_dump(void)
{
	try {
		Registry &r = reg();
		std::lock_guard<std::mutex> g(r.mu);
		std::string s = "agentseq " + std::to_string(r.next_id) + "\n";
		/* One line per node that holds one; the newest is the
		 * newest of them.  Node and address are single words
		 * (checked when they came in), the path the rest of the
		 * line (no newline in it, checked too). */
		for (auto &[job, j] : r.jobs)
			for (auto &[node, h] : j.held) {
				h.dumped = h.step;
				if (!h.step)
					continue;
				s += "ckpt " + std::to_string(job) + " " +
				     std::to_string(h.step) + " " +
				     std::to_string(h.when) + " " + node + " " +
				     (h.addr.empty() ? "-" : h.addr) + " " +
				     h.path + "\n";
			}
		for (const auto &[id, c] : r.commands) {
			if (c.state)
				continue;
			s += "agentcmd " + std::to_string(id) + " " +
			     std::to_string(c.job) + " " +
			     std::to_string(c.issued) + " " + c.node + " " +
			     c.op + "\n";
		}
		return c_string(s);
	} catch (...) { /* nothing thrown into slurmctld */
		return nullptr;
	}
}

extern "C" void tidal_agent_clear(void)
{
	guarded([] {
		Registry &r = reg();
		std::lock_guard<std::mutex> g(r.mu);
		r.agents.clear();
		r.commands.clear();
		r.jobs.clear();
		r.next_id = 1;
		r.log.clear();
		r.awaited_ack = false;
	});
}

extern "C" void tidal_agent_state_saved(void)
{
	try {
		Registry &r = reg();
		std::lock_guard<std::mutex> g(r.mu);
		for (auto &[job, j] : r.jobs)
			for (auto &[node, h] : j.held)
				h.saved = h.dumped;
	} catch (...) { /* nothing thrown into slurmctld */
	}
}

extern "C" int tidal_agent_state_line(const char *l)
{
	try {
		Registry &r = reg();
		std::lock_guard<std::mutex> g(r.mu);
		unsigned long long a, step;
		unsigned job;
		long when;
		char node[129], addr[256], op[32];
		int used = 0;
		if (std::sscanf(l, "agentseq %llu", &a) == 1) {
			r.next_id = std::max<uint64_t>(r.next_id, a);
			return 1;
		}
		if (std::sscanf(l, "ckpt %u %llu %ld %128s %255s %n", &job,
				&step, &when, node, addr, &used) == 5 &&
		    used > 0) {
			JobInfo &j = r.jobs[job];
			hold(j, node, std::strcmp(addr, "-") ? addr : "", step,
			     l + used, when);
			Held &h = j.held[node];
			h.saved = h.dumped = h.step; /* read from disk */
			return 1;
		}
		if (std::sscanf(l, "agentcmd %llu %u %ld %128s %31s", &a, &job,
				&when, node, op) == 5) {
			Command c;
			c.id = a;
			c.job = job;
			c.issued = when;
			c.node = node;
			c.op = op;
			r.commands[a] =
				c; /* sent again: tidald ignores repeats */
			r.next_id = std::max<uint64_t>(r.next_id, a + 1);
			return 1;
		}
		return 0;
	} catch (...) { /* nothing thrown into slurmctld */
		return 0;
	}
}
