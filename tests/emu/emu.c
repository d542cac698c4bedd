/*
 * emu.c - sched/tidal's snapshot and apply code over an emulated slurmctld.
 *
 * The plugin's Slurm-facing files (snapshot.c, apply.c, resize.c, state.c)
 * are linked unchanged, with libslurmfull for Slurm's common code (lists,
 * bitmaps, node table, job descriptors) and the slurmctld symbols they call
 * stubbed here, in the manner of Slurm's own testsuite/slurm_unit/backfill:
 *
 *   job_list, find_job_record, job_independent     the job table
 *   job_array_*     no arrays: the job file cannot make one
 *   job_limits_check  one partition, up, without limits
 *   license_job_test, acct_policy_*   no licences, no limits (limits not
 *                   enforced: accounting_enforce is 0)
 *   resv_list, job_test_resv   no reservations
 *   deadline_ok     Slurm's rule: the limit must end by the deadline
 *   select_nodes    takes GPUs on the allowed nodes (not in exc_node_bitmap)
 *                   in index order, like a one-GRES cons_tres
 *   job_requeue     running -> pending, GPUs freed, begin time + 121 s
 *   update_job      a pending job's tres_per_job / tres_per_node / nodes
 *   job_signal      SIGKILL cancels; other signals are counted
 *   time()          a clock the job file moves ("advance S")
 *   select_g_select_jobinfo_free   no select plugin is loaded
 *
 * Two modes:
 *
 *   tidal-emu JOBFILE         run the script in JOBFILE (format below) and
 *                             print every job after each cycle
 *   tidal-emu --bench JOBS NODES CYCLES [POLICY]
 *                             a synthetic cluster (NODES x 8 GPUs, JOBS
 *                             jobs, about a third running), CYCLES cycles
 *                             with 1% of running jobs ending between them;
 *                             prints p50/p99/max of the lock hold (snapshot
 *                             + apply) and of decide, in ms
 *
 * Job file (one command per line, '#' comments):
 *
 *   nodes N GPUS                 N nodes n1..nN with GPUS GPUs each
 *   conf KEY=VALUE...            a tidal.conf line
 *   job ID GPUS [pernode=K] [nodes=M] [elastic=MIN-MAX] [deadline=+S]
 *          [limit=MIN] [batch=0] [train-model=NAME] [train-batch=N]
 *          [train-iters=N]         (batch=0: not a batch job; train-*:
 *                                  sbatch's --train-* options)
 *   cycle [N]                    N scheduling cycles (default 1), then print
 *   end ID                       running job ID completes
 *   advance S                    the clock moves S seconds
 *   restart [corrupt] [lost=ID]  the plugin starts afresh and loads its
 *                                state (corrupt: torn state file first;
 *                                lost=ID: slurmctld's own state is from
 *                                before ID's last requeue, so that run is
 *                                listed as running again)
 *
 * Output, after each cycle:  "job ID STATE gpus=G nodes=A,B signals=S
 * requeues=R limit=MIN acct=... reason=..."; tests/emu/test_*.sh grep
 * it.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "slurm/slurm_errno.h"

#include "src/common/bitstring.h"
#include "src/common/gres.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/select.h"
#include "src/common/slurm_protocol_defs.h"
#include "src/common/slurm_topology.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/acct_policy.h"
#include "src/slurmctld/job_scheduler.h"
#include "src/slurmctld/reservation.h"
#include "src/slurmctld/licenses.h"
#include "src/slurmctld/node_scheduler.h"
#include "src/slurmctld/slurmctld.h"
#include "src/slurmctld/srun_comm.h"

#include "plugin/sched/bridge.h"
#include "plugin/sched/slurm_side.h"
#include "tests/emu/emu.h"

/* ---- the emulated slurmctld ---- */

extern int last_node_index; /* node_conf.c, not in its header */

List job_list;
time_t last_job_update;
static time_t emu_now = 1700000000;
static job_record_t **by_id; /* index = job id */
static uint32_t max_id;
static part_record_t part = { .name = "gpu", .max_time = INFINITE,
			       .default_time = NO_VAL };
static int *signals; /* per job id */

time_t time(time_t *t)
{
	if (t)
		*t = emu_now;
	return emu_now;
}

void emu_advance(double secs)
{
	emu_now += (time_t)secs;
}

job_record_t *find_job_record(uint32_t id)
{
	return id <= max_id ? by_id[id] : NULL;
}

bool job_independent(job_record_t *job_ptr)
{
	return true;
}

void launch_job(job_record_t *job_ptr) {}

/* One partition, always up, without limits: the cluster tier tests
 * partition states and limits through the real slurmctld
 * (tests/cluster/test_partitions.sh). */
int job_limits_check(job_record_t **job_pptr, bool check_min_time)
{
	return WAIT_NO_REASON;
}

bool part_policy_job_runnable_state(job_record_t *job_ptr)
{
	return true;
}

/* Slurm's rule (job_scheduler.c): a job whose --time-min, or else time
 * limit, cannot end by its deadline ends in state DEADLINE. */
bool deadline_ok(job_record_t *job_ptr, char *func)
{
	uint32_t mins = job_ptr->time_min ? job_ptr->time_min
					  : job_ptr->time_limit;

	if (mins == NO_VAL || mins == INFINITE ||
	    job_ptr->deadline >= emu_now + (time_t)mins * 60)
		return true;
	job_ptr->job_state = JOB_DEADLINE;
	job_ptr->state_reason = FAIL_DEADLINE;
	xfree(job_ptr->state_desc);
	job_ptr->end_time = emu_now;
	return false;
}

/* No reservations: resv_list stays NULL. */
List resv_list;

int job_test_resv(job_record_t *job_ptr, time_t *when, bool move_time,
		  bitstr_t **node_bitmap, bitstr_t **exc_core_bitmap,
		  bool *resv_overlap, bool reboot)
{
	*node_bitmap = NULL;
	*resv_overlap = false;
	return SLURM_SUCCESS;
}

/* No licences, associations or QOS limits. */
int license_job_test(job_record_t *job_ptr, time_t when, bool reboot)
{
	return SLURM_SUCCESS;
}

bool acct_policy_job_runnable_state(job_record_t *job_ptr)
{
	return true;
}

bool acct_policy_job_runnable_pre_select(job_record_t *job_ptr,
					 bool assoc_mgr_locked)
{
	return true;
}

/* Limits are not enforced (the cluster tier runs them through slurmdbd:
 * tests/cluster/test_qos.sh), so the limit check on a job's TRES never
 * reaches these. */
uint16_t accounting_enforce = 0;
int slurmctld_tres_cnt = 0;

bool acct_policy_job_runnable_post_select(job_record_t *job_ptr,
					  uint64_t *tres_req_cnt,
					  bool assoc_mgr_locked)
{
	abort();
}

/* No job arrays here (the job file has none): the cluster tier runs them
 * through the real slurmctld (tests/cluster/test_arrays.sh). */
bool job_array_start_test(job_record_t *job_ptr)
{
	return true;
}

int num_pending_job_array_tasks(uint32_t array_job_id)
{
	return 0;
}

job_record_t *job_array_split(job_record_t *job_ptr)
{
	abort(); /* only for records with array_recs, which none has */
}

job_record_t *job_array_post_sched(job_record_t *job_ptr)
{
	abort();
}

/* No heterogeneous jobs here (the job file cannot make one): the cluster
 * tier starts them through the real slurmctld (tests/cluster/test_het.sh).
 * apply.c's start of one, and its undo, are never reached. */
bitstr_t *avail_node_bitmap;
slurmctld_config_t slurmctld_config;
/* Jobs end at once here: no node is ever COMPLETING (apply.c reads it). */
bitstr_t *cg_node_bitmap;

int get_node_cnts(job_record_t *job_ptr, uint32_t qos_flags,
		  part_record_t *part_ptr, uint32_t *min_nodes,
		  uint32_t *req_nodes, uint32_t *max_nodes)
{
	abort();
}

void build_cg_bitmap(job_record_t *job_ptr)
{
	abort();
}

void job_completion_logger(job_record_t *job_ptr, bool requeue)
{
	abort();
}

void deallocate_nodes(job_record_t *job_ptr, bool timeout, bool suspended,
		      bool preempted)
{
	abort();
}

void acct_policy_add_job_submit(job_record_t *job_ptr)
{
	abort();
}

void batch_requeue_fini(job_record_t *job_ptr)
{
	abort();
}

/* slurm_free_job_desc_msg() calls it, which would load the select plugin
 * (and read slurm.conf): there is none here, and no jobinfo to free. */
int select_g_select_jobinfo_free(dynamic_plugin_data_t *jobinfo)
{
	return SLURM_SUCCESS;
}

void srun_allocate(job_record_t *job_ptr) {}

static gres_job_state_t *_gpu_state(List l)
{
	gres_state_t *gs = l ? list_peek(l) : NULL;
	return gs ? gs->gres_data : NULL;
}

static gres_node_state_t *_node_gpus(node_record_t *n)
{
	gres_state_t *gs = list_peek(n->gres_list);
	return gs->gres_data;
}

static List _gpu_list(gres_job_state_t *js)
{
	List l = list_create(NULL); /* leaked per job: the emulator is short */
	gres_state_t *gs = xmalloc(sizeof(*gs));
	gs->gres_name = "gpu";
	gs->gres_data = js;
	list_append(l, gs);
	return l;
}

/* Free the GPUs of running JOB_PTR. */
static void _release(job_record_t *job_ptr)
{
	gres_job_state_t *a = _gpu_state(job_ptr->gres_list_alloc);
	int k = 0;

	for (int i = 0; a && i < node_record_count; i++)
		if (bit_test(job_ptr->node_bitmap, i))
			_node_gpus(node_record_table_ptr[i])->gres_cnt_alloc -=
				a->gres_cnt_node_alloc[k++];
	FREE_NULL_BITMAP(job_ptr->node_bitmap);
	job_ptr->gres_list_alloc = NULL;
	xfree(job_ptr->nodes);
}

static int _select_nodes(job_record_t *job_ptr, bool test_only,
			 uint32_t scheduler_type)
{
	gres_job_state_t *r = _gpu_state(job_ptr->gres_list_req), *a;
	bitstr_t *exc = job_ptr->details->exc_node_bitmap;
	int nodes = MAX(job_ptr->details->min_nodes, 1);
	int per = r && r->gres_per_node ? (int)r->gres_per_node : 0;
	int need = per ? per * nodes : r ? (int)r->gres_per_job : 0;
	int take[node_record_count], left = need, used = 0;

	memset(take, 0, sizeof(take));
	for (int i = 0; i < node_record_count && left > 0; i++) {
		gres_node_state_t *g = _node_gpus(node_record_table_ptr[i]);
		int free_gpus = (int)(g->gres_cnt_avail - g->gres_cnt_alloc);
		if ((exc && bit_test(exc, i)) || free_gpus <= 0 ||
		    (per && free_gpus < per) || used == nodes)
			continue;
		take[i] = per ? per : MIN(free_gpus, left);
		left -= take[i];
		used++;
	}
	if (left > 0 || (per && used < nodes))
		return ESLURM_NODES_BUSY;
	if (test_only)
		return SLURM_SUCCESS;
	a = xmalloc(sizeof(*a));
	a->node_cnt = used;
	a->gres_cnt_node_alloc = xcalloc(used + 1, sizeof(uint64_t));
	job_ptr->node_bitmap = bit_alloc(node_record_count);
	for (int i = 0, k = 0; k < used; i++) {
		if (!take[i])
			continue;
		bit_set(job_ptr->node_bitmap, i);
		a->gres_cnt_node_alloc[k++] = take[i];
		_node_gpus(node_record_table_ptr[i])->gres_cnt_alloc += take[i];
		xstrfmtcat(job_ptr->nodes, "%s%s", job_ptr->nodes ? "," : "",
			   node_record_table_ptr[i]->name);
	}
	job_ptr->gres_list_alloc = _gpu_list(a);
	job_ptr->job_state = JOB_RUNNING;
	job_ptr->start_time = emu_now;
	return SLURM_SUCCESS;
}

/* What a requeue changed, kept so that "restart lost=ID" can bring the
 * run back as a slurmctld restarted from older state does. */
typedef struct {
	bool kept;
	time_t start;
	bitstr_t *nodes;
	char *names;
	List alloc, req;
	char *tres_per_job, *tres_per_node;
	uint32_t min_nodes, max_nodes;
	uint16_t restarts;
} emu_before_t;
static emu_before_t *before; /* per job id */

static int _job_requeue(uint32_t job_id)
{
	job_record_t *job_ptr = find_job_record(job_id);
	emu_before_t *b;

	if (!job_ptr || !IS_JOB_RUNNING(job_ptr))
		return ESLURM_JOB_NOT_RUNNING;
	b = &before[job_id];
	FREE_NULL_BITMAP(b->nodes);
	xfree(b->names);
	xfree(b->tres_per_job);
	xfree(b->tres_per_node);
	*b = (emu_before_t){
		.kept = true,
		.start = job_ptr->start_time,
		.nodes = bit_copy(job_ptr->node_bitmap),
		.names = xstrdup(job_ptr->nodes),
		.alloc = job_ptr->gres_list_alloc, /* _release drops, never frees */
		.req = job_ptr->gres_list_req,	   /* _update_job never frees */
		.tres_per_job = xstrdup(job_ptr->tres_per_job),
		.tres_per_node = xstrdup(job_ptr->tres_per_node),
		.min_nodes = job_ptr->details->min_nodes,
		.max_nodes = job_ptr->details->max_nodes,
		.restarts = job_ptr->restart_cnt,
	};
	_release(job_ptr);
	job_ptr->job_state = JOB_PENDING;
	job_ptr->details->begin_time = emu_now + 121;
	job_ptr->restart_cnt++;
	return SLURM_SUCCESS;
}

int job_signal(job_record_t *job_ptr, uint16_t sig, uint16_t flags, uid_t uid,
	       bool preempt)
{
	if (sig != SIGKILL) {
		signals[job_ptr->job_id]++;
		return SLURM_SUCCESS;
	}
	if (IS_JOB_RUNNING(job_ptr))
		_release(job_ptr);
	job_ptr->job_state = JOB_CANCELLED;
	return SLURM_SUCCESS;
}

/* "gres:gpu:N" -> N, or -1. */
static int _tres_gpus(const char *s)
{
	const char *p = s ? strrchr(s, ':') : NULL;
	return p ? atoi(p + 1) : -1;
}

static int _update_job(slurm_msg_t *msg)
{
	job_desc_msg_t *d = msg->data;
	job_record_t *job_ptr = find_job_record(d->job_id);
	gres_job_state_t *r;

	if (!job_ptr)
		return ESLURM_INVALID_JOB_ID;
	if (!IS_JOB_PENDING(job_ptr))
		return ESLURM_JOB_NOT_PENDING;
	/* Slurm validates the new request into a new gres list. */
	r = xmalloc(sizeof(*r));
	*r = *_gpu_state(job_ptr->gres_list_req);
	job_ptr->gres_list_req = _gpu_list(r);
	if (d->tres_per_job) {
		r->gres_per_job = _tres_gpus(d->tres_per_job);
		r->gres_per_node = 0;
		xfree(job_ptr->tres_per_job);
		job_ptr->tres_per_job = xstrdup(d->tres_per_job);
	}
	if (d->tres_per_node) {
		r->gres_per_node = _tres_gpus(d->tres_per_node);
		r->gres_per_job = 0;
		xfree(job_ptr->tres_per_node);
		job_ptr->tres_per_node = xstrdup(d->tres_per_node);
	}
	if (d->min_nodes != NO_VAL)
		job_ptr->details->min_nodes = d->min_nodes;
	if (d->max_nodes != NO_VAL)
		job_ptr->details->max_nodes = d->max_nodes;
	return SLURM_SUCCESS;
}

/* The emulated slurmctld's own work, timed apart (this thread's CPU):
 * select_nodes() here walks every node, the real one does far more, and
 * neither is the plugin's. */
static double slurm_cpu_ms;

static double _cpu_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int select_nodes(job_record_t *job_ptr, bool test_only,
		 bitstr_t **select_node_bitmap, char **err_msg, bool submission,
		 uint32_t scheduler_type)
{
	double t0 = _cpu_ms();
	int rc = _select_nodes(job_ptr, test_only, scheduler_type);
	slurm_cpu_ms += _cpu_ms() - t0;
	return rc;
}

int job_requeue(uid_t uid, uint32_t job_id, slurm_msg_t *msg, bool preempt,
		uint32_t flags)
{
	double t0 = _cpu_ms();
	int rc = _job_requeue(job_id);
	slurm_cpu_ms += _cpu_ms() - t0;
	return rc;
}

int update_job(slurm_msg_t *msg, uid_t uid, bool send_msg)
{
	double t0 = _cpu_ms();
	int rc = _update_job(msg);
	slurm_cpu_ms += _cpu_ms() - t0;
	return rc;
}

/* ---- building the cluster and the jobs ---- */

void emu_nodes(int n, int gpus)
{
	node_record_count = n;
	last_node_index = n - 1;
	node_record_table_ptr = xcalloc(n, sizeof(node_record_t *));
	for (int i = 0; i < n; i++) {
		node_record_t *node = xmalloc(sizeof(*node));
		gres_node_state_t *g = xmalloc(sizeof(*g));
		gres_state_t *gs = xmalloc(sizeof(*gs));
		node->name = xstrdup_printf("n%d", i + 1);
		node->index = i;
		node->cpus = 64;
		node->real_memory = 512000;
		node->node_state = NODE_STATE_IDLE;
		g->gres_cnt_avail = gpus;
		gs->gres_name = "gpu";
		gs->gres_data = g;
		node->gres_list = list_create(NULL);
		list_append(node->gres_list, gs);
		node_record_table_ptr[i] = node;
	}
	switch_record_cnt = 0;
}

job_record_t *emu_job(const emu_job_spec_t *s)
{
	job_record_t *j = xmalloc(sizeof(*j));
	gres_job_state_t *r = xmalloc(sizeof(*r));

	if (!job_list)
		job_list = list_create(NULL);
	if (s->id > max_id) {
		xrecalloc(by_id, s->id + 1, sizeof(*by_id));
		xrecalloc(signals, s->id + 1, sizeof(*signals));
		xrecalloc(before, s->id + 1, sizeof(*before));
		max_id = s->id;
	}
	j->magic = JOB_MAGIC;
	j->job_id = s->id;
	j->user_id = 0;
	j->name = xstrdup_printf("job%u", s->id);
	j->part_ptr = &part;
	j->priority = 1;
	j->batch_flag = s->batch;
	j->job_state = JOB_PENDING;
	j->time_limit = s->limit_min > 0 ? s->limit_min : INFINITE;
	j->deadline = s->deadline > 0 ? emu_now + s->deadline : 0;
	j->details = xmalloc(sizeof(*j->details));
	j->details->magic = DETAILS_MAGIC;
	j->details->submit_time = emu_now;
	j->details->begin_time = emu_now;
	j->details->min_nodes = s->nodes > 0 ? s->nodes : 1;
	j->details->num_tasks = 1;
	if (s->per_node) {
		r->gres_per_node = s->per_node;
		j->tres_per_node = xstrdup_printf("gres:gpu:%d", s->per_node);
	} else {
		r->gres_per_job = s->gpus;
		j->tres_per_job = xstrdup_printf("gres:gpu:%d", s->gpus);
	}
	j->gres_list_req = _gpu_list(r);
	/* What spank_tidal.so would pass (plugin/common/options.h). */
	if (s->max_gpus || s->train_model[0] || s->train_batch ||
	    s->train_iters)
		j->spank_job_env = xcalloc(5, sizeof(char *));
	if (s->max_gpus)
		j->spank_job_env[j->spank_job_env_size++] = xstrdup_printf(
			"TIDAL_ELASTIC_GPUS=%d-%d", s->min_gpus, s->max_gpus);
	if (s->train_model[0])
		j->spank_job_env[j->spank_job_env_size++] =
			xstrdup_printf("TIDAL_TRAIN_MODEL=%s", s->train_model);
	if (s->train_batch)
		j->spank_job_env[j->spank_job_env_size++] =
			xstrdup_printf("TIDAL_TRAIN_BATCH=%d", s->train_batch);
	if (s->train_iters)
		j->spank_job_env[j->spank_job_env_size++] = xstrdup_printf(
			"TIDAL_TRAIN_ITERS=%.0f", s->train_iters);
	list_append(job_list, j);
	by_id[s->id] = j;
	return j;
}

void emu_end(uint32_t id)
{
	job_record_t *j = find_job_record(id);
	if (j && IS_JOB_RUNNING(j)) {
		_release(j);
		j->job_state = JOB_COMPLETE;
	}
}

/* ---- one cycle, as sched_tidal.c's _cycle() without the locks ---- */

static double _ms(struct timespec a, struct timespec b)
{
	return (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
}

/* Time since *W and *C (wall, thread CPU), in ms; both moved to now. */
static void _lap(struct timespec *w, struct timespec *c, double *wall,
		 double *cpu)
{
	struct timespec w1, c1;

	clock_gettime(CLOCK_MONOTONIC, &w1);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	*wall = _ms(*w, w1);
	*cpu = _ms(*c, c1);
	*w = w1;
	*c = c1;
}

int emu_cycle(emu_times_t *t)
{
	tidal_snap_t snap;
	tidal_plan_t plan;
	tidal_apply_conf_t conf;
	struct timespec w, c;
	emu_times_t z = { 0 };
	double wall, cpu;
	char *msg = NULL;
	int started, left;

	if (!t)
		t = &z;
	memset(t, 0, sizeof(*t));
	slurm_cpu_ms = 0;
	clock_gettime(CLOCK_MONOTONIC, &w);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
	tidal_snapshot_deadlines(tidal_engine_admits_by_deadline());
	/* lock */
	tidal_requeue_delays_give_back(time(NULL));
	tidal_snapshot_take(&snap);
	_lap(&w, &c, &t->snapshot_ms, &t->hold_cpu_ms);
	t->hold_max_cpu_ms = t->hold_cpu_ms;
	/* unlock */
	tidal_snapshot_finish(&snap);
	_lap(&w, &c, &wall, &t->unlocked_cpu_ms);
	if (tidal_engine_decide(&snap, &plan, &msg)) {
		fprintf(stderr, "tidal-emu: %s\n", msg ? msg : "decide failed");
		free(msg);
		tidal_snapshot_free(&snap);
		return -1;
	}
	_lap(&w, &c, &t->decide_ms, &t->decide_cpu_ms);
	tidal_engine_apply_conf(&conf);
	tidal_plan_prepare(&snap, &plan);
	_lap(&w, &c, &wall, &cpu);
	t->unlocked_cpu_ms += cpu;
	/* lock */
	started = tidal_plan_apply(&snap, &plan, &conf);
	_lap(&w, &c, &t->apply_ms, &cpu);
	t->hold_cpu_ms += cpu;
	t->hold_max_cpu_ms = MAX(t->hold_max_cpu_ms, cpu);
	t->sections = 2;
	/* unlock, lock ... */
	for (left = tidal_plan_reasons_left(&plan); left > 0; t->sections++) {
		clock_gettime(CLOCK_MONOTONIC, &w);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
		left = tidal_plan_apply_reasons(&snap, &plan);
		_lap(&w, &c, &wall, &cpu);
		t->apply_ms += wall;
		t->hold_cpu_ms += cpu;
		t->hold_max_cpu_ms = MAX(t->hold_max_cpu_ms, cpu);
	}
	t->jobs = snap.n_jobs;
	t->slurm_cpu_ms = slurm_cpu_ms;
	tidal_plan_free(&plan);
	tidal_snapshot_free(&snap);
	tidal_state_save();
	return started;
}

void emu_print(FILE *out)
{
	for (uint32_t id = 1; id <= max_id; id++) {
		job_record_t *j = by_id[id];
		gres_job_state_t *a;
		int gpus = 0;
		char limit[16] = "-";

		if (!j)
			continue;
		if (j->time_limit != NO_VAL && j->time_limit != INFINITE)
			snprintf(limit, sizeof(limit), "%u", j->time_limit);
		a = _gpu_state(j->gres_list_alloc);
		for (uint32_t k = 0; a && k < a->node_cnt; k++)
			gpus += (int)a->gres_cnt_node_alloc[k];
		fprintf(out,
			"job %u %s gpus=%d nodes=%s signals=%d requeues=%u "
			"limit=%s acct=%s reason=%s\n",
			id, job_state_string(j->job_state), gpus,
			j->nodes ? j->nodes : "-", signals[id], j->restart_cnt,
			limit,
			j->admin_comment ? j->admin_comment : "-",
			j->state_desc ? j->state_desc : "-");
	}
}

static char *emu_conf, *emu_state_dir;

/* Cut the completion marker off FILE in the state directory, as a torn
 * write would. */
static void _tear(const char *file)
{
	char *path = xstrdup_printf("%s/%s", emu_state_dir, file);
	FILE *f = fopen(path, "r+");

	if (f) {
		fseek(f, 0, SEEK_END);
		if (ftruncate(fileno(f), MAX(ftell(f) - 20, 0)))
			perror(path);
		fclose(f);
	}
	xfree(path);
}

/* slurmctld restarted from job state saved before ID's last requeue:
 * the run that requeue ended is listed as running again, on its old
 * GPUs, with its old request.  RET false if ID was never requeued or
 * its GPUs have been taken since. */
static bool _lose_requeue(uint32_t id)
{
	job_record_t *job_ptr = id <= max_id ? by_id[id] : NULL;
	emu_before_t *b = job_ptr ? &before[id] : NULL;
	gres_job_state_t *a;

	if (!b || !b->kept || !IS_JOB_PENDING(job_ptr))
		return false;
	a = _gpu_state(b->alloc);
	for (int i = 0, k = 0; i < node_record_count; i++) {
		gres_node_state_t *g;
		if (!bit_test(b->nodes, i))
			continue;
		g = _node_gpus(node_record_table_ptr[i]);
		if (g->gres_cnt_alloc + a->gres_cnt_node_alloc[k++] >
		    g->gres_cnt_avail)
			return false;
	}
	for (int i = 0, k = 0; i < node_record_count; i++)
		if (bit_test(b->nodes, i))
			_node_gpus(node_record_table_ptr[i])->gres_cnt_alloc +=
				a->gres_cnt_node_alloc[k++];
	job_ptr->node_bitmap = b->nodes;
	job_ptr->nodes = b->names;
	job_ptr->gres_list_alloc = b->alloc;
	job_ptr->gres_list_req = b->req;
	xfree(job_ptr->tres_per_job);
	xfree(job_ptr->tres_per_node);
	job_ptr->tres_per_job = b->tres_per_job;
	job_ptr->tres_per_node = b->tres_per_node;
	job_ptr->details->min_nodes = b->min_nodes;
	job_ptr->details->max_nodes = b->max_nodes;
	job_ptr->restart_cnt = b->restarts;
	job_ptr->start_time = b->start;
	job_ptr->job_state = JOB_RUNNING;
	*b = (emu_before_t){ 0 };
	return true;
}

void emu_restart(bool corrupt, bool both, uint32_t lost)
{
	char *msg = NULL;

	if (lost && !_lose_requeue(lost))
		fprintf(stderr, "tidal-emu: restart lost=%u: job %u has no "
			"requeue to lose (never requeued, not pending, or its "
			"GPUs taken since)\n", lost, lost);

	if (corrupt)
		_tear("tidal_state");
	if (corrupt && both)
		_tear("tidal_state.prev");
	tidal_engine_shutdown();
	tidal_agent_clear();
	tidal_engine_configure(emu_conf, "tidal.conf", &msg);
	free(msg);
	tidal_state_load();
}

void emu_init(const char *conf_text, const char *state_dir, bool verbose)
{
	log_options_t opts = LOG_OPTS_STDERR_ONLY;
	char *msg = NULL;

	opts.stderr_level = verbose ? LOG_LEVEL_INFO : LOG_LEVEL_ERROR;
	log_init("tidal-emu", opts, 0, NULL);
	slurm_conf.state_save_location = xstrdup(state_dir);
	emu_conf = xstrdup(conf_text);
	emu_state_dir = xstrdup(state_dir);
	slurm_conf.sched_params = xstrdup("defer,sched_interval=-1");
	if (tidal_engine_configure(conf_text, "tidal.conf", &msg))
		fprintf(stderr, "tidal-emu: %s\n", msg ? msg : "bad conf");
	else if (msg)
		fprintf(stderr, "tidal-emu: %s\n", msg);
	free(msg);
}

void emu_quiet(void)
{
	log_options_t opts = LOG_OPTS_STDERR_ONLY;

	opts.stderr_level = LOG_LEVEL_QUIET;
	log_alter(opts, 0, NULL);
}
