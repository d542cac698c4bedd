/*
 * free_timeline.h - free GPUs over future time, for planners that reserve
 * GPUs ahead (ElasticFlow, elastic EDF), and the slot arithmetic they share.
 *
 * A FreeTimeline maps a time to the number of GPUs free from that key until
 * the next key; past the last key the whole cluster is assumed free.  A
 * planner copies it, reserves a job's GPUs segment by segment, inserts the
 * key where they come back, and compacts it (merge(): a key whose value
 * equals the previous key's value is dropped).  Times are whole seconds:
 * every time such a planner produces is an integer (ceil of a finish
 * time, or a slot boundary).
 *
 *     now         k1           k2
 *     |--- 96 ----|---- 120 ---|---- 128 (cluster) ...
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <map>

namespace tidal {

using SlotTime = std::int64_t;

/* s + ceil((t - s) / slot) * slot, also a ceiling when t < s (integer
 * floor division plus one if the remainder is positive). */
SlotTime align_to_slot(SlotTime s, SlotTime t, SlotTime slot);

/* ElasticFlow's restart/rescale overhead estimate, seconds: 2 s base (7 s
 * on >= 256 GPUs); if the placement is cached that is all; a periodic
 * restart adds 27 s (+20 s on >= 256 GPUs); then 2 (log2(g) + 1). */
double elastic_overhead(int gpus, bool restart, bool cached, int cluster_gpus);

class FreeTimeline {
public:
	FreeTimeline() = default;
	/* {now: total}. */
	FreeTimeline(SlotTime now, int total) { reset(now, total); }

	void reset(SlotTime now, int total);
	bool has(SlotTime t) const { return free_.count(t) > 0; }
	/* Value at key T (which must exist). */
	int at(SlotTime t) const { return free_.at(t); }
	/* Free GPUs at any time T: the last key <= T, DEFAULT before the
	 * first key. */
	int value_at(SlotTime t, int def) const;
	/* The value of the last key strictly before T, or DEF. */
	int value_before(SlotTime t, int def) const;
	void set(SlotTime t, int free) { free_[t] = free; }
	void add(SlotTime t, int delta) { free_[t] += delta; }
	/* Drop keys whose value equals the previous key's value. */
	void merge();

	const std::map<SlotTime, int> &keys() const { return free_; }

private:
	std::map<SlotTime, int> free_;
};

} /* namespace tidal */
