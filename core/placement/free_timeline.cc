/*
 * free_timeline.cc - the free-GPU timeline and slot arithmetic.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/placement/free_timeline.h"

#include <cmath>

namespace tidal {

SlotTime align_to_slot(SlotTime s, SlotTime t, SlotTime slot)
{
	SlotTime d = t - s;
	/* Python's floor division and modulo: the remainder has the sign of
	 * the divisor (positive), so this is a ceiling for any sign of d. */
	SlotTime q = d / slot, r = d % slot;
	if (r < 0) {
		q -= 1;
		r += slot;
	}
	if (r > 0)
		q += 1;
	return s + q * slot;
}

double elastic_overhead(int gpus, bool restart, bool cached, int cluster_gpus)
{
	double o = cluster_gpus >= 256 ? 7 : 2;
	if (cached)
		return o;
	if (restart)
		o += cluster_gpus >= 256 ? 47 : 27;
	/* log(g)/log(2), as Python's math.log(g, 2) computes it. */
	return o + (std::log((double)gpus) / std::log(2.0) + 1) * 2;
}

void FreeTimeline::reset(SlotTime now, int total)
{
	free_.clear();
	free_[now] = total;
}

int FreeTimeline::value_at(SlotTime t, int def) const
{
	auto it = free_.upper_bound(t);
	return it == free_.begin() ? def : std::prev(it)->second;
}

int FreeTimeline::value_before(SlotTime t, int def) const
{
	auto it = free_.lower_bound(t);
	return it == free_.begin() ? def : std::prev(it)->second;
}

void FreeTimeline::merge()
{
	int last = -1;
	for (auto it = free_.begin(); it != free_.end();) {
		if (it->second == last) {
			it = free_.erase(it);
			continue;
		}
		last = it->second;
		++it;
	}
}

} /* namespace tidal */
