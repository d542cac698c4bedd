/*
 * model.h - the engine's view of a cluster and its jobs.
 *
 * These types are the whole vocabulary shared by the slurmctld plugin, the
 * simulator and tidalctl.  Nothing here knows about Slurm: the plugin copies
 * slurmctld state into a Snapshot, the simulator builds one from a trace.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace tidal {

using JobId = std::int64_t;
using Time = double; /* seconds on the snapshot's clock */

inline constexpr Time kNoDeadline = std::numeric_limits<Time>::infinity();

/* One host.  GPU↔NUMA↔HCA affinity is summarised as counts: placement only
 * needs to know whether a node is worth more than its GPU count. */
struct Node {
	std::string name;
	int gpus = 0;
	int cpus = 0;
	double mem_mb = 0;
	int switch_id = -1; /* leaf switch in Cluster::switches, -1 if none */
	int numa_domains = 1;
	int hcas = 0;
	std::string group; /* partition / virtual cluster */
};

/* A switch of the fabric tree (Slurm's topology.conf).  Leaf switches list
 * nodes, inner switches list child switches. */
struct Switch {
	std::string name;
	int parent = -1;
	int level = 0; /* 0 = leaf */
	double link_gbps = 0;
	std::vector<int> nodes;
	std::vector<int> children;
};

/* How far jobs may share GPUs (Muri's groups, Lucid's packs).  A replay
 * models no limit; sched/tidal says what Slurm's gres/shard allows. */
struct GpuSharing {
	/* Jobs one GPU may hold at once: 0 = no limit (a replay); 1 = none
	 * (sched/tidal without gres/shard); k = the shards of a GPU. */
	int jobs_per_gpu = 0;
	/* GPUs on one node that a sharing job may span: 0 = any; 1 = Slurm
	 * 22.05's gres/shard (one GPU per job per node). */
	int gpus_per_node = 0;
	/* Why sharing is limited, for the reasons of jobs kept apart. */
	std::string why;

	bool possible() const { return jobs_per_gpu != 1; }
	/* Whether a job of GPUS GPUs may share at all. */
	bool fits(int gpus) const
	{
		return possible() &&
		       (gpus_per_node == 0 || gpus <= gpus_per_node);
	}
};

struct Cluster {
	std::vector<Node> nodes;
	std::vector<Switch> switches;
	GpuSharing sharing;

	int total_gpus() const;
	int max_gpus_per_node() const;
	/* Index of the node called NAME, or -1. */
	int find_node(const std::string &name) const;
};

enum class JobState : std::uint8_t { Future, Pending, Running, Done, Rejected };
const char *job_state_name(JobState s);

/* GPUs a job holds on one node. */
struct NodeShare {
	int node = -1;
	int gpus = 0;
	bool operator==(const NodeShare &) const = default;
};
using Placement = std::vector<NodeShare>;
int placement_gpus(const Placement &p);

/*
 * A training job.  The first block is what the user asked for and what the
 * trace (or sbatch) said; the second is what has happened to it so far.
 * Work is counted in iterations; a trace that only gives a duration sets
 * iterations = duration and iter_time = 1 s.
 */
struct Job {
	/* --- request --- */
	JobId id = 0;
	std::string name;
	std::size_t index = 0; /* position in the input, for stable ties */
	std::string user;
	std::string group;     /* virtual cluster / partition / account */
	std::string model;     /* profile key */
	int batch = 0;         /* global batch size */
	Time submit = 0;
	int gpus = 1;          /* requested (rigid) GPU count */
	int cpus = 0;          /* requested CPUs; 0 = unknown */
	std::string job_name;  /* the user's name for it (sbatch -J); "" = none */
	int min_gpus = 0;      /* elastic range; 0 = rigid */
	int max_gpus = 0;
	Time deadline = kNoDeadline;
	bool best_effort = false;
	double iterations = 0; /* total work */
	double duration = 0;   /* run time alone at `gpus`, seconds (oracle) */
	double iter_time = 0;  /* seconds per iteration at `gpus` */
	double estimate = -1;  /* predicted duration, seconds; -1 = none */
	/* false when the caller does not know it (the plugin: no
	 * --train-iters, no time limit), and the numbers above are only
	 * placeholders that a deadline test must not trust. */
	bool iterations_known = true; /* `iterations` is the real work */
	bool time_known = true;       /* remaining_time() is the real time */
	std::array<double, 3> stages{}; /* per-iteration IO/CPU, GPU, network s */
	int priority_class = 0;
	double gpu_util = 0;   /* 0..100, from the trace, for packing policies */
	double gpu_mem_mb = 0;
	int max_batch = 0; /* largest global batch an adaptive policy may
			    * choose (--train-max-batch); 0 = `batch` */

	/* --- measured: what the job's own trainer reported (sched/tidal,
	 * through its node agents); meaningful only when `measured` --- */
	bool measured = false;
	double step_time = 0; /* seconds per step of its trainer */
	double sync_time = 0; /* of which gradient synchronisation */
	int run_batch = 0;    /* the global batch it runs at; 0 = unknown */
	int run_world = 0;    /* its world size when it reported */
	/* Pollux's gradient statistics: |G|^2 and the noise of a gradient
	 * of `batch` samples (tidal-train(1)); NaN = not measured. */
	double grad_sqr = std::numeric_limits<double>::quiet_NaN();
	double grad_var = std::numeric_limits<double>::quiet_NaN();

	/* --- state --- */
	JobState state = JobState::Future;
	int alloc = 0;          /* GPUs held now */
	Placement placement;
	Time start = -1;        /* first start */
	Time end = -1;
	double remaining = 0;   /* iterations left */
	double attained = 0;    /* GPU-seconds of service received */
	double executed = 0;    /* seconds spent holding GPUs */
	double queued = 0;      /* seconds spent pending after submission */
	int preemptions = 0;
	int level = 0;          /* multi-level queue index (Tiresias) */
	/* Running and sharing its GPUs (sched/tidal, gres/shard): the lowest
	 * id of the jobs on them, the same for all of them; 0 = none. */
	JobId gpu_group = 0;
	std::uint64_t seq = 0;  /* position inside its queue level */

	bool elastic() const { return max_gpus > 0 && max_gpus != min_gpus; }
	bool has_deadline() const { return deadline != kNoDeadline; }
	bool active() const
	{
		return state == JobState::Pending || state == JobState::Running;
	}
	/* Seconds left at the requested size, by the job's own speed. */
	double remaining_time() const { return remaining * iter_time; }
};

class FreeMap; /* placement.h */

/*
 * What changed in a caller's job list since its previous decide() on the
 * same policy, for policies that keep indexes across calls
 * (Policy::incremental).  A replay gives one; the plugin and tidalctl do
 * not, and such a policy then works from `jobs` alone, as the others do.
 *
 *   decide(t1): stream 7, changed = every job      rebuild from the lists
 *   decide(t2): stream 7, changed = {B}, left = {A}  A ended, B started
 *   decide(t3): stream 8, changed = every job      a new run: rebuild
 *
 * A job's pointer names that job while it stays in `jobs`: from the delta
 * that lists it in `changed` until one lists it in `left`, its request
 * fields do not change, its state, GPUs and placement change only with an
 * entry in `changed`, and its progress counters change as it runs
 * (Snapshot::sync brings them up to date).  Once it has left, its memory
 * may hold a new job: read `left` by id, through no pointer kept.
 */
struct SnapshotDelta {
	/* The caller's job stream.  A policy that sees a new value forgets
	 * what it kept; `changed` then lists every job in `jobs`. */
	std::uint64_t stream = 0;
	/* Jobs that entered `jobs` (arrived, or back after a requeue delay)
	 * or changed state, GPUs or placement since the previous call, each
	 * once, with its position in the caller's order of `jobs` (a stable
	 * sort over `jobs` breaks ties by it).  Read after `left`. */
	std::vector<std::pair<const Job *, std::uint64_t>> changed;
	/* Jobs that left `jobs` since the previous call (ended, rejected, or
	 * out for a requeue delay); a job that left and came back is in both
	 * lists. */
	std::vector<JobId> left;
};

/*
 * What a policy sees: the cluster and every active (pending or running) job,
 * at time `now`.  Policies must not keep pointers past one decide() call,
 * except as SnapshotDelta allows.
 */
struct Snapshot {
	const Cluster *cluster = nullptr;
	std::vector<const Job *> jobs;
	Time now = 0;
	/* false: the caller (a replay) reads only actions, GPUs and
	 * placements, so policies may skip building reason strings, and Keep
	 * decisions need not repeat the job's placement. */
	bool want_reasons = true;
	/* true: the caller treats a job without a decision as unchanged (a
	 * running job keeps its GPUs, a pending one waits), so policies may
	 * leave out Keep and Hold decisions.  A replay that decides at every
	 * event sets it; the plugin and tidalctl explain do not. */
	bool changes_only = false;
	/* Optional: the free GPUs left by the placements of the running jobs
	 * in `jobs` (a replay keeps one up to date), so a policy need not
	 * rebuild it.  nullptr: the policy builds its own. */
	const FreeMap *free = nullptr;
	/* Optional: how many jobs in `jobs` are pending (-1: not counted).
	 * A replay appends arrivals, so a policy that wants only the pending
	 * jobs can look from the end and stop when it has them all. */
	long pending = -1;
	/* Optional (a replay): what changed since the previous call. */
	const SnapshotDelta *delta = nullptr;
	/* Optional (a replay that keeps progress lazily, for a policy that
	 * says it reads progress through it, Policy::incremental): brings one
	 * job's progress counters (remaining, attained, executed, queued) to
	 * `now`.  When set, the caller has not brought them up to date. */
	std::function<void(const Job &)> sync;
};

} /* namespace tidal */
