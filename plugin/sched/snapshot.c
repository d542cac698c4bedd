/*
 * snapshot.c - copy what the engine needs out of slurmctld, under its locks.
 *
 * Called with the job write lock (job_independent() may update a job's
 * reason) and the node and partition read locks held.  It only copies:
 * no decision is made here, and nothing is kept that points into
 * slurmctld's records once the locks are released.
 *
 * GPU counts come from the gres lists (per node: gres_cnt_avail and
 * gres_cnt_alloc; per job: gres_list_req / gres_list_alloc), never from the
 * TRES strings, which carry no GPU counts without slurmdbd.  GPUs allocated
 * to jobs the engine does not see (completing jobs, suspended jobs) are
 * subtracted from the node so that the policy never plans on them.
 *
 * Everything a snapshot holds (arrays, strings) comes from one pool of
 * blocks that is handed back whole and reused by the next snapshot: the
 * lock is held while this runs, and thousands of small allocations (and
 * the page faults of a fresh multi-megabyte job array) were most of its
 * cost.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "src/common/bitstring.h"
#include "src/common/gres.h"
#include "src/common/list.h"
#include "src/common/node_conf.h"
#include "src/common/slurm_topology.h"
#include "src/common/uid.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
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
static tidal_snap_t *cur; /* the snapshot being taken */

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

static char *_strdup(const char *s)
{
	size_t n;
	char *p;

	if (!s)
		return NULL;
	n = strlen(s) + 1;
	p = _alloc(n);
	memcpy(p, s, n);
	return p;
}

/* GPUs configured and allocated on NODE_PTR. */
static void _node_gpus(node_record_t *node_ptr, int *avail, int *alloc)
{
	ListIterator it;
	gres_state_t *gs;

	*avail = *alloc = 0;
	if (!node_ptr->gres_list)
		return;
	it = list_iterator_create(node_ptr->gres_list);
	while ((gs = list_next(it))) {
		gres_node_state_t *ns = gs->gres_data;
		if (xstrcmp(gs->gres_name, "gpu") || !ns)
			continue;
		*avail += (int)ns->gres_cnt_avail;
		*alloc += (int)ns->gres_cnt_alloc;
	}
	list_iterator_destroy(it);
}

static int _node_up(node_record_t *node_ptr)
{
	return !(IS_NODE_DOWN(node_ptr) || IS_NODE_DRAIN(node_ptr) ||
		 IS_NODE_NO_RESPOND(node_ptr) || IS_NODE_FUTURE(node_ptr) ||
		 IS_NODE_POWERED_DOWN(node_ptr) || IS_NODE_FAIL(node_ptr));
}

/* Leaf switch holding slurm node INDEX, or -1. */
static int _leaf_switch(int index)
{
	for (int s = 0; s < switch_record_cnt; s++)
		if (switch_record_table[s].level == 0 &&
		    switch_record_table[s].node_bitmap &&
		    bit_test(switch_record_table[s].node_bitmap, index))
			return s;
	return -1;
}

static void _take_nodes(tidal_snap_t *snap, int *snap_of)
{
	node_record_t *node_ptr;

	snap->nodes = _alloc((node_record_count + 1) * sizeof(tidal_node_t));
	for (int i = 0; (node_ptr = next_node(&i)); i++) {
		tidal_node_t *n = &snap->nodes[snap->n_nodes];
		int alloc;

		snap_of[node_ptr->index] = snap->n_nodes++;
		n->name = _strdup(node_ptr->name);
		n->slurm_index = node_ptr->index;
		_node_gpus(node_ptr, &n->gpus_total, &alloc);
		/* Made usable again below for GPUs of jobs in the snapshot. */
		n->gpus = n->gpus_total - alloc;
		n->cpus = node_ptr->cpus;
		n->mem_mb = (double)node_ptr->real_memory;
		n->switch_id = _leaf_switch(node_ptr->index);
		n->up = _node_up(node_ptr);
	}
	snap->switches = _alloc((switch_record_cnt + 1) * sizeof(tidal_switch_t));
	for (int s = 0; s < switch_record_cnt; s++) {
		switch_record_t *sw = &switch_record_table[s];
		tidal_switch_t *t = &snap->switches[s];

		t->name = _strdup(sw->name);
		t->level = sw->level;
		t->link = sw->link_speed;
		t->parent = (sw->parent >= switch_record_cnt ||
			     sw->parent == s) ? -1 : sw->parent;
	}
	snap->n_switches = switch_record_cnt;
}

/* The job's GPU request: total and, if given per node, per node. */
static void _job_request(job_record_t *job_ptr, tidal_job_t *j)
{
	ListIterator it;
	gres_state_t *gs;
	uint32_t nodes = MAX(job_ptr->details->min_nodes, 1);

	j->min_nodes = nodes;
	if (!job_ptr->gres_list_req)
		return;
	it = list_iterator_create(job_ptr->gres_list_req);
	while ((gs = list_next(it))) {
		gres_job_state_t *js = gs->gres_data;
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

/* GPUs a running job holds on each of its nodes. */
static void _job_alloc(job_record_t *job_ptr, tidal_job_t *j,
		       const int *snap_of, tidal_snap_t *snap)
{
	ListIterator it;
	gres_state_t *gs;
	int n = job_ptr->node_bitmap ? bit_set_count(job_ptr->node_bitmap) : 0;

	j->alloc_node = _alloc((n + 1) * sizeof(int));
	j->alloc_gpus = _alloc((n + 1) * sizeof(int));
	/* From the first set bit: a job's nodes are few and near each other,
	 * the node table may be thousands long. */
	for (int i = n ? bit_ffs(job_ptr->node_bitmap) : node_record_count;
	     i >= 0 && i < node_record_count && j->n_alloc < n; i++)
		if (bit_test(job_ptr->node_bitmap, i))
			j->alloc_node[j->n_alloc++] = snap_of[i];
	if (!job_ptr->gres_list_alloc)
		return;
	it = list_iterator_create(job_ptr->gres_list_alloc);
	while ((gs = list_next(it))) {
		gres_job_state_t *js = gs->gres_data;
		if (xstrcmp(gs->gres_name, "gpu") || !js ||
		    !js->gres_cnt_node_alloc)
			continue;
		for (int k = 0; k < j->n_alloc && k < (int)js->node_cnt; k++)
			j->alloc_gpus[k] += (int)js->gres_cnt_node_alloc[k];
	}
	list_iterator_destroy(it);
	j->gpus = 0;
	for (int k = 0; k < j->n_alloc; k++) {
		j->gpus += j->alloc_gpus[k];
		if (j->alloc_node[k] >= 0) /* these are the engine's to plan */
			snap->nodes[j->alloc_node[k]].gpus += j->alloc_gpus[k];
	}
}

/* Pending jobs that Slurm itself would consider now. */
static bool _eligible(job_record_t *job_ptr, time_t now)
{
	if (!IS_JOB_PENDING(job_ptr) || IS_JOB_COMPLETING(job_ptr) ||
	    !job_ptr->details || !job_ptr->part_ptr || job_ptr->array_recs ||
	    job_ptr->priority == 0 || job_ptr->het_job_id)
		return false;
	tidal_fix_requeue_delay(job_ptr, now);
	if (job_ptr->details->begin_time > now)
		return false;
	return job_independent(job_ptr);
}

static void _take_job(job_record_t *job_ptr, tidal_job_t *j, time_t now,
		      const int *snap_of, tidal_snap_t *snap)
{
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
	tidal_job_options(job_ptr->spank_job_env, job_ptr->spank_job_env_size,
			  j);
	_job_request(job_ptr, j);
	if (IS_JOB_RUNNING(job_ptr)) {
		j->state = TIDAL_JOB_RUNNING;
		j->start = (double)job_ptr->start_time;
		_job_alloc(job_ptr, j, snap_of, snap);
	}
}

extern void tidal_snapshot_take(tidal_snap_t *snap)
{
	time_t now = time(NULL);
	int *snap_of;
	ListIterator it;
	job_record_t *job_ptr;

	memset(snap, 0, sizeof(*snap));
	cur = snap;
	snap_of = _alloc((node_record_count + 1) * sizeof(int));
	snap->now = (double)now;
	for (int i = 0; i <= node_record_count; i++)
		snap_of[i] = -1;
	_take_nodes(snap, snap_of);

	snap->jobs = _alloc((list_count(job_list) + 1) * sizeof(tidal_job_t));
	it = list_iterator_create(job_list);
	while ((job_ptr = list_next(it))) {
		if (!job_ptr->details)
			continue;
		if (!(IS_JOB_RUNNING(job_ptr) && !IS_JOB_COMPLETING(job_ptr)) &&
		    !_eligible(job_ptr, now))
			continue;
		_take_job(job_ptr, &snap->jobs[snap->n_jobs++], now, snap_of,
			  snap);
	}
	list_iterator_destroy(it);
	cur = NULL;
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
	double d;

	for (uint32_t i = 0; env && i < n; i++) {
		const char *e = env[i], *v = e ? strchr(e, '=') : NULL;
		if (!v || xstrncmp(e, "TIDAL_", 6))
			continue;
		v++;
		if (!xstrncmp(e, "TIDAL_ELASTIC_GPUS=", 19)) {
			if (tidal_parse_range(v, &j->min_gpus, &j->max_gpus))
				j->min_gpus = j->max_gpus = 0;
		} else if (!xstrncmp(e, "TIDAL_TRAIN_MODEL=", 18)) {
			j->model = cur ? _strdup(v) : NULL;
		} else if (!xstrncmp(e, "TIDAL_TRAIN_BATCH=", 18)) {
			if (!tidal_parse_count(v, 1, 1e9, &d))
				j->batch = (int)d;
		} else if (!xstrncmp(e, "TIDAL_TRAIN_ITERS=", 18)) {
			if (!tidal_parse_count(v, 1, 1e15, &d))
				j->iters = d;
		} else if (!xstrncmp(e, "TIDAL_BEST_EFFORT=", 18)) {
			j->best_effort = 1;
		}
	}
}
