/*
 * pack.cc - a packed trainer's pack and its speed (pack.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "trainer/pack.h"

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include "proto/wire.h"
#include "trainer/stages.h"

namespace tidal::train
{

bool read_pack_env(PackEnv &p, std::string &err)
{
	const char *v = getenv("TIDAL_PACK");
	if (!v || !*v)
		return true;
	p.name = v;
	return read_member_env("TIDAL_PACK", p.sock, p.job, err);
}

double packed_speed(const WorkloadKey *own,
		    const std::map<uint64_t, std::string> &partners,
		    const ColocateTable *table, std::string *why)
{
	double speed = 1;
	why->clear();
	if (!table)
		return 1;
	for (const auto &[job, text] : partners) {
		std::string what = "job " + std::to_string(job);
		WorkloadKey k;
		std::string err;
		std::pair<double, double> s;
		if (!own)
			*why = "this job's workload is not known";
		else if (text.empty())
			*why = what + " does not say its workload";
		else if (!parse_workload(text, &k, &err))
			*why = what + ": " + err;
		else if (!table->speeds(*own, k, &s))
			*why = "the table has no row for " +
			       workload_name(*own) + " with " + text;
		else
			speed *= s.first;
	}
	return speed;
}

void PackPeer::start(const PackEnv &p, int rank, const std::string &workload,
		     const WorkloadKey *own, const ColocateTable *table)
{
	env_ = p;
	workload_ = workload;
	if (own) {
		own_ = *own;
		have_own_ = true;
	}
	table_ = table;
	std::string why;
	fd_ = wire::unix_connect(p.sock, &why);
	wire::PackJoin j{ p.job, (uint64_t)rank, p.name, workload };
	if (fd_ >= 0 && !wire::write_all(fd_, wire::encode(j)))
		why = "cannot write to " + p.sock;
	if (fd_ < 0 || !why.empty()) {
		fprintf(stderr, "tidal-train: pack %s: %s; running as alone\n",
			p.name.c_str(), why.c_str());
		if (fd_ >= 0)
			close(fd_);
		fd_ = -1;
		return;
	}
	thread_ = std::thread([this] { run(); });
}

PackPeer::~PackPeer()
{
	stop_ = true;
	if (thread_.joinable())
		thread_.join();
	if (fd_ >= 0)
		close(fd_);
}

void PackPeer::take(const wire::Partners &m)
{
	std::map<uint64_t, std::string> others;
	for (const wire::PackMember &who : m.members)
		if (who.job != env_.job)
			others.emplace(who.job, who.workload);
	std::string why;
	double s = packed_speed(have_own_ ? &own_ : nullptr, others, table_,
				&why);
	if (!why.empty() && said_.insert(why).second)
		fprintf(stderr,
			"tidal-train: pack %s: %s: that pair runs as alone\n",
			env_.name.c_str(), why.c_str());
	std::string who;
	for (const auto &[job, text] : others)
		who += (who.empty() ? "" : ", ") + std::to_string(job) +
		       (text.empty() ? "" : " (" + text + ")");
	if (s != speed_.load() || (int)others.size() != partners_.load())
		fprintf(stderr,
			"tidal-train: pack %s: %s; speed %.3f of alone%s\n",
			env_.name.c_str(),
			others.empty() ? "alone" : ("beside job " + who).c_str(),
			s,
			table_ ? " (--colocate)" : " (no --colocate table)");
	speed_.store(s);
	partners_.store((int)others.size());
}

void PackPeer::run()
{
	wire::Reader in(fd_);
	std::string line, err;
	int got;
	while (!stop_) {
		if ((got = in.next(&line, 200, 64 * 1024)) == 0)
			continue;
		wire::Partners m;
		if (got < 0)
			err = "tidald closed the connection";
		else if (wire::decode(line, &m, &err)) {
			take(m);
			continue;
		}
		fprintf(stderr,
			"tidal-train: pack %s: %s; running as alone from "
			"here\n",
			env_.name.c_str(), err.c_str());
		speed_.store(1);
		partners_.store(0);
		return;
	}
}

} /* namespace tidal::train */
