/*
 * pack.h - tidal-train in a pack: a job that a packing policy (Lucid,
 * AntMan) runs at once with others on a shared GPU.  With TIDAL_PACK set
 * (tidal-launch sets it under such a policy) and --workload given, the
 * trainer joins the GPU's pack on tidald's local socket (nodeagent/
 * pack.cc) and is told its members at every change.
 *
 * On fake GPUs nothing slows a packed job down but this: with --colocate
 * (Lucid's colocate_info.csv, core/profiles/colocate.h) the trainer runs
 * at the speed the table gives its workload beside its partner's, as a
 * fraction of its speed alone; its paced step (--profile, --stage-profile)
 * takes that much longer.  Beside several partners it runs at the product
 * of the pairs' speeds (Lucid itself packs pairs only).  A partner whose
 * workload is not said, or a pair the table lacks, leaves the speed at 1,
 * said once on stderr.
 *
 * If tidald cannot be reached or refuses, the trainer says so once and
 * runs as alone.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "core/profiles/colocate.h"
#include "proto/messages.h"

namespace tidal::train
{

/* What TIDAL_PACK, TIDAL_AGENT_SOCK and TIDAL_JOB say. */
struct PackEnv {
	std::string name, sock; /* name "" = no pack */
	uint64_t job = 0;
};
/* RET false with ERR naming the variable, its value and the rule. */
bool read_pack_env(PackEnv &p, std::string &err);

/* The speed of OWN beside PARTNERS (their workloads by job), by TABLE
 * (nullptr: none given): 1 alone.  OUT *WHY, when some pair could not be
 * looked up (the speed then counts that pair as 1): which and why. */
double packed_speed(const WorkloadKey *own,
		    const std::map<uint64_t, std::string> &partners,
		    const ColocateTable *table, std::string *why);

class PackPeer
{
public:
	/* Join pack P as RANK running WORKLOAD (its text; OWN parsed, or
	 * nullptr), pacing by TABLE (or nullptr).  A pack that cannot be
	 * joined is said on stderr; the trainer then runs as alone. */
	void start(const PackEnv &p, int rank, const std::string &workload,
		   const WorkloadKey *own, const ColocateTable *table);
	~PackPeer();
	/* The speed now, as a fraction of alone (1 alone). */
	double speed() const { return speed_.load(); }
	/* The other jobs in the pack now. */
	int partners() const { return partners_.load(); }

private:
	void run();
	void take(const wire::Partners &m);

	PackEnv env_;
	std::string workload_;
	WorkloadKey own_;
	bool have_own_ = false;
	const ColocateTable *table_ = nullptr;
	int fd_ = -1;
	std::atomic<bool> stop_{ false };
	std::thread thread_;
	std::atomic<double> speed_{ 1.0 };
	std::atomic<int> partners_{ 0 };
	std::set<std::string> said_; /* the lookup failures told */
};

} /* namespace tidal::train */
