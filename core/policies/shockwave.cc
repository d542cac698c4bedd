/*
 * shockwave.cc - Shockwave's estimates and round planning (shockwave.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/shockwave.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include "core/solvers/lp_glpk.h"

namespace tidal {

void Shockwave::add_job(ShockwaveJob j)
{
	j.dur.clear();
	for (double d : j.prof)
		j.dur.push_back(std::max(1.0, std::nearbyint(d))); /* half-even */
	j.prof = j.dur;
	jobs_.push_back(std::move(j));
	resolve_ = reestimate_ = true;
}

void Shockwave::remove_job(JobId id)
{
	jobs_.erase(std::remove_if(jobs_.begin(), jobs_.end(),
				   [id](const ShockwaveJob &j) { return j.id == id; }),
		    jobs_.end());
	resolve_ = reestimate_ = true;
}

bool Shockwave::has_job(JobId id) const
{
	for (const ShockwaveJob &j : jobs_)
		if (j.id == id)
			return true;
	return false;
}

void Shockwave::set_gpus(int gpus)
{
	if (gpus != cfg_.gpus) {
		cfg_.gpus = gpus;
		resolve_ = true;
	}
}

void Shockwave::update_progress(const std::map<JobId, int> &epochs)
{
	for (ShockwaveJob &j : jobs_) {
		auto it = epochs.find(j.id);
		if (it != epochs.end())
			j.epoch = std::min(it->second, (int)j.bs.size());
	}
	round_ptr_++;
	if (++updates_ % 8 == 0)
		resolve_ = true;
}

void Shockwave::record_throughput(JobId id, long round, double tput, int bs)
{
	for (ShockwaveJob &j : jobs_)
		if (j.id == id)
			j.timeline[round] = {tput, bs};
}

/* Scale the profiled durations when the measured samples since round 0
 * differ from the profile's by more than 40%. */
void Shockwave::calibrate(ShockwaveJob &j) const
{
	if (j.timeline.empty())
		return;
	double meas = 0;
	long prev = 0, max_round = 0;
	for (auto &[r, tb] : j.timeline) {
		meas += tb.second * tb.first * cfg_.round * (double)(r - prev);
		prev = r;
		max_round = std::max(max_round, r);
	}
	double range = cfg_.round * (double)max_round, fitted = 0, prof = 0;
	size_t i = 0;
	for (; i < j.prof.size(); i++) {
		if (fitted + j.prof[i] > range)
			break;
		fitted += j.prof[i];
		prof += j.dataset;
	}
	if (i < j.prof.size())
		prof += j.dataset * (range - fitted) / j.prof[i];
	if (meas > 0 && prof > 0 && std::fabs(meas - prof) / prof > 0.4)
		for (size_t e = 0; e < j.dur.size(); e++)
			j.dur[e] = j.prof[e] * prof / meas;
}

/* Dirichlet estimate of the time left (MODEL.md 4.7). */
double Shockwave::remaining(const ShockwaveJob &j) const
{
	int E = (int)j.bs.size(), q = j.epoch;
	if (E - j.epoch <= 0)
		return 1.0;
	std::map<int, double> alpha;
	for (int b : j.bs)
		alpha[b] = 0;
	double prior = (double)E / (double)alpha.size();
	for (auto &[b, a] : alpha)
		a = prior;
	int seen = std::min(q + 1, E);
	for (int e = 0; e < seen; e++)
		alpha[j.bs[e]] += 1;
	double sum = 0;
	for (auto &[b, a] : alpha)
		sum += a;
	std::map<int, double> r;
	for (auto &[b, a] : alpha)
		r[b] = E * a / sum;
	for (int e = 0; e < seen; e++)
		if (r[j.bs[e]] >= 1)
			r[j.bs[e]] -= 1;
	double rsum = 0;
	for (auto &[b, v] : r)
		rsum += v;
	double infl = std::max((double)(long)(rsum + 1), (double)(E - j.epoch));
	if (infl <= 0)
		return 1.0;
	double rem = 0;
	for (auto &[b, v] : r) {
		double s = 0;
		int n = 0;
		for (int e = 0; e < E; e++)
			if (j.bs[e] == b) {
				s += j.dur[e];
				n++;
			}
		rem += v * (n ? s / n : 0) * (E - j.epoch) / infl;
	}
	return rem;
}

/* 0.9 x time-weighted mean of the finish-time series + 0.1 x latest. */
double Shockwave::momentum(const ShockwaveJob &j) const
{
	size_t k = j.ft.size();
	if (k == 0)
		return INFINITY;
	std::vector<double> d(k);
	double total = 0;
	for (size_t i = 0; i < k; i++) {
		long next = i + 1 < k ? j.ft[i + 1].first : round_ptr_;
		d[i] = (double)(next - j.ft[i].first);
		total += d[i];
	}
	double a = 0;
	for (size_t i = 0; i < k; i++)
		a += (total > 0 ? d[i] / total : 1.0 / k) * j.ft[i].second;
	return 0.9 * a + 0.1 * j.ft.back().second;
}

std::vector<JobId> Shockwave::round_schedule()
{
	if (resolve_ || !plan_.count(round_ptr_)) {
		auto t0 = std::chrono::steady_clock::now();
		solve();
		solve_seconds.push_back(std::chrono::duration<double>(
						std::chrono::steady_clock::now() - t0)
						.count());
		resolve_ = kept_last; /* kept: solve again next round */
	}
	return plan_[round_ptr_];
}

} /* namespace tidal */
