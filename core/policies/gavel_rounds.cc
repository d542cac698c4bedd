/*
 * gavel_rounds.cc - Gavel's priorities, deficits, round selection and
 * worker assignment (scheduler.py's _update_priorities,
 * _reset_time_run_so_far, _schedule_jobs_on_workers).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/gavel_rounds.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <tuple>

namespace tidal {

void GavelRounds::add_job(JobId id)
{
	order_.push_back(id);
	State s;
	s.time = round_ / 2; /* Gavel's initial credit; not in worker time */
	st_[id] = s;
	need_update_ = true;
}

void GavelRounds::remove_job(JobId id)
{
	order_.erase(std::remove(order_.begin(), order_.end(), id),
		     order_.end());
	st_.erase(id);
	prev_workers_.erase(id);
	need_update_ = true;
}

void GavelRounds::job_ran(JobId id, double exec)
{
	auto it = st_.find(id);
	if (it == st_.end())
		return;
	it->second.time += exec;
	worker_time_ += exec;
}

/* Deficits grow by what each job should have had since the last reset
 * minus what it got; then every job restarts from half a round.  A solve
 * that runs out of its limit leaves the allocation as it was (equal
 * shares if no active job has one) and the update still due. */
void GavelRounds::reset(double now, const std::vector<GavelJob> &sorted,
			GavelAllocator &alloc)
{
	double elapsed = now - last_reset_;
	worker_time_ = 0;
	for (JobId id : order_) {
		State &s = st_[id];
		double received = s.time - round_ / 2;
		auto a = alloc_.find(id);
		double should = a == alloc_.end() ? 0 : a->second * elapsed;
		s.deficit += should - received;
		s.time = round_ / 2;
		worker_time_ += s.time;
	}
	last_reset_ = now;
	alloc.over_limit = false;
	std::map<JobId, double> next = alloc.allocate(sorted, workers_, now);
	if (alloc.over_limit) {
		kept_last_ = true;
		bool any = false;
		for (const GavelJob &j : sorted)
			any = any || alloc_.count(j.id);
		if (!any && !sorted.empty()) {
			double share = std::min(
				1.0, (double)workers_ / (double)sorted.size());
			alloc_.clear();
			for (const GavelJob &j : sorted)
				alloc_[j.id] = share;
		}
		return;
	}
	alloc_ = std::move(next);
	for (auto &[id, a] : alloc_)
		a = std::clamp(a, 0.0, 1.0);
	need_update_ = false;
}

std::vector<std::pair<JobId, std::vector<int>>>
GavelRounds::schedule(double now, const std::vector<GavelJob> &active,
		      GavelAllocator &alloc)
{
	std::map<JobId, const GavelJob *> by_id;
	for (const GavelJob &j : active)
		by_id[j.id] = &j;
	reset_last_ = false;
	kept_last_ = false;
	bool due = now - last_reset_ >= reset_every_ || last_reset_ == 0;
	if (need_update_ && due) {
		std::vector<GavelJob> sorted;
		for (auto &[id, j] : by_id)
			sorted.push_back(*j);
		reset(now, sorted, alloc);
		reset_last_ = true;
	}

	struct Entry {
		JobId id;
		double p, deficit, a;
	};
	std::vector<Entry> q;
	for (JobId id : order_) {
		State &s = st_[id];
		auto ai = alloc_.find(id);
		const GavelJob *j = by_id.count(id) ? by_id[id] : nullptr;
		double frac = worker_time_ == 0 ? 0 : s.time / worker_time_;
		double a = ai == alloc_.end() ? 0 : ai->second;
		if (ai == alloc_.end() || a == 0 || !j || j->tput == 0)
			s.priority = 0;
		else if (frac > 0)
			s.priority = a / frac;
		else
			s.priority = a * 1e9;
		q.push_back({id, s.priority, s.deficit, a});
	}
	std::stable_sort(q.begin(), q.end(), [](const Entry &x, const Entry &y) {
		return std::tie(x.p, x.deficit, x.a) > std::tie(y.p, y.deficit, y.a);
	});

	std::vector<std::pair<JobId, int>> selected;
	int left = workers_;
	for (const Entry &e : q) {
		const GavelJob *j = by_id.count(e.id) ? by_id[e.id] : nullptr;
		if (!j || j->tput <= 0)
			continue;
		if (alloc.skip_zero_priority() && e.p <= 0)
			continue;
		if (j->sf > left)
			continue;
		selected.push_back({e.id, j->sf});
		left -= j->sf;
	}
	std::vector<std::pair<JobId, std::vector<int>>> out;
	assign(selected, &out);
	return out;
}

/* "W,W,W" for a worker list, "-" for none. */
std::string gavel_workers_text(const std::vector<int> &ws)
{
	std::string s;
	for (int w : ws)
		s += (s.empty() ? "" : ",") + std::to_string(w);
	return s.empty() ? "-" : s;
}

bool gavel_parse_workers(const std::string &s, std::vector<int> *ws)
{
	ws->clear();
	if (s == "-")
		return true;
	if (s.empty() || s.back() == ',')
		return false;
	std::istringstream in(s);
	std::string w;
	while (std::getline(in, w, ',')) {
		char *end = nullptr;
		long v = std::strtol(w.c_str(), &end, 10);
		if (w.empty() || *end || v < 0 || v > 1 << 24)
			return false;
		ws->push_back((int)v);
	}
	return true;
}

std::vector<std::string> GavelRounds::save() const
{
	std::vector<std::string> out;
	char buf[160];
	std::snprintf(buf, sizeof(buf), "rounds %d %d %.17g %.17g", workers_,
		      need_update_ ? 1 : 0, last_reset_, worker_time_);
	out.push_back(buf);
	for (JobId id : order_) { /* in arrival order */
		const State &s = st_.at(id);
		std::snprintf(buf, sizeof(buf), "rjob %llu %.17g %.17g %.17g",
			      (unsigned long long)id, s.time, s.deficit,
			      s.priority);
		out.push_back(buf);
	}
	for (auto &[id, a] : alloc_) {
		std::snprintf(buf, sizeof(buf), "alloc %llu %.17g",
			      (unsigned long long)id, a);
		out.push_back(buf);
	}
	for (auto &[id, ws] : prev_workers_)
		out.push_back("prev " + std::to_string(id) + " " +
			      gavel_workers_text(ws));
	return out;
}

bool GavelRounds::load(const std::string &line)
{
	unsigned long long id;
	int workers, need, n = 0;
	double a, b, c;
	if (std::sscanf(line.c_str(), "rounds %d %d %lg %lg%n", &workers, &need,
			&a, &b, &n) == 4 &&
	    !line[n] && workers >= 0 && workers <= 1 << 24 &&
	    std::isfinite(a) && std::isfinite(b)) {
		workers_ = workers;
		for (auto it = prev_workers_.begin();
		     it != prev_workers_.end();)
			it = std::any_of(it->second.begin(), it->second.end(),
					 [&](int w) { return w >= workers_; })
				     ? prev_workers_.erase(it)
				     : std::next(it);
		need_update_ = need != 0;
		last_reset_ = a;
		worker_time_ = b;
		return true;
	}
	if (std::sscanf(line.c_str(), "rjob %llu %lg %lg %lg%n", &id, &a, &b,
			&c, &n) == 4 &&
	    !line[n] && std::isfinite(a) && std::isfinite(b) &&
	    std::isfinite(c)) {
		if (!st_.count(id))
			order_.push_back(id);
		st_[id] = { a, b, c };
		return true;
	}
	if (std::sscanf(line.c_str(), "alloc %llu %lg%n", &id, &a, &n) == 2 &&
	    !line[n] && std::isfinite(a)) {
		alloc_[id] = std::clamp(a, 0.0, 1.0);
		return true;
	}
	std::vector<int> w;
	if (std::sscanf(line.c_str(), "prev %llu %n", &id, &n) == 1 && n > 0 &&
	    gavel_parse_workers(line.substr(n), &w)) {
		for (int x : w)
			if (x >= workers_)
				return false;
		prev_workers_[id] = w;
		return true;
	}
	return false;
}

/* Larger jobs first; within a size, lease extensions before new
 * placements on the lowest free workers. */
std::vector<int> GavelRounds::assign(
	const std::vector<std::pair<JobId, int>> &selected,
	std::vector<std::pair<JobId, std::vector<int>>> *out)
{
	std::vector<char> taken(workers_, 0);
	std::vector<int> sizes;
	for (auto &[id, sf] : selected)
		if (std::find(sizes.begin(), sizes.end(), sf) == sizes.end())
			sizes.push_back(sf);
	std::sort(sizes.rbegin(), sizes.rend());
	std::map<JobId, std::vector<int>> next;
	int ptr = 0;
	for (int size : sizes) {
		for (auto &[id, sf] : selected) {
			auto pw = prev_workers_.find(id);
			if (sf != size || pw == prev_workers_.end())
				continue;
			bool free = true;
			for (int w : pw->second)
				free = free && w < workers_ && !taken[w];
			if (!free)
				continue;
			for (int w : pw->second)
				taken[w] = 1;
			next[id] = pw->second;
			out->push_back({id, pw->second});
		}
		for (auto &[id, sf] : selected) {
			if (sf != size || next.count(id) || !alloc_.count(id))
				continue;
			std::vector<int> ws;
			while ((int)ws.size() < sf && ptr < workers_) {
				if (!taken[ptr]) {
					taken[ptr] = 1;
					ws.push_back(ptr);
				}
				ptr++;
			}
			next[id] = ws;
			out->push_back({id, ws});
		}
	}
	prev_workers_ = next;
	return {};
}

} /* namespace tidal */
