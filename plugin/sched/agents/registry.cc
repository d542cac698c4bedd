/*
 * registry.cc - the registry of node agents, its lock, the checkpoint
 * directory and the job stories (see registry.h).
 *
 * Checkpoint locations come from acks and from the last_ckpt the launchers
 * report in heartbeats (node_ops.cc), and are saved with the plugin state
 * (persist.cc).  A recorded location must stay true while the trainer
 * goes on writing and rotating checkpoints: tidald pins a checkpoint
 * before it reports it (node/checkpoint.h, nodeagent/pins.cc), and the
 * heartbeat reply's "keep" names the one the plugin's state on disk holds
 * for that node, so that tidald releases only checkpoints that no saved
 * record, and thus no restarted slurmctld, can name.  ckpt_where names
 * every node known to hold one (newest first), and the fetching tidald
 * asks each what it holds now (nodeagent/fetch.cc): a step recorded here
 * is a lower bound, never the only file that will do.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "plugin/sched/agents/registry.h"

#include <cstdint>
#include <ctime>
#include <string>

#include "plugin/sched/bridge.h"
#include "plugin/sched/c_api.h"

namespace tidal::plugin::agents
{

Registry &reg()
{
	static Registry r;
	return r;
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
} /* namespace tidal::plugin::agents */

using namespace tidal::plugin;
using namespace tidal::plugin::agents;

extern "C" char *tidal_agent_log_drain(void)
{
	return with_registry((char *)nullptr, [&](Registry &r) -> char * {
		if (r.log.empty())
			return nullptr;
		char *p = c_string(r.log);
		r.log.clear();
		return p;
	});
}

extern "C" int tidal_agent_live(const char *node, double now)
{
	return with_registry(0, [&](Registry &r) -> int {
		auto it = r.agents.find(node ? node : "");
		return it != r.agents.end() &&
		       now - it->second.last_seen <= 3 * it->second.heartbeat_s;
	});
}

extern "C" void tidal_agent_counts(int *up, int *down)
{
	*up = *down = 0;
	with_registry([&](Registry &r) {
		double now = wall_now();
		for (const auto &[name, a] : r.agents)
			(now - a.last_seen <= 3 * a.heartbeat_s ? *up : *down)++;
	});
}

extern "C" int tidal_agent_launched(uint32_t job, const char *node, double now)
{
	return with_registry(0, [&](Registry &r) -> int {
		auto j = r.jobs.find(job);
		auto a = r.agents.find(node ? node : "");
		return j != r.jobs.end() && a != r.agents.end() &&
		       j->second.has_status &&
		       j->second.status_node == a->first &&
		       now - j->second.status_seen <= 3 * a->second.heartbeat_s;
	});
}

extern "C" uint64_t tidal_agent_checkpoint_step(uint32_t job)
{
	return with_registry(uint64_t{ 0 }, [&](Registry &r) -> uint64_t {
		auto it = r.jobs.find(job);
		return it != r.jobs.end() ? it->second.step : 0;
	});
}

extern "C" void tidal_agent_note(uint32_t job, double now, const char *text)
{
	with_registry(
		[&](Registry &r) { note(r, job, now, text ? text : ""); });
}
