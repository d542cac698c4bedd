/*
 * resize.c - jobs in transit: requeued by Tidal, or being resized.
 *
 * An elastic resize is a small state machine, one step per cycle, so that
 * no slurmctld lock is ever held while waiting for a job:
 *
 *   Resize decision (job running at n GPUs, target m, placed P)
 *        |  batch host has a live tidald (heartbeat within 3 of its
 *        |  intervals): queue "checkpoint_stop" for it (agents/);
 *        |  otherwise signal the batch step (ResizeSignal, e.g. USR1:
 *        v  "checkpoint now"); with ResizeSignal=none go straight on
 *   CHECKPOINT  until tidald acks the checkpoint, or CheckpointTimeout
 *        |      has passed (or the job ended); a failed ack falls back
 *        |      to the signal; called off if the policy decides Keep;
 *        |      requeued by Slurm meanwhile (a node failed): on to
 *        |      REQUEUED, the delay undone as for ours
 *        |  job_requeue(): the job is PENDING again and keeps its id
 *        v
 *   REQUEUED    change the pending job's GPU request to m GPUs on k nodes
 *        |      (update_job with a job_desc), undo the begin-time delay
 *        |      Slurm adds on a requeue; the policy starts it again.  A
 *        |      run that began before the requeue is one a restarted
 *        v      slurmctld brought back from older state: requeued again
 *   (done)      once it runs; a job cancelled meanwhile is forgotten
 *
 * The record keeps the decision's target: m GPUs on k nodes, placed P
 * ("n1:4,n2:4"), told in the job's story and saved.  The restart itself is
 * placed by the Start decision of the cycle that starts the job: that
 * cycle also places every other start, and holding the job to P could
 * aim it at GPUs the same cycle gave to another.  This file is the one
 * place that changes a job's GPU request: on the way back from a requeue,
 * and for an elastic job the policy starts at a size of its choosing
 * (tidal_resize_start_at(), from apply.c).
 *
 * A batch job that ended FAILED by a signal (its batch script, normally
 * tidal-launch, killed outside Slurm: scancel, time limits, the OOM killer
 * and node failures end otherwise) and has a checkpoint the agents know
 * of is requeued to resume from it, at most REVIVE_MAX times in a row
 * without a newer checkpoint.
 *
 * A resize never loses the job: at every step it is either running or
 * pending under the same id, and the table is saved with the plugin state
 * (state.c) so a restarted slurmctld picks the machine up where it was.
 *
 * Only the plugin thread touches these tables (snapshot, apply and state
 * save all run there; state load runs in init() before the thread starts).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <inttypes.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "slurm/slurm_errno.h"

#include "src/common/log.h"
#include "src/common/slurm_protocol_defs.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "plugin/sched/bridge.h"
#include "plugin/sched/slurm_compat.h"
#include "plugin/sched/slurm_side.h"

#define MAX_TRANSIT 4096

static struct {
	uint32_t job;
	time_t when;
} requeued[MAX_TRANSIT];
static int n_requeued;

static tidal_resize_t resizes[MAX_TRANSIT];
/* Seconds a requeued resize keeps its target's GPUs from other jobs
 * while the engine cannot see it (tidal_resize_keep): long enough for
 * Slurm to finish the requeue, short enough that a job held meanwhile
 * (scontrol hold) keeps no GPUs idle. */
#define KEEP_MAX 30
static int n_resizes;

extern void tidal_note_requeue(uint32_t job, time_t when)
{
	for (int i = 0; i < n_requeued; i++)
		if (requeued[i].job == job) {
			requeued[i].when = when;
			return;
		}
	if (n_requeued < MAX_TRANSIT) {
		requeued[n_requeued].job = job;
		requeued[n_requeued++].when = when;
	}
}

extern void tidal_forget_requeue(uint32_t job)
{
	for (int i = 0; i < n_requeued; i++)
		if (requeued[i].job == job)
			requeued[i--] = requeued[--n_requeued];
}

extern void tidal_requeue_delays_give_back(time_t now)
{
	for (int i = 0; i < n_requeued; i++) {
		job_record_t *job_ptr = find_job_record(requeued[i].job);
		/* One second past the requeue keeps the new launch
		 * credential newer than the revoked one. */
		time_t ok = requeued[i].when + 2;

		if (job_ptr && IS_JOB_PENDING(job_ptr) && job_ptr->details &&
		    job_ptr->details->begin_time > now &&
		    job_ptr->details->begin_time > ok)
			job_ptr->details->begin_time = ok;
	}
}

/* ---- jobs whose launcher was killed: requeued to resume ---- */

static int _requeue(job_record_t *job_ptr, time_t now);

#define REVIVE_MAX 3	    /* in a row, with no newer checkpoint between */
#define REVIVE_WINDOW 600 /* s after the end: older failures stay failed */

static struct {
	uint32_t job;
	int times;     /* requeues since the checkpoint moved on */
	uint64_t step; /* the checkpoint at the last requeue */
} revived[MAX_TRANSIT];
static int n_revived;

/* JOB's count of requeues in a row, reset when its checkpoint (STEP) has
 * moved on since the last one: a job that trains between kills is not
 * failing, one killed again and again without progress is. */
static int *_revived(uint32_t job, uint64_t step)
{
	int i;

	for (i = 0; i < n_revived && revived[i].job != job; i++)
		;
	if (i == n_revived) {
		if (n_revived == MAX_TRANSIT) { /* the oldest entry goes */
			memmove(revived, revived + 1,
				sizeof(revived[0]) * --n_revived);
			i = n_revived;
		}
		revived[i].job = job;
		revived[i].times = 0;
		revived[i].step = step;
		n_revived++;
	} else if (step > revived[i].step) {
		revived[i].times = 0;
		revived[i].step = step;
	}
	return &revived[i].times;
}

/* FAILED by a signal: not scancel (CANCELLED), not the time limit, not
 * the OOM killer, not a node failure (Slurm requeues those); recently. */
static bool _killed(const job_record_t *job_ptr, time_t now)
{
	return (job_ptr->job_state & JOB_STATE_BASE) == JOB_FAILED &&
	       !IS_JOB_COMPLETING(job_ptr) && job_ptr->batch_flag &&
	       WIFSIGNALED(job_ptr->exit_code) &&
	       job_ptr->end_time + REVIVE_WINDOW >= now;
}

/* The jobs the last snapshot found _killed(): the only ones
 * tidal_revive_killed() looks at.  The snapshot visits every record
 * anyway; a walk of job_list of its own, under the job write lock, cost
 * a quarter of the cycle's lock hold at 10,000 jobs. */
static uint32_t *killed_ids;
static int n_killed_ids, cap_killed_ids;

extern void tidal_revive_forget(void)
{
	n_killed_ids = 0;
}

extern void tidal_revive_consider(const job_record_t *job_ptr, time_t now)
{
	if (!_killed(job_ptr, now))
		return;
	if (n_killed_ids == cap_killed_ids) {
		cap_killed_ids = cap_killed_ids ? 2 * cap_killed_ids : 16;
		xrecalloc(killed_ids, cap_killed_ids, sizeof(*killed_ids));
	}
	killed_ids[n_killed_ids++] = job_ptr->job_id;
}

static void _revive_one(job_record_t *job_ptr, time_t now)
{
	uint64_t step;
	int *times, rc;

	if (!_killed(job_ptr, now) ||
	    !(step = tidal_agent_checkpoint_step(job_ptr->job_id)))
		return;
	times = _revived(job_ptr->job_id, step);
	if (*times >= REVIVE_MAX) {
		if (*times == REVIVE_MAX) {
			error("sched/tidal: %pJ killed by signal %d again; "
			      "requeued %d times with no newer checkpoint "
			      "than step %" PRIu64 ": left FAILED",
			      job_ptr, WTERMSIG(job_ptr->exit_code), *times,
			      step);
			(*times)++;
		}
		return;
	}
	rc = _requeue(job_ptr, now);
	if (rc != SLURM_SUCCESS) {
		error("sched/tidal: %pJ killed by signal %d: requeue failed: "
		      "%s; left FAILED",
		      job_ptr, WTERMSIG(job_ptr->exit_code),
		      slurm_strerror(rc));
		*times = REVIVE_MAX + 1;
		return;
	}
	(*times)++;
	info("sched/tidal: %pJ: its batch script (tidal-launch) was killed "
	     "by signal %d; requeued to resume from its checkpoint (step "
	     "%" PRIu64 "), %d of %d",
	     job_ptr, WTERMSIG(job_ptr->exit_code), step, *times, REVIVE_MAX);
	char *note = xstrdup_printf("killed by signal %d outside Slurm; "
				    "requeued to resume from step %" PRIu64,
				    WTERMSIG(job_ptr->exit_code), step);
	tidal_agent_note(job_ptr->job_id, (double)now, note);
	xfree(note);
}

extern void tidal_revive_killed(time_t now)
{
	for (int k = 0; k < n_killed_ids; k++) {
		job_record_t *job_ptr = find_job_record(killed_ids[k]);

		if (job_ptr)
			_revive_one(job_ptr, now);
	}
}

extern int tidal_requeued_count(void)
{
	return n_requeued;
}

extern tidal_resize_t *tidal_resize_find(uint32_t job)
{
	for (int i = 0; i < n_resizes; i++)
		if (resizes[i].job == job)
			return &resizes[i];
	return NULL;
}

extern void tidal_resize_keep(time_t now,
			      void (*add)(uint32_t job, int node, int gpus))
{
	for (int i = 0; i < n_resizes; i++) {
		const tidal_resize_t *r = &resizes[i];
		job_record_t *job_ptr = find_job_record(r->job);
		char *at, *tok, *save = NULL;

		if (!job_ptr || r->phase != TIDAL_RS_REQUEUED || !r->at[0] ||
		    now - r->since > KEEP_MAX ||
		    r->request_set == TIDAL_RQ_KEEP ||
		    (IS_JOB_RUNNING(job_ptr) && !IS_JOB_COMPLETING(job_ptr)))
			continue;
		at = xstrdup(r->at);
		for (tok = strtok_r(at, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			char *colon = strrchr(tok, ':');
			node_record_t *node_ptr;
			int gpus;

			if (!colon)
				continue;
			*colon = '\0';
			gpus = atoi(colon + 1);
			node_ptr = find_node_record(tok);
			if (node_ptr && gpus > 0)
				add(r->job, node_ptr->index, gpus);
		}
		xfree(at);
	}
}

static void _resize_drop(uint32_t job)
{
	for (int i = 0; i < n_resizes; i++)
		if (resizes[i].job == job)
			resizes[i--] = resizes[--n_resizes];
}

/* "gres:gpu:N" (22.05) or "gres/gpu:N" (24.11): a GPU request string. */
static char *_gpu_tres(int n)
{
	char *s = NULL;
	xstrfmtcat(s, "%s:%d", TIDAL_GPU_TRES, n);
	return s;
}

static int _sharded_find(uint32_t job);
static void _sharded_drop(uint32_t job);

/* Change a pending job's GPU request to GPUS on NODES nodes (update_job
 * with a job_desc): this file is the one place that does.  RET
 * SLURM_SUCCESS or an ESLURM code. */
static int _set_gpu_request(job_record_t *job_ptr, int gpus, int nodes)
{
	job_desc_msg_t *desc = xmalloc(sizeof(*desc));
	slurm_msg_t msg;
	int rc;
	/* A shard Tidal asked for in place of one GPU per node
	 * (tidal_request_shards) goes: the request is for whole GPUs
	 * again, per node as it was. */
	bool ours = _sharded_find(job_ptr->job_id) >= 0;

	if (nodes < 1)
		nodes = 1;
	slurm_init_job_desc_msg(desc);
	desc->job_id = job_ptr->job_id;
	/* Keep the kind of request the user made: per node if it divides
	 * evenly, otherwise a per-job count.  An elastic job asked per node
	 * may be given a count that does not divide over its nodes (7 GPUs
	 * on 2): its per-node count is then cleared ("" clears it in
	 * gres_job_state_validate) and the job asks per job from then on. */
	bool per_node = ours || (job_ptr->tres_per_node &&
				 xstrcasestr(job_ptr->tres_per_node, "gpu"));
	if (per_node && gpus % nodes == 0) {
		desc->tres_per_node = _gpu_tres(gpus / nodes);
	} else {
		desc->tres_per_job = _gpu_tres(gpus);
		if (per_node)
			desc->tres_per_node = xstrdup("");
	}
	desc->min_nodes = desc->max_nodes = nodes;
	if (job_ptr->details && job_ptr->details->num_tasks < (uint32_t)nodes)
		desc->num_tasks = nodes;
	slurm_msg_t_init(&msg);
	msg.msg_type = REQUEST_UPDATE_JOB;
	msg.data = desc;
	/* Slurm 22.05 checks a new GPU request against the shard in the
	 * old one (tidal_update_job_gres). */
	rc = ours ? tidal_update_job_gres(job_ptr, &msg)
		  : update_job(&msg, 0, false);
	slurm_free_job_desc_msg(desc);
	if (rc == SLURM_SUCCESS) {
		info("sched/tidal: %pJ now asks for %d GPUs on %d node(s)",
		     job_ptr, gpus, nodes);
		if (ours)
			_sharded_drop(job_ptr->job_id);
	}
	return rc;
}

/* Jobs whose request Tidal turned from one GPU per node into a shard of
 * one (tidal_request_shards), to turn back. */
static uint32_t *sharded;
static int n_sharded, cap_sharded;

static int _sharded_find(uint32_t job)
{
	for (int i = 0; i < n_sharded; i++)
		if (sharded[i] == job)
			return i;
	return -1;
}

static void _sharded_add(uint32_t job)
{
	if (_sharded_find(job) >= 0)
		return;
	if (n_sharded == cap_sharded) {
		cap_sharded = 2 * cap_sharded + 16;
		xrecalloc(sharded, cap_sharded, sizeof(*sharded));
	}
	sharded[n_sharded++] = job;
}

static void _sharded_drop(uint32_t job)
{
	int at = _sharded_find(job);

	if (at >= 0)
		sharded[at] = sharded[--n_sharded];
}

/* Forget the jobs that are gone or finished (job lock held). */
static void _sharded_prune(void)
{
	for (int i = 0; i < n_sharded; i++) {
		job_record_t *j = find_job_record(sharded[i]);
		if (!j || IS_JOB_FINISHED(j))
			sharded[i--] = sharded[--n_sharded];
	}
}

extern int tidal_request_shards(job_record_t *job_ptr, bool shard)
{
	job_desc_msg_t *desc;
	slurm_msg_t msg;
	int at = _sharded_find(job_ptr->job_id), rc;

	if (!shard && at < 0)
		return SLURM_SUCCESS; /* the user's own shard request */
	desc = xmalloc(sizeof(*desc));
	slurm_init_job_desc_msg(desc);
	desc->job_id = job_ptr->job_id;
	/* "" clears a request (gres_job_state_validate). */
	desc->tres_per_node = xstrdup_printf("%s:1", shard ? TIDAL_SHARD_TRES
							   : TIDAL_GPU_TRES);
	if (job_ptr->tres_per_job)
		desc->tres_per_job = xstrdup("");
	slurm_msg_t_init(&msg);
	msg.msg_type = REQUEST_UPDATE_JOB;
	msg.data = desc;
	rc = tidal_update_job_gres(job_ptr, &msg);
	slurm_free_job_desc_msg(desc);
	if (rc != SLURM_SUCCESS)
		return rc;
	if (shard && at < 0) {
		_sharded_prune();
		_sharded_add(job_ptr->job_id);
	} else if (!shard) {
		_sharded_drop(job_ptr->job_id);
	}
	info("sched/tidal: %pJ now asks for %s per node", job_ptr,
	     shard ? "a shard of one GPU" : "one GPU");
	return SLURM_SUCCESS;
}

extern int tidal_resize_start_at(job_record_t *job_ptr, int gpus, int nodes)
{
	tidal_resize_t *r = tidal_resize_find(job_ptr->job_id);
	int rc = _set_gpu_request(job_ptr, gpus, nodes);

	if (rc == SLURM_SUCCESS && r)
		r->request_set = TIDAL_RQ_SET; /* a restart at the size now
						* decided */
	return rc;
}

static int _requeue(job_record_t *job_ptr, time_t now)
{
	int rc = job_requeue(0, job_ptr->job_id, NULL, false, 0);
	if (rc == SLURM_SUCCESS)
		tidal_note_requeue(job_ptr->job_id, now);
	return rc;
}

static void _send_signal(job_record_t *job_ptr, tidal_resize_t *r,
			 const tidal_apply_conf_t *conf);

/* Ask the batch host's tidald for checkpoint_stop; RET false if it has
 * no live agent (or the command could not be queued). */
static bool _ask_agent(job_record_t *job_ptr, tidal_resize_t *r,
		       const tidal_apply_conf_t *conf, time_t now)
{
	const char *host = job_ptr->batch_host;

	if (!host || !tidal_agent_live(host, (double)now))
		return false;
	r->cmd = tidal_agent_command(host, "checkpoint_stop", r->job,
				     (double)now);
	if (!r->cmd)
		return false;
	if (r->request_set == TIDAL_RQ_KEEP)
		info("sched/tidal: preempt %pJ: checkpoint_stop asked of %s's "
		     "tidald (command %" PRIu64 "), requeue on its ack or in "
		     "%.0f s",
		     job_ptr, host, r->cmd, conf->checkpoint_timeout);
	else
		info("sched/tidal: resize %pJ to %d GPUs: checkpoint_stop "
		     "asked of %s's tidald (command %" PRIu64 "), requeue on "
		     "its ack or in %.0f s",
		     job_ptr, r->gpus, host, r->cmd, conf->checkpoint_timeout);
	return true;
}

extern void tidal_resize_retarget(tidal_resize_t *r, int gpus, int nodes,
				  const char *at)
{
	r->gpus = gpus;
	r->nodes = nodes;
	/* One word of a state line: a longer list is not kept. */
	if (!at || strlen(at) >= sizeof(r->at) || strchr(at, ' '))
		at = "";
	strcpy(r->at, at);
}

/* A new transit of JOB to GPUS on NODES (placed AT), at its checkpoint
 * step from NOW; the caller has checked that the table has room. */
static tidal_resize_t *_transit_new(uint32_t job, int gpus, int nodes,
				    const char *at, time_t now)
{
	tidal_resize_t *r = &resizes[n_resizes++];

	memset(r, 0, sizeof(*r));
	r->job = job;
	tidal_resize_retarget(r, gpus, nodes, at);
	r->since = now;
	r->phase = TIDAL_RS_CHECKPOINT;
	return r;
}

extern void tidal_resize_begin(job_record_t *job_ptr, int from, int gpus,
			       int nodes, const char *at, const char *why,
			       const tidal_apply_conf_t *conf, time_t now)
{
	tidal_resize_t *r = tidal_resize_find(job_ptr->job_id);
	char note[TIDAL_REASON_MAX + TIDAL_AT_MAX + 100];

	if (r) { /* already under way: only the target may change */
		if (r->phase == TIDAL_RS_CHECKPOINT)
			tidal_resize_retarget(r, gpus, nodes, at);
		return;
	}
	if (!job_ptr->batch_flag || n_resizes >= MAX_TRANSIT) {
		debug("sched/tidal: %pJ cannot be resized (not a batch job)",
		      job_ptr);
		return;
	}
	r = _transit_new(job_ptr->job_id, gpus, nodes, at, now);
	snprintf(note, sizeof(note),
		 "resize from %d to %d GPUs decided on %s "
		 "(%s)%s%s",
		 from, gpus, job_ptr->nodes ? job_ptr->nodes : "?",
		 why && *why ? why : "no reason given",
		 r->at[0] ? ", placed " : "", r->at);
	tidal_agent_note(r->job, (double)now, note);
	if (_ask_agent(job_ptr, r, conf, now))
		return;
	_send_signal(job_ptr, r, conf);
}

extern bool tidal_preempt_begin(job_record_t *job_ptr, int gpus, int nodes,
				const char *why, const tidal_apply_conf_t *conf,
				time_t now)
{
	tidal_resize_t *r;
	char note[TIDAL_REASON_MAX + 100];

	if (tidal_resize_find(job_ptr->job_id))
		return true; /* under way */
	if (!job_ptr->batch_flag || n_resizes >= MAX_TRANSIT ||
	    !job_ptr->batch_host ||
	    !tidal_agent_live(job_ptr->batch_host, (double)now) ||
	    !tidal_agent_launched(job_ptr->job_id, job_ptr->batch_host,
				  (double)now))
		return false;
	r = _transit_new(job_ptr->job_id, gpus, nodes, "", now);
	r->request_set = TIDAL_RQ_KEEP;
	snprintf(
		note, sizeof(note),
		"preemption decided on %s (%s): checkpoint first, then requeue",
		job_ptr->nodes ? job_ptr->nodes : "?",
		why && *why ? why : "no reason given");
	tidal_agent_note(r->job, (double)now, note);
	if (!_ask_agent(job_ptr, r, conf, now)) {
		tidal_agent_note(r->job, (double)now,
				 "checkpoint_stop could not be queued: "
				 "requeued at once");
		n_resizes--;
		return false;
	}
	return true;
}

/* Signal the batch step to checkpoint (the path without an agent). */
static void _send_signal(job_record_t *job_ptr, tidal_resize_t *r,
			 const tidal_apply_conf_t *conf)
{
	int gpus = r->gpus;
	char note[160];

	if (conf->resize_signal > 0) {
		int rc = job_signal(job_ptr, conf->resize_signal,
				    KILL_JOB_BATCH, 0, false);
		info("sched/tidal: resize %pJ to %d GPUs: signal %d sent to "
		     "the batch step (%s), requeue in %.0f s",
		     job_ptr, gpus, conf->resize_signal,
		     rc ? slurm_strerror(rc) : "ok", conf->checkpoint_timeout);
		snprintf(note, sizeof(note),
			 "resize to %d GPUs: signal %d to the batch step, "
			 "requeue in %.0f s",
			 gpus, conf->resize_signal, conf->checkpoint_timeout);
	} else {
		info("sched/tidal: resize %pJ to %d GPUs: no checkpoint signal "
		     "configured",
		     job_ptr, gpus);
		snprintf(note, sizeof(note),
			 "resize to %d GPUs: no agent, no signal configured",
			 gpus);
	}
	tidal_agent_note(job_ptr->job_id, (double)time(NULL), note);
}

/* Has the agent answered R's checkpoint_stop?  RET 1 on a good ack
 * (requeue now), 0 otherwise; a failed one falls back to the signal path
 * with a fresh CheckpointTimeout. */
static int _agent_answer(job_record_t *job_ptr, tidal_resize_t *r,
			 const tidal_apply_conf_t *conf, time_t now)
{
	uint64_t step = 0;
	char path[256], err[256];
	int st = tidal_agent_ack(r->cmd, &step, path, sizeof(path), err,
				 sizeof(err));

	if (st > 0) {
		info("sched/tidal: resize %pJ: tidald checkpointed it at step "
		     "%" PRIu64 " (%s) after %ld s; requeueing",
		     job_ptr, step, path, (long)(now - r->since));
		return 1;
	}
	if (st < 0) {
		error("sched/tidal: resize %pJ: tidald could not checkpoint it: "
		      "%s; falling back to ResizeSignal",
		      job_ptr, err);
		r->cmd = 0;
		r->since = now;
		_send_signal(job_ptr, r, conf);
	}
	return 0;
}

/* Slurm requeued R's job before the checkpoint ack: one of its nodes
 * failed (Slurm requeues a batch job whose node goes DOWN), or an
 * administrator did.  The resize goes on from the requeue: the launcher
 * of the next run finds the newest checkpoint it can reach, and the
 * begin-time delay is undone as for Tidal's own requeues. */
static void _requeued_by_slurm(job_record_t *job_ptr, tidal_resize_t *r,
			       time_t now)
{
	char note[200];

	info("sched/tidal: resize %pJ: requeued by Slurm before the "
	     "checkpoint ack (a node failed, or an administrator); to "
	     "restart at %d GPUs from the newest checkpoint it can reach",
	     job_ptr, r->gpus);
	snprintf(note, sizeof(note),
		 "requeued by Slurm mid-resize (a node failed, or an "
		 "administrator), to restart at %d GPUs from the newest "
		 "checkpoint it can reach",
		 r->gpus);
	tidal_agent_note(r->job, (double)now, note);
	tidal_account_requeued(job_ptr, r->request_set == TIDAL_RQ_KEEP);
	tidal_metrics_requeued(r->request_set == TIDAL_RQ_KEEP, -1);
	if (r->cmd)
		tidal_agent_cancel(r->cmd);
	tidal_note_requeue(job_ptr->job_id, now);
	r->cmd = 0;
	r->phase = TIDAL_RS_REQUEUED;
	r->since = now;
}

/* R's job runs, but the run began before Tidal requeued it at R->since:
 * slurmctld was restarted from job state saved before that requeue, so
 * it still lists the run that checkpointed and stopped for the resize.
 * Its processes are gone or ending, and no node will report it missing
 * before its time limit.  Requeue it again, and change the GPU request
 * again (the change was lost with the requeue).  RET false if the
 * requeue failed: the job is left as Slurm has it. */
static bool _requeue_lost(job_record_t *job_ptr, tidal_resize_t *r,
			  time_t now)
{
	int rc;

	info("sched/tidal: resize %pJ: slurmctld restarted from state "
	     "saved before Tidal requeued it %ld s ago, and lists the "
	     "stopped run as running on %s; requeueing it again",
	     job_ptr, (long)(now - r->since), job_ptr->nodes);
	if ((rc = _requeue(job_ptr, now))) {
		error("sched/tidal: resize of %pJ: requeue of the run that "
		      "slurmctld's restart brought back failed: %s",
		      job_ptr, slurm_strerror(rc));
		return false;
	}
	tidal_agent_note(r->job, (double)now,
			 "requeued again: a slurmctld restart had brought "
			 "back the stopped run");
	if (r->request_set != TIDAL_RQ_KEEP)
		r->request_set = TIDAL_RQ_TODO;
	r->since = now;
	return true;
}

/* One step of R's machine; RET false once R is finished. */
static bool _resize_step(tidal_resize_t *r, const tidal_apply_conf_t *conf,
			 time_t now)
{
	job_record_t *job_ptr = find_job_record(r->job);
	char note[TIDAL_AT_MAX + 160];
	int rc;

	if (!job_ptr || IS_JOB_FINISHED(job_ptr)) {
		if (job_ptr)
			info("sched/tidal: %pJ ended during its resize",
			     job_ptr);
		return false;
	}
	if (r->phase == TIDAL_RS_CHECKPOINT) {
		if (IS_JOB_PENDING(job_ptr)) {
			_requeued_by_slurm(job_ptr, r, now);
			return true;
		}
		if (!IS_JOB_RUNNING(job_ptr))
			return false; /* suspended by others */
		int acked = r->cmd ? _agent_answer(job_ptr, r, conf, now) : 0;
		if (!acked && now < r->since + (time_t)conf->checkpoint_timeout)
			return true;
		if (!acked && r->cmd) {
			info("sched/tidal: resize %pJ: no checkpoint ack within "
			     "CheckpointTimeout (%.0f s); requeueing anyway",
			     job_ptr, conf->checkpoint_timeout);
			tidal_agent_note(r->job, (double)now,
					 "no checkpoint ack in time");
			tidal_agent_cancel(r->cmd);
		}
		if ((rc = _requeue(job_ptr, now))) {
			error("sched/tidal: resize of %pJ: requeue failed: %s; "
			      "it keeps running at its old size",
			      job_ptr, slurm_strerror(rc));
			return false;
		}
		tidal_account_requeued(job_ptr,
				       r->request_set == TIDAL_RQ_KEEP);
		tidal_metrics_requeued(r->request_set == TIDAL_RQ_KEEP,
				       difftime(now, r->since));
		if (r->request_set == TIDAL_RQ_KEEP) {
			info("sched/tidal: preemption of %pJ: requeued",
			     job_ptr);
			tidal_set_reason(job_ptr, TIDAL_PREEMPT_PREFIX,
					 "checkpointed and requeued");
			snprintf(note, sizeof(note),
				 "requeued (preempted); it restarts from its "
				 "checkpoint when the policy starts it");
		} else {
			info("sched/tidal: resize %pJ: requeued, to restart at "
			     "%d GPUs",
			     job_ptr, r->gpus);
			snprintf(note, sizeof(note),
				 "requeued, to restart at %d GPUs%s%s%s",
				 r->gpus, r->at[0] ? " (placed " : "", r->at,
				 r->at[0] ? ")" : "");
		}
		tidal_agent_note(r->job, (double)now, note);
		r->cmd = 0;
		r->phase = TIDAL_RS_REQUEUED;
		r->since = now;
	}
	if (IS_JOB_RUNNING(job_ptr) && job_ptr->start_time < r->since)
		return _requeue_lost(job_ptr, r, now);
	if (IS_JOB_RUNNING(job_ptr)) {
		info("sched/tidal: resize %pJ done: running again on %s",
		     job_ptr, job_ptr->nodes);
		tidal_metrics_restarted(r->request_set == TIDAL_RQ_KEEP,
					difftime(job_ptr->start_time, r->since));
		/* What it holds: the policy may have started it at another
		 * size than the transit's target (tidal_resize_start_at). */
		int held = tidal_alloc_gpus(job_ptr);
		snprintf(note, sizeof(note), "running again at %d GPUs on %s",
			 held > 0 ? held : r->gpus,
			 job_ptr->nodes ? job_ptr->nodes : "?");
		tidal_agent_note(r->job, (double)now, note);
		return false;
	}
	if (r->request_set == TIDAL_RQ_TODO && IS_JOB_PENDING(job_ptr)) {
		rc = _set_gpu_request(job_ptr, r->gpus, r->nodes);
		if (rc == SLURM_SUCCESS)
			r->request_set = TIDAL_RQ_SET;
		else
			debug("sched/tidal: %pJ: GPU request not changed yet: "
			      "%s",
			      job_ptr, slurm_strerror(rc));
	}
	return true;
}

extern void tidal_resize_advance(const tidal_apply_conf_t *conf, time_t now)
{
	for (int i = 0; i < n_resizes; i++)
		if (!_resize_step(&resizes[i], conf, now)) {
			if (resizes[i].cmd) /* the job ended or moved first */
				tidal_agent_cancel(resizes[i].cmd);
			resizes[i--] = resizes[--n_resizes];
		}
}

extern void tidal_resize_forget(uint32_t job)
{
	tidal_resize_t *r = tidal_resize_find(job);

	if (r && r->cmd)
		tidal_agent_cancel(r->cmd);
	_resize_drop(job);
}

/* ---- state (state.c) ---- */

extern void tidal_transit_dump(char **text)
{
	for (int i = 0; i < n_requeued; i++)
		xstrfmtcat(*text, "requeue %u %ld\n", requeued[i].job,
			   (long)requeued[i].when);
	for (int i = 0; i < n_resizes; i++)
		xstrfmtcat(*text, "resize %u %d %d %d %d %ld %" PRIu64 " %s\n",
			   resizes[i].job, resizes[i].gpus, resizes[i].nodes,
			   resizes[i].phase, resizes[i].request_set,
			   (long)resizes[i].since, resizes[i].cmd,
			   resizes[i].at[0] ? resizes[i].at : "-");
	for (int i = 0; i < n_sharded; i++)
		xstrfmtcat(*text, "sharded %u\n", sharded[i]);
}

extern int tidal_transit_load_line(const char *line)
{
	unsigned job;
	long when;
	tidal_resize_t r = { 0 };

	if (sscanf(line, "requeue %u %ld", &job, &when) == 2) {
		tidal_note_requeue(job, when);
		return 1;
	}
	if (sscanf(line, "sharded %u", &job) == 1) {
		_sharded_add(job);
		return 1;
	}
	_Static_assert(TIDAL_AT_MAX == 256, "the %255s below reads at[]");
	/* The 7th field (the agent command) and the 8th (the placement, "-"
	 * for none) are absent in older files. */
	if (sscanf(line, "resize %u %d %d %d %d %ld %" SCNu64 " %255s", &job,
		   &r.gpus, &r.nodes, &r.phase, &r.request_set, &when, &r.cmd,
		   r.at) >= 6) {
		if (!strcmp(r.at, "-"))
			r.at[0] = '\0';
		if (n_resizes < MAX_TRANSIT && !tidal_resize_find(job)) {
			r.job = job;
			r.since = when;
			resizes[n_resizes++] = r;
		}
		return 1;
	}
	return 0;
}

extern void tidal_transit_clear(void)
{
	n_requeued = n_resizes = n_sharded = 0;
}
