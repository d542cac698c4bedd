/*
 * profile_pollux.cc - the Pollux artifact's ground-truth lookups
 * (applications.py), bit for bit where floating point allows.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/profiles/profile_pollux.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace tidal {

static std::string placement_str(const std::vector<int> &p)
{
	std::ostringstream s;
	s << "(";
	for (size_t i = 0; i < p.size(); i++)
		s << (i ? ", " : "") << p[i];
	s << ")";
	return s.str();
}

void PolluxApp::finish()
{
	if (placements.empty() || validation.empty())
		throw ProfileError(name + ": no placements or validation table");
	if (!init_batch_size)
		init_batch_size = validation.begin()->first;
	if (!max_batch_size)
		max_batch_size = validation.rbegin()->first;
	int lo = placements[0].local_bsz, hi = lo;
	for (const PlacementRow &r : placements) {
		lo = std::min(lo, r.local_bsz);
		hi = std::max(hi, r.local_bsz);
	}
	if (!min_local_bsz)
		min_local_bsz = lo;
	if (!max_local_bsz)
		max_local_bsz = hi;
	size_t epochs = SIZE_MAX;
	for (const auto &[b, rows] : validation)
		epochs = std::min(epochs, rows.size());
	if (!max_epochs)
		max_epochs = (int)epochs;
	if ((size_t)max_epochs > epochs)
		throw ProfileError(name + ": max_epochs " +
				   std::to_string(max_epochs) +
				   " exceeds the validated epochs (" +
				   std::to_string(epochs) + ")");
	by_id_.clear();
	for (size_t i = 0; i < placements.size(); i++)
		by_id_[placements[i].placement].push_back(i);
	for (auto &[id, rows] : by_id_)
		std::stable_sort(rows.begin(), rows.end(),
				 [&](size_t a, size_t b) {
					 return placements[a].local_bsz <
						placements[b].local_bsz;
				 });
	memo_.clear();
	nd_.reset();
}

long PolluxApp::placement_id(const std::vector<int> &placement)
{
	std::vector<int> p;
	for (int g : placement)
		if (g)
			p.push_back(g);
	std::vector<int> best = p;
	for (size_t i = 1; i < p.size(); i++) {
		std::vector<int> r(p.begin() + i, p.end());
		r.insert(r.end(), p.begin(), p.begin() + i);
		best = std::min(best, r);
	}
	long id = 0;
	for (int g : best)
		id = id * 10 + g;
	return id;
}

/* scipy interp1d, kind linear: the segment [x_lo, x_hi] with x_hi the
 * first sample >= x (at least the second), y = slope (x - x_lo) + y_lo. */
StepTime PolluxApp::measured(long id, int local_bsz) const
{
	const auto &rows = by_id_.at(id);
	auto x_of = [&](size_t k) { return placements[rows[k]].local_bsz; };
	if (rows.size() < 2 || local_bsz < x_of(0) ||
	    local_bsz > x_of(rows.size() - 1)) {
		std::ostringstream s;
		s << name << ": local batch size " << local_bsz
		  << " is outside the measured range of placement " << id;
		throw ProfileError(s.str());
	}
	size_t hi = 1;
	while (hi < rows.size() - 1 && x_of(hi) < local_bsz)
		hi++;
	const PlacementRow &a = placements[rows[hi - 1]];
	const PlacementRow &b = placements[rows[hi]];
	double dx = (double)(b.local_bsz - a.local_bsz);
	double x = (double)(local_bsz - a.local_bsz);
	StepTime t;
	t.step = (b.t.step - a.t.step) / dx * x + a.t.step;
	t.sync = (b.t.sync - a.t.sync) / dx * x + a.t.sync;
	return t;
}

/* Means of the placement rows per (nodes, replicas, local_bsz), in that
 * sorted order (pandas groupby), then the scalability rows. */
StepTime PolluxApp::fallback(const std::vector<int> &placement,
			     int local_bsz) const
{
	if (!nd_) {
		std::map<std::array<int, 3>, std::vector<StepTime>> groups;
		for (const PlacementRow &r : placements) {
			std::string d = std::to_string(r.placement);
			int reps = 0;
			for (char c : d)
				reps += c - '0';
			groups[{(int)d.size(), reps, r.local_bsz}].push_back(r.t);
		}
		std::vector<Point3> pts;
		std::vector<std::vector<double>> vals;
		for (const auto &[k, ts] : groups) {
			double s = 0, y = 0;
			for (const StepTime &t : ts) {
				s += t.step;
				y += t.sync;
			}
			pts.push_back({(double)k[0], (double)k[1], (double)k[2]});
			vals.push_back({s / (double)ts.size(),
					y / (double)ts.size()});
		}
		for (const ScalabilityRow &r : scalability) {
			pts.push_back({(double)r.num_nodes,
				       (double)r.num_replicas,
				       (double)r.local_bsz});
			vals.push_back({r.t.step, r.t.sync});
		}
		nd_ = std::make_unique<LinearInterp3>(pts, vals);
	}
	int nodes = std::min((int)placement.size(), 16), reps = 0;
	for (int g : placement)
		reps += g;
	auto v = nd_->at({(double)nodes, (double)reps, (double)local_bsz});
	if (!v) {
		std::ostringstream s;
		s << name << ": placement " << placement_str(placement)
		  << " (id " << placement_id(placement)
		  << ") at local batch size " << local_bsz
		  << " is outside the measured placements and scalability "
		     "range";
		throw ProfileError(s.str());
	}
	return {(*v)[0], (*v)[1]};
}

StepTime PolluxApp::throughput(const std::vector<int> &placement,
			       int local_bsz) const
{
	std::vector<int> p;
	for (int g : placement)
		if (g)
			p.push_back(g);
	if (p.empty())
		throw ProfileError(name + ": throughput of an empty placement");
	auto key = std::make_pair(p, local_bsz);
	auto it = memo_.find(key);
	if (it != memo_.end())
		return it->second;
	long id = placement_id(p);
	StepTime t = by_id_.count(id) ? measured(id, local_bsz)
				      : fallback(p, local_bsz);
	memo_.emplace(key, t);
	return t;
}

double PolluxApp::progress(int epoch) const
{
	if (epoch == 0)
		return 0.0;
	double p = INFINITY;
	for (const auto &[b, rows] : validation) {
		if (epoch - 1 >= (int)rows.size())
			throw ProfileError(name + ": no progress for epoch " +
					   std::to_string(epoch));
		p = std::min(p, rows[epoch - 1].progress);
	}
	return p;
}

void PolluxApp::bounds(long batch, int *lo, int *hi) const
{
	*lo = *hi = -1;
	for (const auto &[b, rows] : validation) {
		if (b <= batch)
			*lo = b;
		if (b >= batch) {
			*hi = b;
			break;
		}
	}
	if (*lo < 0 || *hi < 0)
		throw ProfileError(name + ": batch size " +
				   std::to_string(batch) +
				   " is outside the validated range");
}

const PolluxApp::EpochRow &PolluxApp::row(int batch, int epoch) const
{
	const auto &rows = validation.at(batch);
	if (epoch < 0 || epoch >= (int)rows.size())
		throw ProfileError(name + ": no validation row for epoch " +
				   std::to_string(epoch));
	return rows[epoch];
}

/* ((B - L) v_U + (U - B) v_L) / (U - L), as the artifact writes it. */
static double mix(long b, int lo, int hi, double vlo, double vhi)
{
	return ((double)(b - lo) * vhi + (double)(hi - b) * vlo) /
	       (double)(hi - lo);
}

GradStats PolluxApp::grad_stats(long batch, int epoch) const
{
	int lo, hi;
	bounds(batch, &lo, &hi);
	const EpochRow &a = row(lo, epoch), &b = row(hi, epoch);
	if (lo == hi)
		return a.grad;
	return {mix(batch, lo, hi, a.grad.sqr, b.grad.sqr),
		mix(batch, lo, hi, a.grad.var, b.grad.var)};
}

double PolluxApp::iteration(long batch, int epoch) const
{
	int lo, hi;
	bounds(batch, &lo, &hi);
	const EpochRow &a = row(lo, epoch), &b = row(hi, epoch);
	if (lo == hi)
		return a.iteration;
	return mix(batch, lo, hi, a.iteration, b.iteration);
}

} /* namespace tidal */
