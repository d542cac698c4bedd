/*
 * persist.cc - the registry's lines of the plugin state (state.c):
 *
 *   agentseq N                              the next command id
 *   ckpt JOB STEP WHEN NODE ADDR|- PATH     a node holds a checkpoint
 *   agentcmd ID JOB ISSUED NODE OP          an unanswered command
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "plugin/sched/agents/registry.h"
#include "plugin/sched/bridge.h"
#include "plugin/sched/c_api.h"

using namespace tidal::plugin;
using namespace tidal::plugin::agents;

extern "C" char *tidal_agent_state_dump(void)
{
	return with_registry((char *)nullptr, [&](Registry &r) -> char * {
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
	});
}

extern "C" void tidal_agent_clear(void)
{
	with_registry([&](Registry &r) {
		r.agents.clear();
		r.commands.clear();
		r.jobs.clear();
		r.next_id = 1;
		r.log.clear();
	});
}

extern "C" void tidal_agent_state_saved(void)
{
	with_registry([&](Registry &r) {
		for (auto &[job, j] : r.jobs)
			for (auto &[node, h] : j.held)
				h.saved = h.dumped;
	});
}

extern "C" int tidal_agent_state_line(const char *l)
{
	return with_registry(0, [&](Registry &r) -> int {
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
	});
}
