/*
 * group_clock.h - the turn-taking of one interleaving group on a node
 * (Muri's executor, as its model times it): which member runs which of
 * its stages when, so that the group's iteration time is the one the
 * policy planned with (core/profiles/interleave.h).
 *
 * The members sit in slot order (interleave_plan()).  slot_starts() says
 * what each boundary k starts; boundary k is reached when every run that
 * ends at it is done, not before: a boundary waits only for its own
 * stages, so boundaries may be reached out of order, exactly as in the
 * model's recurrence (a boundary whose runs all end earlier than the one
 * before it does not wait for it).  That is what makes the measured
 * period the model's.
 *
 *   join/leave       membership; the schedule is planned again, from
 *                    boundary 0, once every run in flight is done
 *   start()          when the members it waits for are in (or it is told
 *                    to go with those that are)
 *   done(member)     the member finished its run: RET the runs now due
 *
 * No sockets and no clock here (nodeagent/interleave.cc has them), so
 * tests/node/test_group_clock.cc drives it with simulated stage times.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/profiles/interleave.h"

namespace tidal::agent
{

class GroupClock
{
public:
	/* A run handed to a member: its key, and what to run. */
	struct Due {
		uint64_t key;
		int first, last;
		int n, position; /* the group now, and the member's slot */
		double factor;	 /* on every stage's solo seconds */
	};

	/* SIZE: the members the group waits for; FACTORS: Muri's per
	 * group size (muri_group_factors()). */
	GroupClock(int size, const GroupFactors &factors)
	    : size_(size), factors_(factors)
	{
	}

	/* KEY joins with its solo stage times: RET the runs due (none
	 * until the group is complete and idle). */
	std::vector<Due> join(uint64_t key, const StageTimes &stages);
	/* KEY left (finished, failed or gone): RET the runs due. */
	std::vector<Due> leave(uint64_t key);
	/* Go with the members in, complete or not (the others are late):
	 * RET the runs due. */
	std::vector<Due> start();
	/* KEY finished the run it was given: RET the runs due. */
	std::vector<Due> done(uint64_t key);

	bool running() const { return running_; }
	int size() const { return size_; }
	/* Plans made so far (each join or leave that took effect). */
	uint64_t plans() const { return plans_; }
	int members() const { return (int)members_.size(); }
	/* The plan in force: slot order as keys, shape, raw period. */
	const InterleavePlan &plan() const { return plan_; }
	const std::vector<uint64_t> &order() const { return order_; }
	double factor() const;
	/* Boundaries reached so far in this plan (the clock's progress). */
	uint64_t boundaries() const { return reached_; }

private:
	struct Member {
		StageTimes stages{};
		bool busy = false;  /* a run handed out, not done */
		uint64_t from = 0;  /* its boundary */
		uint64_t until = 0; /* the boundary it ends at */
	};
	std::vector<Due> replan();
	std::vector<Due> fire(uint64_t k);
	std::vector<Due> settle();
	bool boundary_ready(uint64_t k) const;
	int position_of(uint64_t key) const;

	int size_;
	GroupFactors factors_;
	std::map<uint64_t, Member> members_;
	bool running_ = false, dirty_ = false;
	InterleavePlan plan_;
	std::vector<uint64_t> order_; /* keys in slot order */
	std::set<uint64_t> fired_;    /* boundaries reached, above low_ */
	uint64_t low_ = 0;	      /* every boundary below it is reached */
	uint64_t reached_ = 0;
	uint64_t plans_ = 0;
};

} /* namespace tidal::agent */
