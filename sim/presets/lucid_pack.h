/*
 * lucid_pack.h - the Lucid policy of the Lucid (ASPLOS'23) simulator:
 * the global profiler pass, per-VC packing with Prescient Adaptive
 * Sharing, and the tables both read (MODEL.md §1.4-1.6, §4.6).
 *
 *   profiler pass (lucid_profiler.cc)     all VCs' jobs on "profvc" (2
 *     Least-GPU-First, <= 8 GPUs,         nodes taken from vc8Gr and
 *     200 s each, auto-scaling            vcefl): profqueue, toskip
 *               |
 *               v
 *   per-VC replay (lucid_pack.cc)         priority = estimate x GPUs;
 *     PAS off: place in order, block      PAS on: pack onto a running
 *     PAS on:  pack, else place, skip     job, else place, never block
 *
 * Packed jobs progress at a fractional rate: remain -= rate once a second
 * in IEEE double, as the original does.  The replay is event-driven; a
 * job's end second is found by repeating that subtraction over the job's
 * own interval only (drain_seconds), or in closed form at rate 1, where
 * every subtraction is exact.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/profiles/colocate.h"
#include "sim/presets/lucid.h"

namespace tidal::sim::lucid {

/* --- tables (lucid_tables.cc) --- */

/* A job's workload key (model, dataset, batch size, amp): core's. */
using ::tidal::WorkloadKey;
/* The key of a job read from a Lucid trace (Job::model is
 * "model/dataset/batch/amp"); throws InputError if it has not that form. */
WorkloadKey workload_key(const Job &j);

struct PackTables {
	std::map<WorkloadKey, int> sharescore;            /* single_data.csv */
	ColocateTable colocate;                          /* colocate_info */
	/* Venus_throughput_pred.csv: seconds after the first row, and the
	 * predicted jobs and GPUs submitted in each 10-minute bin. */
	std::vector<double> pred_offset, pred_jobs, pred_gpus;

	/* Sharescore of KEY; throws naming the job if unknown (§1.4). */
	int score(const WorkloadKey &k, JobId job) const;
	/* (speed of J, speed of T) when J packs onto T (§1.5). */
	std::pair<double, double> speeds(const WorkloadKey &j,
					 const WorkloadKey &t, JobId jid) const;
};

/* Load single_data.csv, colocate_info.csv and Venus_throughput_pred.csv
 * from the directory DIR (--profiles). */
PackTables load_pack_tables(const std::string &dir);

/* §1.6: one consumer's copy of a prediction column.  mean_after(t) drops
 * the bins at or before T for good and returns the mean of the first 5 left
 * (all of them if fewer than 6); NaN when this call dropped the last one,
 * FALLBACK once the copy was already empty. */
class Forecast {
public:
	Forecast(const PackTables &t, const std::vector<double> &column,
		 Time start, double fallback)
		: offset_(t.pred_offset), bins_(column), start_(start),
		  fallback_(fallback)
	{
	}
	double mean_after(Time t);

private:
	const std::vector<double> &offset_;
	const std::vector<double> &bins_;
	Time start_;
	double fallback_;
	size_t next_ = 0;
};

/* --- progress at a fractional rate --- */

/* Seconds of `remain -= rate` (IEEE double, once a second) until remain
 * <= 0, starting from REMAIN.  Rate 1 is closed form: every step but the
 * last is exact (Sterbenz), and the last cannot round up to > 0. */
long drain_seconds(double remain, double rate);
/* REMAIN after N such subtractions. */
double drain(double remain, double rate, long n);

/* --- nodes: Lucid's consolidate placer over a list that can grow --- */

struct SlotNode {
	long name = 0;
	int free = 8;
};

class NodeList {
public:
	explicit NodeList(int nodes, int gpus_per_node = 8);
	/* §3: best fit for <= 8 GPUs, whole idle nodes (then the rest on
	 * the next-freest node) for more.  RET: (node name, GPUs) or empty. */
	std::vector<std::pair<long, int>> place(int gpus);
	void release(const std::vector<std::pair<long, int>> &p);
	int free_total() const { return free_total_; }
	int size() const { return (int)nodes_.size(); }
	int idle_nodes() const;
	bool is_idle(long name) const;
	bool has(long name) const;
	void add(long name);
	/* Remove the idle node with the highest name.  RET: false if none. */
	bool remove_highest_idle();

private:
	std::vector<SlotNode> nodes_;
	int per_node_;
	int free_total_ = 0;
};

/* --- profiler pass (lucid_profiler.cc) --- */

struct ProfiledJob {
	bool profiled = false;
	bool toskip = false; /* finished inside the profiler */
	Time start = -1, end = -1;
	double profqueue = 0;
};

struct ProfilerResult {
	std::map<JobId, ProfiledJob> jobs;
	std::vector<std::pair<Time, int>> scaling; /* (t, +1 | -1) */
};

/* §4.6.1: JOBS are every VC's jobs, stable-sorted by submit. */
ProfilerResult run_profiler(const std::vector<Job> &jobs,
			    const PackTables &tables, Time start_ts);

/* --- per-VC replay (lucid_pack.cc) --- */

/* §4.6.4: the seconds (multiples of 100 from START_TS) at which PAS turns
 * on (true) or off (false), beginning with its value at START_TS. */
std::vector<std::pair<Time, bool>> pas_schedule(const PackTables &t,
						Time start_ts);

struct PackInput {
	const VcInput *vc = nullptr;
	const PackTables *tables = nullptr;
	const ProfilerResult *profiler = nullptr;
	const std::vector<std::pair<Time, bool>> *pas = nullptr;
	bool echo_scaling = false; /* vcYVn follows the profiler's scaling */
};

VcOutput replay_lucid_vc(const PackInput &in);

} /* namespace tidal::sim::lucid */
