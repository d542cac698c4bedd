/*
 * stages.cc - stage pacing and the interleaving turns (stages.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "trainer/stages.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "proto/wire.h"

namespace tidal::train
{

static double mono_s()
{
	return std::chrono::duration<double>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

static void sleep_until(double t)
{
	double d = t - mono_s();
	if (d > 0)
		std::this_thread::sleep_for(std::chrono::duration<double>(d));
}

bool read_group_env(GroupEnv &g, std::string &err)
{
	const char *v = getenv("TIDAL_GROUP");
	if (!v || !*v)
		return true;
	std::string s = v;
	size_t slash = s.rfind('/');
	char *end = nullptr;
	long n = slash == std::string::npos
			 ? 0
			 : strtol(s.c_str() + slash + 1, &end, 10);
	g.name = slash == std::string::npos ? "" : s.substr(0, slash);
	if (slash == std::string::npos || !end || *end || n < 1 || n > 4 ||
	    g.name.empty()) {
		err = "TIDAL_GROUP=" + s +
		      ": expected NAME/SIZE, SIZE the group's members, 1 to 4";
		return false;
	}
	g.size = (int)n;
	return read_member_env("TIDAL_GROUP", g.sock, g.job, err);
}

bool read_member_env(const char *what, std::string &sock, uint64_t &job,
		     std::string &err)
{
	const char *s = getenv("TIDAL_AGENT_SOCK");
	if (!s || !*s) {
		err = std::string(what) +
		      " is set but TIDAL_AGENT_SOCK (tidald's local socket) "
		      "is not";
		return false;
	}
	sock = s;
	char *end = nullptr;
	job = 0;
	for (const char *name : { "TIDAL_JOB", "SLURM_JOB_ID" }) {
		const char *j = getenv(name);
		if (!j || !*j)
			continue;
		unsigned long long x = strtoull(j, &end, 10);
		if (*end || x < 1 || x > 4294967295ULL) {
			err = std::string(name) + "=" + j +
			      ": expected a job id, 1 to 4294967295";
			return false;
		}
		job = x;
		break;
	}
	if (!job) {
		err = std::string(what) +
		      " is set but neither TIDAL_JOB nor SLURM_JOB_ID names "
		      "the job";
		return false;
	}
	return true;
}

bool StagePacer::setup(const StageTimes &solo, const GroupEnv &g, int rank,
		       std::string &err)
{
	solo_ = solo;
	factor_ = muri_group_factors()[0];
	if (g.size == 0)
		return true;
	group_ = g.name;
	std::string why;
	fd_ = wire::unix_connect(g.sock, &why);
	wire::InterleaveJoin j;
	j.job = g.job;
	j.rank = (uint64_t)rank;
	j.group = g.name;
	j.size = g.size;
	j.stages = { solo[0], solo[1], solo[2] };
	if (fd_ >= 0 && !wire::write_all(fd_, wire::encode(j)))
		why = "cannot write to " + g.sock;
	if (fd_ < 0 || !why.empty()) {
		/* training goes on without turns rather than fail */
		go_solo(why);
		return true;
	}
	in_ = std::make_unique<wire::Reader>(fd_);
	return true;
}

StagePacer::~StagePacer()
{
	if (fd_ >= 0)
		close(fd_);
}

void StagePacer::go_solo(const std::string &why)
{
	fprintf(stderr,
		"tidal-train: interleaving group %s: %s; pacing alone from "
		"here\n",
		group_.c_str(), why.c_str());
	if (fd_ >= 0)
		close(fd_);
	fd_ = -1;
	in_.reset();
	have_ = false;
	factor_ = muri_group_factors()[0];
	n_ = 1;
}

/* Wait for the next turn: RET false (and paced alone) if there is none. */
bool StagePacer::next_turn()
{
	std::string line, err;
	int got;
	while ((got = in_->next(&line, 1000, 4096)) == 0)
		;
	if (got < 0) {
		go_solo("tidald closed the connection");
		return false;
	}
	if (!wire::decode(line, &turn_, &err)) {
		go_solo(err);
		return false;
	}
	have_ = true;
	at_ = turn_.first;
	secs_.clear();
	factor_ = turn_.factor;
	n_ = turn_.n;
	return true;
}

void StagePacer::finish_turn()
{
	have_ = false;
	wire::TurnDone d{ secs_ };
	if (!wire::write_all(fd_, wire::encode(d)))
		go_solo("tidald does not take turn_done");
}

void StagePacer::stage(int s, const std::function<void()> &work)
{
	while (fd_ >= 0) {
		if (!have_ && !next_turn())
			break;
		if (at_ != s) {
			/* not this stage's turn: sit it out */
			double t = mono_s();
			for (; at_ <= turn_.last; at_++)
				t += solo_[(size_t)at_] * factor_ / speed();
			sleep_until(t);
			for (int k = turn_.first; k <= turn_.last; k++)
				secs_.push_back(0);
			finish_turn();
			continue;
		}
		double t0 = mono_s();
		work();
		sleep_until(t0 + solo_[(size_t)s] * factor_ / speed());
		secs_.push_back(mono_s() - t0);
		if (++at_ > turn_.last)
			finish_turn();
		return;
	}
	double t0 = mono_s();
	work();
	sleep_until(t0 + solo_[(size_t)s] * factor_ / speed());
}

} /* namespace tidal::train */
