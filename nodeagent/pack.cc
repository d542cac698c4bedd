/*
 * pack.cc - tidald's packs: the trainers of jobs that run at once on a
 * shared GPU (a packing policy's: Lucid, AntMan) join its pack on the
 * local socket and keep the connection; at every join and leave each
 * member is told who is in the pack (a partners line), so that a trainer
 * pacing itself on a fake GPU can run at the speed the pair would have
 * (tidal-train --colocate).  Nothing is handed out in turns: unlike an
 * interleaving group, a pack never holds a member up.
 *
 * One thread per member (the local socket's connection thread); it reads
 * nothing but the close.  A member whose connection closes (done, killed,
 * or its job ended) leaves and the others are told.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <unistd.h>

#include <sys/socket.h>
#include <sys/time.h>

#include <cinttypes>
#include <memory>

#include "nodeagent/agent.h"

namespace tidal::agent
{

using namespace tidal::wire;

static constexpr size_t kMaxMembers = 64; /* what a partners line holds */

struct Agent::Pack {
	std::mutex mu;
	/* member key (job << 16 | rank) -> its socket and what it said,
	 * in the order they joined */
	std::vector<std::pair<int, PackMember>> members; /* by mu */
};

static uint64_t member_key(uint64_t job, uint64_t rank)
{
	return job << 16 | rank;
}

/* Under P's lock: tell every member who is in the pack now. */
static void tell_members(const std::string &name, Agent::Pack &p)
{
	Partners m;
	m.group = name;
	for (const auto &[fd, who] : p.members)
		m.members.push_back(who);
	std::string line = encode(m);
	for (const auto &[fd, who] : p.members)
		/* a member that cannot take it is gone: its thread sees
		 * the socket fail and leaves */
		write_all(fd, line);
}

static std::string jobs_of(const Agent::Pack &p)
{
	std::string s;
	for (const auto &[fd, who] : p.members)
		s += (s.empty() ? "" : ", ") + std::to_string(who.job) +
		     (who.workload.empty() ? "" : " (" + who.workload + ")");
	return s;
}

void Agent::serve_pack(int fd, const PackJoin &j, uid_t uid)
{
	std::shared_ptr<Pack> p;
	std::string refused;
	uint64_t key = member_key(j.job, j.rank);
	struct timeval tv = { 2, 0 }; /* a member that stops reading */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (;;) {
		{
			std::lock_guard<std::mutex> l(packs_mu_);
			auto &slot = packs_[j.group];
			if (!slot)
				slot = std::make_shared<Pack>();
			p = slot;
		}
		std::lock_guard<std::mutex> l(p->mu);
		{
			/* the last member may have left and taken the
			 * pack away since: join the one there now */
			std::lock_guard<std::mutex> pl(packs_mu_);
			auto it = packs_.find(j.group);
			if (it == packs_.end() || it->second != p)
				continue;
		}
		for (const auto &[mfd, who] : p->members)
			if (member_key(who.job, who.rank) == key)
				refused = "job " + std::to_string(j.job) +
					  " rank " + std::to_string(j.rank) +
					  " is in pack " + j.group +
					  " already";
		if (refused.empty() && p->members.size() >= kMaxMembers)
			refused = "pack " + j.group + " has " +
				  std::to_string(kMaxMembers) +
				  " members, the most it takes";
		if (refused.empty()) {
			p->members.emplace_back(
				fd, PackMember{ j.job, j.rank, j.workload });
			logf("pack: %s: job %" PRIu64 " rank %" PRIu64
			     " (uid %u) joins; in it now: %s",
			     j.group.c_str(), j.job, j.rank, (unsigned)uid,
			     jobs_of(*p).c_str());
			tell_members(j.group, *p);
		}
		break;
	}
	if (!refused.empty()) {
		logf("pack: uid %u refused: %s", (unsigned)uid,
		     refused.c_str());
		write_all(fd, error_reply(refused) + "\n");
		return;
	}
	/* Nothing is read from a member: wait for it to go. */
	Reader r(fd);
	std::string line;
	while (!stop_ && r.next(&line, 500, 4096) >= 0)
		;
	std::lock_guard<std::mutex> l(p->mu);
	for (auto it = p->members.begin(); it != p->members.end(); ++it)
		if (member_key(it->second.job, it->second.rank) == key) {
			p->members.erase(it);
			break;
		}
	logf("pack: %s: job %" PRIu64 " rank %" PRIu64 " leaves; in it now: "
	     "%s",
	     j.group.c_str(), j.job, j.rank,
	     p->members.empty() ? "none" : jobs_of(*p).c_str());
	if (!p->members.empty()) {
		tell_members(j.group, *p);
		return;
	}
	std::lock_guard<std::mutex> pl(packs_mu_);
	auto it = packs_.find(j.group);
	if (it != packs_.end() && it->second == p)
		packs_.erase(it);
}

} /* namespace tidal::agent */
