/*
 * colocate.h - the speeds of two jobs packed on the same GPUs, as Lucid's
 * colocate_info.csv measured them (anchors/lucid/MODEL.md §1.5).
 *
 * A workload is (model, dataset, batch size, amp), written
 * "MODEL/DATASET/BATCH/AMP" (the form a Lucid trace's model column and
 * tidal-train --workload take).  A row gives each job's throughput while
 * packed beside the other, normalised to running alone: 0.444 to 1.498 in
 * the shipped file.  The lookup is Lucid's: the four "outside" models
 * (NeuMF, ResNet50, BERT, Transformer) pack at 1 without one; otherwise
 * the row (J, T), else (T, J) with the speeds swapped.
 *
 * The lucid preset of tidal-sim replays with it; tidal-train paces a
 * packed job on fake GPUs with it, so that a packed pair runs at the
 * table's speeds live.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <map>
#include <string>
#include <utility>

namespace tidal {

struct WorkloadKey {
	std::string model, dataset;
	long batch = 0;
	long amp = 0;
	auto operator<=>(const WorkloadKey &) const = default;
};

/* "MODEL/DATASET/BATCH/AMP" into *OUT.  RET false with *ERR giving the
 * rule when TEXT has not that form (BATCH and AMP integers >= 0). */
bool parse_workload(const std::string &text, WorkloadKey *out,
		    std::string *err);
std::string workload_name(const WorkloadKey &k);

class ColocateTable {
public:
	/* Parse colocate_info.csv's text (FILE names it in errors): a header
	 * with model1,dataset1,batchsize1,amp1,speed1 and the same with 2,
	 * other columns ignored.  RET false with *ERR = "file:line: what is
	 * wrong" (a missing column, a bad number, a second row for a pair). */
	bool parse(const std::string &file, const std::string &text,
		   std::string *err);
	bool load(const std::string &path, std::string *err);

	/* (speed of J, speed of T) when J packs beside T, by Lucid's lookup.
	 * RET false when no row holds the pair. */
	bool speeds(const WorkloadKey &j, const WorkloadKey &t,
		    std::pair<double, double> *out) const;
	size_t rows() const { return pair_speed_.size(); }
	/* The row (J, T) with speeds S, over one already there. */
	void set(const WorkloadKey &j, const WorkloadKey &t,
		 std::pair<double, double> s)
	{
		pair_speed_[{ j, t }] = s;
	}

private:
	std::map<std::pair<WorkloadKey, WorkloadKey>, std::pair<double, double>>
		pair_speed_;
};

} /* namespace tidal */
