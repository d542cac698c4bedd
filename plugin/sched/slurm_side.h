/*
 * slurm_side.h - helpers shared by the Slurm-facing files of sched/tidal
 * (sched_tidal.c, snapshot.c, apply.c).  Includes Slurm's headers: never
 * include it from C++.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#ifndef TIDAL_PLUGIN_SLURM_SIDE_H
#define TIDAL_PLUGIN_SLURM_SIDE_H

#include <stdint.h>
#include <time.h>

#include "src/slurmctld/slurmctld.h"

#include "plugin/sched/bridge.h"

#define TIDAL_HOLD_PREFIX "TidalHold: "
#define TIDAL_PREEMPT_PREFIX "TidalPreempted: "
#define TIDAL_REJECT_PREFIX "TidalReject: "

/* Log TEXT (lines the C++ side wrote) one line each as "sched/tidal:
 * LINE": a line that starts "note: " at info, without that word; the
 * others at error if ERRORS, else at info.  TEXT is cut up (strtok_r);
 * NULL logs nothing. */
void tidal_log_lines(char *text, bool errors);

/* Parse Tidal's options (options.h) from a job's spank_job_env into J;
 * only while tidal_snapshot_take() runs (strings are snapshot.c's). */
void tidal_job_options(char **env, uint32_t n, tidal_job_t *j);

/* ---- snapshot.c / apply.c: the cycle in lock sections ----
 *
 *   lock     tidal_requeue_delays_give_back()
 *                                       resize.c: Slurm's requeue delay
 *                                       off the jobs Tidal requeued
 *            tidal_snapshot_take()      copy what changed
 *   unlock   tidal_snapshot_finish()    lay the copies out as SNAP
 *            tidal_engine_decide()
 *            tidal_plan_prepare()       keep the decisions that change
 *                                       something
 *   lock     tidal_plan_apply()         starts, requeues, resizes and the
 *                                       first Reasons
 *   lock     tidal_plan_apply_reasons() the next Reasons, while any are
 *   ...                                 left, the lock let go in between
 */

/* The Reason apply.c last wrote to a job, kept with snapshot.c's copy of
 * the job from cycle to cycle.  Addresses are compared, never read. */
typedef struct {
	const void *desc_seen; /* the job's state_desc at the snapshot */
	uint32_t reason_seen;  /* and its state_reason */
	const void *desc_set;  /* the state_desc apply.c wrote; NULL: none */
	uint64_t text_hash;    /* of that text */
	uint64_t words_hash;   /* of that text with its numbers masked */
} tidal_reason_memo_t;

/* No lock held, before tidal_snapshot_take(): whether the policy admits
 * jobs by their deadlines itself (tidal_engine_admits_by_deadline); if
 * not, the snapshot applies Slurm's deadline check (deadline_ok). */
void tidal_snapshot_deadlines(int policy_admits);
/* Job locks held: the time limit (minutes) to start JOB_PTR with, its
 * limit cut to its --deadline (under every policy): rounded down, as
 * Slurm's rule has it, or, for a job a policy that admits jobs by their
 * deadlines plans, rounded up, so that it is not ended before the
 * deadline it was planned to meet; 0 to leave it as it is (no deadline). */
uint32_t tidal_deadline_limit(job_record_t *job_ptr, time_t now);
/* Job locks held: the GPUs a running job holds (its gres/gpu
 * allocation); 0 if none. */
int tidal_alloc_gpus(job_record_t *job_ptr);
/* Job locks held: the nodes JOB_PTR may hold from NOW to the end of its
 * time limit as far as reservations go (job_test_resv, as Slurm's
 * schedulers ask it); NULL if there is no reservation, or Slurm is to
 * judge (an error).  The caller frees it. */
bitstr_t *tidal_resv_usable(job_record_t *job_ptr, time_t now);
/* Job locks held (apply.c): set a pending job's Reason to WAIT_RESOURCES
 * with PREFIX + REASON as its description, if that changed. */
void tidal_set_reason(job_record_t *job_ptr, const char *prefix,
		      const char *reason);
/* The pending jobs in a reservation that the last tidal_snapshot_take()
 * found eligible and left out of the snapshot (Slurm places them): their
 * ids in *IDS, valid until the next take.  RET how many. */
int tidal_snapshot_resv_jobs(const uint32_t **ids);
/* No lock held, after tidal_snapshot_take(): fill SNAP's arrays. */
void tidal_snapshot_finish(tidal_snap_t *snap);
/* The memo of the job at SNAP_INDEX of the latest snapshot, or NULL;
 * valid until the next tidal_snapshot_take(). */
tidal_reason_memo_t *tidal_snapshot_memo(const tidal_snap_t *snap,
					 int snap_index);
/* No lock held: choose what tidal_plan_apply() and
 * tidal_plan_apply_reasons() will do with PLAN. */
void tidal_plan_prepare(const tidal_snap_t *snap, const tidal_plan_t *plan);
/* Locks held: write the next Reasons chosen by tidal_plan_prepare().
 * RET how many are left for another lock section. */
int tidal_plan_apply_reasons(const tidal_snap_t *snap,
			     const tidal_plan_t *plan);
/* Reasons left to write for PLAN (no lock needed: the cycle thread's). */
int tidal_plan_reasons_left(const tidal_plan_t *plan);

/* ---- account.c: Tidal's decisions in AdminComment (job write lock) ----
 * tidal_account_configure() at the start of each apply; the others when
 * JOB_PTR started, was requeued by Tidal to resize or (PREEMPTED) to
 * preempt it, or was rejected for WHY. */
void tidal_account_configure(const tidal_apply_conf_t *conf);
void tidal_account_started(job_record_t *job_ptr);
void tidal_account_requeued(job_record_t *job_ptr, bool preempted);
void tidal_account_rejected(job_record_t *job_ptr, const char *why);

/* ---- resize.c: jobs in transit (requeued by Tidal, being resized) ---- */

enum { TIDAL_RS_CHECKPOINT = 0, TIDAL_RS_REQUEUED = 1 };
/* A transit's GPU request: still to change to the target; changed; or
 * kept as it is, because the job was preempted rather than resized. */
enum { TIDAL_RQ_TODO = 0, TIDAL_RQ_SET = 1, TIDAL_RQ_KEEP = 2 };

#define TIDAL_AT_MAX 256

typedef struct {
	uint32_t job;
	int gpus, nodes;  /* target */
	char at[TIDAL_AT_MAX]; /* where the policy placed the target,
				* "n1:4,n2:4" ("" if it placed none, or
				* the list is longer than this) */
	int phase;        /* TIDAL_RS_* */
	int request_set;  /* TIDAL_RQ_*: the pending job's GPU request */
	time_t since;     /* phase entered */
	uint64_t cmd;     /* checkpoint_stop asked of the batch host's
			   * tidald (agents/commands.cc), 0 = none */
} tidal_resize_t;

void tidal_note_requeue(uint32_t job, time_t when);
void tidal_forget_requeue(uint32_t job);
/* The jobs Tidal requeued: Slurm delayed their begin time by the
 * credential lifetime; give it back, before the snapshot looks at who is
 * eligible (job write lock held). */
void tidal_requeue_delays_give_back(time_t now);
int tidal_requeued_count(void);
/* Requeue the jobs whose batch script was killed by a signal outside
 * Slurm and that have a checkpoint to resume from (job write lock held):
 * of those the last snapshot saw, which forgets the earlier ones and
 * considers every record it walks (snapshot.c). */
void tidal_revive_killed(time_t now);
void tidal_revive_forget(void);
void tidal_revive_consider(const job_record_t *job_ptr, time_t now);

/* Pending elastic JOB_PTR starts at GPUS on NODES nodes, the size the
 * policy chose: its GPU request is changed to that (resize.c owns every
 * change of a job's GPU request), and a resize waiting for the restart
 * takes it as its own.  RET SLURM_SUCCESS or an ESLURM code. */
int tidal_resize_start_at(job_record_t *job_ptr, int gpus, int nodes);
/* Start resizing running JOB_PTR from FROM to GPUS on NODES nodes, placed
 * AT (the decision's placement as "node:gpus,...", or ""), for WHY (the
 * decision's reason); both are told in the job's story (resize.c).  A
 * resize under way only takes the new target. */
void tidal_resize_begin(job_record_t *job_ptr, int from, int gpus, int nodes,
			const char *at, const char *why,
			const tidal_apply_conf_t *conf, time_t now);
/* Preempt running JOB_PTR (GPUS on NODES nodes) for WHY through the
 * same machine, when its batch host's tidald runs its launcher: a
 * checkpoint_stop first, the requeue on the ack (or CheckpointTimeout),
 * its request left as it is.  RET false if it cannot (no such agent, not
 * a batch job, the table full): the caller requeues it at once. */
bool tidal_preempt_begin(job_record_t *job_ptr, int gpus, int nodes,
			 const char *why, const tidal_apply_conf_t *conf,
			 time_t now);
/* The policy now keeps resizing JOB_PTR at GPUS on NODES placed AT:
 * a resize past its checkpoint_stop takes that as its target. */
void tidal_resize_retarget(tidal_resize_t *r, int gpus, int nodes,
			   const char *at);
/* Move every resize one step on; called each cycle under the locks. */
void tidal_resize_advance(const tidal_apply_conf_t *conf, time_t now);
tidal_resize_t *tidal_resize_find(uint32_t job);
/* The placed targets of the resizes requeued at most 30 s before NOW and
 * not running again: ADD(job, slurm node index, GPUs) for each node of
 * each (job and node read locks held).  The snapshot keeps them from the
 * other jobs while the engine cannot see the job (completing, or its
 * begin time not yet given back), so that its restart finds its GPUs
 * free. */
void tidal_resize_keep(time_t now,
		       void (*add)(uint32_t job, int node, int gpus));
void tidal_resize_forget(uint32_t job);

/* State lines for state.c: "requeue ..." and "resize ...". */
void tidal_transit_dump(char **text);
/* RET 1 if LINE was one of ours. */
int tidal_transit_load_line(const char *line);
void tidal_transit_clear(void);

/* Pending JOB_PTR, asking for one GPU on each of its nodes, asks for a
 * shard of one instead (SHARD) or for whole GPUs again (!SHARD, only if
 * Tidal made the change).  RET SLURM_SUCCESS or an ESLURM code. */
int tidal_request_shards(job_record_t *job_ptr, bool shard);

/* ---- share.c: GPUs several jobs hold at once, through gres/shard ---- */

/* Job and node write locks held: count the shards the jobs hold on each
 * GPU, and make the nodes' counts agree (Slurm 22.05 loses them on a
 * restart).  Before a snapshot and before applying a plan. */
void tidal_share_refresh(void);
/* Node locks held: NODE_PTR's GPUs, *TOTAL, of which *HELD are taken,
 * whole or through shards. */
void tidal_node_gpus(node_record_t *node_ptr, int *total, int *held);
/* Jobs one GPU may hold at once (1: no gres/shard; -1: nodes have shards
 * in their Gres=, but none has registered them yet) and GPUs per node a
 * sharing job may span. */
void tidal_share_limits(int *jobs_per_gpu, int *gpus_per_node);
/* Whether JOB_PTR's GPU request is per job or per node only (no
 * per-task or per-socket count, no CPUs or memory per GPU): one that a
 * shard request may replace and be replaced by. */
bool tidal_share_plain(job_record_t *job_ptr);
/* Shards per node JOB_PTR asks for; 0 if it asks for none. */
int tidal_job_shards(job_record_t *job_ptr);
/* Before the select_nodes() that starts a job, on NODES (NULL: all):
 * close what it must not get.  SHARD: a shard job, onto PARTNER's GPUs
 * (PARTNER holds shards on every node of NODES) or onto GPUs nobody
 * holds; else a whole-GPU job, kept off GPUs with shards taken.  RET
 * SLURM_SUCCESS, or ESLURM_NODES_BUSY (PARTNER holds no shard on one of
 * NODES; nothing closed).  tidal_fence_lift() right after the call. */
int tidal_fence_raise(bitstr_t *nodes, bool shard, job_record_t *partner);
void tidal_fence_lift(void);
/* The first GPU (index on the node) that JOB_PTR holds shards of on
 * Slurm node NODE_INX; -1 if none. */
int tidal_job_shard_gpu(job_record_t *job_ptr, int node_inx);
/* Whether JOB_PTR's shards sit on PARTNER's GPUs on every node. */
bool tidal_share_with(job_record_t *job_ptr, job_record_t *partner);

/* ---- state.c: plugin state under StateSaveLocation ---- */
void tidal_state_load(void);
/* Write the state if it changed since the last write. */
void tidal_state_save(void);

#endif /* TIDAL_PLUGIN_SLURM_SIDE_H */
