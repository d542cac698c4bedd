/*
 * apply.c - carry a plan out in slurmctld, re-validating every decision.
 *
 * Called with the same locks as the snapshot, after tidal_plan_prepare()
 * has left out, with no lock held, the decisions that change nothing (see
 * "what to do" below).  Between the snapshot and now jobs may have ended,
 * been cancelled or held, and nodes may have gone down: a decision whose
 * job or nodes no longer match is skipped (the next cycle decides again),
 * never forced.
 *
 *   Start    the job's nodes are restricted to the planned ones (through
 *            exc_node_bitmap, as Slurm's backfill does for reservations),
 *            then select_nodes() picks the cores and GPU indices there and
 *            launch_job() sends the batch script.  If a reservation begins
 *            on a planned node before the job's time limit would end, the
 *            job goes to other nodes with room, or waits.
 *   Hold     Reason (state_desc) = "TidalHold: " + the policy's reason.
 *            An elastic job started at another size than it asked for
 *            first has its GPU request changed (resize.c).
 *   Preempt  job_requeue(); the begin-time delay Slurm adds is undone on
 *            the next snapshot so the job can start again at once.  A
 *            job whose batch host's tidald runs its launcher checkpoints
 *            first: the resize machine of resize.c, its request kept.
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

/* First: slurmctld.h, which acct_policy.h needs before it. */
#include "plugin/sched/slurm_compat.h"

#include "src/common/bitstring.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/acct_policy.h"
#include "src/slurmctld/job_scheduler.h"
#include "src/slurmctld/node_scheduler.h"
#include "src/slurmctld/slurmctld.h"

#include "plugin/sched/bridge.h"
#include "plugin/sched/slurm_side.h"

/* Free GPUs on NODE_PTR now (neither held whole nor through shards); -1
 * if the node cannot take work. */
static int _free_gpus(node_record_t *node_ptr)
{
	int total, held;

	if (IS_NODE_DOWN(node_ptr) || IS_NODE_DRAIN(node_ptr) ||
	    IS_NODE_NO_RESPOND(node_ptr) || IS_NODE_FUTURE(node_ptr) ||
	    IS_NODE_POWERED_DOWN(node_ptr))
		return -1;
	tidal_node_gpus(node_ptr, &total, &held);
	return MAX(total - held, 0);
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
	if (!shape || (sj && d->n_shares < sj->min_nodes)) {
		/* The policy split a per-node request its own way, or put
		 * it on fewer nodes than it asks for (-N 3 --gpus=3): let
		 * Slurm choose among nodes with room for one share. */
		int need = sj && sj->gpus_per_node ? sj->gpus_per_node : 1;
		node_record_t *node_ptr;
		bit_clear_all(ok);
		for (int i = 0; (node_ptr = next_node(&i)); i++)
			if (_free_gpus(node_ptr) >= need)
				bit_set(ok, node_ptr->index);
	}
	return ok;
bad:
	FREE_NULL_BITMAP(ok);
	return NULL;
}

/* Start JOB_PTR on nodes in OK (NULL: anywhere).  RET SLURM_SUCCESS or an
 * ESLURM code.  A job with a --deadline starts with its limit cut to end
 * by it, as Slurm's scheduler starts it (tidal_deadline_limit).  A job
 * asking for shards gets them on PARTNER's GPUs, or (no PARTNER) on GPUs
 * nobody holds; a whole-GPU job never gets a GPU with shards taken
 * (share.c). */
static int _start(job_record_t *job_ptr, bitstr_t *ok, job_record_t *partner,
		  const char *why)
{
	job_details_t *det = job_ptr->details;
	bitstr_t *orig_exc = det->exc_node_bitmap;
	uint32_t orig_limit = job_ptr->time_limit;
	uint32_t deadline_limit = tidal_deadline_limit(job_ptr, time(NULL));
	int rc;

	if (ok) {
		bitstr_t *exc = bit_copy(ok);
		bit_not(exc);
		if (orig_exc)
			bit_or(exc, orig_exc);
		det->exc_node_bitmap = exc;
	}
	xfree(job_ptr->state_desc);
	if (deadline_limit)
		job_ptr->time_limit = deadline_limit;
	rc = tidal_fence_raise(ok, tidal_job_shards(job_ptr) > 0, partner);
	if (rc == SLURM_SUCCESS) {
		rc = tidal_select_nodes(job_ptr, SLURMDB_JOB_FLAG_SCHED);
		tidal_fence_lift();
	}
	if (ok && job_ptr->details) {
		/* select_nodes() may have replaced it */
		FREE_NULL_BITMAP(job_ptr->details->exc_node_bitmap);
		job_ptr->details->exc_node_bitmap = orig_exc;
	}
	if (rc != SLURM_SUCCESS) {
		if (deadline_limit)
			job_ptr->time_limit = orig_limit;
		return rc;
	}
	last_job_update = time(NULL);
	tidal_engine_started(job_ptr->job_id, tidal_now());
	tidal_account_started(job_ptr);
	if (partner && !tidal_share_with(job_ptr, partner))
		error("sched/tidal: %pJ was to share the GPUs of %pJ, and "
		      "Slurm gave it others",
		      job_ptr, partner);
	/* With the policy's reason: the only place a start's is kept. */
	if (!why)
		why = "";
	if (partner)
		info("sched/tidal: started %pJ on %s, sharing the GPUs of "
		     "%pJ%s%s",
		     job_ptr, job_ptr->nodes, partner, *why ? ": " : "", why);
	else
		info("sched/tidal: started %pJ on %s%s%s", job_ptr,
		     job_ptr->nodes, *why ? ": " : "", why);
	if (job_ptr->batch_flag == 0)
		srun_allocate(job_ptr);
	else if (!IS_JOB_CONFIGURING(job_ptr))
		launch_job(job_ptr);
	return rc;
}

/* Set a pending job's Reason to PREFIX + REASON (if it changed): see
 * slurm_side.h. */
extern void tidal_set_reason(job_record_t *job_ptr, const char *prefix,
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

/* An elastic job's story (tidalctl show job) begins with its start; a
 * restart after a resize is told by resize.c. */
static void _note_start(job_record_t *job_ptr, int gpus, time_t now)
{
	char note[200];

	snprintf(note, sizeof(note), "started at %d GPUs on %s", gpus,
		 job_ptr->nodes ? job_ptr->nodes : "?");
	tidal_agent_note(job_ptr->job_id, (double)now, note);
}

/* Jobs whose start Slurm refused for another reason than busy nodes:
 * tried again only after a wait that doubles with each refusal (1, 2, 4
 * ... 64 s), so that a request Slurm cannot place is not retried
 * unchanged every cycle; the Reason says why it waits. */
typedef struct {
	uint32_t job;
	int refusals;
	time_t retry_at;
} refused_t;
static refused_t *refused;
static int n_refused, cap_refused;

static refused_t *_refused(uint32_t job)
{
	for (int i = 0; i < n_refused; i++)
		if (refused[i].job == job)
			return &refused[i];
	return NULL;
}

static void _refusal(job_record_t *job_ptr, int rc, time_t now)
{
	refused_t *r = _refused(job_ptr->job_id);
	char why[200];
	int wait;

	if (!r) {
		if (n_refused == cap_refused) {
			cap_refused = cap_refused ? 2 * cap_refused : 16;
			xrecalloc(refused, cap_refused, sizeof(*refused));
		}
		r = &refused[n_refused++];
		r->job = job_ptr->job_id;
		r->refusals = 0;
	}
	r->refusals++;
	wait = 1 << MIN(r->refusals - 1, 6);
	r->retry_at = now + wait;
	snprintf(why, sizeof(why),
		 "Slurm refused to start it (%s); tried %d time%s, again in %d s",
		 slurm_strerror(rc), r->refusals, r->refusals > 1 ? "s" : "",
		 wait);
	tidal_set_reason(job_ptr, TIDAL_HOLD_PREFIX, why);
}

/* Forget refusals of jobs that are no longer pending. */
static void _prune_refused(void)
{
	int k = 0;

	for (int i = 0; i < n_refused; i++) {
		job_record_t *job_ptr = find_job_record(refused[i].job);
		if (job_ptr && IS_JOB_PENDING(job_ptr))
			refused[k++] = refused[i];
	}
	n_refused = k;
}

/* OK, the planned nodes, less the ones a reservation takes before the job
 * would end: if any is taken, the nodes in USABLE with room for a share of
 * NEED GPUs instead.  RET the nodes (OK or a new bitmap; OK is freed
 * then), or NULL if none has room. */
static bitstr_t *_outside_reservations(bitstr_t *ok, bitstr_t *usable,
				       int need)
{
	node_record_t *node_ptr;

	if (bit_super_set(ok, usable))
		return ok;
	FREE_NULL_BITMAP(ok);
	ok = bit_alloc(node_record_count);
	for (int i = 0; (node_ptr = next_node(&i)); i++)
		if (bit_test(usable, node_ptr->index) &&
		    _free_gpus(node_ptr) >= need)
			bit_set(ok, node_ptr->index);
	if (!bit_set_count(ok))
		FREE_NULL_BITMAP(ok);
	return ok;
}

/* ---- heterogeneous jobs ----
 *
 * A heterogeneous job is one decision, under its leader's id (snapshot.c
 * gives the engine the leader with every component's GPUs and nodes).  Its
 * components start together or not at all, on disjoint nodes, as Slurm's
 * backfill starts them: first each component's nodes are found by the
 * select plugin's test against the allocations of now (WILL_RUN with
 * TEST_NOW_ONLY: nothing is allocated), the nodes found for one withheld
 * from the next; only if every component fits is each started, restricted
 * to the nodes found for it.  The batch script (or salloc's allocation)
 * goes out with the last start: launch_job() and srun_allocate() wait for
 * every component.  Should a start still fail, the components started are
 * given back the way backfill gives them back (_het_undo).
 */

/* Nodes COMP can start on now, outside USED: SLURM_SUCCESS and *WHERE, or
 * ESLURM_NODES_BUSY (or get_node_cnts()'s error). */
static int _het_fit(job_record_t *comp, bitstr_t *used, time_t now,
		    bitstr_t **where)
{
	job_details_t *det = comp->details;
	uint32_t min_nodes, req_nodes, max_nodes;
	uint32_t qos_flags = comp->qos_ptr ? comp->qos_ptr->flags : 0;
	bitstr_t *avail, *usable;
	time_t start_was = comp->start_time;
	uint64_t flags_were = comp->bit_flags;
	int rc;

	*where = NULL;
	rc = get_node_cnts(comp, qos_flags, comp->part_ptr, &min_nodes,
			   &req_nodes, &max_nodes);
	if (rc != SLURM_SUCCESS)
		return rc;
	avail = bit_copy(comp->part_ptr->node_bitmap);
	bit_and(avail, avail_node_bitmap);
	if ((usable = tidal_resv_usable(comp, now))) {
		bit_and(avail, usable);
		FREE_NULL_BITMAP(usable);
	}
	if (det->exc_node_bitmap)
		bit_and_not(avail, det->exc_node_bitmap);
	bit_and_not(avail, used);
	if ((det->req_node_bitmap &&
	     !bit_super_set(det->req_node_bitmap, avail)) ||
	    bit_set_count(avail) < (int)min_nodes) {
		FREE_NULL_BITMAP(avail);
		return ESLURM_NODES_BUSY;
	}
	comp->bit_flags |= TEST_NOW_ONLY;
	rc = tidal_will_run(comp, avail, min_nodes, max_nodes, req_nodes);
	if (rc == SLURM_SUCCESS && comp->start_time > now)
		rc = ESLURM_NODES_BUSY;
	else if (rc != SLURM_SUCCESS)
		rc = ESLURM_NODES_BUSY;
	comp->bit_flags = flags_were;
	comp->start_time = start_was;
	if (rc != SLURM_SUCCESS)
		FREE_NULL_BITMAP(avail);
	*where = avail;
	return rc;
}

/* The components in COMP[0..N) that started, given back as backfill gives
 * back a heterogeneous job that could not start whole: pending again, at
 * the end of the credential lifetime. */
static void _het_undo(job_record_t **comp, int n, time_t now)
{
	int cred_lifetime = tidal_cred_lifetime();

	for (int i = 0; i < n; i++) {
		job_record_t *job_ptr = comp[i];
		uint32_t flags_were;

		if (IS_JOB_PENDING(job_ptr))
			continue;
		error("sched/tidal: %pJ given back: the rest of its heterogeneous job could not start",
		      job_ptr);
		job_ptr->details->begin_time = now + cred_lifetime + 1;
		job_ptr->end_time = now;
		job_ptr->job_state = JOB_PENDING | JOB_COMPLETING;
		last_job_update = now;
		build_cg_bitmap(job_ptr);
		job_completion_logger(job_ptr, false);
		deallocate_nodes(job_ptr, false, false, false);
		flags_were = job_ptr->bit_flags;
		job_ptr->bit_flags |= JOB_KILL_HURRY;
		tidal_acct_resubmit(job_ptr);
		job_ptr->bit_flags = flags_were;
		if (!job_ptr->node_bitmap_cg ||
		    !bit_set_count(job_ptr->node_bitmap_cg))
			batch_requeue_fini(job_ptr);
	}
}

/* Start every component of the heterogeneous job LEADER, or none.  RET
 * SLURM_SUCCESS, or why it waits (the leader's Reason says it). */
static int _start_het(job_record_t *leader, time_t now)
{
	int n = list_count(leader->het_job_list), k = 0, rc = SLURM_SUCCESS;
	job_record_t **comp = xcalloc(n + 1, sizeof(*comp));
	bitstr_t **where = xcalloc(n + 1, sizeof(*where));
	bitstr_t *used = bit_alloc(node_record_count);
	list_itr_t *it = list_iterator_create(leader->het_job_list);
	job_record_t *job_ptr;
	int failed = -1;

	while ((job_ptr = list_next(it)) && k < n) {
		if (job_ptr->het_job_id != leader->job_id ||
		    !_still_pending(job_ptr, now) || !job_ptr->part_ptr) {
			rc = ESLURM_JOB_PENDING; /* the next cycle looks again */
			break;
		}
		comp[k++] = job_ptr;
	}
	list_iterator_destroy(it);
	for (int i = 0; rc == SLURM_SUCCESS && i < k; i++) {
		rc = _het_fit(comp[i], used, now, &where[i]);
		if (rc == SLURM_SUCCESS)
			bit_or(used, where[i]);
		else
			failed = i;
	}
	if (rc == SLURM_SUCCESS) {
		for (int i = 0; i < k; i++) {
			if ((rc = _start(comp[i], where[i], NULL, NULL)) ==
			    SLURM_SUCCESS)
				continue;
			error("sched/tidal: %pJ did not start (%s) where its test placed it",
			      comp[i], slurm_strerror(rc));
			_het_undo(comp, i, now);
			failed = i;
			break;
		}
	}
	if (failed >= 0 && rc != ESLURM_JOB_PENDING) {
		char why[200];

		snprintf(why, sizeof(why),
			 "heterogeneous job: component %d (JobId=%u) does not fit beside the others now (%s)",
			 comp[failed]->het_job_offset, comp[failed]->job_id,
			 slurm_strerror(rc));
		tidal_set_reason(leader, TIDAL_HOLD_PREFIX, why);
	}
	for (int i = 0; i < k; i++)
		FREE_NULL_BITMAP(where[i]);
	FREE_NULL_BITMAP(used);
	xfree(where);
	xfree(comp);
	return rc;
}

/* Distinct nodes of D's placement (at least 1). */
static int _decision_nodes(const tidal_decision_t *d)
{
	int n = 0;
	for (int k = 0; k < d->n_shares; k++)
		n += d->share_gpus[k] > 0;
	return n > 0 ? n : 1;
}

/* D's placement as "node:gpus,..." in BUF (SIZE bytes); "" if it has
 * none or it does not fit. */
static const char *_decision_at(const tidal_snap_t *snap,
				const tidal_decision_t *d, char *buf,
				size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int k = 0; k < d->n_shares; k++) {
		int n = d->share_node[k], w;

		if (d->share_gpus[k] <= 0)
			continue;
		if (n < 0 || n >= snap->n_nodes || !snap->nodes[n].name)
			goto none;
		w = snprintf(buf + len, size - len, "%s%s:%d", len ? "," : "",
			     snap->nodes[n].name, d->share_gpus[k]);
		if (w < 0 || (size_t)w >= size - len)
			goto none;
		len += w;
	}
	return buf;
none:
	buf[0] = '\0';
	return buf;
}

/* Set by the last tidal_plan_apply() when a start waits for nodes that
 * are still completing a job (tidal_plan_retry_soon). */
static bool retry_soon;

extern int tidal_plan_retry_soon(void)
{
	return retry_soon;
}

/* Slurm refuses nodes that are still completing a job (COMPLETING:
 * its processes and epilog ending, a few seconds) with "Requested nodes
 * are busy", though their GPUs show free.  They are taken out of OK; a
 * start that needs one of them (the plan's own nodes, or no other node
 * left) waits for the next cycle rather than fail.  RET: it waits. */
static bool _completing(job_record_t *job_ptr, const tidal_decision_t *d,
			bitstr_t *ok)
{
	bitstr_t *cg;
	char *names;
	bool planned;

	if (!cg_node_bitmap || !bit_overlap_any(ok, cg_node_bitmap))
		return false;
	planned = bit_set_count(ok) == d->n_shares;
	cg = bit_copy(ok);
	bit_and(cg, cg_node_bitmap);
	bit_and_not(ok, cg_node_bitmap);
	if (!planned && bit_set_count(ok) > 0) {
		FREE_NULL_BITMAP(cg);
		return false;
	}
	names = bitmap2node_name(cg);
	verbose("sched/tidal: %pJ: planned node %s still completing a job: start tried again next cycle",
		job_ptr, names);
	xfree(names);
	FREE_NULL_BITMAP(cg);
	return true;
}

/* A start's GPU request as the decision wants it: a shard of one GPU per
 * node where the policy shares GPUs and the cluster can (share.c), whole
 * GPUs again where Tidal had asked for shards.  RET SLURM_SUCCESS, or an
 * error (the job waits; its Reason says why). */
static int _share_request(const tidal_snap_t *snap, const tidal_decision_t *d,
			  const tidal_job_t *sj, job_record_t *job_ptr)
{
	bool one_per_node = sj && sj->gpus > 0 && sj->gpus == sj->min_nodes &&
			    tidal_share_plain(job_ptr);
	bool shard = d->shard && snap->share_jobs_per_gpu > 1 && one_per_node;
	int rc;

	if (d->colocate && !shard) {
		tidal_set_reason(job_ptr, TIDAL_HOLD_PREFIX,
				 "its group shares GPUs, and this job cannot "
				 "hold a shard of one GPU per node");
		return ESLURM_INVALID_GRES;
	}
	if (shard == (tidal_job_shards(job_ptr) > 0))
		return SLURM_SUCCESS;
	rc = tidal_request_shards(job_ptr, shard);
	if (rc != SLURM_SUCCESS) {
		char why[160];

		snprintf(why, sizeof(why),
			 "Slurm refused to change its request to %s: %s",
			 shard ? "a GPU shard per node" : "whole GPUs",
			 slurm_strerror(rc));
		error("sched/tidal: %pJ: %s", job_ptr, why);
		tidal_set_reason(job_ptr, TIDAL_HOLD_PREFIX, why);
	}
	return rc;
}

/* Start JOB_PTR on the GPUs of the decision's partner (its group's
 * anchor), which runs holding shards.  RET 1 if it started. */
static int _apply_colocate(const tidal_decision_t *d, job_record_t *job_ptr,
			   time_t now)
{
	job_record_t *partner = find_job_record(d->colocate);
	bitstr_t *ok;
	char why[128];
	int rc;

	if (!partner || !IS_JOB_RUNNING(partner) ||
	    IS_JOB_COMPLETING(partner) || !tidal_job_shards(partner)) {
		snprintf(why, sizeof(why),
			 "waits for job %u, whose GPUs its group shares, to "
			 "run holding shards",
			 d->colocate);
		tidal_set_reason(job_ptr, TIDAL_HOLD_PREFIX, why);
		return 0;
	}
	ok = bit_copy(partner->node_bitmap);
	rc = _start(job_ptr, ok, partner, d->reason);
	FREE_NULL_BITMAP(ok);
	if (rc == SLURM_SUCCESS) {
		tidal_forget_requeue(job_ptr->job_id);
		return 1;
	}
	verbose("sched/tidal: %pJ: start on the GPUs of %pJ failed: %s",
		job_ptr, partner, slurm_strerror(rc));
	if (rc == ESLURM_NODES_BUSY)
		retry_soon = true;
	if (rc != ESLURM_NODES_BUSY && rc != ESLURM_ACCOUNTING_POLICY)
		_refusal(job_ptr, rc, now);
	return 0;
}

/* The nodes the policy keeps for its own use (tidal_plan_t kept; Lucid's
 * profiler nodes), and all the others; both NULL when it keeps none.  Set
 * while a plan is applied.  A start that Slurm places (no placement, or its
 * planned nodes refused) stays on the side of them it was planned on. */
static bitstr_t *kept, *unkept;

static void _set_kept(const tidal_snap_t *snap, const tidal_plan_t *plan)
{
	FREE_NULL_BITMAP(kept);
	FREE_NULL_BITMAP(unkept);
	if (plan->n_kept <= 0)
		return;
	kept = bit_alloc(node_record_count);
	for (int k = 0; k < plan->n_kept; k++) {
		int n = plan->kept[k];
		int i = n >= 0 && n < snap->n_nodes ? snap->nodes[n].slurm_index
						    : -1;

		if (i >= 0 && i < node_record_count)
			bit_set(kept, i);
	}
	unkept = bit_copy(kept);
	bit_not(unkept);
}

/* Where Slurm may place a start planned on OK (NULL: nowhere in
 * particular): see kept above.  NULL: anywhere. */
static bitstr_t *_slurm_side(bitstr_t *ok)
{
	return ok && kept && bit_overlap_any(ok, kept) ? kept : unkept;
}

static int _apply_start(const tidal_snap_t *snap, const tidal_decision_t *d,
			job_record_t *job_ptr, time_t now)
{
	refused_t *ref = _refused(job_ptr->job_id);
	const tidal_job_t *sj = _snap_job(snap, d);
	bool elastic = sj && sj->max_gpus;
	int gpus = d->gpus > 0 ? d->gpus : (sj ? sj->gpus : 0);
	bitstr_t *ok = NULL;
	int rc;

	if (!_still_pending(job_ptr, now))
		return 0;
	if (ref && now < ref->retry_at)
		return 0;
	/* An array task: an earlier start this cycle may have reached the
	 * array's %N (Slurm then sets Reason=JobArrayTaskLimit). */
	if (job_ptr->array_task_id != NO_VAL && !job_array_start_test(job_ptr))
		return 0;
	if (job_ptr->het_job_list) {
		list_itr_t *it;
		job_record_t *comp;

		if (_start_het(job_ptr, now) != SLURM_SUCCESS)
			return 0;
		/* _apply_preempt noted every component's requeue. */
		it = list_iterator_create(job_ptr->het_job_list);
		while ((comp = list_next(it)))
			tidal_forget_requeue(comp->job_id);
		list_iterator_destroy(it);
		return 1;
	}
	if (sj && sj->max_gpus && d->gpus > 0 && d->gpus != sj->gpus) {
		/* An elastic job starts at the size the policy chose. */
		rc = tidal_resize_start_at(job_ptr, d->gpus,
					   _decision_nodes(d));
		if (rc != SLURM_SUCCESS) {
			verbose("sched/tidal: %pJ: cannot ask for %d GPUs: %s",
				job_ptr, d->gpus, slurm_strerror(rc));
			return 0;
		}
		sj = NULL; /* the snapshot's request shape is stale now */
	}
	if (_share_request(snap, d, sj, job_ptr) != SLURM_SUCCESS)
		return 0;
	if (d->colocate)
		return _apply_colocate(d, job_ptr, now);
	if (d->n_shares > 0 && !(ok = _allowed_nodes(snap, d, sj))) {
		debug("sched/tidal: %pJ: planned GPUs are no longer free",
		      job_ptr);
		tidal_set_reason(
			job_ptr, TIDAL_HOLD_PREFIX,
			"the GPUs planned for it are taken (by a running job "
			"that keeps them, or one sharing them)");
		return 0;
	}
	if (ok) {
		bitstr_t *usable = tidal_resv_usable(job_ptr, now);
		int need = sj && sj->gpus_per_node ? sj->gpus_per_node : 1;

		if (usable)
			ok = _outside_reservations(ok, usable, need);
		FREE_NULL_BITMAP(usable);
		if (!ok) {
			tidal_set_reason(job_ptr, TIDAL_HOLD_PREFIX,
				    "a reservation begins on the planned nodes before its time limit would end, and no other node has room");
			return 0;
		}
	}
	if (ok && _completing(job_ptr, d, ok)) {
		FREE_NULL_BITMAP(ok);
		retry_soon = true;
		return 0;
	}
	rc = _start(job_ptr, ok ? ok : _slurm_side(NULL), NULL, d->reason);
	if (rc != SLURM_SUCCESS && ok && rc != ESLURM_NODES_BUSY &&
	    rc != ESLURM_ACCOUNTING_POLICY) {
		/* Slurm will not place the request on the planned nodes
		 * (options the policy does not model: sockets, tasks, CPUs
		 * per GPU): let it choose among all of them, on the side of
		 * the nodes the policy keeps for itself that it planned. */
		bitstr_t *side = _slurm_side(ok);

		verbose("sched/tidal: %pJ: start on planned nodes failed: %s; letting Slurm choose the nodes%s",
			job_ptr, slurm_strerror(rc),
			!side ? "" : side == kept ? " among those the policy keeps" : " but those the policy keeps");
		rc = _start(job_ptr, side, NULL, d->reason);
	}
	FREE_NULL_BITMAP(ok);
	if (rc == SLURM_SUCCESS) {
		tidal_forget_requeue(job_ptr->job_id);
		if (elastic && !tidal_resize_find(d->job))
			_note_start(job_ptr, gpus, now);
		return 1;
	}
	verbose("sched/tidal: %pJ: start failed: %s", job_ptr,
		slurm_strerror(rc));
	/* Busy nodes free themselves within seconds (a preempted or
	 * cancelled job completing): tried again the next cycle.  An
	 * association or QOS limit that an earlier start of this cycle
	 * reached: Slurm's Reason stays (QOSMaxGRESPerUser, ...), and the
	 * next snapshot leaves the job out while the limit holds. */
	if (rc == ESLURM_NODES_BUSY)
		retry_soon = true;
	if (rc != ESLURM_NODES_BUSY && rc != ESLURM_ACCOUNTING_POLICY)
		_refusal(job_ptr, rc, now);
	return 0;
}

static void _apply_preempt(const tidal_snap_t *snap, const tidal_decision_t *d,
			   job_record_t *job_ptr,
			   const tidal_apply_conf_t *conf, time_t now)
{
	const tidal_job_t *sj = _snap_job(snap, d);
	int rc;

	if (!IS_JOB_RUNNING(job_ptr) || IS_JOB_COMPLETING(job_ptr))
		return;
	if (!job_ptr->batch_flag) {
		debug("sched/tidal: %pJ is not a batch job; not preempting",
		      job_ptr);
		return;
	}
	/* A job under tidal-launch checkpoints first, through the resize
	 * machine (resize.c), so that it loses no work. */
	if (!job_ptr->het_job_id && sj &&
	    tidal_preempt_begin(job_ptr, sj->gpus, sj->n_alloc, d->reason, conf,
				now))
		return;
	/* A heterogeneous job is requeued whole, through its leader (Slurm
	 * refuses to requeue any other component alone). */
	if (job_ptr->het_job_id && job_ptr->het_job_id != job_ptr->job_id &&
	    !(job_ptr = find_job_record(job_ptr->het_job_id)))
		return;
	rc = job_requeue(0, job_ptr->job_id, NULL, false, 0);
	if (rc != SLURM_SUCCESS) {
		error("sched/tidal: requeue of %pJ failed: %s", job_ptr,
		      slurm_strerror(rc));
		return;
	}
	info("sched/tidal: requeued %pJ: %s", job_ptr, d->reason);
	tidal_account_requeued(job_ptr, true);
	tidal_metrics_requeued(1, -1);
	tidal_note_requeue(job_ptr->job_id, time(NULL));
	if (job_ptr->het_job_list) {
		list_itr_t *it = list_iterator_create(job_ptr->het_job_list);
		job_record_t *comp;

		while ((comp = list_next(it)))
			if (comp != job_ptr)
				tidal_note_requeue(comp->job_id, time(NULL));
		list_iterator_destroy(it);
	}
	tidal_set_reason(job_ptr, TIDAL_PREEMPT_PREFIX, d->reason);
}

static void _apply_resize(const tidal_snap_t *snap, const tidal_decision_t *d,
			  job_record_t *job_ptr,
			  const tidal_apply_conf_t *conf, time_t now)
{
	const tidal_job_t *sj = _snap_job(snap, d);
	char at[TIDAL_AT_MAX];

	if (!IS_JOB_RUNNING(job_ptr) || IS_JOB_COMPLETING(job_ptr) || !sj ||
	    d->gpus <= 0)
		return;
	if (d->gpus == sj->gpus && !tidal_resize_find(d->job))
		return; /* only moved: not worth a restart */
	tidal_resize_begin(job_ptr, sj->gpus, d->gpus, _decision_nodes(d),
			   _decision_at(snap, d, at, sizeof(at)), d->reason,
			   conf, now);
}

/* The policy keeps JOB_PTR (decision D) at its size now: a resize still
 * waiting for its checkpoint is called off, unless checkpoint_stop already
 * reached the job's agent: its trainers are stopping, and calling off
 * would leave it holding its GPUs idle.  That resize goes on, to restart
 * at the size the policy now keeps. */
static void _call_off_resize(const tidal_snap_t *snap,
			     const tidal_decision_t *d, job_record_t *job_ptr)
{
	tidal_resize_t *r = tidal_resize_find(job_ptr->job_id);

	if (!r || r->phase != TIDAL_RS_CHECKPOINT || !IS_JOB_RUNNING(job_ptr))
		return;
	if (r->cmd && !tidal_agent_withdraw(r->cmd)) {
		if (d->gpus > 0 && d->gpus != r->gpus) {
			char note[200], at[TIDAL_AT_MAX];

			info("sched/tidal: resize of %pJ: checkpoint_stop already "
			     "delivered; it restarts at %d GPUs, the size the "
			     "policy keeps",
			     job_ptr, d->gpus);
			/* The job's story says so too: without this line it
			 * reads "resize from 4 to 1 decided ... requeued, to
			 * restart at 4 GPUs". */
			snprintf(note, sizeof(note),
				 "the policy now keeps it at %d GPUs, not %d; checkpoint_stop was already delivered, so it restarts at %d",
				 d->gpus, r->gpus, d->gpus);
			tidal_agent_note(job_ptr->job_id, (double)time(NULL),
					 note);
			tidal_resize_retarget(
				r, d->gpus, _decision_nodes(d),
				_decision_at(snap, d, at, sizeof(at)));
		}
		return;
	}
	r->cmd = 0;
	if (r->request_set == TIDAL_RQ_KEEP)
		info("sched/tidal: preemption of %pJ called off: the policy keeps it running",
		     job_ptr);
	else
		info("sched/tidal: resize of %pJ to %d GPUs called off: the policy keeps it as it is",
		     job_ptr, r->gpus);
	tidal_resize_forget(job_ptr->job_id);
}

static void _apply_reject(const tidal_decision_t *d, job_record_t *job_ptr,
			  const tidal_apply_conf_t *conf, time_t now)
{
	char *desc = NULL;
	int rc;

	if (!_still_pending(job_ptr, now))
		return;
	/* Before a cancel, which sends the AdminComment to slurmdbd. */
	tidal_account_rejected(job_ptr, d->reason);
	if (!conf->reject_cancel) {
		tidal_set_reason(job_ptr, TIDAL_REJECT_PREFIX, d->reason);
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

/* ---- what to do, chosen with no lock held ----
 *
 * Most decisions change nothing in slurmctld: a running job kept, a held
 * job whose Reason is already the one it would get.  tidal_plan_prepare()
 * leaves those out before the lock is taken, using what snapshot.c saw of
 * each job's Reason and what apply last wrote there (tidal_reason_memo_t).
 * A Reason whose words changed is always rewritten, in lock sections of
 * REASON_CHUNK; one whose numbers only changed (a blocking job's id, the
 * free GPU count, seconds to a deadline) is refreshed at once for the
 * REASON_HEAD jobs nearest the head of the queue, and for the others at
 * REASON_REFRESH jobs a cycle in turn.
 */
#define REASON_CHUNK 512
#define REASON_HEAD 32
#define REASON_REFRESH 128

typedef struct {
	int d; /* index into the plan */
	uint64_t text, words;
} reason_todo_t;

static struct {
	const tidal_plan_t *plan; /* the plan prepared; NULL: none */
	const tidal_decision_t *decisions;
	int *act; /* start, preempt, resize, keep, cancel */
	int n_act;
	reason_todo_t *why; /* Reasons to write, in order */
	int n_why, next_why;
	reason_todo_t *stale; /* numbers only changed */
	int n_stale, cap;
} todo;
static int refresh_from; /* plan index the refresh turn goes on from */

/* FNV-1a of PREFIX and WHY; *WORDS the same with every number as '#'. */
static uint64_t _reason_hash(const char *prefix, const char *why,
			     uint64_t *words)
{
	const uint64_t prime = 0x100000001b3ULL;
	uint64_t h = 0xcbf29ce484222325ULL, w = h;
	bool in_num = false;

	for (int part = 0; part < 2; part++)
		for (const char *c = part ? why : prefix; *c; c++) {
			unsigned char ch = *c;
			bool digit = (ch >= '0' && ch <= '9') ||
				     (in_num && ch == '.' && c[1] >= '0' &&
				      c[1] <= '9');
			h = (h ^ ch) * prime;
			if (!digit)
				w = (w ^ ch) * prime;
			else if (!in_num)
				w = (w ^ '#') * prime;
			in_num = digit;
		}
	*words = w;
	return h;
}

static const char *_reason_prefix(const tidal_decision_t *d)
{
	return d->action == TIDAL_REJECT ? TIDAL_REJECT_PREFIX
					 : TIDAL_HOLD_PREFIX;
}

static tidal_reason_memo_t *_memo(const tidal_snap_t *snap,
				  const tidal_decision_t *d)
{
	return _snap_job(snap, d) ? tidal_snapshot_memo(snap, d->snap_index)
				  : NULL;
}

/* Sort hold decision I into todo.why, todo.stale or nowhere. */
static void _prepare_reason(const tidal_snap_t *snap,
			    const tidal_plan_t *plan, int i, int *head)
{
	const tidal_decision_t *d = &plan->d[i];
	tidal_reason_memo_t *m = _memo(snap, d);
	reason_todo_t r = { .d = i };
	bool intact;

	r.text = _reason_hash(_reason_prefix(d),
			      d->reason[0] ? d->reason : "waiting", &r.words);
	intact = m && m->desc_set && m->desc_seen == m->desc_set &&
		 m->reason_seen == WAIT_RESOURCES;
	if (intact && m->text_hash == r.text)
		return;
	if (intact && m->words_hash == r.words && ++*head > REASON_HEAD)
		todo.stale[todo.n_stale++] = r;
	else
		todo.why[todo.n_why++] = r;
}

static void _prepare(const tidal_snap_t *snap, const tidal_plan_t *plan,
		     bool reject_cancel)
{
	int head = 0, s0 = 0, take;

	if (todo.cap < plan->n + 1) {
		todo.cap = plan->n + 1024;
		xrecalloc(todo.act, todo.cap, sizeof(*todo.act));
		xrecalloc(todo.why, todo.cap, sizeof(*todo.why));
		xrecalloc(todo.stale, todo.cap, sizeof(*todo.stale));
	}
	todo.plan = plan;
	todo.decisions = plan->d;
	todo.n_act = todo.n_why = todo.next_why = todo.n_stale = 0;
	for (int i = 0; i < plan->n; i++) {
		int a = plan->d[i].action;
		if (a == TIDAL_HOLD ||
		    (a == TIDAL_REJECT && !reject_cancel))
			_prepare_reason(snap, plan, i, &head);
		else
			todo.act[todo.n_act++] = i;
	}
	/* The stale ones' turn, from where the last cycle stopped. */
	while (s0 < todo.n_stale && todo.stale[s0].d < refresh_from)
		s0++;
	take = MIN(REASON_REFRESH, todo.n_stale);
	for (int t = 0; t < take; t++)
		todo.why[todo.n_why++] = todo.stale[(s0 + t) % todo.n_stale];
	if (take)
		refresh_from = todo.stale[(s0 + take - 1) % todo.n_stale].d + 1;
}

extern void tidal_plan_prepare(const tidal_snap_t *snap,
			       const tidal_plan_t *plan)
{
	tidal_apply_conf_t conf;

	tidal_engine_apply_conf(&conf);
	_prepare(snap, plan, conf.reject_cancel);
}

/* Locks held: the next REASON_CHUNK Reasons.  RET how many are left. */
static int _write_reasons(const tidal_snap_t *snap, const tidal_plan_t *plan,
			  time_t now)
{
	int end;

	if (todo.plan != plan || todo.decisions != plan->d)
		return 0;
	end = MIN(todo.next_why + REASON_CHUNK, todo.n_why);
	for (; todo.next_why < end; todo.next_why++) {
		const reason_todo_t *r = &todo.why[todo.next_why];
		const tidal_decision_t *d = &plan->d[r->d];
		job_record_t *job_ptr = find_job_record(d->job);
		tidal_reason_memo_t *m;

		if (!job_ptr || !_still_pending(job_ptr, now))
			continue;
		tidal_set_reason(job_ptr, _reason_prefix(d), d->reason);
		if (d->action == TIDAL_REJECT)
			tidal_account_rejected(job_ptr, d->reason);
		if ((m = _memo(snap, d))) {
			m->desc_set = job_ptr->state_desc;
			m->text_hash = r->text;
			m->words_hash = r->words;
		}
	}
	if (todo.next_why < todo.n_why)
		return todo.n_why - todo.next_why;
	todo.plan = NULL;
	return 0;
}

extern int tidal_plan_reasons_left(const tidal_plan_t *plan)
{
	if (todo.plan != plan || todo.decisions != plan->d)
		return 0;
	return todo.n_why - todo.next_why;
}

extern int tidal_plan_apply_reasons(const tidal_snap_t *snap,
				    const tidal_plan_t *plan)
{
	return _write_reasons(snap, plan, time(NULL));
}

static int _by_priority(const void *a, const void *b)
{
	const job_record_t *x = *(job_record_t *const *)a;
	const job_record_t *y = *(job_record_t *const *)b;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	return x->job_id < y->job_id ? -1 : x->job_id > y->job_id;
}

/* The pending jobs in a reservation, highest priority first, each started
 * where Slurm's node selection puts it in its reservation, as Slurm's own
 * scheduler starts them; one that does not fit keeps the Reason
 * select_nodes() gives it (Resources, Reservation, ...).  RET started. */
static int _start_resv_jobs(time_t now)
{
	const uint32_t *ids;
	int n = tidal_snapshot_resv_jobs(&ids), k = 0, started = 0;
	job_record_t **jobs;

	if (!n)
		return 0;
	jobs = xcalloc(n, sizeof(*jobs));
	for (int i = 0; i < n; i++) {
		job_record_t *job_ptr = find_job_record(ids[i]);
		if (job_ptr && _still_pending(job_ptr, now) &&
		    job_ptr->resv_name)
			jobs[k++] = job_ptr;
	}
	qsort(jobs, k, sizeof(*jobs), _by_priority);
	for (int i = 0; i < k; i++) {
		int rc = jobs[i]->het_job_list
				 ? _start_het(jobs[i], now)
				 : _start(jobs[i], NULL, NULL,
					  "its reservation has begun");
		if (rc == SLURM_SUCCESS)
			started++;
		else
			debug("sched/tidal: %pJ in reservation %s waits: %s",
			      jobs[i], jobs[i]->resv_name, slurm_strerror(rc));
	}
	xfree(jobs);
	return started;
}

extern int tidal_plan_apply(const tidal_snap_t *snap, const tidal_plan_t *plan,
			    const tidal_apply_conf_t *conf)
{
	time_t now = time(NULL);
	int started = 0;

	retry_soon = false;
	if (todo.plan != plan || todo.decisions != plan->d)
		_prepare(snap, plan, conf->reject_cancel);
	_set_kept(snap, plan);
	tidal_account_configure(conf);
	tidal_share_refresh(); /* jobs may have ended since the snapshot */
	/* Preemptions first: they free the GPUs the starts were planned on
	 * only once the job has completed, so their starts wait a cycle. */
	for (int k = 0; k < todo.n_act; k++) {
		const tidal_decision_t *d = &plan->d[todo.act[k]];
		job_record_t *job_ptr;

		/* A keep matters only to a resize under way. */
		if (d->action == TIDAL_KEEP && !tidal_resize_find(d->job))
			continue;
		if (!(job_ptr = find_job_record(d->job)))
			continue;
		if (d->action == TIDAL_PREEMPT)
			_apply_preempt(snap, d, job_ptr, conf, now);
		else if (d->action == TIDAL_RESIZE)
			_apply_resize(snap, d, job_ptr, conf, now);
		else if (d->action == TIDAL_KEEP)
			_call_off_resize(snap, d, job_ptr);
	}
	/* After the decisions, so that a resize the policy no longer wants
	 * is called off before its requeue. */
	tidal_resize_advance(conf, now);
	tidal_revive_killed(now);
	_prune_refused();
	/* Reservations' own nodes are outside the plan: no start below
	 * competes for them. */
	started += _start_resv_jobs(now);
	for (int k = 0; k < todo.n_act; k++) {
		const tidal_decision_t *d = &plan->d[todo.act[k]];
		job_record_t *job_ptr;

		if (d->action != TIDAL_START && d->action != TIDAL_REJECT)
			continue;
		if (!(job_ptr = find_job_record(d->job)))
			continue;
		if (d->action == TIDAL_START)
			started += _apply_start(snap, d, job_ptr, now);
		else
			_apply_reject(d, job_ptr, conf, now);
	}
	_write_reasons(snap, plan, now);
	FREE_NULL_BITMAP(kept);
	FREE_NULL_BITMAP(unkept);
	return started;
}
