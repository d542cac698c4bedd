/*
 * elasticflow.h - pieces of the "elasticflow" preset shared by its policy
 * loops (elasticflow_edf.cc, elasticflow_tiresias.cc, ...).
 *
 * The ElasticFlow simulator's time model, kept here because its numbers
 * depend on it:
 *
 *   - times are whole seconds; an event is {time, start jobs, end jobs};
 *     a job's end event sits at its *planned* end, and a job completes when
 *     its end event is processed (its logged end is its end_time field);
 *   - after each scheduling event the list is coalesced with the slot: an
 *     event within one slot of now is pushed to now + slot and everything
 *     up to that time is merged into it (a lone last event is never
 *     pushed); a moved job's end_time is *not* updated;
 *   - JCT = int(end - submit); makespan = max(end) - min(submit); the
 *     deadline ratio is accepted / (accepted + declined) where late
 *     completions move from accepted to declined.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <string>
#include <vector>

#include "core/placement/free_timeline.h"
#include "core/profiles/throughput_table.h"
#include "sim/preset.h"

namespace tidal::sim::elasticflow {

enum class Status : std::uint8_t { Added, Pending, Running, Done };

/* One job as the ElasticFlow loops see it. */
struct EfJob {
	const Job *job = nullptr;
	const ThroughputRow *row = nullptr;
	int max_gpu = 1;        /* non-elastic rule: largest listed, <= 64, <= bs */
	SlotTime submit = 0, ddl = 0;
	double iter_left = 0;
	Status status = Status::Added;
	int num_gpu = 0;
	SlotTime start = -1;    /* first start, -1 = never */
	SlotTime end_time = 0;  /* planned end (ElasticFlow's end_time) */
	SlotTime old_end_time = 0;
	double overhead = 0;
	/* ef / ef-accessctrl only */
	int ef_max_gpu = 1;     /* models.get_max_gpu rule */
	SlotTime real_end = 0;  /* planned unaligned finish */
	bool in_cache = false;  /* placement seen before (cheap restart) */
	bool best_effort = false;
	std::string reject_reason;
};

struct Event {
	SlotTime time = 0;
	std::vector<int> start_jobs, end_jobs; /* indices into the job table */
};

/*
 * The event list, with the artifact's list semantics: lookups find the
 * first event at a time, new events are appended and the list is sorted
 * (stably) only where the artifact sorts it.
 */
class EventList {
public:
	std::vector<Event> ev;

	bool empty() const { return ev.empty(); }
	/* Index of the first event at T, or -1. */
	int find(SlotTime t) const;
	/* Start events at each distinct submit time, in job-table order. */
	void add_starts(const std::vector<EfJob> &jobs);
	void add_end(std::vector<EfJob> &jobs, int j);
	/* An empty event at T unless one exists (a planned scale-up). */
	void add_scale(SlotTime t);
	/* Move job J's end from old_end_time to end_time (no-op if equal). */
	void change_end(std::vector<EfJob> &jobs, int j);
	void sort();
	/* Coalesce with the slot around NOW (see the banner); MERGE_ENDS =
	 * false merges only start jobs (Tiresias drops the others).
	 * RET: the new first event time. */
	SlotTime coalesce(SlotTime now, SlotTime slot, bool merge_ends);
};

/* The run's shared context: jobs in submit order, tallies, results. */
struct Context {
	const SimInput *in = nullptr;
	SlotTime slot = 240;
	int cluster_gpus = 0;
	int nodes = 0, gpus_per_node = 0;
	/* Each node's id as ElasticFlow numbers it: its position within its
	 * switch (BuddyCluster's free-node order). */
	std::vector<int> node_ids;
	std::vector<EfJob> jobs;
	long accepted = 0, declined = 0;
	RunResult result;
	Progress progress;
	long done = 0;

	/* Log a completion the way job.csv does (end = the job's end_time). */
	void complete(int j);
	/* Record busy GPUs from NOW on. */
	void sample(SlotTime now, int busy);
	/* Finish the result: ratio, makespan. */
	RunResult finish(const std::string &policy);
};

/* Build the context: jobs stable-sorted by submit time. */
Context make_context(const SimInput &in, const ThroughputTable &table,
		     const Params &params, const Progress &progress);

/* Remove the first occurrence of V from L, if any. */
void list_remove(std::vector<int> &l, int v);
bool list_has(const std::vector<int> &l, int v);

RunResult run_edf(Context &ctx, bool admission);
RunResult run_ef(Context &ctx, bool admission, int gpus_per_node);
RunResult run_gandiva(Context &ctx, int gpus_per_node);
RunResult run_themis(Context &ctx, int gpus_per_node);

/* ElasticFlow's get_max_gpu for ef / ef-accessctrl (A100 or T4 rules). */
int ef_max_gpu(const std::string &model, int batch, bool t4);
RunResult run_tiresias(Context &ctx, const Params &params, RunMode mode);

} /* namespace tidal::sim::elasticflow */
