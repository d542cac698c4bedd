/*
 * registry.h - what the files of plugin/sched/agents/ share: sched/tidal's
 * registry of node agents (tidald), the commands queued for them, and
 * where each job's newest checkpoint is, with its story.
 *
 *   registry.cc   the registry, its lock, the checkpoint directory and the
 *                 job stories; tidal_agent_live, _note, _checkpoint_step,
 *                 _log_drain
 *   node_ops.cc   the agents' ops on the wire (node_register,
 *                 node_heartbeat, node_ack, ckpt_where): tidal_agent_request
 *   commands.cc   checkpoint and checkpoint_stop queued for an agent and
 *                 their acks, for resize.c: tidal_agent_command, _ack,
 *                 _cancel, _withdraw
 *   persist.cc    the registry's lines of the plugin state (state.c)
 *   show.cc       tidalctl's columns for nodes and jobs (agents.h)
 *
 * Two threads touch it, so one mutex guards everything here (taken after
 * the engine's, never before it):
 *
 *   ctl thread (ctl_server.c)   node_register, node_heartbeat, node_ack,
 *                               ckpt_where; tidalctl's records
 *   plugin thread (resize.c,    tidal_agent_live/command/ack/note, the
 *    state.c)                   state lines
 *
 * Nothing here is seen outside these files: the plugin's C side calls the
 * tidal_agent_* entry points of bridge.h, the engine those of agents.h.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>

#include "plugin/sched/c_api.h"
#include "proto/messages.h"

namespace tidal::plugin::agents
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
	std::string ckpt_error; /* "" = writable, as last heartbeated */
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
	wire::TrainStatus status; /* last heartbeat entry */
	bool has_status = false;
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
};

/* The one registry; its MU guards all of it. */
Registry &reg();

/* F(the registry) with its lock held, for the C entry points: FALLBACK if
 * anything throws, for nothing may unwind into slurmctld. */
template <class R, class F> R with_registry(R fallback, F &&f) noexcept
{
	return guarded(fallback, [&]() -> R {
		Registry &r = reg();
		std::lock_guard<std::mutex> g(r.mu);
		return f(r);
	});
}
template <class F> void with_registry(F &&f) noexcept
{
	guarded([&] {
		Registry &r = reg();
		std::lock_guard<std::mutex> g(r.mu);
		f(r);
	});
}

double wall_now();
/* T as whole seconds, within what a state line's %ld can hold. */
long whole_secs(double t);
/* A word for a state line (node name, address): nothing that its %s
 * reading would split or cut, at most MAX bytes. */
bool state_word(const std::string &s, size_t max);
/* A checkpoint path as tidald reports it: absolute (or none), on one
 * line of the state file. */
bool path_ok(const std::string &p);
/* A line for slurmctld's log (tidal_agent_log_drain). */
void logl(Registry &r, const std::string &s);
/* A line of JOB's story, stamped with NOW's clock time. */
void note(Registry &r, uint32_t job, double now, const std::string &text);
/* J's newest checkpoint, from its holders: the highest step; of equal
 * ones the latest reported, then the first node by name. */
void newest(JobInfo &j);
/* Remember that NODE (at ADDR) holds JOB's checkpoint STEP at PATH: as
 * that node's newest, and as the job's newest if it is. */
void hold(JobInfo &j, const std::string &node, const std::string &addr,
	  uint64_t step, const std::string &path, long when);
/* NODE reported JOB's checkpoint STEP at PATH (an ack, a heartbeat). */
void saw_ckpt(Registry &r, uint32_t job, const std::string &node, uint64_t step,
	      const std::string &path, double now);
/* Keep at most kJobsKept jobs: the one heard of longest ago goes. */
void trim(Registry &r);

} /* namespace tidal::plugin::agents */
