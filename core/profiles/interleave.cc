/*
 * interleave.cc - staggered group iteration times (interleave.h).
 *
 * The arithmetic keeps the anchor's order of operations: group times feed
 * end-event times that are compared to 1e-4 s, and the matching's edge
 * weights are compared with a relative tolerance, so an ulp can move a
 * schedule.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/profiles/interleave.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tidal {

GroupFactors muri_group_factors()
{
	return { 1.015, 1.33 / 1.015, 1.5 / 1.015, 1.37 / 1.015 };
}

/*
 * Four slots, two rounds.  f[i] is when slot boundary i is reached; at each
 * boundary the job in slot (i+1)%4 syncs, the one in (i+2)%4 computes and
 * the one in (i+3)%4 loads data (that stage spans two boundaries).  The
 * period is read off when two consecutive four-boundary spans agree within
 * rel 1e-3 (math.isclose), else from the second round.
 */
double staggered_time(const StageTimes *const *order, int n)
{
	double f[9] = {0};
	for (int i = 0; i < 8; i++) {
		int a = (i + 1) % 4, b = (i + 2) % 4, c = (i + 3) % 4;
		if (a < n)
			f[i + 1] = std::max(f[i + 1], f[i] + (*order[a])[2]);
		if (b < n)
			f[i + 1] = std::max(f[i + 1], f[i] + (*order[b])[1]);
		if (i > 0 && c < n)
			f[i + 1] =
				std::max(f[i + 1], f[i - 1] + (*order[c])[0]);
		if (i >= 4) {
			double x = f[i + 1] - f[i - 3], y = f[i] - f[i - 4];
			double d = std::fabs(x - y);
			if (x == y ||
			    d <= 1e-3 * std::max(std::fabs(x), std::fabs(y))) {
				if (x > 0)
					return x;
				break;
			}
		}
	}
	return f[8] - f[4];
}

/* Muri's direct pairing of two jobs: each one's data loading hides the
 * other's compute and sync. */
static double pair_time(const StageTimes &a, const StageTimes &b)
{
	return std::max(a[0], b[1] + b[2]) + std::max(b[0], a[1] + a[2]);
}

InterleavePlan interleave_plan(const std::vector<const InterleaveJob *> &jobs,
			       Ordering ordering)
{
	int n = (int)jobs.size();
	const StageTimes *slot[4] = {};
	InterleavePlan plan;
	if (ordering == Ordering::None) {
		for (int i = 0; i < n; i++)
			plan.order.push_back((std::size_t)i);
		std::stable_sort(plan.order.begin(), plan.order.end(),
				 [&](std::size_t x, std::size_t y) {
					 return jobs[x]->index < jobs[y]->index;
				 });
		for (int i = 0; i < n; i++)
			slot[i] = &jobs[plan.order[i]]->stages;
		plan.raw = staggered_time(slot, n);
		return plan;
	}
	/* itertools.permutations order: lexicographic over positions. */
	int perm[4] = {0, 1, 2, 3};
	bool best = ordering == Ordering::Best;
	double tt = best ? std::numeric_limits<double>::infinity() : 0.0;
	do {
		for (int i = 0; i < n; i++)
			slot[i] = &jobs[perm[i]]->stages;
		double t = staggered_time(slot, n);
		if (best ? t < tt : t > tt) {
			tt = t;
			plan.order.assign(perm, perm + n);
		}
	} while (std::next_permutation(perm, perm + n));
	if (n == 2) {
		double t = pair_time(jobs[0]->stages, jobs[1]->stages);
		if (best ? t < tt : t > tt) {
			tt = t;
			plan.shape = InterleavePlan::Pair;
			plan.order = { 0, 1 };
		}
	}
	if (plan.order.empty()) /* every time NaN: keep the input order */
		for (int i = 0; i < n; i++)
			plan.order.push_back((std::size_t)i);
	plan.raw = tt;
	return plan;
}

double interleave_raw_time(const std::vector<const InterleaveJob *> &jobs,
			   Ordering ordering)
{
	return interleave_plan(jobs, ordering).raw;
}

std::vector<SlotRun> slot_starts(InterleavePlan::Shape shape, int n, uint64_t k)
{
	std::vector<SlotRun> r;
	if (shape == InterleavePlan::Pair && n == 2) {
		int d = (int)(k % 2); /* member D loads, the other computes */
		r.push_back({ d, 0, 0, k + 1 });
		r.push_back({ 1 - d, 1, 2, k + 1 });
		return r;
	}
	for (int m = 0; m < n && m < 4; m++) {
		if (k < (uint64_t)m)
			continue;
		switch ((k - (uint64_t)m) % 4) {
		case 0:
			r.push_back({ m, 0, 0, k + 2 });
			break;
		case 2:
			r.push_back({ m, 1, 1, k + 1 });
			break;
		case 3:
			r.push_back({ m, 2, 2, k + 1 });
			break;
		}
	}
	return r;
}

double group_iter_time(const std::vector<const InterleaveJob *> &jobs,
		       Ordering ordering, const GroupFactors &factors)
{
	if (jobs.size() == 1)
		return jobs[0]->solo;
	return interleave_raw_time(jobs, ordering) * factors[jobs.size() - 1];
}

/* Python's float modulo (non-negative for a positive divisor). */
static double pymod(double x, double y)
{
	double m = std::fmod(x, y);
	if (m != 0 && (m < 0) != (y < 0))
		m += y;
	return m;
}

int antman_iterations(StageTimes t, const StageTimes &c)
{
	double gpu_net = c[1] + c[2], io_net = c[0] + c[2],
	       io_gpu = c[0] + c[1];
	int iters = (int)std::floor(t[0] / gpu_net);
	double extra = pymod(t[0], gpu_net);
	if (extra > 0) {
		iters += 1;
		t[1] -= std::min({t[1], c[2], gpu_net - extra});
	}
	iters += (int)std::floor(t[1] / io_net);
	extra = pymod(t[1], io_net);
	if (extra > 0) {
		iters += 1;
		if (extra < c[0])
			t[2] -= std::min(t[2], io_gpu - extra);
	}
	iters += (int)std::floor(t[2] / io_gpu);
	if (pymod(t[2], io_gpu) > c[0])
		iters += 1;
	return iters;
}

} /* namespace tidal */
