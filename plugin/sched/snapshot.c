/*
 * snapshot.c - copy what the engine needs out of slurmctld, under its locks.
 *
 * tidal_snapshot_take() runs with the job write lock (job_independent() may
 * update a job's reason) and the node and partition read locks held.  It
 * copies, and makes no decision; nothing is kept that points into
 * slurmctld's records once the locks are released.  One thing it changes:
 * a job array's pending record stands for all of its pending tasks, so,
 * as Slurm's own queue builder does for dependencies on tasks, it splits
 * the first tasks out into records of their own (ARRAY_WINDOW pending at
 * a time, within the array's %N limit), and the engine sees each as a job.
 *
 * Advanced reservations are Slurm's: a job that asks for one (--reservation)
 * is left out of the snapshot and started by Slurm's own node selection
 * (tidal_snapshot_resv_jobs, apply.c), and a node in a whole-node
 * reservation under way has no free GPUs for the engine.  A job that a
 * reservation beginning later keeps off some nodes (it would still run
 * when the reservation begins) is given to the engine only while the
 * other nodes have room for it, and apply.c starts it there.
 *
 * GPU counts come from the gres lists (per node: gres_cnt_avail and
 * gres_cnt_alloc; per job: gres_list_req / gres_list_alloc), never from the
 * TRES strings, which carry no GPU counts without slurmdbd.  GPUs allocated
 * to jobs the engine does not see (completing jobs, suspended jobs) are
 * subtracted from the node so that the policy never plans on them.
 *
 * The copy is incremental, because the lock is held while it runs and most
 * records do not change from one cycle to the next:
 *
 *   under the locks   tidal_snapshot_take()
 *     each job        eligible?  fingerprint of the fields copied (state,
 *                     start, request and allocation pointers, limits, name)
 *                     equal to last cycle's?  keep the copy : copy again
 *     each node       free GPUs and up/down (what changes); name, CPUs,
 *                     memory and leaf switch only if the record changed
 *   no lock           tidal_snapshot_finish()
 *                     drop the copies of jobs not seen, lay the copies out
 *                     as SNAP's arrays in job_list order
 *
 * Slurm replaces a job's gres list, node bitmap and strings when it changes
 * them (a new allocation made before the old one is freed), so comparing
 * those pointers, with the scalars beside them, finds every change that
 * matters here.  The copies also keep the Reason apply.c last wrote
 * (tidal_reason_memo_t), so that apply rewrites only Reasons that changed.
 *
 * SNAP's own arrays come from one pool of blocks that is handed back whole
 * and reused by the next snapshot.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* First: slurmctld.h, which acct_policy.h needs before it. */
#include "plugin/sched/slurm_compat.h"

#include "src/common/assoc_mgr.h"
#include "src/common/bitstring.h"
#include "src/common/list.h"
#include "src/common/node_conf.h"
#include "src/common/uid.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/acct_policy.h"
#include "src/slurmctld/job_scheduler.h"
#include "src/slurmctld/licenses.h"
#include "src/slurmctld/reservation.h"
#include "src/slurmctld/slurmctld.h"

#include "plugin/common/options.h"
#include "plugin/sched/bridge.h"
#include "plugin/sched/slurm_side.h"

/* ---- the snapshot's memory pool ---- */

typedef struct block {
	struct block *next;
	size_t used, cap;
	char data[];
} block_t;

#define BLOCK_MIN (256 * 1024)
static block_t *spare; /* blocks of freed snapshots, for the next one */
static tidal_snap_t *cur; /* the snapshot being laid out */
static bool to_heap; /* strings of the copies kept between cycles */

/* N zeroed bytes, 16-aligned, from CUR's pool. */
static void *_alloc(size_t n)
{
	block_t *b = cur->pool;

	n = (n + 15) & ~(size_t)15;
	if (!b || b->used + n > b->cap) {
		block_t **pp = &spare, *nb = NULL;
		for (; *pp; pp = &(*pp)->next)
			if ((*pp)->cap >= n) {
				nb = *pp;
				*pp = nb->next;
				break;
			}
		if (!nb) {
			size_t cap = n > BLOCK_MIN ? n : BLOCK_MIN;
			nb = xmalloc_nz(sizeof(*nb) + cap);
			nb->cap = cap;
		}
		nb->used = 0;
		nb->next = b;
		cur->pool = b = nb;
	}
	void *p = b->data + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

/* S on the heap while a copy is made, else from CUR's pool (NULL if
 * neither). */
static char *_strdup(const char *s)
{
	size_t n;
	char *p;

	if (!s)
		return NULL;
	if (to_heap)
		return xstrdup(s);
	if (!cur)
		return NULL;
	n = strlen(s) + 1;
	p = _alloc(n);
	memcpy(p, s, n);
	return p;
}

/* ---- what is kept between cycles ---- */

/* One job's copy.  Its strings and arrays are on the heap; alloc_node holds
 * slurm node indices (mapped to snapshot indices by the finish step). */
typedef struct {
	uint32_t id;
	uint32_t seen; /* the cycle it was last taken in */
	uint64_t fp;   /* fingerprint of the record it was copied from */
	tidal_reason_memo_t memo; /* with the above: the line read each cycle */
	int max_asked; /* --elastic-gpus maximum, before QOS limits cap it */
	tidal_job_t job;
} copy_t;

static copy_t *copies;
static int n_copies, cap_copies;
static int32_t *slot_of; /* id -> copies index, open addressing; -1 empty */
static uint32_t slot_mask;
static int *order; /* this cycle's copies, in job_list order */
static int n_order, cap_order;
static uint32_t cycle;
static job_record_t **walk; /* every record in job_list, in its order */
static uint32_t *walk_id;   /* their ids, as of the last take */
static int n_walk, cap_walk;

/* A node's copy: the static part is refreshed only when the record
 * changed; the GPU counts and state are read every cycle. */
typedef struct {
	node_record_t *ptr;
	const char *name_seen; /* compared, never read */
	char *name;
	int cpus;
	uint64_t mem_mb;
	int switch_id;
	int slurm_index, gpus_total, gpus_alloc, up;
	int reserved; /* in a whole-node reservation under way */
} node_copy_t;

static node_copy_t *ncopies;
static int n_ncopies, cap_ncopies, node_count_seen;
static uint64_t topo_stamp;
static tidal_topo_switch_t *topo; /* slurm_compat.h's: with node bitmaps */
static int n_topo;
static tidal_switch_t *sw_copy; /* what the snapshot hands over */

static void _job_free(tidal_job_t *j)
{
	xfree(j->name);
	xfree(j->user);
	xfree(j->partition);
	xfree(j->model);
	xfree(j->alloc_node);
	xfree(j->alloc_gpus);
	memset(j, 0, sizeof(*j));
}

static int _copy_find(uint32_t id)
{
	if (!slot_of)
		return -1;
	for (uint32_t h = (id * 2654435761u) & slot_mask;;
	     h = (h + 1) & slot_mask) {
		int32_t c = slot_of[h];
		if (c < 0 || copies[c].id == id)
			return c;
	}
}

static int _copy_new(uint32_t id)
{
	if (n_copies == cap_copies) {
		cap_copies = cap_copies ? 2 * cap_copies : 1024;
		xrecalloc(copies, cap_copies, sizeof(*copies));
	}
	/* The slot may hold a stale image of a copy moved by _drop_unseen(). */
	memset(&copies[n_copies], 0, sizeof(*copies));
	copies[n_copies].id = id;
	return n_copies++;
}

/* Outside the locks: free the copies of jobs not taken this cycle, close
 * the gaps and index the rest by job id. */
static void _drop_unseen(void)
{
	int *new_of = xmalloc_nz((n_copies + 1) * sizeof(int));
	uint32_t size = 1024;
	int k = 0;

	for (int c = 0; c < n_copies; c++) {
		new_of[c] = -1;
		if (copies[c].seen != cycle) {
			_job_free(&copies[c].job);
			continue;
		}
		if (k != c)
			copies[k] = copies[c];
		new_of[c] = k++;
	}
	n_copies = k;
	for (int i = 0; i < n_order; i++)
		order[i] = new_of[order[i]];
	xfree(new_of);

	while (size < 2 * (uint32_t)n_copies)
		size *= 2;
	if (size - 1 != slot_mask || !slot_of) {
		xfree(slot_of);
		slot_of = xmalloc_nz(size * sizeof(*slot_of));
		slot_mask = size - 1;
	}
	memset(slot_of, 0xff, size * sizeof(*slot_of));
	for (int c = 0; c < n_copies; c++) {
		uint32_t h = (copies[c].id * 2654435761u) & slot_mask;
		while (slot_of[h] >= 0)
			h = (h + 1) & slot_mask;
		slot_of[h] = c;
	}
}

/* ---- nodes ---- */

static int _node_up(node_record_t *node_ptr)
{
	return !(IS_NODE_DOWN(node_ptr) || IS_NODE_DRAIN(node_ptr) ||
		 IS_NODE_NO_RESPOND(node_ptr) || IS_NODE_FUTURE(node_ptr) ||
		 IS_NODE_POWERED_DOWN(node_ptr) || IS_NODE_FAIL(node_ptr));
}

/* Leaf switch holding slurm node INDEX, or -1. */
static int _leaf_switch(int index)
{
	for (int s = 0; s < n_topo; s++)
		if (topo[s].level == 0 && topo[s].nodes &&
		    index < bit_size(topo[s].nodes) && /* a node added since */
		    bit_test(topo[s].nodes, index))
			return s;
	return -1;
}

/* The switch tree changes only when Slurm reads its configuration: copied
 * then (slurm_compat.h reads it from where the Slurm version keeps it). */
static bool _take_switches(void)
{
	if (!tidal_topo_changed(&topo_stamp))
		return false;
	for (int s = 0; s < n_topo; s++)
		xfree(sw_copy[s].name);
	xfree(sw_copy);
	tidal_topo_free(topo, n_topo);
	tidal_topo_take(&topo, &n_topo);
	sw_copy = xcalloc(n_topo + 1, sizeof(*sw_copy));
	char *line = NULL;
	for (int s = 0; s < n_topo; s++) {
		sw_copy[s].name = xstrdup(topo[s].name);
		sw_copy[s].level = topo[s].level;
		sw_copy[s].link = topo[s].link;
		sw_copy[s].parent = topo[s].parent;
		xstrfmtcat(line, "%s%s (level %d, %d nodes, under %s)",
			   s ? ", " : "", topo[s].name, topo[s].level,
			   topo[s].nodes ? bit_set_count(topo[s].nodes) : 0,
			   topo[s].parent >= 0 ? topo[topo[s].parent].name
					       : "none");
	}
	info("sched/tidal: switch tree of %d switches%s%s", n_topo,
	     n_topo ? ": " : "", line ? line : "");
	xfree(line);
	return true;
}

/* Nodes in a whole-node reservation under way at NOW: the jobs outside it
 * cannot have them, and the jobs in it are Slurm's to place.  NULL if
 * there is none.  *LATER: whether a reservation with nodes begins after
 * NOW (only then can one keep a job off nodes the engine sees free). */
static bitstr_t *_reserved_now(time_t now, bool *later)
{
	bitstr_t *reserved = NULL;
	slurmctld_resv_t *resv_ptr;
	list_itr_t *it;

	*later = false;
	if (!resv_list || !list_count(resv_list))
		return NULL;
	it = list_iterator_create(resv_list);
	while ((resv_ptr = list_next(it))) {
		if (resv_ptr->node_bitmap && resv_ptr->start_time > now)
			*later = true;
		if (!resv_ptr->node_bitmap || resv_ptr->start_time > now ||
		    resv_ptr->end_time <= now ||
		    !(resv_ptr->ctld_flags & RESV_CTLD_FULL_NODE))
			continue;
		if (!reserved)
			reserved = bit_alloc(node_record_count);
		bit_or(reserved, resv_ptr->node_bitmap);
	}
	list_iterator_destroy(it);
	return reserved;
}

/* As of this take: the nodes in a whole-node reservation under way (NULL
 * if none); whether a reservation begins later; and, only then, the nodes
 * that exist, so that a job kept off none of them by a reservation is
 * told from one that is (_room_outside_resv). */
static bitstr_t *reserved, *active_nodes;
static bool resv_later;

/* The GPUs that resizes keep for their restart (tidal_resize_keep). */
typedef struct {
	uint32_t job;
	int node; /* slurm index */
	int gpus;
} keep_t;
static keep_t *keep;
static int n_keep, cap_keep;

static void _keep_add(uint32_t job, int node, int gpus)
{
	if (n_keep == cap_keep) {
		cap_keep = 2 * cap_keep + 8;
		xrecalloc(keep, cap_keep, sizeof(*keep));
	}
	keep[n_keep++] = (keep_t){ .job = job, .node = node, .gpus = gpus };
}

static void _take_nodes(time_t now)
{
	bool all = _take_switches();
	node_record_t *node_ptr;
	int k = 0;

	if (cap_ncopies < node_record_count + 1) {
		xrecalloc(ncopies, node_record_count + 1, sizeof(*ncopies));
		cap_ncopies = node_record_count + 1;
	}
	n_keep = 0;
	tidal_resize_keep(now, _keep_add);
	for (int i = 0; (node_ptr = next_node(&i)); i++) {
		node_copy_t *n = &ncopies[k++];
		int count[2] = { 0, 0 };

		if (all || n->ptr != node_ptr || n->name_seen != node_ptr->name ||
		    n->cpus != node_ptr->cpus ||
		    n->mem_mb != node_ptr->real_memory) {
			xfree(n->name);
			n->name = xstrdup(node_ptr->name);
			n->name_seen = node_ptr->name;
			n->ptr = node_ptr;
			n->cpus = node_ptr->cpus;
			n->mem_mb = node_ptr->real_memory;
			n->switch_id = _leaf_switch(node_ptr->index);
		}
		n->slurm_index = node_ptr->index;
		tidal_node_gpus(node_ptr, &count[0], &count[1]);
		n->gpus_total = count[0];
		n->gpus_alloc = count[1];
		n->up = _node_up(node_ptr);
		n->reserved = reserved && bit_test(reserved, node_ptr->index);
	}
	n_ncopies = k;
	node_count_seen = node_record_count;
}

/* ---- jobs ---- */

/* The job's GPU request: total and, if given per node, per node. */
static void _job_request(job_record_t *job_ptr, tidal_job_t *j)
{
	list_itr_t *it;
	gres_state_t *gs;
	uint32_t nodes = MAX(job_ptr->details->min_nodes, 1);

	j->min_nodes = nodes;
	if (!job_ptr->gres_list_req)
		return;
	it = list_iterator_create(job_ptr->gres_list_req);
	while ((gs = list_next(it))) {
		gres_job_state_t *js = gs->gres_data;
		if (js && !xstrcmp(gs->gres_name, "shard")) {
			/* A shard of one GPU per node (share.c) */
			j->gpus += nodes;
			j->gpus_per_node = 1;
			continue;
		}
		if (xstrcmp(gs->gres_name, "gpu") || !js)
			continue;
		if (js->gres_per_job) {
			j->gpus += (int)js->gres_per_job;
		} else if (js->gres_per_node) {
			j->gpus += (int)(js->gres_per_node * nodes);
			j->gpus_per_node = (int)js->gres_per_node;
		} else if (js->gres_per_task) {
			j->gpus += (int)(js->gres_per_task *
					 MAX(job_ptr->details->num_tasks, 1));
		} else if (js->gres_per_socket) {
			j->gpus += (int)(js->gres_per_socket * nodes);
		}
	}
	list_iterator_destroy(it);
}

/* The GPUs of JOB_PTR's gres/gpu allocation on its first N nodes (in
 * node order), added into PER_NODE[0..N) where it is not NULL; a GPU it
 * holds shards of counts as one (share.c).  RET: their sum. */
static int _gpu_alloc(job_record_t *job_ptr, int *per_node, int n)
{
	list_itr_t *it;
	gres_state_t *gs;
	int gpus = 0;

	if (!job_ptr->gres_list_alloc)
		return 0;
	it = list_iterator_create(job_ptr->gres_list_alloc);
	while ((gs = list_next(it))) {
		gres_job_state_t *js = gs->gres_data;
		if (js && js->gres_bit_alloc &&
		    !xstrcmp(gs->gres_name, "shard")) {
			for (int k = 0; k < n && k < (int)js->node_cnt; k++) {
				int g = js->gres_bit_alloc[k]
						? bit_set_count(
							  js->gres_bit_alloc[k])
						: 0;
				gpus += g;
				if (per_node)
					per_node[k] += g;
			}
			continue;
		}
		if (xstrcmp(gs->gres_name, "gpu") || !js ||
		    !js->gres_cnt_node_alloc)
			continue;
		for (int k = 0; k < n && k < (int)js->node_cnt; k++) {
			gpus += (int)js->gres_cnt_node_alloc[k];
			if (per_node)
				per_node[k] += (int)js->gres_cnt_node_alloc[k];
		}
	}
	list_iterator_destroy(it);
	return gpus;
}

/* GPUs a running job holds on each of its nodes (slurm node indices). */
static void _job_alloc(job_record_t *job_ptr, tidal_job_t *j)
{
	int n = job_ptr->node_bitmap ? bit_set_count(job_ptr->node_bitmap) : 0;

	j->alloc_node = xcalloc(n + 1, sizeof(int));
	j->alloc_gpus = xcalloc(n + 1, sizeof(int));
	/* From the first set bit: a job's nodes are few and near each other,
	 * the node table may be thousands long. */
	for (int i = n ? bit_ffs(job_ptr->node_bitmap) : node_record_count;
	     i >= 0 && i < node_record_count && j->n_alloc < n; i++)
		if (bit_test(job_ptr->node_bitmap, i))
			j->alloc_node[j->n_alloc++] = i;
	j->gpus = _gpu_alloc(job_ptr, j->alloc_gpus, j->n_alloc);
	j->shard_node = j->shard_gpu = -1;
	for (int k = 0; k < j->n_alloc; k++) {
		int g = tidal_job_shard_gpu(job_ptr, j->alloc_node[k]);
		if (g >= 0) {
			j->shard_node = j->alloc_node[k];
			j->shard_gpu = g;
			break;
		}
	}
}

extern int tidal_alloc_gpus(job_record_t *job_ptr)
{
	return _gpu_alloc(job_ptr, NULL, INT_MAX);
}

static bool policy_admits_deadlines;
static bool _asks_gpus(job_record_t *job_ptr);

extern void tidal_snapshot_deadlines(int policy_admits)
{
	policy_admits_deadlines = policy_admits;
}

/* The time limit, in minutes, pending JOB_PTR will start with, as
 * select_nodes() sets it: its own, or, without one or over its
 * partition's MaxTime (which --time-min allows), the partition's
 * DefaultTime, or else its MaxTime.  0 for none (INFINITE). */
static uint32_t _fitted_limit(job_record_t *job_ptr)
{
	part_record_t *part = job_ptr->part_ptr;
	uint32_t limit = job_ptr->time_limit;

	if (part && job_ptr->limit_set.time != ADMIN_SET_LIMIT &&
	    (limit == NO_VAL || limit > part->max_time))
		limit = part->default_time != NO_VAL ? part->default_time
						     : part->max_time;
	return limit == INFINITE || limit == NO_VAL ? 0 : limit;
}

/* A job the policy plans by its deadline (it admits jobs by their
 * deadlines, and this one asks for GPUs) was planned to end by it to the
 * second; its limit is rounded up to the minute, so that Slurm, whose
 * limits are whole minutes, does not end it before its deadline (Fig 10's
 * live replay: tidal-91 started 118 s before its deadline with 81 s of
 * work, and its limit, rounded down as Slurm's scheduler does, ended it
 * after 65 s).  The others keep Slurm's rule, rounded down: they end by
 * their deadlines. */
extern uint32_t tidal_deadline_limit(job_record_t *job_ptr, time_t now)
{
	uint32_t limit, until;
	time_t left;

	if (!job_ptr->deadline || job_ptr->deadline == NO_VAL ||
	    job_ptr->deadline <= now)
		return 0;
	left = job_ptr->deadline - now;
	if (policy_admits_deadlines && _asks_gpus(job_ptr))
		left += 59;
	until = (uint32_t)(left / 60);
	limit = _fitted_limit(job_ptr); /* 0: none */
	return until == 0 ? 0 : limit ? MIN(limit, until) : until;
}

/* A job array's pending record with tasks not yet split out of it (the
 * last one left is turned into a plain task record by Slurm). */
static bool _array_meta(job_record_t *job_ptr)
{
	return job_ptr->array_recs && job_ptr->array_recs->task_id_bitmap &&
	       job_ptr->array_task_id == NO_VAL;
}

/* The partition's state and limits, as Slurm's own queue builder tests
 * them (job_limits_check): a job whose partition is DOWN or INACTIVE, or
 * whose request exceeds the partition's limits, waits with Slurm's Reason
 * for it (PartitionDown, PartitionTimeLimit, ...), which is cleared once
 * the partition takes it again.  A job submitted to several partitions
 * goes to the first that takes it, in the order Slurm keeps them
 * (part_ptr_list, sorted by PriorityTier), and select_nodes() runs it in
 * job_ptr->part_ptr.  Slurm leaves part_ptr wherever its own last attempt
 * left it (24.11's _select_nodes_parts() at submission ends on the last
 * partition), so the list is walked from its head.  When no partition
 * takes the job, the first one's Reason is the one shown. */
static bool _partition_ok(job_record_t *job_ptr, time_t now)
{
	part_record_t *first = job_ptr->part_ptr;
	/* A job with --time-min is held to its minimum, as under backfill:
	 * select_nodes() cuts its limit to the partition's when it starts
	 * (_fitted_limit). */
	bool min_time = job_ptr->time_min != 0 && job_ptr->time_min != NO_VAL;
	int reason;

	if (job_ptr->part_ptr_list && list_count(job_ptr->part_ptr_list)) {
		list_itr_t *it = list_iterator_create(job_ptr->part_ptr_list);
		part_record_t *part_ptr, *top = NULL;
		int top_reason = WAIT_NO_REASON;

		reason = WAIT_PART_CONFIG;
		while ((part_ptr = list_next(it))) {
			job_ptr->part_ptr = part_ptr;
			reason = job_limits_check(&job_ptr, min_time);
			if (reason == WAIT_NO_REASON)
				break;
			if (!top) {
				top = part_ptr;
				top_reason = reason;
			}
		}
		list_iterator_destroy(it);
		if (reason != WAIT_NO_REASON) {
			job_ptr->part_ptr = top ? top : first;
			reason = top ? top_reason : reason;
		}
	} else {
		reason = job_limits_check(&job_ptr, min_time);
	}
	if (reason != (int)job_ptr->state_reason &&
	    (reason != WAIT_NO_REASON || tidal_part_held(job_ptr))) {
		job_ptr->state_reason = reason;
		xfree(job_ptr->state_desc);
		last_job_update = now;
	}
	return reason == WAIT_NO_REASON;
}

static bool _asks_gpus(job_record_t *job_ptr)
{
	tidal_job_t req = { 0 };

	_job_request(job_ptr, &req);
	return req.gpus > 0;
}

/* The free GPUs of a set of nodes: in all, and how many nodes have at
 * least G free (G up to ROOM_MAX; more counts as ROOM_MAX).  Jobs whose
 * time limits meet the same reservations share the set, so the last one
 * counted is kept for the next job (valid within one take). */
#define ROOM_MAX 64
static struct {
	uint32_t cycle;
	bitstr_t *nodes;
	int free_total;
	int with_room[ROOM_MAX + 1];
} room_memo;

static void _count_room(bitstr_t *nodes)
{
	node_record_t *node_ptr;

	if (room_memo.cycle == cycle && room_memo.nodes &&
	    bit_equal(room_memo.nodes, nodes))
		return;
	FREE_NULL_BITMAP(room_memo.nodes);
	room_memo.nodes = bit_copy(nodes);
	room_memo.cycle = cycle;
	room_memo.free_total = 0;
	memset(room_memo.with_room, 0, sizeof(room_memo.with_room));
	for (int i = 0; (node_ptr = next_node(&i)); i++) {
		int count[2] = { 0, 0 }, free_gpus;

		if (!bit_test(nodes, node_ptr->index) || !_node_up(node_ptr) ||
		    !node_ptr->gres_list)
			continue;
		tidal_node_gpus(node_ptr, &count[0], &count[1]);
		free_gpus = MIN(MAX(count[0] - count[1], 0), ROOM_MAX);
		room_memo.free_total += MAX(count[0] - count[1], 0);
		for (int g = 0; g <= free_gpus; g++)
			room_memo.with_room[g]++;
	}
}

/* See slurm_side.h. */
extern bitstr_t *tidal_resv_usable(job_record_t *job_ptr, time_t now)
{
	bitstr_t *usable = NULL;
	bool overlap = false;
	time_t when = now;

	if (!resv_list || !list_count(resv_list))
		return NULL;
	if (tidal_resv_test(job_ptr, &when, &usable, &overlap) != SLURM_SUCCESS)
		FREE_NULL_BITMAP(usable);
	return usable;
}

/* Whether JOB_PTR (in no reservation) fits now on the nodes that no
 * reservation takes before its time limit would end (job_test_resv).
 * True also when reservations keep it off no node but those reserved now
 * (the engine sees no free GPU there), or when Slurm is to judge. */
static bool _room_outside_resv(job_record_t *job_ptr, time_t now)
{
	bitstr_t *usable;
	bool room;
	tidal_job_t req = { 0 };

	_job_request(job_ptr, &req);
	if (req.gpus <= 0)
		return true; /* placed by Slurm in any case */
	if (!(usable = tidal_resv_usable(job_ptr, now)))
		return true;
	if (reserved)
		bit_or(usable, reserved);
	if (bit_super_set(active_nodes, usable)) {
		FREE_NULL_BITMAP(usable);
		return true;
	}
	if (reserved)
		bit_and_not(usable, reserved);
	_count_room(usable);
	FREE_NULL_BITMAP(usable);
	room = req.gpus_per_node
		? room_memo.with_room[MIN(MAX(req.gpus_per_node, 1), ROOM_MAX)] >=
			  req.min_nodes
		: room_memo.free_total >= req.gpus;
	if (!room)
		tidal_set_reason(job_ptr, TIDAL_HOLD_PREFIX,
				 "a reservation begins on the free nodes before its time limit would end");
	return room;
}

/* Where gres/gpu is among slurmctld's TRES; -1 if it is not tracked
 * (AccountingStorageTRES without gres/gpu: no limit counts GPUs). */
static int _gpu_tres_pos(void)
{
	slurmdb_tres_rec_t rec = { .type = "gres", .name = "gpu" };

	return assoc_mgr_find_tres_pos(&rec, false);
}

/* Whether JOB_PTR's request, with GPUS GPUs instead if GPUS >= 0 (at
 * gres/gpu's TRES position POS), passes its association and QOS limits
 * on resources (acct_policy_job_runnable_post_select: it sets the job's
 * Reason when it fails). */
static bool _acct_ok_at(job_record_t *job_ptr, int pos, int gpus)
{
	uint64_t *tres = xcalloc(slurmctld_tres_cnt, sizeof(*tres));
	bool ok;

	memcpy(tres, job_ptr->tres_req_cnt, slurmctld_tres_cnt * sizeof(*tres));
	if (pos >= 0 && pos < slurmctld_tres_cnt && gpus >= 0)
		tres[pos] = (uint64_t)gpus;
	ok = acct_policy_job_runnable_post_select(job_ptr, tres, false);
	xfree(tres);
	return ok;
}

static bool _limits_enforced(job_record_t *job_ptr)
{
	return (accounting_enforce & ACCOUNTING_ENFORCE_LIMITS) &&
	       job_ptr->tres_req_cnt && slurmctld_tres_cnt > 0;
}

/* Association and QOS limits on the resources a job asks for (GPUs,
 * CPUs, nodes: MaxTRESPerUser, GrpTRES, MaxTRESPerJob, ...), judged
 * before the engine places it on what Slurm counted of its request at
 * submission (TRES=, at its least node count), as sched/backfill judges
 * a job before it reserves nodes for it; an elastic job at the least
 * GPUs it can run on.  A job over a limit stays out of the engine's
 * plan, so it holds no GPUs that jobs behind it could use, and keeps
 * the Reason the check sets (QOSMaxGRESPerUser, ...).  select_nodes()
 * checks again on the nodes chosen. */
static bool _acct_limits_ok(job_record_t *job_ptr)
{
	tidal_env_options_t o;

	if (!_limits_enforced(job_ptr))
		return true;
	tidal_env_options(job_ptr->spank_job_env, job_ptr->spank_job_env_size,
			  &o);
	return _acct_ok_at(job_ptr, o.max_gpus ? _gpu_tres_pos() : -1,
			   o.max_gpus ? MAX(o.min_gpus, 1) : -1);
}

/* The most GPUs elastic job J (JOB_PTR's copy) may be given under its
 * association and QOS limits, at most MAX (its --elastic-gpus maximum):
 * the largest size whose request passes them, found by bisection.  A
 * running job's own GPUs count in the usage its limits see, so its
 * growth is judged as if those GPUs were asked for again: a cap on the
 * safe side, and never below what it holds now (limits stop growth; they
 * do not shrink a job).  The probes leave the job's Reason as it was. */
static int _elastic_cap(job_record_t *job_ptr, const tidal_job_t *j, int max,
			bool running)
{
	int pos, lo, hi, held = running ? j->gpus : 0;
	uint32_t reason;
	char *desc;
	void *blocking;

	if (!_limits_enforced(job_ptr) || (pos = _gpu_tres_pos()) < 0)
		return max;
	reason = job_ptr->state_reason;
	desc = xstrdup(job_ptr->state_desc);
	blocking = job_ptr->qos_blocking_ptr;
	lo = MAX(j->min_gpus, 1) - 1; /* passes (or is held) */
	hi = max;		       /* the answer is in (lo, hi] or lo */
	if (!_acct_ok_at(job_ptr, pos, hi)) {
		hi--;
		while (lo < hi) {
			int mid = lo + (hi - lo + 1) / 2;
			if (_acct_ok_at(job_ptr, pos, mid))
				lo = mid;
			else
				hi = mid - 1;
		}
	}
	job_ptr->state_reason = reason;
	xfree(job_ptr->state_desc);
	job_ptr->state_desc = desc;
	job_ptr->qos_blocking_ptr = blocking;
	return MAX(MAX(hi, held), MAX(j->min_gpus, 1));
}

/* One pending record that Slurm itself would consider now, an array
 * record with tasks to split included. */
static bool _eligible_one(job_record_t *job_ptr, time_t now)
{
	if (!IS_JOB_PENDING(job_ptr) || IS_JOB_COMPLETING(job_ptr) ||
	    !job_ptr->details || !job_ptr->part_ptr ||
	    job_ptr->priority == 0)
		return false;
	/* Dependencies, --begin (Reason BeginTime), a reservation not yet
	 * begun (Reason Reservation), as Slurm's schedulers ask. */
	if (!job_independent(job_ptr))
		return false;
	if (!_partition_ok(job_ptr, now))
		return false;
	/* Association and QOS limits (they write their own Reason). */
	if (tidal_acct_held(job_ptr) &&
	    !acct_policy_job_runnable_pre_select(job_ptr, false))
		return false;
	if (!_acct_limits_ok(job_ptr))
		return false;
	/* Licences held by running jobs or reservations: Reason=Licenses,
	 * as Slurm's scheduler says. */
	if (license_job_test(job_ptr, now, true) != SLURM_SUCCESS) {
		if (job_ptr->state_reason != WAIT_LICENSES) {
			job_ptr->state_reason = WAIT_LICENSES;
			xfree(job_ptr->state_desc);
			last_job_update = now;
		}
		return false;
	}
	/* A deadline the job's time limit (or --time-min) cannot end by:
	 * cancelled with Reason DeadLine, as Slurm's schedulers do, unless
	 * the policy admits jobs by their deadlines itself and plans this
	 * one (it asks for GPUs; Slurm places the others). */
	if (job_ptr->deadline && job_ptr->deadline != NO_VAL &&
	    (!policy_admits_deadlines || !_asks_gpus(job_ptr)) &&
	    !deadline_ok(job_ptr, "sched/tidal"))
		return false;
	/* An array's %N: sets Reason=JobArrayTaskLimit when it is reached. */
	if ((job_ptr->array_task_id != NO_VAL || job_ptr->array_recs) &&
	    !job_array_start_test(job_ptr))
		return false;
	if (resv_later && !job_ptr->resv_name &&
	    !_room_outside_resv(job_ptr, now))
		return false;
	return true;
}

/* Pending jobs that Slurm itself would consider now.  A heterogeneous
 * job is taken whole, under its leader's record: the leader is eligible
 * when every component is (each keeps the Reason Slurm's checks give it),
 * and the other components are never in the snapshot.  apply.c starts all
 * of its components at once on disjoint nodes, or none, as backfill does
 * (the only scheduler of Slurm's own that starts them). */
static bool _eligible_any(job_record_t *job_ptr, time_t now)
{
	list_itr_t *it;
	job_record_t *comp;
	bool ok = true;

	if (!job_ptr->het_job_id)
		return _eligible_one(job_ptr, now);
	if (job_ptr->het_job_offset || !job_ptr->het_job_list ||
	    job_ptr->het_job_id != job_ptr->job_id)
		return false;
	it = list_iterator_create(job_ptr->het_job_list);
	while ((comp = list_next(it)))
		if (comp->het_job_id != job_ptr->job_id ||
		    !_eligible_one(comp, now))
			ok = false; /* the others still get their Reasons */
	list_iterator_destroy(it);
	return ok;
}

/* Pending jobs the engine is given. */
static bool _eligible(job_record_t *job_ptr, time_t now)
{
	return !_array_meta(job_ptr) && _eligible_any(job_ptr, now);
}

#define ARRAY_WINDOW 64
#define ARRAY_REASON "TidalQueue: the array's next tasks wait as jobs of their own; the rest follow as they start"

/* META is an eligible array record: split tasks out of it (lowest task id
 * first) until ARRAY_WINDOW of the array's tasks are pending on their own
 * or its %N limit would be passed by starting them all.  Each task keeps
 * META's record (under a new job id, as when Slurm starts a task); the
 * rest move on to a new record under the array's id.  RET the task
 * records made, in ADD (at most ARRAY_WINDOW); 0 if none. */
static int _split_array(job_record_t *meta, job_record_t **add)
{
	job_array_struct_t *ar = meta->array_recs;
	uint32_t array_id = meta->array_job_id;
	/* Tasks split out and pending (the array record is not counted). */
	int pending = num_pending_job_array_tasks(array_id);
	int want = ARRAY_WINDOW - pending, n = 0;

	if (ar->max_run_tasks) {
		int room = (int)ar->max_run_tasks - (int)ar->tot_run_tasks -
			   pending;
		want = MIN(want, room);
	}
	while (n < want && _array_meta(meta)) {
		int task = bit_ffs(meta->array_recs->task_id_bitmap);
		job_record_t *rest;

		if (task < 0)
			break;
		meta->array_task_id = task;
		if (meta->array_recs->task_cnt <= 1) {
			/* The last task: the record itself becomes it. */
			tidal_array_last_task(meta);
			add[n++] = meta;
			break;
		}
		if (!(rest = tidal_array_split(meta))) {
			error("sched/tidal: %pJ: cannot split task %d out of the array",
			      meta, task);
			meta->array_task_id = NO_VAL;
			break;
		}
		rest->job_state = JOB_PENDING;
		rest->start_time = 0;
		add[n++] = meta; /* now the task, under its own id */
		meta = rest;
	}
	if (n) {
		last_job_update = time(NULL);
		debug("sched/tidal: array %u: %d tasks split out, %d were pending",
		      array_id, n, pending);
	}
	if (_array_meta(meta) &&
	    (meta->state_reason != WAIT_RESOURCES || !meta->state_desc ||
	     strcmp(meta->state_desc, ARRAY_REASON))) {
		meta->state_reason = WAIT_RESOURCES;
		xfree(meta->state_desc);
		meta->state_desc = xstrdup(ARRAY_REASON);
		last_job_update = time(NULL);
	}
	return n;
}

static inline uint64_t _mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 32);
}

/* Everything _copy_job() reads that can change, as one number.  Slurm
 * allocates a new gres list or node bitmap before it frees the old one, so
 * a changed request or allocation has a new address; a requeue passes the
 * job through pending.  Fields fixed at submission (user, options) are
 * left out: each one read is a cache miss per job under the lock. */
static uint64_t _fingerprint(job_record_t *job_ptr, bool running)
{
	job_details_t *det = job_ptr->details;
	uint64_t h = running;

	h = _mix(h, (uintptr_t)det);
	h = _mix(h, (uint64_t)job_ptr->deadline);
	h = _mix(h, (uintptr_t)job_ptr->gres_list_req);
	h = _mix(h, (uintptr_t)job_ptr->name);
	h = _mix(h, (uintptr_t)job_ptr->part_ptr);
	h = _mix(h, job_ptr->time_limit);
	if (!running && job_ptr->part_ptr) /* _fitted_limit() */
		h = _mix(h, ((uint64_t)job_ptr->part_ptr->max_time << 32) |
				    job_ptr->part_ptr->default_time);
	h = _mix(h, ((uint64_t)det->min_nodes << 32) | det->num_tasks);
	if (!running && job_ptr->het_job_list) { /* _het_request() */
		list_itr_t *it = list_iterator_create(job_ptr->het_job_list);
		job_record_t *comp;

		while ((comp = list_next(it)))
			if (comp != job_ptr && comp->details) {
				h = _mix(h, (uintptr_t)comp->gres_list_req);
				h = _mix(h, ((uint64_t)comp->details->min_nodes
					     << 32) |
						    comp->details->num_tasks);
			}
		list_iterator_destroy(it);
	}
	if (running) {
		h = _mix(h, (uint64_t)job_ptr->start_time);
		h = _mix(h, (uintptr_t)job_ptr->node_bitmap);
		h = _mix(h, job_ptr->node_cnt);
		h = _mix(h, (uintptr_t)job_ptr->gres_list_alloc);
	}
	return h;
}

/* Ask for the cache lines of the job record (and, once its details
 * pointer is in, of the details) that the loop below reads: ten
 * thousand records do not stay in cache between cycles, and the loop
 * would otherwise wait on each line in turn. */
#define PREFETCH_JOBS 8
static void _prefetch_job(job_record_t *job_ptr)
{
	static const size_t off[] = {
		offsetof(job_record_t, array_recs),
		offsetof(job_record_t, details),
		offsetof(job_record_t, gres_list_req),
		offsetof(job_record_t, het_job_id),
		offsetof(job_record_t, job_state),
		offsetof(job_record_t, name),
		offsetof(job_record_t, node_bitmap),
		offsetof(job_record_t, part_ptr),
		offsetof(job_record_t, priority),
		offsetof(job_record_t, state_desc),
		offsetof(job_record_t, state_reason),
	};
	for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++)
		__builtin_prefetch((char *)job_ptr + off[i]);
}

static void _prefetch_details(job_record_t *job_ptr)
{
	job_details_t *det = job_ptr->details;

	if (!det)
		return;
	__builtin_prefetch(&det->begin_time);
	__builtin_prefetch(&det->depend_list);
	__builtin_prefetch(&det->min_nodes);
}

/* A pending heterogeneous job's leader stands for the whole job: the GPUs
 * and nodes of its other components are added to its own request.  Its
 * components start on disjoint nodes, so its nodes are their sum. */
static void _het_request(job_record_t *leader, tidal_job_t *j)
{
	list_itr_t *it = list_iterator_create(leader->het_job_list);
	job_record_t *comp;

	while ((comp = list_next(it))) {
		tidal_job_t c = { 0 };

		if (comp == leader || !comp->details)
			continue;
		_job_request(comp, &c);
		j->gpus += c.gpus;
		j->min_nodes += c.min_nodes;
	}
	list_iterator_destroy(it);
	j->gpus_per_node = 0;
}

static void _copy_job(job_record_t *job_ptr, tidal_job_t *j, bool running)
{
	_job_free(j);
	to_heap = true;
	j->id = job_ptr->job_id;
	j->uid = job_ptr->user_id;
	j->name = _strdup(job_ptr->name);
	j->user = _strdup(uid_to_string_cached(job_ptr->user_id));
	j->partition = _strdup(job_ptr->part_ptr ? job_ptr->part_ptr->name
						 : NULL);
	j->submit = (double)job_ptr->details->submit_time;
	j->deadline = (double)job_ptr->deadline;
	if (job_ptr->time_limit != NO_VAL && job_ptr->time_limit != INFINITE)
		j->time_limit = job_ptr->time_limit * 60.0;
	if (!running) /* the limit select_nodes() will give it */
		j->time_limit = _fitted_limit(job_ptr) * 60.0;
	tidal_job_options(job_ptr->spank_job_env, job_ptr->spank_job_env_size,
			  j);
	_job_request(job_ptr, j);
	if (job_ptr->het_job_id) {
		/* Never resized: a component cannot be requeued alone, and
		 * its GPUs are not the whole job's. */
		j->min_gpus = j->max_gpus = 0;
		if (!running && job_ptr->het_job_list)
			_het_request(job_ptr, j);
	}
	if (running) {
		j->state = TIDAL_JOB_RUNNING;
		j->start = (double)job_ptr->start_time;
		_job_alloc(job_ptr, j);
		/* A limit rounded up to reach its deadline
		 * (tidal_deadline_limit) runs past it by Slurm's minute, not
		 * by the job's work: a job sized by its limit ends by it. */
		if (j->time_limit > 0 && job_ptr->deadline &&
		    job_ptr->deadline != NO_VAL &&
		    j->start + j->time_limit > j->deadline)
			j->time_limit = MAX(1.0, j->deadline - j->start);
	}
	to_heap = false;
}

static void _walk_add(job_record_t *job_ptr)
{
	if (n_walk == cap_walk) {
		cap_walk = 2 * cap_walk + 1024;
		xrecalloc(walk, cap_walk, sizeof(*walk));
		xrecalloc(walk_id, cap_walk, sizeof(*walk_id));
	}
	walk_id[n_walk] = job_ptr->job_id;
	walk[n_walk++] = job_ptr;
}

static int _gather(void *x, void *arg)
{
	_walk_add(x);
	return 0;
}

/*
 * job_list's records without walking the list, whose nodes are scattered
 * through memory (one cache miss after another, a millisecond for ten
 * thousand jobs): last take's records that find_job_record() still finds
 * at the same address, then records with the ids after the highest
 * (Slurm hands ids out in order and appends new jobs to job_list).  If
 * their number is not list_count(job_list), something else happened (a
 * job id given at submission, ids wrapping around): RET false and the
 * caller walks the list.  Every record found is in job_list and none is
 * found twice, so the count settles it.
 */
#define NEW_ID_GAP 32
static bool _walk_known(void)
{
	int n = 0, count = list_count(job_list);
	uint32_t next = 0;

	if (!n_walk)
		return false;
	for (int w = 0; w < n_walk; w++) /* after all: never one twice */
		next = MAX(next, walk_id[w] + 1);
	for (int w = 0; w < n_walk; w++) {
		job_record_t *job_ptr;

		/* find_job_record() compares the id: ask for that line early
		 * (a prefetch of memory freed since cannot fault). */
		if (w + 16 < n_walk)
			__builtin_prefetch(&walk[w + 16]->job_id);
		job_ptr = find_job_record(walk_id[w]);

		if (job_ptr == walk[w]) {
			walk[n++] = job_ptr;
			walk_id[n - 1] = walk_id[w];
		} else if (job_ptr) { /* same id, another record */
			return false;
		}
	}
	n_walk = n;
	for (uint32_t id = next, gap = 0; gap < NEW_ID_GAP && id; id++) {
		job_record_t *job_ptr = find_job_record(id);

		if (!job_ptr) {
			gap++;
			continue;
		}
		gap = 0;
		_walk_add(job_ptr);
	}
	return n_walk == count;
}

/* Pending jobs in a reservation that the last take found eligible, in
 * job_list's order (the order Slurm's own scheduler tries them in when
 * priorities are equal; apply.c sorts by priority). */
static uint32_t *resv_jobs;
static int n_resv_jobs, cap_resv_jobs;

static void _resv_job_add(uint32_t id)
{
	if (n_resv_jobs == cap_resv_jobs) {
		cap_resv_jobs = cap_resv_jobs ? 2 * cap_resv_jobs : 16;
		xrecalloc(resv_jobs, cap_resv_jobs, sizeof(*resv_jobs));
	}
	resv_jobs[n_resv_jobs++] = id;
}

extern int tidal_snapshot_resv_jobs(const uint32_t **ids)
{
	*ids = resv_jobs;
	return n_resv_jobs;
}

extern double tidal_now(void)
{
	struct timespec ts;
	time_t now = time(NULL);

	if (clock_gettime(CLOCK_REALTIME, &ts) == 0 && ts.tv_sec == now)
		return (double)now + ts.tv_nsec / 1e9;
	return (double)now;
}

extern void tidal_snapshot_take(tidal_snap_t *snap)
{
	time_t now = time(NULL);

	memset(snap, 0, sizeof(*snap));
	/* The policies' clock, to the microsecond: a deadline's plan and a
	 * job's service in whole seconds would be a second off at times. */
	snap->now = tidal_now();
	tidal_share_refresh();
	tidal_share_limits(&snap->share_jobs_per_gpu,
			   &snap->share_gpus_per_node);
	cycle++;
	FREE_NULL_BITMAP(reserved);
	FREE_NULL_BITMAP(active_nodes);
	reserved = _reserved_now(now, &resv_later);
	if (resv_later)
		active_nodes = node_conf_get_active_bitmap();
	_take_nodes(now);
	n_resv_jobs = 0;

	/* Gathered first: job_independent() may look at job_list, so not
	 * from inside the list's own lock. */
	if (!_walk_known()) {
		n_walk = 0;
		list_for_each_ro(job_list, _gather, NULL);
	}
	tidal_revive_forget();
	if (cap_order < n_walk + 1) {
		cap_order = n_walk + 1024;
		xrecalloc(order, cap_order, sizeof(*order));
	}
	n_order = 0;
	for (int w = 0; w < MIN(n_walk, PREFETCH_JOBS); w++)
		_prefetch_job(walk[w]);
	for (int w = 0, c = -1; w < n_walk; w++) {
		job_record_t *job_ptr = walk[w];
		bool running;
		uint64_t fp;

		if (w + PREFETCH_JOBS < n_walk)
			_prefetch_job(walk[w + PREFETCH_JOBS]);
		if (w + PREFETCH_JOBS / 2 < n_walk)
			_prefetch_details(walk[w + PREFETCH_JOBS / 2]);
		tidal_revive_consider(job_ptr, now); /* apply.c's to requeue */
		if (!job_ptr->details)
			continue;
		running = IS_JOB_RUNNING(job_ptr) && !IS_JOB_COMPLETING(job_ptr);
		if (!running && _array_meta(job_ptr)) {
			job_record_t *tasks[ARRAY_WINDOW];
			int n = _eligible_any(job_ptr, now)
					? _split_array(job_ptr, tasks)
					: 0;
			/* The first task is this very record; the others
			 * are taken after the walk's end. */
			if (n)
				walk_id[w] = job_ptr->job_id;
			for (int k = 1; k < n; k++)
				_walk_add(tasks[k]);
			if (!n)
				continue;
		}
		if (!running && !_eligible(job_ptr, now))
			continue;
		if (job_ptr->resv_name) { /* Slurm's to place: apply.c */
			if (!running)
				_resv_job_add(job_ptr->job_id);
			continue;
		}
		fp = _fingerprint(job_ptr, running);
		/* job_list keeps its order, and so do the copies. */
		if (++c >= n_copies || copies[c].id != job_ptr->job_id)
			c = _copy_find(job_ptr->job_id);
		if (c < 0)
			c = _copy_new(job_ptr->job_id);
		else if (copies[c].fp == fp)
			goto keep;
		_copy_job(job_ptr, &copies[c].job, running);
		copies[c].fp = fp;
		copies[c].max_asked = copies[c].job.max_gpus;
keep:
		if (copies[c].max_asked) /* limits move with other jobs */
			copies[c].job.max_gpus = _elastic_cap(
				job_ptr, &copies[c].job, copies[c].max_asked,
				running);
		copies[c].seen = cycle;
		copies[c].memo.desc_seen = job_ptr->state_desc;
		copies[c].memo.reason_seen = job_ptr->state_reason;
		/* Array tasks split out during the walk lengthen it past
		 * the size order[] was given before it. */
		if (n_order == cap_order) {
			cap_order = 2 * cap_order + 1024;
			xrecalloc(order, cap_order, sizeof(*order));
		}
		order[n_order++] = c;
	}
}

extern void tidal_snapshot_finish(tidal_snap_t *snap)
{
	int *snap_of;

	_drop_unseen();
	cur = snap;
	snap_of = _alloc((node_count_seen + 1) * sizeof(int));
	for (int i = 0; i <= node_count_seen; i++)
		snap_of[i] = -1;
	snap->nodes = _alloc((n_ncopies + 1) * sizeof(tidal_node_t));
	for (int k = 0; k < n_ncopies; k++) {
		const node_copy_t *c = &ncopies[k];
		tidal_node_t *n = &snap->nodes[k];

		n->name = c->name;
		n->slurm_index = c->slurm_index;
		n->gpus_total = c->gpus_total;
		/* Made usable again below for GPUs of jobs in the snapshot;
		 * a reserved node's free GPUs are the reservation's. */
		n->gpus = c->reserved ? 0 : c->gpus_total - c->gpus_alloc;
		n->cpus = c->cpus;
		n->mem_mb = (double)c->mem_mb;
		n->switch_id = c->switch_id;
		n->up = c->up;
		if (c->slurm_index >= 0 && c->slurm_index < node_count_seen)
			snap_of[c->slurm_index] = k;
	}
	snap->n_nodes = n_ncopies;
	snap->switches = _alloc((n_topo + 1) * sizeof(tidal_switch_t));
	if (n_topo > 0)
		memcpy(snap->switches, sw_copy,
		       n_topo * sizeof(tidal_switch_t));
	snap->n_switches = n_topo;

	snap->jobs = _alloc((n_order + 1) * sizeof(tidal_job_t));
	for (int k = 0; k < n_order; k++) {
		const tidal_job_t *c = &copies[order[k]].job;
		tidal_job_t *j = &snap->jobs[k];

		*j = *c;
		if (!c->n_alloc)
			continue;
		j->alloc_node = _alloc(c->n_alloc * sizeof(int));
		for (int m = 0; m < c->n_alloc; m++) {
			int i = c->alloc_node[m];
			int n = i >= 0 && i < node_count_seen ? snap_of[i] : -1;

			j->alloc_node[m] = n;
			if (n >= 0) /* these are the engine's to plan */
				snap->nodes[n].gpus += c->alloc_gpus[m];
		}
	}
	/* Jobs sharing a GPU (share.c) each gave it back above. */
	for (int k = 0; k < n_ncopies; k++)
		snap->nodes[k].gpus =
			MIN(snap->nodes[k].gpus, snap->nodes[k].gpus_total);
	/* A resize's restart the engine cannot see yet keeps its GPUs. */
	for (int i = 0; i < n_keep; i++) {
		int n = keep[i].node >= 0 && keep[i].node < node_count_seen
				? snap_of[keep[i].node]
				: -1;
		bool seen = false;

		for (int k = 0; k < n_order && !seen; k++)
			seen = snap->jobs[k].id == keep[i].job;
		if (n >= 0 && !seen)
			snap->nodes[n].gpus =
				MAX(0, snap->nodes[n].gpus - keep[i].gpus);
	}
	snap->n_jobs = n_order;
	cur = NULL;
}

extern tidal_reason_memo_t *tidal_snapshot_memo(const tidal_snap_t *snap,
						int snap_index)
{
	if (snap_index < 0 || snap_index >= n_order ||
	    snap_index >= snap->n_jobs)
		return NULL;
	copy_t *c = &copies[order[snap_index]];
	return c->id == snap->jobs[snap_index].id ? &c->memo : NULL;
}

extern void tidal_snapshot_free(tidal_snap_t *snap)
{
	block_t *b = snap->pool, *next;

	for (; b; b = next) { /* keep the blocks for the next snapshot */
		next = b->next;
		b->next = spare;
		spare = b;
	}
	memset(snap, 0, sizeof(*snap));
}

extern void tidal_job_options(char **env, uint32_t n, tidal_job_t *j)
{
	tidal_env_options_t o;

	tidal_env_options(env, n, &o);
	j->min_gpus = o.min_gpus;
	j->max_gpus = o.max_gpus;
	if (o.model[0])
		j->model = _strdup(o.model);
	j->batch = o.batch;
	j->max_batch = o.max_batch;
	j->iters = o.iters;
	j->best_effort = o.best_effort;
}
