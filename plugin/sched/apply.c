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
 *   Preempt  job_requeue(); the begin-time delay Slurm adds is undone on
 *            the next snapshot so the job can start again at once.
 *   Resize   not applied yet (logged): elastic resizes are future work.
 *   Reject   held with "TidalReject: " + reason.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
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

/* Jobs Tidal requeued, until they run again. */
#define MAX_REQUEUED 4096
static struct {
	uint32_t job;
	time_t when;
} requeued[MAX_REQUEUED];
static int n_requeued;

static void _note_requeue(uint32_t job, time_t when)
{
	if (n_requeued < MAX_REQUEUED) {
		requeued[n_requeued].job = job;
		requeued[n_requeued++].when = when;
	}
}

static void _forget_requeue(uint32_t job)
{
	for (int i = 0; i < n_requeued; i++)
		if (requeued[i].job == job)
			requeued[i] = requeued[--n_requeued];
}

extern void tidal_fix_requeue_delay(job_record_t *job_ptr, time_t now)
{
	for (int i = 0; i < n_requeued; i++) {
		if (requeued[i].job != job_ptr->job_id)
			continue;
		/* One second past the requeue keeps the new launch
		 * credential newer than the revoked one. */
		time_t ok = requeued[i].when + 2;
		if (job_ptr->details->begin_time > ok)
			job_ptr->details->begin_time = ok;
		return;
	}
}

extern int tidal_requeued_count(void)
{
	return n_requeued;
}

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
	char *desc = NULL;

	xstrfmtcat(desc, "%s%s", prefix, reason[0] ? reason : "waiting");
	if (job_ptr->state_reason == WAIT_RESOURCES &&
	    !xstrcmp(job_ptr->state_desc, desc)) {
		xfree(desc);
		return;
	}
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

static const tidal_job_t *_snap_job(const tidal_snap_t *snap, uint32_t id)
{
	for (int i = 0; i < snap->n_jobs; i++)
		if (snap->jobs[i].id == id)
			return &snap->jobs[i];
	return NULL;
}

static int _apply_start(const tidal_snap_t *snap, const tidal_decision_t *d,
			job_record_t *job_ptr, time_t now)
{
	const tidal_job_t *sj = _snap_job(snap, d->job);
	bitstr_t *ok = NULL;
	int rc;

	if (!_still_pending(job_ptr, now))
		return 0;
	if (d->n_shares > 0 && !(ok = _allowed_nodes(snap, d, sj))) {
		debug("sched/tidal: %pJ: planned GPUs are no longer free",
		      job_ptr);
		return 0;
	}
	rc = _start(job_ptr, ok);
	FREE_NULL_BITMAP(ok);
	if (rc == SLURM_SUCCESS) {
		_forget_requeue(job_ptr->job_id);
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
	_note_requeue(job_ptr->job_id, time(NULL));
	_set_reason(job_ptr, TIDAL_PREEMPT_PREFIX, d->reason);
}

extern int tidal_plan_apply(const tidal_snap_t *snap, const tidal_plan_t *plan)
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
			debug("sched/tidal: %pJ: resize to %d GPUs not applied",
			      job_ptr, d->gpus);
	}
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
			if (_still_pending(job_ptr, now))
				_set_reason(job_ptr, TIDAL_REJECT_PREFIX,
					    d->reason);
			break;
		default:
			break;
		}
	}
	return started;
}
