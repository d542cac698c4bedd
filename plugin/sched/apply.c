/*
 * apply.c - carry a plan out in slurmctld, re-validating every decision.
 *
 * Called with the same locks as the snapshot.  Between the snapshot and now
 * jobs may have ended, been cancelled or held, and nodes may have gone down:
 * a decision whose job or nodes no longer match is skipped (the next cycle
 * decides again), never forced.
 *
 *   Start    the job's nodes are restricted to the planned ones (through
 *            exc_node_bitmap, as Slurm's backfill does for reservations),
 *            then select_nodes() picks the cores and GPU indices there and
 *            launch_job() sends the batch script.
 *   Hold     Reason (state_desc) = "TidalHold: " + the policy's reason.
 *            An elastic job started at another size than it asked for
 *            first has its GPU request changed (resize.c).
 *   Preempt  job_requeue(); the begin-time delay Slurm adds is undone on
 *            the next snapshot so the job can start again at once.
 *   Resize   the machine in resize.c: checkpoint signal, requeue, new GPU
 *            request, restart; one step per cycle.
 *   Reject   held with "TidalReject: " + reason, or, with
 *            RejectAction=cancel, cancelled with that Reason.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <signal.h>
#include <string.h>
#include <time.h>

#include "slurm/slurmdb.h"

#include "src/common/bitstring.h"
#include "src/common/gres.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/job_scheduler.h"
#include "src/slurmctld/node_scheduler.h"
#include "src/slurmctld/slurmctld.h"
#include "src/slurmctld/srun_comm.h"

#include "plugin/sched/bridge.h"
#include "plugin/sched/slurm_side.h"

/* Free GPUs on NODE_PTR now; -1 if the node cannot take work. */
static int _free_gpus(node_record_t *node_ptr)
{
	ListIterator it;
	gres_state_t *gs;
	int free_gpus = 0;

	if (IS_NODE_DOWN(node_ptr) || IS_NODE_DRAIN(node_ptr) ||
	    IS_NODE_NO_RESPOND(node_ptr) || IS_NODE_FUTURE(node_ptr) ||
	    IS_NODE_POWERED_DOWN(node_ptr))
		return -1;
	if (!node_ptr->gres_list)
		return 0;
	it = list_iterator_create(node_ptr->gres_list);
	while ((gs = list_next(it))) {
		gres_node_state_t *ns = gs->gres_data;
		if (!xstrcmp(gs->gres_name, "gpu") && ns)
			free_gpus += (int)(ns->gres_cnt_avail -
					   ns->gres_cnt_alloc);
	}
	list_iterator_destroy(it);
	return free_gpus;
}

/* Nodes the job may use, or NULL if the plan no longer fits. */
static bitstr_t *_allowed_nodes(const tidal_snap_t *snap,
				const tidal_decision_t *d,
				const tidal_job_t *sj)
{
	bitstr_t *ok = bit_alloc(node_record_count);
	bool shape = !sj || !sj->gpus_per_node ||
		     (d->n_shares == sj->min_nodes);

	for (int k = 0; k < d->n_shares; k++) {
		int n = d->share_node[k];
		node_record_t *node_ptr;

		if (n < 0 || n >= snap->n_nodes)
			goto bad;
		node_ptr = node_record_table_ptr[snap->nodes[n].slurm_index];
		if (!node_ptr || _free_gpus(node_ptr) < d->share_gpus[k])
			goto bad;
		if (sj && sj->gpus_per_node &&
		    d->share_gpus[k] != sj->gpus_per_node)
			shape = false;
		bit_set(ok, node_ptr->index);
	}
	if (!shape) {
		/* The policy split a per-node request its own way: let
		 * Slurm choose among nodes with room for one share. */
		node_record_t *node_ptr;
		bit_clear_all(ok);
		for (int i = 0; (node_ptr = next_node(&i)); i++)
			if (_free_gpus(node_ptr) >= sj->gpus_per_node)
				bit_set(ok, node_ptr->index);
	}
	return ok;
bad:
	FREE_NULL_BITMAP(ok);
	return NULL;
}

/* Start JOB_PTR on nodes in OK (NULL: anywhere).  RET SLURM_SUCCESS or an
 * ESLURM code. */
static int _start(job_record_t *job_ptr, bitstr_t *ok)
{
	struct job_details *det = job_ptr->details;
	bitstr_t *orig_exc = det->exc_node_bitmap;
	int rc;

	if (ok) {
		bitstr_t *exc = bit_copy(ok);
		bit_not(exc);
		if (orig_exc)
			bit_or(exc, orig_exc);
		det->exc_node_bitmap = exc;
	}
	xfree(job_ptr->state_desc);
	rc = select_nodes(job_ptr, false, NULL, NULL, false,
			  SLURMDB_JOB_FLAG_SCHED);
	if (ok && job_ptr->details) {
		/* select_nodes() may have replaced it */
		FREE_NULL_BITMAP(job_ptr->details->exc_node_bitmap);
		job_ptr->details->exc_node_bitmap = orig_exc;
	}
	if (rc != SLURM_SUCCESS)
		return rc;
	last_job_update = time(NULL);
	info("sched/tidal: started %pJ on %s", job_ptr, job_ptr->nodes);
	if (job_ptr->batch_flag == 0)
		srun_allocate(job_ptr);
	else if (!IS_JOB_CONFIGURING(job_ptr))
		launch_job(job_ptr);
	return rc;
}

/* Set a pending job's Reason to PREFIX + REASON (if it changed). */
static void _set_reason(job_record_t *job_ptr, const char *prefix,
			const char *reason)
{
	const char *why = reason[0] ? reason : "waiting";
	size_t plen = strlen(prefix);
	char *desc = NULL;

	/* Most held jobs keep their reason from cycle to cycle: compare
	 * before formatting (this runs under the job write lock). */
	if (job_ptr->state_reason == WAIT_RESOURCES && job_ptr->state_desc &&
	    !strncmp(job_ptr->state_desc, prefix, plen) &&
	    !strcmp(job_ptr->state_desc + plen, why))
		return;
	xstrfmtcat(desc, "%s%s", prefix, why);
	job_ptr->state_reason = WAIT_RESOURCES;
	xfree(job_ptr->state_desc);
	job_ptr->state_desc = desc;
	last_job_update = time(NULL);
}

static bool _still_pending(job_record_t *job_ptr, time_t now)
{
	return IS_JOB_PENDING(job_ptr) && !IS_JOB_COMPLETING(job_ptr) &&
	       job_ptr->details && job_ptr->priority != 0 &&
	       job_ptr->details->begin_time <= now;
}

static const tidal_job_t *_snap_job(const tidal_snap_t *snap,
				    const tidal_decision_t *d)
{
	if (d->snap_index >= 0 && d->snap_index < snap->n_jobs &&
	    snap->jobs[d->snap_index].id == d->job)
		return &snap->jobs[d->snap_index];
	return NULL;
}

static int _apply_start(const tidal_snap_t *snap, const tidal_decision_t *d,
			job_record_t *job_ptr, time_t now)
{
	const tidal_job_t *sj = _snap_job(snap, d);
	bitstr_t *ok = NULL;
	int rc;

	if (!_still_pending(job_ptr, now))
		return 0;
	if (sj && sj->max_gpus && d->gpus > 0 && d->gpus != sj->gpus) {
		/* An elastic job starts at the size the policy chose. */
		tidal_resize_t *r = tidal_resize_find(d->job);
		int nodes = d->n_shares > 0 ? d->n_shares : 1;
		rc = tidal_set_gpu_request(job_ptr, d->gpus, nodes);
		if (rc != SLURM_SUCCESS) {
			verbose("sched/tidal: %pJ: cannot ask for %d GPUs: %s",
				job_ptr, d->gpus, slurm_strerror(rc));
			return 0;
		}
		if (r)
			r->request_set = 1;
		sj = NULL; /* the snapshot's request shape is stale now */
	}
	if (d->n_shares > 0 && !(ok = _allowed_nodes(snap, d, sj))) {
		debug("sched/tidal: %pJ: planned GPUs are no longer free",
		      job_ptr);
		return 0;
	}
	rc = _start(job_ptr, ok);
	FREE_NULL_BITMAP(ok);
	if (rc == SLURM_SUCCESS) {
		tidal_forget_requeue(job_ptr->job_id);
		return 1;
	}
	verbose("sched/tidal: %pJ: start on planned nodes failed: %s",
		job_ptr, slurm_strerror(rc));
	return 0;
}

static void _apply_preempt(const tidal_decision_t *d, job_record_t *job_ptr)
{
	int rc;

	if (!IS_JOB_RUNNING(job_ptr) || IS_JOB_COMPLETING(job_ptr))
		return;
	if (!job_ptr->batch_flag) {
		debug("sched/tidal: %pJ is not a batch job; not preempting",
		      job_ptr);
		return;
	}
	rc = job_requeue(0, job_ptr->job_id, NULL, false, 0);
	if (rc != SLURM_SUCCESS) {
		error("sched/tidal: requeue of %pJ failed: %s", job_ptr,
		      slurm_strerror(rc));
		return;
	}
	info("sched/tidal: requeued %pJ: %s", job_ptr, d->reason);
	tidal_note_requeue(job_ptr->job_id, time(NULL));
	_set_reason(job_ptr, TIDAL_PREEMPT_PREFIX, d->reason);
}

/* Distinct nodes of D's placement (at least 1). */
static int _decision_nodes(const tidal_decision_t *d)
{
	int n = 0;
	for (int k = 0; k < d->n_shares; k++)
		n += d->share_gpus[k] > 0;
	return n > 0 ? n : 1;
}

static void _apply_resize(const tidal_snap_t *snap, const tidal_decision_t *d,
			  job_record_t *job_ptr,
			  const tidal_apply_conf_t *conf, time_t now)
{
	const tidal_job_t *sj = _snap_job(snap, d);

	if (!IS_JOB_RUNNING(job_ptr) || IS_JOB_COMPLETING(job_ptr) || !sj ||
	    d->gpus <= 0)
		return;
	if (d->gpus == sj->gpus && !tidal_resize_find(d->job))
		return; /* only moved: not worth a restart */
	tidal_resize_begin(job_ptr, d->gpus, _decision_nodes(d), conf, now);
}

/* The policy keeps JOB_PTR at its size now: a resize still waiting for its
 * checkpoint is called off (the job was only signalled, never stopped). */
static void _call_off_resize(job_record_t *job_ptr)
{
	tidal_resize_t *r = tidal_resize_find(job_ptr->job_id);

	if (r && r->phase == TIDAL_RS_CHECKPOINT && IS_JOB_RUNNING(job_ptr)) {
		info("sched/tidal: resize of %pJ to %d GPUs called off: the policy keeps it as it is",
		     job_ptr, r->gpus);
		tidal_resize_forget(job_ptr->job_id);
	}
}

static void _apply_reject(const tidal_decision_t *d, job_record_t *job_ptr,
			  const tidal_apply_conf_t *conf, time_t now)
{
	char *desc = NULL;
	int rc;

	if (!_still_pending(job_ptr, now))
		return;
	if (!conf->reject_cancel) {
		_set_reason(job_ptr, TIDAL_REJECT_PREFIX, d->reason);
		return;
	}
	rc = job_signal(job_ptr, SIGKILL, 0, 0, false);
	info("sched/tidal: cancelled %pJ: %s%s%s", job_ptr, d->reason,
	     rc ? ": " : "", rc ? slurm_strerror(rc) : "");
	/* Set after the cancel, which may reset them: the user reads why in
	 * scontrol show job until MinJobAge. */
	xstrfmtcat(desc, "%s%s", TIDAL_REJECT_PREFIX, d->reason);
	job_ptr->state_reason = FAIL_DEADLINE;
	xfree(job_ptr->state_desc);
	job_ptr->state_desc = desc;
	last_job_update = now;
}

extern int tidal_plan_apply(const tidal_snap_t *snap, const tidal_plan_t *plan,
			    const tidal_apply_conf_t *conf)
{
	time_t now = time(NULL);
	int started = 0;

	/* Preemptions first: they free the GPUs the starts were planned on
	 * only once the job has completed, so their starts wait a cycle. */
	for (int i = 0; i < plan->n; i++) {
		const tidal_decision_t *d = &plan->d[i];
		job_record_t *job_ptr = find_job_record(d->job);
		if (!job_ptr)
			continue;
		if (d->action == TIDAL_PREEMPT)
			_apply_preempt(d, job_ptr);
		else if (d->action == TIDAL_RESIZE)
			_apply_resize(snap, d, job_ptr, conf, now);
		else if (d->action == TIDAL_KEEP)
			_call_off_resize(job_ptr);
	}
	/* After the decisions, so that a resize the policy no longer wants
	 * is called off before its requeue. */
	tidal_resize_advance(conf, now);
	for (int i = 0; i < plan->n; i++) {
		const tidal_decision_t *d = &plan->d[i];
		job_record_t *job_ptr = find_job_record(d->job);
		if (!job_ptr)
			continue;
		switch (d->action) {
		case TIDAL_START:
			started += _apply_start(snap, d, job_ptr, now);
			break;
		case TIDAL_HOLD:
			if (_still_pending(job_ptr, now))
				_set_reason(job_ptr, TIDAL_HOLD_PREFIX,
					    d->reason);
			break;
		case TIDAL_REJECT:
			_apply_reject(d, job_ptr, conf, now);
			break;
		default:
			break;
		}
	}
	return started;
}
