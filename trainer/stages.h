/*
 * stages.h - tidal-train's stage pacing (--stage-profile): each step's
 * three stages (data loading, GPU compute, network sync) take at least
 * the profile's seconds for them, and, in an interleaving group, run only
 * in the turns that tidald's group clock hands out (nodeagent/
 * interleave.cc), so that the members of a group sharing a GPU take the
 * GPU, the CPU and the network in turn, as Muri's executor does.
 *
 * The profile's seconds are solo times; each stage is padded to them x
 * the turn's factor (Muri's slowdown for the group's size: 1.015 alone,
 * 1.33/1.015 for two, ...), which stands for the interference that real
 * kernels of several jobs on one GPU would cause.  Without a group, the
 * solo factor applies.
 *
 * A turn that starts at another stage than the one the step is at (the
 * group was planned again between stages) is sat out: its time passes
 * idle and the step waits for a turn of its own stage.  If tidald goes
 * away, cannot be reached or refuses the group, the trainer says so once
 * and paces alone.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/profiles/interleave.h"
#include "proto/messages.h"
#include "proto/wire.h"

namespace tidal::train
{

/* What TIDAL_GROUP and TIDAL_AGENT_SOCK say: NAME/SIZE and tidald's
 * local socket. */
struct GroupEnv {
	std::string name, sock;
	int size = 0;	  /* 0: no group */
	uint64_t job = 0; /* SLURM_JOB_ID or TIDAL_JOB */
};
/* RET false with ERR naming the variable, its value and the rule. */
bool read_group_env(GroupEnv &g, std::string &err);
/* tidald's local socket (TIDAL_AGENT_SOCK) and the job (TIDAL_JOB, else
 * SLURM_JOB_ID), for WHAT (the variable that needs them).  RET false with
 * ERR naming the variable and the rule. */
bool read_member_env(const char *what, std::string &sock, uint64_t &job,
		     std::string &err);

class StagePacer
{
public:
	/* SOLO: the profile's seconds per stage.  With G.size > 0, join
	 * the group as RANK; if tidald cannot be reached, or refuses, say
	 * so on stderr and pace alone.  RET true (ERR for later use). */
	bool setup(const StageTimes &solo, const GroupEnv &g, int rank,
		   std::string &err);
	~StagePacer();
	/* Run stage S (0..2) with WORK in it, paced. */
	void stage(int s, const std::function<void()> &work);
	/* Packed (pack.h): the speed the GPU gives the job beside its
	 * partners, a fraction of alone; each stage takes 1/SPEED as long. */
	void set_speed(std::function<double()> speed) { speed_ = speed; }
	/* The factor of the last turn (the solo one without a group). */
	double factor() const { return factor_; }
	int group_size() const { return n_; }

private:
	bool next_turn();
	double speed() const { return speed_ ? speed_() : 1.0; }
	void finish_turn();
	void go_solo(const std::string &why);

	StageTimes solo_{};
	int fd_ = -1;
	std::unique_ptr<wire::Reader> in_;
	bool have_ = false; /* a turn is being run */
	wire::Turn turn_;
	int at_ = 0;		   /* its next stage */
	std::vector<double> secs_; /* its stages' seconds so far */
	double factor_ = 1;
	int n_ = 1;
	std::string group_;
	std::function<double()> speed_;
};

} /* namespace tidal::train */
