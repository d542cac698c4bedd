/*
 * interleave.cc - tidald's interleaving groups: the trainers that share a
 * GPU join its group on the local socket and keep the connection; the
 * group's clock (group_clock.h) hands each its turns.
 *
 * One thread per member (the local socket's connection thread): it reads
 * the member's turn_done lines and, under the group's lock, tells the
 * clock, then writes the turns now due to whichever members they are for.
 * A member whose connection closes (done, killed, or its job ended) leaves;
 * the others finish the runs they hold and go on without it.  A group
 * waits for its members up to kLateS after the first came, then goes with
 * those in.  A member that stops without closing (SIGSTOP, a collective
 * waiting on a dead peer) holds its group up until it goes on or goes
 * away: the clock cannot tell it from a long stage.
 *
 * Every (re)plan is logged with the model's period; the measured one, from
 * the starts of the first member's data stage, every kReportS.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <poll.h>
#include <unistd.h>

#include <sys/socket.h>
#include <sys/time.h>

#include <chrono>
#include <cinttypes>
#include <memory>

#include "nodeagent/agent.h"
#include "nodeagent/group_clock.h"

namespace tidal::agent
{

using namespace tidal::wire;

static constexpr double kLateS = 30;   /* wait for late members */
static constexpr double kReportS = 60; /* measured period, logged */

static double mono_s()
{
	return std::chrono::duration<double>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

struct Agent::Group {
	Group(const std::string &n, int size)
	    : name(n), clock(size, muri_group_factors()), first_join(mono_s())
	{
	}
	std::string name;
	std::mutex mu;
	GroupClock clock;		   /* by mu */
	std::map<uint64_t, int> fds;	   /* member key -> socket */
	std::map<uint64_t, uint64_t> jobs; /* member key -> job */
	double first_join;
	/* The measured period: starts of slot 0's data stage. */
	double last_load = 0, sum = 0, last_report = 0;
	int cycles = 0;
};

static uint64_t member_key(const InterleaveJoin &j)
{
	return j.job << 16 | j.rank;
}

/* Under G's lock: write each due turn to its member, and note (and every
 * kReportS log) the measured period. */
static void hand_turns(Agent::Group &g, const std::vector<GroupClock::Due> &due)
{
	if (due.empty())
		return;
	double now = mono_s();
	for (const GroupClock::Due &d : due) {
		if (d.position == 0 && d.first == 0) {
			if (g.last_load > 0 && g.clock.boundaries() > 1) {
				g.sum += now - g.last_load;
				g.cycles++;
			}
			g.last_load = now;
		}
		auto it = g.fds.find(d.key);
		if (it == g.fds.end())
			continue;
		Turn t{ d.first, d.last, d.factor, d.n, d.position };
		/* a member that cannot take its turn is gone: its thread
		 * sees the socket fail and leaves */
		write_all(it->second, encode(t));
	}
	if (g.cycles > 0 && now - g.last_report >= kReportS) {
		logf("interleave: group %s: measured %.4f s per iteration "
		     "over %d, model %.4f s",
		     g.name.c_str(), g.sum / g.cycles, g.cycles,
		     g.clock.plan().raw * g.clock.factor());
		g.last_report = now;
		g.sum = 0;
		g.cycles = 0;
	}
}

/* Under G's lock, after a (re)plan: say what the group runs as. */
static void log_plan(Agent::Group &g)
{
	std::string who;
	for (uint64_t k : g.clock.order())
		who += (who.empty() ? "" : ", ") +
		       std::to_string(g.jobs.count(k) ? g.jobs.at(k) : 0);
	const InterleavePlan &p = g.clock.plan();
	logf("interleave: group %s: jobs %s in slot order, %s, model "
	     "period %.4f s (%.4f s x %.3f)",
	     g.name.c_str(), who.c_str(),
	     p.shape == InterleavePlan::Pair ? "paired" : "staggered",
	     p.raw * g.clock.factor(), p.raw, g.clock.factor());
	g.last_load = g.sum = 0;
	g.cycles = 0;
	g.last_report = mono_s();
}

/* Under G's lock: what TELL (a clock call) makes due, handed out, and
 * a new plan logged. */
template <typename F> static void advance(Agent::Group &g, F &&tell)
{
	uint64_t plans = g.clock.plans();
	std::vector<GroupClock::Due> due = tell();
	if (g.clock.plans() != plans)
		log_plan(g);
	hand_turns(g, due);
}

void Agent::serve_interleave(int fd, const InterleaveJoin &j, uid_t uid)
{
	std::shared_ptr<Group> g;
	std::string refused;
	uint64_t key = member_key(j);
	StageTimes st{ j.stages[0], j.stages[1], j.stages[2] };
	struct timeval tv = { 2, 0 }; /* a member that stops reading */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (;;) {
		{
			std::lock_guard<std::mutex> l(groups_mu_);
			auto &slot = groups_[j.group];
			if (!slot)
				slot = std::make_shared<Group>(j.group, j.size);
			g = slot;
		}
		std::lock_guard<std::mutex> l(g->mu);
		{
			/* the last member may have left and taken the
			 * group away since: join the one there now */
			std::lock_guard<std::mutex> gl(groups_mu_);
			auto it = groups_.find(j.group);
			if (it == groups_.end() || it->second != g)
				continue;
		}
		if (g->fds.count(key))
			refused = "job " + std::to_string(j.job) + " rank " +
				  std::to_string(j.rank) + " is in group " +
				  j.group + " already";
		else if ((int)g->fds.size() >= 4)
			refused = "group " + j.group + " has 4 members, " +
				  "the most Muri interleaves";
		if (refused.empty()) {
			g->fds[key] = fd;
			g->jobs[key] = j.job;
			logf("interleave: group %s: job %" PRIu64
			     " rank %" PRIu64
			     " (uid %u) joins: %d in, %d expected",
			     j.group.c_str(), j.job, j.rank, (unsigned)uid,
			     (int)g->fds.size(), g->clock.size());
			advance(*g, [&] { return g->clock.join(key, st); });
		}
		break;
	}
	if (!refused.empty()) {
		logf("interleave: uid %u refused: %s", (unsigned)uid,
		     refused.c_str());
		write_all(fd, error_reply(refused) + "\n");
		return;
	}
	Reader r(fd);
	std::string line, err;
	while (!stop_) {
		int got = r.next(&line, 500, 4096);
		if (got < 0)
			break;
		std::lock_guard<std::mutex> l(g->mu);
		if (got == 0) {
			if (!g->clock.running() &&
			    mono_s() - g->first_join >= kLateS) {
				logf("interleave: group %s: going with %d of "
				     "%d after %.0f s",
				     j.group.c_str(), g->clock.members(),
				     g->clock.size(), kLateS);
				advance(*g, [&] { return g->clock.start(); });
			}
			continue;
		}
		TurnDone d;
		if (!decode(line, &d, &err)) {
			logf("interleave: group %s: job %" PRIu64
			     ": bad line, leaving: %s",
			     j.group.c_str(), j.job, err.c_str());
			break;
		}
		advance(*g, [&] { return g->clock.done(key); });
	}
	std::lock_guard<std::mutex> l(g->mu);
	g->fds.erase(key);
	g->jobs.erase(key);
	logf("interleave: group %s: job %" PRIu64 " rank %" PRIu64 " leaves, "
	     "%d left",
	     j.group.c_str(), j.job, j.rank, (int)g->fds.size());
	advance(*g, [&] { return g->clock.leave(key); });
	if (g->fds.empty()) {
		std::lock_guard<std::mutex> gl(groups_mu_);
		auto it = groups_.find(j.group);
		if (it != groups_.end() && it->second == g)
			groups_.erase(it);
	}
}

} /* namespace tidal::agent */
