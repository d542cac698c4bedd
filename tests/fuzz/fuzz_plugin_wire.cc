/*
 * fuzz_plugin_wire.cc - libFuzzer target for what sched/tidal answers on
 * its listener (ctl_server.c hands each request line to these): node
 * agents' node_register, node_heartbeat, node_ack, ckpt_where and job_plan
 * (plugin/sched/agents/node_ops.cc), and tidalctl's show/explain/set
 * (plugin/sched/ctl_engine.cc).
 *
 * Input: one request per line.  A line starting with '!' comes from uid
 * 1001, not an admin, with PrivateData=jobs; others from root.  A line
 * reading "save" marks the agents' state as saved (the heartbeat reply's
 * keep list names only saved checkpoints).  Before the lines, two
 * checkpoint_stop commands are queued (for n1 and n2) as resize.c would;
 * after them, the plugin thread collects their acks.
 *
 * Every reply must be one JSON object on one line with a boolean "ok".
 * Then the agents' state lines (what state.c saves) must load back into an
 * empty registry and dump the same, and each must be an agents/persist.cc line:
 * nothing a node agent sends may break or add a line of the state file.
 * The engine has run one real decide() on a small snapshot (init), so
 * show and explain have jobs to describe.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <json.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "plugin/sched/bridge.h"

static const char kConf[] = "Policy=fifo\nCycleInterval=2\n";

static char *cs(const char *s)
{
	return const_cast<char *>(s);
}

/* One decide on a small cluster: a running job, an elastic one, a rigid
 * one. */
static void decide_once()
{
	static tidal_node_t nodes[2] = {
		{cs("n1"), 0, 4, 8, 64, 256000, -1, 1},
		{cs("n2"), 1, 8, 8, 64, 256000, -1, 1},
	};
	static int alloc_node[1] = {0}, alloc_gpus[1] = {4};
	static tidal_job_t jobs[3] = {};
	jobs[0] = { 10,		 1000,	     cs("train"),
		    cs("alice"), cs("gpu"),  TIDAL_JOB_RUNNING,
		    1700000000,	 1700000100, 3600,
		    0,		 4,	     0,
		    1,		 0,	     0,
		    nullptr,	 0,	     0,
		    0,		 0,	     -1,
		    -1,		 1,	     alloc_node,
		    alloc_gpus };
	jobs[1] = { 11,
		    1001,
		    cs("elastic"),
		    cs("bob"),
		    cs("gpu"),
		    TIDAL_JOB_PENDING,
		    1700000050,
		    0,
		    7200,
		    0,
		    4,
		    0,
		    1,
		    2,
		    8,
		    cs("resnet50"),
		    256,
		    1024,
		    1e5,
		    0,
		    -1,
		    -1,
		    0,
		    nullptr,
		    nullptr };
	jobs[2] = { 12,		 1000,	    cs("rigid"),
		    cs("alice"), cs("gpu"), TIDAL_JOB_PENDING,
		    1700000060,	 0,	    600,
		    0,		 2,	    0,
		    1,		 0,	    0,
		    nullptr,	 0,	    0,
		    0,		 0,	    -1,
		    -1,		 0,	    nullptr,
		    nullptr };
	tidal_snap_t snap = {};
	snap.now = 1700000200;
	snap.n_nodes = 2;
	snap.nodes = nodes;
	snap.n_jobs = 3;
	snap.jobs = jobs;
	tidal_plan_t plan;
	char *msg = nullptr;
	if (tidal_engine_decide(&snap, &plan, &msg))
		std::abort();
	tidal_plan_free(&plan);
}

static void configure()
{
	char *msg = nullptr;
	if (tidal_engine_configure(kConf, "tidal.conf", &msg))
		std::abort();
	std::free(msg);
}

/* What the scheduling thread would be woken for: an awaited ack. */
static unsigned long wakes;
static void wake()
{
	wakes++;
}

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
	configure();
	decide_once();
	tidal_agent_on_awaited_ack(wake);
	return 0;
}

static void check_reply(char *r)
{
	if (!r)
		std::abort();
	size_t n = std::strlen(r);
	if (n == 0 || r[n - 1] != '\n' || std::strchr(r, '\n') != r + n - 1)
		std::abort();
	json_object *o = json_tokener_parse(r), *ok;
	if (!o || json_object_get_type(o) != json_type_object ||
	    !json_object_object_get_ex(o, "ok", &ok) ||
	    json_object_get_type(ok) != json_type_boolean)
		std::abort();
	json_object_put(o);
	std::free(r);
}

static std::vector<std::string> lines_of(const std::string &text)
{
	std::vector<std::string> out;
	size_t at = 0;
	while (at < text.size()) {
		size_t nl = text.find('\n', at);
		if (nl == std::string::npos)
			std::abort(); /* every state line ends in '\n' */
		out.push_back(text.substr(at, nl - at));
		at = nl + 1;
	}
	return out;
}

/* What state.c would save of the agents loads back the same. */
static void check_state_round_trip()
{
	char *a = tidal_agent_state_dump();
	if (!a)
		std::abort();
	std::string first = a;
	std::free(a);
	tidal_agent_clear();
	for (const std::string &l : lines_of(first))
		if (l.find('\r') != std::string::npos ||
		    tidal_agent_state_line(l.c_str()) != 1)
			std::abort();
	char *b = tidal_agent_state_dump();
	if (!b || first != b)
		std::abort();
	std::free(b);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
				      std::size_t size)
{
	std::string text(reinterpret_cast<const char *>(data), size);
	tidal_agent_clear();
	if (std::strcmp(tidal_engine_policy(), "fifo"))
		configure(); /* a "set policy" of an earlier input */
	uint64_t cmd[2] = {
		tidal_agent_command("n1", "checkpoint_stop", 10, 1700000300),
		tidal_agent_command("n2", "checkpoint", 11, 1700000300),
	};
	size_t at = 0;
	while (at < text.size()) {
		size_t nl = text.find('\n', at);
		std::string line = text.substr(
			at, nl == std::string::npos ? std::string::npos : nl - at);
		at = nl == std::string::npos ? text.size() : nl + 1;
		line = line.substr(0, line.find('\0')); /* a C string */
		if (line == "save") {
			std::free(tidal_agent_state_dump());
			tidal_agent_state_saved();
			continue;
		}
		bool user = !line.empty() && line[0] == '!';
		const char *req = line.c_str() + (user ? 1 : 0);
		uint32_t uid = user ? 1001 : 0;
		const char *why = nullptr;
		char *r = tidal_agent_request(req, uid, !user, "192.0.2.9",
					      &why);
		/* A user's node op is always refused. */
		if (r && user && !why)
			std::abort();
		if (!r)
			r = tidal_engine_request(req, uid, !user, user, &why);
		/* A refusal is an error reply. */
		if (why && r && !std::strstr(r, "\"ok\":false"))
			std::abort();
		check_reply(r);
		std::free(tidal_agent_log_drain());
	}
	for (uint64_t id : cmd) {
		uint64_t step = 0;
		char path[64], err[64];
		int st = tidal_agent_ack(id, &step, path, sizeof path, err,
					 sizeof err);
		if (st < -1 || st > 1)
			std::abort();
	}
	(void)tidal_agent_live("n1", 1700000300);
	check_state_round_trip();
	return 0;
}
