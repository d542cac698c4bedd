/*
 * round_policy.cc - the round mechanics of round_policy.h.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/round_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>

#include "core/placement/placement.h"
#include "core/policies/gavel_rounds.h"

namespace tidal {

namespace {

/* After preempting this round's leavers: ask again as soon as their GPUs
 * can be free (a replay has released them once the plan is applied). */
constexpr double kSettle = 1e-3;

} /* namespace */

Placement RoundPolicy::placement(const Cluster &c,
				 const std::vector<int> &ws) const
{
	Placement p;
	for (int w : ws) {
		int node = 0;
		while (node < (int)c.nodes.size() && w >= c.nodes[node].gpus)
			w -= c.nodes[node++].gpus;
		if (node >= (int)c.nodes.size())
			return {}; /* no such GPU now: anywhere free */
		if (!p.empty() && p.back().node == node)
			p.back().gpus++;
		else
			p.push_back({node, 1});
	}
	return p;
}

/* Admit new jobs and credit run time since the last call; at a round's
 * end, drop the jobs that are gone (a preempted one only a round after
 * it left: it may still be on its way back to the queue). */
void RoundPolicy::sync(const Snapshot &snap, bool boundary)
{
	std::set<JobId> seen;
	for (const Job *j : snap.jobs) {
		seen.insert(j->id);
		auto it = executed_.find(j->id);
		if (it == executed_.end()) {
			on_new(*j);
			executed_[j->id] = j->executed;
			continue;
		}
		if (j->executed > it->second)
			on_ran(j->id, j->executed - it->second);
		it->second = std::max(it->second, j->executed);
		if (j->state != JobState::Running && leaving_.erase(j->id))
			serial_++;
	}
	if (!boundary)
		return;
	for (auto it = executed_.begin(); it != executed_.end();) {
		auto l = leaving_.find(it->first);
		bool back_soon =
			l != leaving_.end() && snap.now - l->second < round_;
		if (seen.count(it->first) || back_soon) {
			++it;
			continue;
		}
		on_gone(it->first);
		leaving_.erase(it->first);
		it = executed_.erase(it);
	}
}

Plan RoundPolicy::decide(const Snapshot &snap)
{
	bool boundary = !started_ || snap.now >= round_end_;
	sync(snap, boundary);
	if (boundary) {
		chosen_ = pick(snap);
		/* Rounds keep their phase: a call that comes late (the
		 * plugin asks every CycleInterval) does not push the next
		 * round's end later. */
		bool on_time = started_ && snap.now < round_end_ + round_;
		round_end_ = (on_time ? round_end_ : snap.now) + round_;
		started_ = true;
		serial_++;
	}

	/* Every running job's GPUs are taken: the stayers keep theirs, the
	 * leavers' come free only once they are gone. */
	FreeMap free(*snap.cluster);
	for (const Job *j : snap.jobs)
		if (j->state == JobState::Running)
			free.take(j->placement);
	Plan plan;
	bool leavers = false;
	for (const Job *j : snap.jobs) {
		auto c = chosen_.find(j->id);
		bool running = j->state == JobState::Running;
		if (c == chosen_.end()) {
			if (running) {
				leavers = true;
				if (leaving_.emplace(j->id, snap.now).second)
					serial_++;
			}
			Decision &d = plan.add(
				j->id, running ? Action::Preempt : Action::Hold,
				0,
				snap.want_reasons ? left_out_reason() : "");
			notes(*j, &d);
			continue;
		}
		std::string why = snap.want_reasons ? "runs this round" : "";
		if (running) {
			Decision &d =
				plan.add(j->id, Action::Keep, j->gpus, why);
			d.placement = j->placement;
			notes(*j, &d);
			continue;
		}
		/* The round's workers where they are free, else any free
		 * GPUs, one node first. */
		std::optional<Placement> p =
			placement(*snap.cluster, c->second);
		if (placement_gpus(*p) != j->gpus || !free.take(*p))
			p = free.place(j->gpus, PlacementScheme::Consolidated);
		if (!p) {
			Decision &d = plan.add(
				j->id, Action::Hold, 0,
				snap.want_reasons ? "in this round, waiting "
						    "for the GPUs of the "
						    "jobs it replaces"
						  : "");
			notes(*j, &d);
			continue;
		}
		Decision &d = plan.add(j->id, Action::Start, j->gpus, why);
		d.placement = *p;
		notes(*j, &d);
	}
	plan.wake_at = leavers ? snap.now + kSettle : round_end_;
	plan.log.swap(log_);
	log_.clear();
	return plan;
}

std::vector<std::string> RoundPolicy::save_state() const
{
	std::vector<std::string> out;
	char buf[160];
	std::snprintf(buf, sizeof(buf), "round %.17g %d", round_end_,
		      started_ ? 1 : 0);
	out.push_back(buf);
	for (auto &[id, e] : executed_) {
		std::snprintf(buf, sizeof(buf), "exec %llu %.17g",
			      (unsigned long long)id, e);
		out.push_back(buf);
	}
	for (auto &[id, ws] : chosen_)
		out.push_back("chosen " + std::to_string(id) + " " +
			      gavel_workers_text(ws));
	for (auto &[id, when] : leaving_) {
		std::snprintf(buf, sizeof(buf), "leaving %llu %.17g",
			      (unsigned long long)id, when);
		out.push_back(buf);
	}
	save_more(&out);
	return out;
}

bool RoundPolicy::load_state(const std::string &line)
{
	std::string word = line.substr(0, line.find(' '));
	unsigned long long id;
	double v;
	int flag, n = 0;
	std::vector<int> w;
	const char *s = line.c_str();
	if (word == "round" &&
	    std::sscanf(s, "round %lg %d%n", &v, &flag, &n) == 2 && !s[n] &&
	    std::isfinite(v)) {
		round_end_ = v;
		started_ = flag != 0;
		return true;
	}
	if (word == "exec" &&
	    std::sscanf(s, "exec %llu %lg%n", &id, &v, &n) == 2 && !s[n] &&
	    std::isfinite(v)) {
		executed_[id] = v;
		return true;
	}
	if (word == "chosen" &&
	    std::sscanf(s, "chosen %llu %n", &id, &n) == 1 && n > 0 &&
	    gavel_parse_workers(line.substr(n), &w)) {
		chosen_[id] = w;
		return true;
	}
	if (word == "leaving" &&
	    std::sscanf(s, "leaving %llu %lg%n", &id, &v, &n) == 2 && !s[n] &&
	    std::isfinite(v)) {
		leaving_[id] = v;
		return true;
	}
	return load_more(line);
}

} /* namespace tidal */
