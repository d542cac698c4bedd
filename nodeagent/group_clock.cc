/*
 * group_clock.cc - one interleaving group's turns (group_clock.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "nodeagent/group_clock.h"

#include <algorithm>

namespace tidal::agent
{

double GroupClock::factor() const
{
	int n = (int)order_.size();
	return n >= 1 && n <= 4 ? factors_[n - 1] : 1.0;
}

std::vector<GroupClock::Due> GroupClock::join(uint64_t key,
					      const StageTimes &stages)
{
	Member &m = members_[key];
	m = Member();
	m.stages = stages;
	if (!running_)
		return (int)members_.size() >= size_ ? replan()
						     : std::vector<Due>();
	dirty_ = true;
	return settle();
}

std::vector<GroupClock::Due> GroupClock::leave(uint64_t key)
{
	if (!members_.erase(key))
		return {};
	if (members_.empty()) {
		running_ = dirty_ = false;
		order_.clear();
		return {};
	}
	if (!running_)
		return {};
	dirty_ = true;
	return settle();
}

std::vector<GroupClock::Due> GroupClock::start()
{
	if (running_ || members_.empty())
		return {};
	return replan();
}

std::vector<GroupClock::Due> GroupClock::done(uint64_t key)
{
	auto it = members_.find(key);
	if (it == members_.end() || !it->second.busy)
		return {};
	it->second.busy = false;
	return settle();
}

/* A fresh plan for the members in, from boundary 0. */
std::vector<GroupClock::Due> GroupClock::replan()
{
	std::vector<InterleaveJob> jobs;
	std::vector<uint64_t> keys;
	for (auto &[key, m] : members_) {
		jobs.push_back({ m.stages, 0, jobs.size() });
		keys.push_back(key);
		m.busy = false;
		m.from = m.until = 0;
	}
	std::vector<const InterleaveJob *> p;
	for (const InterleaveJob &j : jobs)
		p.push_back(&j);
	plan_ = interleave_plan(p, Ordering::Best);
	order_.clear();
	for (std::size_t i : plan_.order)
		order_.push_back(keys[i]);
	running_ = true;
	dirty_ = false;
	plans_++;
	fired_.clear();
	low_ = reached_ = 0;
	std::vector<Due> due = fire(0);
	std::vector<Due> more = settle();
	due.insert(due.end(), more.begin(), more.end());
	return due;
}

/* Boundary K is reached: RET the runs it starts. */
std::vector<GroupClock::Due> GroupClock::fire(uint64_t k)
{
	fired_.insert(k);
	reached_++;
	while (fired_.count(low_))
		fired_.erase(low_++);
	std::vector<Due> due;
	int n = (int)order_.size();
	for (const SlotRun &r : slot_starts(plan_.shape, n, k)) {
		Member &m = members_[order_[(std::size_t)r.member]];
		m.busy = true;
		m.from = k;
		m.until = r.end;
		due.push_back({ order_[(std::size_t)r.member], r.first, r.last,
				n, r.member, factor() });
	}
	return due;
}

/* Every run that ends at K (it started at K-1 or K-2) is done; a
 * boundary no run ends at waits for the one before it (the first
 * cycle's members start one boundary apart). */
bool GroupClock::boundary_ready(uint64_t k) const
{
	auto fired = [this](uint64_t b) { return b < low_ || fired_.count(b); };
	if (fired(k))
		return false;
	int n = (int)order_.size();
	bool any = false;
	for (uint64_t back = 1; back <= 2 && back <= k; back++) {
		uint64_t s = k - back;
		for (const SlotRun &r : slot_starts(plan_.shape, n, s)) {
			if (r.end != k)
				continue;
			any = true;
			if (!fired(s))
				return false;
			const Member &m =
				members_.at(order_[(std::size_t)r.member]);
			if (m.from < s || (m.from == s && m.busy))
				return false;
		}
	}
	return any || (k > 0 && fired(k - 1));
}

/* Fire every boundary that is ready, until none is; with a change of
 * members pending, fire none and plan again once no run is in flight. */
std::vector<GroupClock::Due> GroupClock::settle()
{
	if (!running_)
		return {};
	if (dirty_) {
		for (auto &kv : members_)
			if (kv.second.busy)
				return {};
		return replan();
	}
	std::vector<Due> due;
	for (bool again = true; again;) {
		again = false;
		uint64_t hi = (fired_.empty() ? low_ : *fired_.rbegin()) + 2;
		for (uint64_t k = low_; k <= hi; k++)
			if (boundary_ready(k)) {
				std::vector<Due> d = fire(k);
				due.insert(due.end(), d.begin(), d.end());
				again = true;
				break;
			}
	}
	return due;
}

} /* namespace tidal::agent */
