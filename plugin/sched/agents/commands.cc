/*
 * commands.cc - what resize.c asks of a node's agent (checkpoint,
 * checkpoint_stop) and its answer.  A command goes out with the next
 * heartbeat reply of its node (node_ops.cc), and again after the agent
 * registers anew (a restarted tidald); its ack, or CheckpointTimeout
 * (resize.c), ends it.  Unanswered commands are saved with the plugin
 * state (persist.cc).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cstdint>
#include <cstdio>
#include <string>

#include "plugin/sched/agents/registry.h"
#include "plugin/sched/bridge.h"
#include "plugin/sched/c_api.h"

using namespace tidal::plugin;
using namespace tidal::plugin::agents;

extern "C" uint64_t tidal_agent_command(const char *node, const char *op,
					uint32_t job, double now)
{
	return with_registry(uint64_t{ 0 }, [&](Registry &r) -> uint64_t {
		Command c;
		c.id = r.next_id++;
		c.node = node;
		c.op = op;
		c.job = job;
		c.issued = whole_secs(now);
		r.commands[c.id] = c;
		note(r, job, now, c.op + " queued for " + c.node + "'s tidald");
		return c.id;
	});
}

extern "C" int tidal_agent_ack(uint64_t id, uint64_t *step, char *path,
			       size_t path_len, char *err, size_t err_len)
{
	return with_registry(0, [&](Registry &r) -> int {
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
	with_registry([&](Registry &r) { r.commands.erase(id); });
}

extern "C" int tidal_agent_withdraw(uint64_t id)
{
	/* A lock that cannot be taken: the command may be out already. */
	return with_registry(0, [&](Registry &r) -> int {
		auto it = r.commands.find(id);
		if (it != r.commands.end() &&
		    (it->second.sent || it->second.state))
			return 0;
		r.commands.erase(id);
		return 1;
	});
}
