/*
 * slurm_compat.h - the differences between the Slurm versions sched/tidal
 * builds against, in one place: Slurm 22.05 (Debian 12) and 24.11 (Debian
 * 13).  Keyed on SLURM_VERSION_NUMBER of the configured source tree that
 * the plugin is built with; any other version stops the build here, since
 * slurmctld's internals change between releases and a plugin built
 * against the wrong ones would crash it.
 *
 * What differs, and how the plugin sees it:
 *   headers       gres.h, select.h, the credential, the topology and
 *                 srun_comm.h moved to src/interfaces/ and src/stepmgr/;
 *                 included from here.
 *   list_itr_t    24.11's name for 22.05's ListIterator.
 *   job_details_t 24.11's name for 22.05's struct job_details.
 *   tidal_select_nodes(), tidal_will_run(), tidal_resv_test(),
 *   tidal_array_split(), tidal_array_last_task(), tidal_acct_resubmit()
 *                 calls whose arguments changed (select_nodes() takes a
 *                 job_node_select_t, reservations hand back a resv_exc_t,
 *                 the array calls say whether to add to job_list, ...).
 *   TIDAL_GPU_TRES, TIDAL_SHARD_TRES  how a job's TRES strings name GPUs
 *                 and shards: "gres:gpu" in 22.05, "gres/gpu" in 24.11
 *                 (tres_per_node, ...).
 *   tidal_cred_lifetime()  AuthInfo=cred_expire, asked of the credential.
 *   tidal_part_held(), tidal_acct_held()  whether a job's Reason is a
 *                 partition limit, or an association or QOS limit.
 *   switches      22.05 keeps the switch tree in slurmctld's
 *                 switch_record_table; 24.11 keeps it inside the topology
 *                 plugin (topology/tree, or topology/block) and hands out
 *                 a copy through topology_g_get().  tidal_topo_take()
 *                 reads either into one shape (below).
 *
 * Includes Slurm's headers: never include it from C++.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#ifndef TIDAL_PLUGIN_SLURM_COMPAT_H
#define TIDAL_PLUGIN_SLURM_COMPAT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "slurm/slurm_version.h"

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(22, 5, 0) &&                     \
	SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(22, 6, 0)
#define TIDAL_SLURM_22_05 1
#elif SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0) &&                  \
	SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(24, 12, 0)
#define TIDAL_SLURM_24_11 1
#else
#error "sched/tidal builds against Slurm 22.05 or 24.11 only: this source tree's SLURM_VERSION_NUMBER is another version"
#endif

#include "src/common/bitstring.h"
#include "src/common/list.h"
#include "src/slurmctld/slurmctld.h"

#ifdef TIDAL_SLURM_22_05
#include "src/common/gres.h"
#include "src/common/select.h"
#include "src/common/slurm_cred.h"
#include "src/common/slurm_topology.h"
#include "src/slurmctld/srun_comm.h"

typedef struct listIterator list_itr_t;
typedef struct job_details job_details_t;
#define TIDAL_GPU_TRES "gres:gpu"
#define TIDAL_SHARD_TRES "gres:shard"
#else
#include "src/interfaces/cred.h"
#include "src/interfaces/gres.h"
#include "src/interfaces/select.h"
#include "src/interfaces/topology.h"
#include "src/slurmctld/proc_req.h"
#include "src/stepmgr/srun_comm.h"
#define TIDAL_GPU_TRES "gres/gpu"
#define TIDAL_SHARD_TRES "gres/shard"
#endif

/* select_nodes() as a scheduler calls it to start JOB_PTR now (not a test,
 * not at submission).  RET SLURM_SUCCESS or an ESLURM code. */
int tidal_select_nodes(job_record_t *job_ptr, uint32_t scheduler_type);

/* select_g_job_test() in SELECT_MODE_WILL_RUN on the nodes in AVAIL,
 * without preemption.  RET SLURM_SUCCESS or an error. */
int tidal_will_run(job_record_t *job_ptr, bitstr_t *avail, uint32_t min_nodes,
		   uint32_t max_nodes, uint32_t req_nodes);
/* job_test_resv() at *WHEN (not moved, no reboot): SLURM_SUCCESS and the
 * nodes JOB_PTR may use in *USABLE, or an error.  *OVERLAP as Slurm sets
 * it. */
int tidal_resv_test(job_record_t *job_ptr, time_t *when, bitstr_t **usable,
		    bool *overlap);
/* Array META with more than one task left: its lowest task (set in
 * meta->array_task_id) split out under META's job id, and the rest, a
 * new record added to job_list, returned; NULL if it could not be. */
job_record_t *tidal_array_split(job_record_t *meta);
/* Array META's last task: META itself becomes it. */
void tidal_array_last_task(job_record_t *meta);
/* acct_policy_add_job_submit() with the association lock not held. */
void tidal_acct_resubmit(job_record_t *job_ptr);
/* update_job(MSG) for a pending job whose GRES request MSG replaces with
 * another GRES (gpu -> shard): 22.05 lays the new request over a copy of
 * the old one and refuses gpu and shard together, so the old list is set
 * aside for the call (and put back if it fails); 24.11 builds it anew. */
int tidal_update_job_gres(job_record_t *job_ptr, slurm_msg_t *msg);
/* Shards a job's allocation JS holds of GPU BIT on its K-th node: 22.05
 * keeps one count per node (gres_per_node), 24.11 one per GPU
 * (gres_per_bit_alloc). */
uint64_t tidal_shards_on(gres_job_state_t *js, int k, int bit);
/* The credential lifetime (AuthInfo=cred_expire), seconds. */
int tidal_cred_lifetime(void);
/* Whether JOB_PTR's Reason is one a partition limit sets. */
bool tidal_part_held(const job_record_t *job_ptr);
/* Whether JOB_PTR's Reason is one an association or QOS limit sets. */
bool tidal_acct_held(const job_record_t *job_ptr);

/* One switch of the fabric as the plugin keeps it, whatever the version
 * and topology plugin: a tree whose leaves (level 0) hold nodes.  Under
 * topology/block, a base block is a leaf and each aggregated block the
 * parent of the blocks it is made of. */
typedef struct {
	char *name;	 /* xmalloc'd */
	int level;	 /* 0 = leaf */
	uint32_t link;	 /* link speed, Slurm's units; 0 = not given */
	int parent;	 /* index in the table, -1 = a root */
	bitstr_t *nodes; /* the nodes below it (own copy); NULL = none */
} tidal_topo_switch_t;

/* Config locks held (read): whether the switch tree may have changed
 * since the call that returned *STAMP; a first call with *STAMP 0 always
 * says so.  Cheap: compares what Slurm changes when it rebuilds it. */
bool tidal_topo_changed(uint64_t *stamp);
/* Config and node locks held (read): the switch tree now, as *N switches
 * in *SW (freed with tidal_topo_free()).  None (*N 0) without a tree
 * topology plugin. */
void tidal_topo_take(tidal_topo_switch_t **sw, int *n);
void tidal_topo_free(tidal_topo_switch_t *sw, int n);

#endif /* TIDAL_PLUGIN_SLURM_COMPAT_H */
