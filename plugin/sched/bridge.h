/*
 * bridge.h - the plain-C boundary between slurmctld and the Tidal engine.
 *
 * The plugin is two halves that never see each other's headers:
 *
 *   slurmctld  --lock-->  snapshot.c  --tidal_snap-->  engine.cc (C++)
 *                                                         |  core policy
 *   slurmctld  <--lock--  apply.c     <--tidal_plan----   v  decide()
 *
 * snapshot.c and apply.c include Slurm's headers and only them; engine.cc
 * includes core/ and only it.  These structs are the whole contract: plain C,
 * owned by the side that allocated them, freed through the functions below.
 * No C++ exception crosses this boundary: every engine entry point catches.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#ifndef TIDAL_PLUGIN_BRIDGE_H
#define TIDAL_PLUGIN_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TIDAL_REASON_MAX 240 /* bytes kept of a decision's reason */

typedef struct {
	char *name;
	int slurm_index; /* node_record_t.index */
	int gpus;        /* usable by Tidal: avail minus foreign allocations */
	int gpus_total;  /* configured */
	int cpus;
	double mem_mb;
	int switch_id;   /* leaf switch, -1 if none */
	int up;          /* 0: down/drained/not responding */
} tidal_node_t;

typedef struct {
	char *name;
	int parent; /* -1 for the root */
	int level;
	double link;
} tidal_switch_t;

enum { TIDAL_JOB_PENDING = 0, TIDAL_JOB_RUNNING = 1 };

typedef struct {
	uint32_t id;
	uint32_t uid;
	char *name;
	char *user;
	char *partition;
	int state;          /* TIDAL_JOB_* */
	double submit;      /* epoch seconds */
	double start;       /* this run's start, epoch s; 0 if pending */
	double time_limit;  /* seconds; 0 = none */
	double deadline;    /* epoch s; 0 = none */
	int gpus;           /* requested GPUs (total) */
	int gpus_per_node;  /* 0 = any split */
	int min_nodes;
	/* Tidal's sbatch options (spank_job_env), 0/NULL when absent. */
	int min_gpus, max_gpus;
	char *model;
	int batch;
	int max_batch;
	double iters;
	int best_effort;
	/* Running jobs holding shards (share.c): the first GPU they share,
	 * as Slurm's node index and the GPU's index there; -1 if none. */
	int shard_node, shard_gpu;
	/* Running jobs: GPUs held per snapshot node (indices into nodes). */
	int n_alloc;
	int *alloc_node;
	int *alloc_gpus;
} tidal_job_t;

typedef struct {
	double now;
	/* GPU sharing through gres/shard (share.c): jobs one GPU may hold at
	 * once (1 = no gres/shard), and GPUs per node of one sharing job. */
	int share_jobs_per_gpu;
	int share_gpus_per_node;
	int n_nodes, n_switches, n_jobs;
	tidal_node_t *nodes;
	tidal_switch_t *switches;
	tidal_job_t *jobs;
	void *pool; /* snapshot.c's memory for all of the above */
} tidal_snap_t;

/* Values match core's tidal::Action. */
enum {
	TIDAL_START = 0,
	TIDAL_KEEP = 1,
	TIDAL_RESIZE = 2,
	TIDAL_PREEMPT = 3,
	TIDAL_HOLD = 4,
	TIDAL_REJECT = 5,
};

typedef struct {
	uint32_t job;
	int snap_index; /* the job's index in the snapshot's jobs, -1 if none */
	int action; /* TIDAL_* */
	int gpus;
	int n_shares;
	int *share_node; /* snapshot node indices */
	int *share_gpus;
	/* Start holding gres/shard instead of whole GPUs, so that others
	 * may join (core Decision::share), on the GPUs of job COLOCATE if
	 * not 0 (Decision::colocate). */
	int shard;
	uint32_t colocate;
	char reason[TIDAL_REASON_MAX];
} tidal_decision_t;

typedef struct {
	int n;
	tidal_decision_t *d;
	double wake_at; /* epoch s, 0 = no wish */
	double decide_ms;
	char *log; /* malloc'd lines for slurmctld's log, or NULL */
	/* Snapshot node indices the policy keeps for its own use (core
	 * Plan::kept_nodes): a start apply.c lets Slurm place avoids them. */
	int n_kept;
	int *kept;
	/* What the decisions' share_node and share_gpus point into. */
	int *shares;
} tidal_plan_t;

/* Settings of the apply step, from tidal.conf. */
typedef struct {
	int resize_signal;         /* sent to the batch step; 0 = none */
	double checkpoint_timeout; /* seconds between signal and requeue */
	int reject_cancel;         /* infeasible jobs: 1 cancel, 0 hold */
	int acct_comment;          /* TIDAL_ACCT_*: where sacct shows Tidal's
				    * decisions (account.c) */
	char policy[64];           /* the policy in force, for account.c */
} tidal_apply_conf_t;

enum { TIDAL_ACCT_NONE = 0, TIDAL_ACCT_ADMIN = 1 };

/* ---- engine.cc (C++, no Slurm) ---- */

/* Read the configuration text TEXT (tidal.conf) from ORIGIN.  Errors and
 * warnings go to *MSG (malloc'd, newline separated, NULL if none; a line
 * starting "note: " is information, not an error).
 * RET 0 on success (the new policy is in force), -1 if the file names an
 * unknown policy or key or has a line that is not Key=Value (nothing of it
 * is used: the previous configuration stays). */
int tidal_engine_configure(const char *text, const char *origin, char **msg);
/* Cycle interval from the configuration, seconds. */
double tidal_engine_interval(void);
/* Name of the policy in force ("" before configure). */
const char *tidal_engine_policy(void);
/* 1 if the policy in force admits or rejects jobs by their deadlines
 * itself (core's Policy::admits_by_deadline). */
int tidal_engine_admits_by_deadline(void);
/* Decide.  RET 0 and *PLAN filled (free with tidal_plan_free), or -1 with
 * *MSG (malloc'd) saying why; nothing thrown. */
int tidal_engine_decide(const tidal_snap_t *snap, tidal_plan_t *plan,
			char **msg);
/* JOB's run began at WHEN (tidal_now(): sched/tidal started it), which
 * Slurm records in whole seconds only: its service counts from WHEN. */
void tidal_engine_started(uint32_t job, double when);
void tidal_plan_free(tidal_plan_t *plan);
void tidal_engine_apply_conf(tidal_apply_conf_t *conf);
/* The engine's part of the plugin state: lines (malloc'd), see state.c;
 * NULL if unchanged since the last dump, unless FORCE. */
char *tidal_engine_state_dump(int force);
/* Take back one line written by tidal_engine_state_dump; RET 1 if it was
 * the engine's. */
int tidal_engine_state_line(const char *line);
/* Drop the policy and forget every job, as a restarted slurmctld has;
 * tidal_engine_configure and tidal_state_load start it again. */
void tidal_engine_shutdown(void);
/* TCP port for tidalctl (CtlPort, 0 = no server). */
int tidal_engine_ctl_port(void);
/* The Slurm version sched/tidal was built against (SLURM_VERSION_STRING),
 * for tidalctl show policy and tidalctl check; from init(). */
void tidal_engine_set_slurm_version(const char *version);
/* MetricsPort (0 = no metrics server) and MetricsAddress ("" = every
 * address; malloc'd). */
int tidal_engine_metrics_port(void);
char *tidal_engine_metrics_addr(void);
/* Answer one tidalctl request (ctl_engine.cc) from UID.  RET the reply
 * line, malloc'd; never NULL unless out of memory.  *REFUSED (if not
 * NULL): why a malformed or unauthorised request was refused, for the
 * log (a static string), or NULL. */
char *tidal_engine_request(const char *request, uint32_t uid, int admin,
			   int private_jobs, const char **refused);

/* ---- agents/: node agents (tidald) and checkpoint locations ---- */

/* A node op (node_register, node_heartbeat, node_ack, ckpt_where) from
 * UID, connected from PEER_HOST; root/SlurmUser only (ADMIN).  RET the
 * reply line (malloc'd), or NULL if REQUEST is not a node op.
 * *REFUSED as for tidal_engine_request. */
char *tidal_agent_request(const char *request, uint32_t uid, int admin,
			  const char *peer_host, const char **refused);
/* Lines for slurmctld's log since the last call (malloc'd), or NULL. */
char *tidal_agent_log_drain(void);
/* WAKE is called when an ack that some resize waits for has come in
 * (from the thread that served it, after agents/ let go of its lock):
 * the scheduling thread should run a cycle now rather than at its next
 * CycleInterval, for every second of it is a second the job stands
 * still.  NULL: nobody is told. */
void tidal_agent_on_awaited_ack(void (*wake)(void));
/* 1 if NODE's agent heartbeated within 3 of its intervals of NOW. */
int tidal_agent_live(const char *node, double now);
/* Agents registered: *UP heartbeated within 3 of their intervals, *DOWN
 * not (for the metrics). */
void tidal_agent_counts(int *up, int *down);
/* 1 if JOB runs under tidal-launch on NODE: NODE's agent reported the
 * job's launcher within 3 of its heartbeat intervals of NOW (so that
 * checkpoint_stop reaches a launcher, not a plain batch script). */
int tidal_agent_launched(uint32_t job, const char *node, double now);
/* Queue OP ("checkpoint", "checkpoint_stop") about JOB for NODE's agent;
 * it goes out with the next heartbeat reply.  RET the id (> 0) or 0. */
uint64_t tidal_agent_command(const char *node, const char *op, uint32_t job,
			     double now);
/* RET 0 while command ID is unanswered, 1 if acked ok (*STEP, PATH),
 * -1 if it failed (ERR says why). */
int tidal_agent_ack(uint64_t id, uint64_t *step, char *path, size_t path_len,
		    char *err, size_t err_len);
/* Forget command ID (its resize went on without it): an agent that has
 * not fetched it yet never will. */
void tidal_agent_cancel(uint64_t id);
/* Take command ID back if no agent has been given it yet: RET 1 (gone,
 * or withdrawn), 0 if it was delivered (the job may be stopping). */
int tidal_agent_withdraw(uint64_t id);
/* The newest checkpoint step of JOB any node holds (0: none known). */
uint64_t tidal_agent_checkpoint_step(uint32_t job);
/* One line of JOB's resize story (tidalctl show job / explain). */
void tidal_agent_note(uint32_t job, double now, const char *text);
/* State lines ("agentseq", "ckpt", "agentcmd"; malloc'd, never NULL). */
char *tidal_agent_state_dump(void);
/* The last dump is on disk: the checkpoints it names may now be released
 * to rotation (the heartbeat reply's "keep" names only saved ones). */
void tidal_agent_state_saved(void);
/* RET 1 if LINE was one of agents/persist.cc's. */
int tidal_agent_state_line(const char *line);
/* Forget every agent, command and checkpoint location, as a restarted
 * slurmctld has (tests and fuzz targets run many "restarts" in one
 * process). */
void tidal_agent_clear(void);

/* ---- metrics.cc: Prometheus metrics (sched_tidal(8), METRICS) ---- */
/* One cycle's wall time, the policy's decide time, and the time the
 * cycle held and waited for slurmctld's locks, all in seconds. */
void tidal_metrics_cycle(double cycle_s, double decide_s, double hold_s,
			 double wait_s);
/* Tidal requeued a job to resize it (or PREEMPT it) after CHECKPOINT_S
 * seconds of its checkpoint phase (-1: not timed, e.g. a requeue with
 * no checkpoint first). */
void tidal_metrics_requeued(int preempt, double checkpoint_s);
/* A job requeued so runs again, RESTART_S seconds after the requeue. */
void tidal_metrics_restarted(int preempt, double restart_s);
/* A job admitted (a deadline job that started) or rejected, once each. */
void tidal_metrics_admission(int admitted);

/* ---- metrics_http.cc: the metrics endpoint (not in tidal-emu) ---- */
/* Serve the metrics on MetricsAddress:MetricsPort of the configuration
 * in force (MetricsPort=0: stop serving).  Unchanged settings leave a
 * running server alone.  A port in use is tried again for a while from
 * a thread of its own (Slurm 24.11's reconfigure: the old slurmctld
 * holds it until the new one has started).  What happened goes to
 * tidal_metrics_log_drain(). */
void tidal_metrics_serve(void);
void tidal_metrics_stop(void);
/* Lines for slurmctld's log since the last call (malloc'd), or NULL. */
char *tidal_metrics_log_drain(void);

/* ---- ctl_server.c: the tidalctl listener thread ---- */
/* Listen on PORT (0: not at all).  RET 0, or -1 if it cannot be bound. */
int tidal_ctl_start(int port);
/* The same, but a PORT in use is tried again for a while in the listener
 * thread rather than refused: init()'s, for the slurmctld that Slurm
 * 24.11's reconfigure replaces holds it until the new one has started. */
int tidal_ctl_start_waiting(int port);
void tidal_ctl_stop(void);

/* ---- sched_tidal.c: the scheduling thread ---- */
/* Run the next cycle now instead of at the end of CycleInterval. */
void tidal_cycle_wake(void);

/* ---- snapshot.c / apply.c (Slurm side) ---- */

/* Now, to the microsecond where time() is the wall clock (in slurmctld;
 * under tests/emu's own clock, its whole seconds). */
double tidal_now(void);
/* Fill SNAP from slurmctld; caller holds the job, node and part locks. */
void tidal_snapshot_take(tidal_snap_t *snap);
void tidal_snapshot_free(tidal_snap_t *snap);
/* Apply PLAN made from SNAP, re-validating each decision; caller holds
 * the locks.  RET the number of jobs started. */
int tidal_plan_apply(const tidal_snap_t *snap, const tidal_plan_t *plan,
		     const tidal_apply_conf_t *conf);
/* Non-zero if the last tidal_plan_apply() left a start waiting for nodes that
 * are still completing a job (a leaver's requeue, seconds): the next
 * cycle should come soon. */
int tidal_plan_retry_soon(void);

#ifdef __cplusplus
}
#endif

#endif /* TIDAL_PLUGIN_BRIDGE_H */
