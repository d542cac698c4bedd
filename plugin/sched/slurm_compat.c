/*
 * slurm_compat.c - what slurm_compat.h declares, for Slurm 22.05 and 24.11.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */

#include <stdint.h>
#include <string.h>

#include "slurm/slurm_errno.h"

/* First: slurmctld.h, which acct_policy.h needs before it. */
#include "plugin/sched/slurm_compat.h"

#include "src/common/hostlist.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/acct_policy.h"
#include "src/slurmctld/node_scheduler.h"
#include "src/slurmctld/reservation.h"

/* Both versions; only 24.11 counts per GPU (gres_per_bit_alloc). */
extern uint64_t tidal_shards_on(gres_job_state_t *js, int k, int bit)
{
	if (!js->gres_bit_alloc || k >= (int)js->node_cnt ||
	    !js->gres_bit_alloc[k] ||
	    bit >= (int)bit_size(js->gres_bit_alloc[k]) ||
	    !bit_test(js->gres_bit_alloc[k], bit))
		return 0;
#ifdef TIDAL_SLURM_24_11
	if (js->gres_per_bit_alloc && js->gres_per_bit_alloc[k])
		return js->gres_per_bit_alloc[k][bit];
#endif
	return js->gres_per_node ? js->gres_per_node : 1;
}

#ifdef TIDAL_SLURM_22_05

extern int tidal_select_nodes(job_record_t *job_ptr, uint32_t scheduler_type)
{
	return select_nodes(job_ptr, false, NULL, NULL, false, scheduler_type);
}

extern int tidal_update_job_gres(job_record_t *job_ptr, slurm_msg_t *msg)
{
	__typeof__(job_ptr->gres_list_req) old = job_ptr->gres_list_req;
	int rc;

	job_ptr->gres_list_req = NULL;
	rc = update_job(msg, 0, false);
	if (job_ptr->gres_list_req)
		FREE_NULL_LIST(old);
	else
		job_ptr->gres_list_req = old;
	return rc;
}

extern int tidal_will_run(job_record_t *job_ptr, bitstr_t *avail,
			  uint32_t min_nodes, uint32_t max_nodes,
			  uint32_t req_nodes)
{
	return select_g_job_test(job_ptr, avail, min_nodes, max_nodes,
				 req_nodes, SELECT_MODE_WILL_RUN, NULL, NULL,
				 NULL);
}

extern int tidal_resv_test(job_record_t *job_ptr, time_t *when,
			   bitstr_t **usable, bool *overlap)
{
	bitstr_t *exc_core = NULL;
	int rc = job_test_resv(job_ptr, when, false, usable, &exc_core, overlap,
			       false);

	FREE_NULL_BITMAP(exc_core);
	return rc;
}

extern job_record_t *tidal_array_split(job_record_t *meta)
{
	return job_array_split(meta); /* 22.05 adds it to job_list */
}

extern void tidal_array_last_task(job_record_t *meta)
{
	(void)job_array_post_sched(meta);
}

extern void tidal_acct_resubmit(job_record_t *job_ptr)
{
	acct_policy_add_job_submit(job_ptr);
}

extern int tidal_cred_lifetime(void)
{
	int lifetime = 1200;

	(void)slurm_cred_ctx_get(slurmctld_config.cred_ctx,
				 SLURM_CRED_OPT_EXPIRY_WINDOW, &lifetime);
	return lifetime;
}

extern bool tidal_part_held(const job_record_t *job_ptr)
{
	return !part_policy_job_runnable_state((job_record_t *)job_ptr);
}

extern bool tidal_acct_held(const job_record_t *job_ptr)
{
	return !acct_policy_job_runnable_state((job_record_t *)job_ptr);
}

/* slurmctld rebuilds switch_record_table (a new array) on reconfigure. */
static const switch_record_t *table_seen;
static int count_seen = -1;

extern bool tidal_topo_changed(uint64_t *stamp)
{
	bool changed = !*stamp || switch_record_table != table_seen ||
		       switch_record_cnt != count_seen;

	table_seen = switch_record_table;
	count_seen = switch_record_cnt;
	*stamp = 1;
	return changed;
}

extern void tidal_topo_take(tidal_topo_switch_t **out, int *n)
{
	tidal_topo_switch_t *sw;

	*out = NULL;
	*n = 0;
	if (switch_record_cnt <= 0 || !switch_record_table)
		return;
	sw = xcalloc(switch_record_cnt, sizeof(*sw));
	for (int s = 0; s < switch_record_cnt; s++) {
		const switch_record_t *r = &switch_record_table[s];

		sw[s].name = xstrdup(r->name);
		sw[s].level = r->level;
		sw[s].link = r->link_speed;
		/* A root's parent is left 0 by Slurm: only a switch above
		 * this one is its parent. */
		sw[s].parent =
			(r->parent < switch_record_cnt && r->parent != s &&
			 switch_record_table[r->parent].level > r->level)
				? r->parent
				: -1;
		sw[s].nodes = r->node_bitmap ? bit_copy(r->node_bitmap) : NULL;
	}
	*out = sw;
	*n = switch_record_cnt;
}

#else /* TIDAL_SLURM_24_11 */

extern int tidal_select_nodes(job_record_t *job_ptr, uint32_t scheduler_type)
{
	job_node_select_t sel = { .job_ptr = job_ptr };

	return select_nodes(&sel, false, false, scheduler_type);
}

extern int tidal_update_job_gres(job_record_t *job_ptr, slurm_msg_t *msg)
{
	return update_job(msg, 0, false);
}

extern int tidal_will_run(job_record_t *job_ptr, bitstr_t *avail,
			  uint32_t min_nodes, uint32_t max_nodes,
			  uint32_t req_nodes)
{
	/* 24.11's select/cons_tres reads the reservations' exclusions
	 * without a NULL check: none here (AVAIL already leaves the
	 * reserved nodes out). */
	resv_exc_t exc = { 0 };
	int rc = select_g_job_test(job_ptr, avail, min_nodes, max_nodes,
				   req_nodes, SELECT_MODE_WILL_RUN, NULL, NULL,
				   &exc, NULL);

	reservation_delete_resv_exc_parts(&exc);
	return rc;
}

extern int tidal_resv_test(job_record_t *job_ptr, time_t *when,
			   bitstr_t **usable, bool *overlap)
{
	resv_exc_t exc = { 0 };
	int rc = job_test_resv(job_ptr, when, false, usable, &exc, overlap,
			       false);

	reservation_delete_resv_exc_parts(&exc);
	return rc;
}

extern job_record_t *tidal_array_split(job_record_t *meta)
{
	return job_array_split(meta, true);
}

extern void tidal_array_last_task(job_record_t *meta)
{
	(void)job_array_post_sched(meta, true);
}

extern void tidal_acct_resubmit(job_record_t *job_ptr)
{
	acct_policy_add_job_submit(job_ptr, false);
}

extern int tidal_cred_lifetime(void)
{
	return cred_expiration();
}

extern bool tidal_part_held(const job_record_t *job_ptr)
{
	return job_state_reason_check(job_ptr->state_reason, JSR_PART);
}

extern bool tidal_acct_held(const job_record_t *job_ptr)
{
	return job_state_reason_check(job_ptr->state_reason, JSR_QOS_ASSOC);
}

/* 24.11 rebuilds the topology only when it reads its configuration
 * (scontrol reconfigure restarts slurmctld): slurm_conf.last_update. */
extern bool tidal_topo_changed(uint64_t *stamp)
{
	uint64_t now = (uint64_t)slurm_conf.last_update + 1;
	bool changed = *stamp != now;

	*stamp = now;
	return changed;
}

/*
 * What topology_g_get(TOPO_DATA_TOPOLOGY_PTR) hands out (the data of a
 * dynamic_plugin_data_t): the plugins define these types privately
 * (topoinfo_tree_t in topology_tree.c, topoinfo_block_t and
 * topoinfo_bblock_t in topology_block.c of 24.11); these copies must
 * match them field for field.  topo_info_t is slurm.h's.
 */
typedef struct {
	uint32_t record_count;
	topo_info_t *topo_array;
} tidal_tree_info_t;

typedef struct {
	bool aggregated;
	uint16_t block_index;
	char *name;
	char *nodes;
	uint32_t size;
} tidal_bblock_info_t;

typedef struct {
	uint32_t record_count;
	tidal_bblock_info_t *topo_array;
} tidal_block_info_t;

/* The nodes below switch or block NAME, a copy; NULL if Slurm has none. */
static bitstr_t *_nodes_of(char *name)
{
	bitstr_t *b = topology_g_get_bitmap(name);

	return b ? bit_copy(b) : NULL;
}

static void _take_tree(const tidal_tree_info_t *t, tidal_topo_switch_t *sw)
{
	for (uint32_t s = 0; s < t->record_count; s++) {
		const topo_info_t *r = &t->topo_array[s];

		sw[s].name = xstrdup(r->name);
		sw[s].level = r->level;
		sw[s].link = r->link_speed;
		sw[s].parent = -1;
		sw[s].nodes = _nodes_of(r->name);
	}
	/* A switch's parent is the one that lists it among its Switches=. */
	for (uint32_t p = 0; p < t->record_count; p++) {
		hostlist_t *hl;

		if (!t->topo_array[p].switches || !t->topo_array[p].switches[0])
			continue;
		if (!(hl = hostlist_create(t->topo_array[p].switches)))
			continue;
		for (uint32_t s = 0; s < t->record_count; s++)
			if (s != p && sw[s].parent < 0 &&
			    hostlist_find(hl, sw[s].name) >= 0)
				sw[s].parent = p;
		hostlist_destroy(hl);
	}
}

/* Base blocks are the leaves, at level 0; a block's level counts the
 * block sizes smaller than its own, and its parent is the smallest larger
 * block that holds all its nodes. */
static void _take_block(const tidal_block_info_t *t, tidal_topo_switch_t *sw)
{
	uint32_t n = t->record_count;

	for (uint32_t s = 0; s < n; s++) {
		const tidal_bblock_info_t *r = &t->topo_array[s];

		sw[s].name = xstrdup(r->name);
		sw[s].link = 0;
		sw[s].parent = -1;
		sw[s].nodes = _nodes_of(r->name);
		sw[s].level = 0;
		/* Each size counts once: at its first block. */
		for (uint32_t o = 0; o < n; o++) {
			bool first = true;

			for (uint32_t q = 0; q < o && first; q++)
				first = t->topo_array[q].size !=
					t->topo_array[o].size;
			sw[s].level += first && t->topo_array[o].size < r->size;
		}
	}
	for (uint32_t s = 0; s < n; s++) {
		int best = -1;

		if (!sw[s].nodes)
			continue;
		for (uint32_t p = 0; p < n; p++) {
			if (p == s || !sw[p].nodes ||
			    t->topo_array[p].size <= t->topo_array[s].size ||
			    !bit_super_set(sw[s].nodes, sw[p].nodes))
				continue;
			if (best < 0 ||
			    t->topo_array[p].size < t->topo_array[best].size)
				best = p;
		}
		sw[s].parent = best;
	}
}

extern void tidal_topo_take(tidal_topo_switch_t **out, int *n)
{
	dynamic_plugin_data_t *info = NULL;
	int id = topology_get_plugin_id();
	tidal_topo_switch_t *sw;
	uint32_t count;

	*out = NULL;
	*n = 0;
	if (id != TOPOLOGY_PLUGIN_TREE && id != TOPOLOGY_PLUGIN_BLOCK)
		return;
	if (topology_g_get(TOPO_DATA_TOPOLOGY_PTR, &info) != SLURM_SUCCESS ||
	    !info || !info->data) {
		error("sched/tidal: the topology plugin gave no switch tree; "
		      "placing without one");
		topology_g_topology_free(info);
		return;
	}
	count = *(const uint32_t *)info->data; /* record_count, first in both */
	if (count) {
		sw = xcalloc(count, sizeof(*sw));
		if (id == TOPOLOGY_PLUGIN_TREE)
			_take_tree(info->data, sw);
		else
			_take_block(info->data, sw);
		*out = sw;
		*n = (int)count;
	}
	topology_g_topology_free(info);
}

#endif

extern void tidal_topo_free(tidal_topo_switch_t *sw, int n)
{
	for (int s = 0; s < n; s++) {
		xfree(sw[s].name);
		FREE_NULL_BITMAP(sw[s].nodes);
	}
	xfree(sw);
}
