/*
 * share.c - GPUs that several jobs hold at once, through gres/shard.
 *
 * A policy that groups jobs on the same GPUs (Muri) starts them holding
 * shards (GresTypes=gpu,shard; a GPU's shards in gres.conf) instead of
 * whole GPUs: one shard per GPU per job, so a GPU with S shards takes up
 * to S jobs.  Slurm's own view then stays true: every job on a GPU holds
 * a shard of it (scontrol show job -d: GRES=shard:1(IDX:g)), a GPU with a
 * shard taken is never given out whole, and it is whole again only when
 * the last shard is back.
 *
 * Slurm picks the GPU a shard comes from itself, first fit in gres.conf
 * order; it has no request for "the GPU job A holds".  So around the one
 * select_nodes() call that starts a job (job and node write locks held,
 * nothing else runs), the GPUs it must not get are closed: their shard
 * count is raised to what they have, or, for a whole-GPU job, they are
 * marked taken.  Lifted right after by taking off exactly what was added
 * (a job that ends meanwhile gives its own shards back as usual).
 *
 * Slurm 22.05 needs the fence for whole-GPU jobs too: its gres/gpu picker
 * hands out a GPU whose shards are taken (seen on Debian 12's 22.05.8:
 * --gpus=2 given IDX 0-1 beside shard jobs on GPUs 0 and 1), and it
 * clears a GPU's "shards taken" bit when the first of its shard jobs
 * ends (gres_ctld.c, _job_dealloc).  24.11 keeps both right; the fence
 * does no harm there.
 *
 * Limits: a job shares one GPU per node (22.05's gres/shard allows no
 * more; 24.11's MULTIPLE_SHARING_GRES_PJ is not used yet), and every
 * GPU node should carry shards.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "plugin/sched/slurm_compat.h"

#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"

#include "plugin/sched/slurm_side.h"

/* Whether GresTypes names shard: without it none of this has work. */
static bool _shards_configured(void)
{
	return xstrcasestr(slurm_conf.gres_plugins, "shard") != NULL;
}

/* The node's gres state called NAME, or NULL. */
static gres_node_state_t *_node_gres(node_record_t *node_ptr, const char *name)
{
	list_itr_t *it;
	gres_state_t *gs;
	gres_node_state_t *ns = NULL;

	if (!node_ptr->gres_list)
		return NULL;
	it = list_iterator_create(node_ptr->gres_list);
	while ((gs = list_next(it)))
		if (!xstrcmp(gs->gres_name, name)) {
			ns = gs->gres_data;
			break;
		}
	list_iterator_destroy(it);
	return ns;
}

/* The GPU index (gres/gpu bit) of topo entry I of a shard state, -1 if it
 * names none. */
static int _topo_gpu(gres_node_state_t *sh, int i)
{
	if (!sh->topo_gres_bitmap || !sh->topo_gres_bitmap[i])
		return -1;
	return (int)bit_ffs(sh->topo_gres_bitmap[i]);
}

/* Whether GPU G of a node is held: whole (GPU's bit) or by shards. */
static bool _gpu_held(gres_node_state_t *gpu, gres_node_state_t *sh, int g)
{
	if (gpu && gpu->gres_bit_alloc &&
	    g < (int)bit_size(gpu->gres_bit_alloc) &&
	    bit_test(gpu->gres_bit_alloc, g))
		return true;
	if (!sh || !sh->topo_gres_cnt_alloc)
		return false;
	for (int i = 0; i < sh->topo_cnt; i++)
		if (_topo_gpu(sh, i) == g && sh->topo_gres_cnt_alloc[i] > 0)
			return true;
	return false;
}

/* See slurm_side.h. */
extern void tidal_node_gpus(node_record_t *node_ptr, int *total, int *held)
{
	gres_node_state_t *gpu = _node_gres(node_ptr, "gpu");
	gres_node_state_t *sh =
		_shards_configured() ? _node_gres(node_ptr, "shard") : NULL;

	*total = gpu ? (int)gpu->gres_cnt_avail : 0;
	*held = gpu ? (int)gpu->gres_cnt_alloc : 0;
	if (!gpu || !sh || !sh->topo_gres_cnt_alloc)
		return;
	/* GPUs held through shards: gres/gpu does not count them. */
	for (int i = 0; i < sh->topo_cnt; i++) {
		int g = _topo_gpu(sh, i);
		if (g < 0 || sh->topo_gres_cnt_alloc[i] == 0)
			continue;
		if (!gpu->gres_bit_alloc ||
		    g >= (int)bit_size(gpu->gres_bit_alloc) ||
		    !bit_test(gpu->gres_bit_alloc, g))
			(*held)++;
	}
	*held = MIN(*held, *total);
}

/* See slurm_side.h. */
extern void tidal_share_limits(int *jobs_per_gpu, int *gpus_per_node)
{
	node_record_t *node_ptr;
	int least = 0;
	bool untold = false;

	*jobs_per_gpu = 1;
	*gpus_per_node = 1;
	if (!_shards_configured())
		return;
	for (int i = 0; (node_ptr = next_node(&i)); i++) {
		gres_node_state_t *sh = _node_gres(node_ptr, "shard");
		bool told = false;

		for (int t = 0;
		     sh && sh->topo_gres_cnt_avail && t < sh->topo_cnt; t++) {
			int n = (int)sh->topo_gres_cnt_avail[t];
			if (n > 0 && (!least || n < least))
				least = n;
			told |= n > 0;
		}
		/* Shards in its Gres= that its slurmd has not told the
		 * devices of (it registers after a restart of slurmctld). */
		if (!told && xstrcasestr(node_ptr->gres, "shard"))
			untold = true;
	}
	*jobs_per_gpu = least > 1 ? least : 1;
	if (!least && untold)
		*jobs_per_gpu = -1;
}

/* See slurm_side.h. */
extern bool tidal_share_plain(job_record_t *job_ptr)
{
	const char *other[] = { job_ptr->tres_per_task,
				job_ptr->tres_per_socket,
				job_ptr->cpus_per_tres, job_ptr->mem_per_tres };

	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		if (other[i] && other[i][0])
			return false;
	return true;
}

/* ---- what the jobs hold ---- */

/* Shards held per GPU of each node, as the jobs' own records say:
 * [node index][GPU index]. */
static uint64_t **held;
static int *held_len;
static int held_nodes;

static void _held_add(job_record_t *job_ptr)
{
	list_itr_t *it;
	gres_state_t *gs;

	if (!job_ptr->gres_list_alloc || !job_ptr->node_bitmap)
		return;
	it = list_iterator_create(job_ptr->gres_list_alloc);
	while ((gs = list_next(it))) {
		gres_job_state_t *js = gs->gres_data;
		int k = 0;

		if (xstrcmp(gs->gres_name, "shard") || !js ||
		    !js->gres_bit_alloc)
			continue;
		for (int i = bit_ffs(job_ptr->node_bitmap);
		     i >= 0 && i < held_nodes && k < (int)js->node_cnt; i++) {
			int n;

			if (!bit_test(job_ptr->node_bitmap, i))
				continue;
			n = js->gres_bit_alloc[k]
				    ? (int)bit_size(js->gres_bit_alloc[k])
				    : 0;
			if (n > held_len[i]) {
				xrecalloc(held[i], n, sizeof(**held));
				held_len[i] = n;
			}
			for (int g = 0; g < n; g++)
				held[i][g] += tidal_shards_on(js, k, g);
			k++;
		}
	}
	list_iterator_destroy(it);
}

static int _held_one(void *x, void *arg)
{
	job_record_t *job_ptr = x;

	if (IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr))
		_held_add(job_ptr);
	return 0;
}

/* Make NODE_PTR's shard counts per GPU (and its "shards taken" bits) say
 * what its jobs hold.  Slurm 22.05 loses them when slurmctld restarts: it
 * rebuilds the counts from bitmaps that say only "some shard here", and it
 * clears a GPU's bit when the first of its shard jobs ends. */
static void _repair(node_record_t *node_ptr)
{
	gres_node_state_t *sh = _node_gres(node_ptr, "shard");
	int i = node_ptr->index;

	if (!sh || !sh->topo_gres_cnt_alloc)
		return;
	for (int t = 0; t < sh->topo_cnt; t++) {
		int g = _topo_gpu(sh, t);
		uint64_t want = g >= 0 && g < held_len[i] ? held[i][g] : 0;

		if (g < 0)
			continue;
		if (sh->topo_gres_cnt_alloc[t] != want) {
			info("sched/tidal: node %s GPU %d: its jobs hold "
			     "%" PRIu64 " shards, Slurm counted %" PRIu64
			     "; set to %" PRIu64,
			     node_ptr->name, g, want,
			     sh->topo_gres_cnt_alloc[t], want);
			sh->topo_gres_cnt_alloc[t] = want;
		}
		if (sh->gres_bit_alloc &&
		    g < (int)bit_size(sh->gres_bit_alloc)) {
			if (want)
				bit_set(sh->gres_bit_alloc, g);
			else
				bit_clear(sh->gres_bit_alloc, g);
		}
	}
}

/* See slurm_side.h. */
extern void tidal_share_refresh(void)
{
	node_record_t *node_ptr;

	if (!_shards_configured())
		return;
	if (held_nodes != node_record_count) {
		for (int i = 0; i < held_nodes; i++)
			xfree(held[i]);
		xfree(held);
		xfree(held_len);
		held_nodes = node_record_count;
		held = xcalloc(held_nodes + 1, sizeof(*held));
		held_len = xcalloc(held_nodes + 1, sizeof(*held_len));
	}
	for (int i = 0; i < held_nodes; i++)
		if (held[i])
			memset(held[i], 0, held_len[i] * sizeof(**held));
	list_for_each_ro(job_list, _held_one, NULL);
	for (int i = 0; (node_ptr = next_node(&i)); i++)
		if (i < held_nodes)
			_repair(node_ptr);
}

/* ---- fences ---- */

typedef struct {
	gres_node_state_t *ns;
	int topo;	/* the topo entry raised */
	uint64_t added; /* to its topo_gres_cnt_alloc */
	int bit;	/* gres_bit_alloc bit set here, -1 none */
	uint64_t total; /* added to gres_cnt_alloc */
} fence_t;

static fence_t *fences;
static int n_fences, cap_fences;

static fence_t *_fence_new(gres_node_state_t *ns, int topo)
{
	if (n_fences == cap_fences) {
		cap_fences = 2 * cap_fences + 16;
		xrecalloc(fences, cap_fences, sizeof(*fences));
	}
	fences[n_fences] = (fence_t){ .ns = ns, .topo = topo, .bit = -1 };
	return &fences[n_fences++];
}

/* Close shard topo entry I: all its shards look taken. */
static void _close_shards(gres_node_state_t *sh, int i)
{
	uint64_t avail = sh->topo_gres_cnt_avail[i];
	uint64_t alloc = sh->topo_gres_cnt_alloc[i];
	fence_t *f;

	if (alloc >= avail)
		return;
	f = _fence_new(sh, i);
	f->added = avail - alloc;
	sh->topo_gres_cnt_alloc[i] = avail;
}

/* Close GPU G to whole-GPU requests: marked taken. */
static void _close_gpu(gres_node_state_t *gpu, int g)
{
	fence_t *f;

	if (!gpu->gres_bit_alloc || g >= (int)bit_size(gpu->gres_bit_alloc) ||
	    bit_test(gpu->gres_bit_alloc, g))
		return;
	f = _fence_new(gpu, -1);
	bit_set(gpu->gres_bit_alloc, g);
	f->bit = g;
	for (int i = 0; i < gpu->topo_cnt && gpu->topo_gres_cnt_alloc; i++)
		if (gpu->topo_gres_bitmap && gpu->topo_gres_bitmap[i] &&
		    g < (int)bit_size(gpu->topo_gres_bitmap[i]) &&
		    bit_test(gpu->topo_gres_bitmap[i], g) &&
		    gpu->topo_gres_cnt_alloc[i] < gpu->topo_gres_cnt_avail[i]) {
			f->topo = i;
			f->added = 1;
			gpu->topo_gres_cnt_alloc[i]++;
			break;
		}
	if (gpu->gres_cnt_alloc < gpu->gres_cnt_avail) {
		f->total = 1;
		gpu->gres_cnt_alloc++;
	}
}

/* The GPUs (bits) JOB_PTR's shards sit on, on node NODE_INX; NULL if it
 * holds none there.  Caller frees. */
static bitstr_t *_job_shard_gpus(job_record_t *job_ptr, int node_inx)
{
	list_itr_t *it;
	gres_state_t *gs;
	bitstr_t *out = NULL;
	int k;

	if (!job_ptr->gres_list_alloc || !job_ptr->node_bitmap ||
	    !bit_test(job_ptr->node_bitmap, node_inx))
		return NULL;
	k = bit_set_count_range(job_ptr->node_bitmap, 0, node_inx);
	it = list_iterator_create(job_ptr->gres_list_alloc);
	while ((gs = list_next(it))) {
		gres_job_state_t *js = gs->gres_data;
		if (xstrcmp(gs->gres_name, "shard") || !js ||
		    !js->gres_bit_alloc || k >= (int)js->node_cnt ||
		    !js->gres_bit_alloc[k])
			continue;
		out = bit_copy(js->gres_bit_alloc[k]);
		break;
	}
	list_iterator_destroy(it);
	return out;
}

/* See slurm_side.h. */
extern int tidal_job_shard_gpu(job_record_t *job_ptr, int node_inx)
{
	bitstr_t *b = _job_shard_gpus(job_ptr, node_inx);
	int g = b ? (int)bit_ffs(b) : -1;

	FREE_NULL_BITMAP(b);
	return g;
}

/* See slurm_side.h. */
extern int tidal_fence_raise(bitstr_t *nodes, bool shard, job_record_t *partner)
{
	node_record_t *node_ptr;
	int first = nodes ? bit_ffs(nodes) : 0;
	int last = nodes ? bit_fls(nodes) : node_record_count - 1;

	n_fences = 0;
	if (!_shards_configured() || first < 0)
		return SLURM_SUCCESS;
	for (int i = first; i <= last && (node_ptr = next_node(&i)); i++) {
		gres_node_state_t *gpu, *sh;
		bitstr_t *open = NULL;

		if (i > last)
			break;
		if (nodes && !bit_test(nodes, node_ptr->index))
			continue;
		sh = _node_gres(node_ptr, "shard");
		if (!sh || !sh->topo_gres_cnt_alloc)
			continue; /* nothing is shared here */
		gpu = _node_gres(node_ptr, "gpu");
		if (!shard) {
			/* Whole GPUs only where no shard is taken. */
			for (int t = 0; gpu && t < sh->topo_cnt; t++)
				if (sh->topo_gres_cnt_alloc[t] > 0 &&
				    _topo_gpu(sh, t) >= 0)
					_close_gpu(gpu, _topo_gpu(sh, t));
			continue;
		}
		if (partner) {
			open = _job_shard_gpus(partner, node_ptr->index);
			if (!open) {
				tidal_fence_lift();
				return ESLURM_NODES_BUSY;
			}
		}
		for (int t = 0; t < sh->topo_cnt; t++) {
			int g = _topo_gpu(sh, t);
			bool keep = open ? (g >= 0 && g < (int)bit_size(open) &&
					    bit_test(open, g))
					 : (g >= 0 && !_gpu_held(gpu, sh, g));
			if (!keep)
				_close_shards(sh, t);
		}
		FREE_NULL_BITMAP(open);
	}
	return SLURM_SUCCESS;
}

/* See slurm_side.h. */
extern void tidal_fence_lift(void)
{
	for (int i = n_fences - 1; i >= 0; i--) {
		fence_t *f = &fences[i];
		gres_node_state_t *ns = f->ns;

		if (f->topo >= 0 && f->added) {
			if (ns->topo_gres_cnt_alloc[f->topo] >= f->added)
				ns->topo_gres_cnt_alloc[f->topo] -= f->added;
			else
				ns->topo_gres_cnt_alloc[f->topo] = 0;
		}
		if (f->bit >= 0)
			bit_clear(ns->gres_bit_alloc, f->bit);
		if (f->total && ns->gres_cnt_alloc >= f->total)
			ns->gres_cnt_alloc -= f->total;
	}
	n_fences = 0;
}

/* See slurm_side.h. */
extern bool tidal_share_with(job_record_t *job_ptr, job_record_t *partner)
{
	if (!job_ptr->node_bitmap || !partner->node_bitmap)
		return false;
	for (int i = bit_ffs(job_ptr->node_bitmap);
	     i >= 0 && i < (int)bit_size(job_ptr->node_bitmap); i++) {
		bitstr_t *a, *b;
		bool same;

		if (!bit_test(job_ptr->node_bitmap, i))
			continue;
		a = _job_shard_gpus(job_ptr, i);
		b = _job_shard_gpus(partner, i);
		same = a && b && bit_overlap_any(a, b);
		FREE_NULL_BITMAP(a);
		FREE_NULL_BITMAP(b);
		if (!same)
			return false;
	}
	return true;
}

/* See slurm_side.h. */
extern int tidal_job_shards(job_record_t *job_ptr)
{
	list_itr_t *it;
	gres_state_t *gs;
	int per_node = 0;

	if (!job_ptr->gres_list_req)
		return 0;
	it = list_iterator_create(job_ptr->gres_list_req);
	while ((gs = list_next(it))) {
		gres_job_state_t *js = gs->gres_data;
		if (!xstrcmp(gs->gres_name, "shard") && js)
			per_node = (int)MAX(js->gres_per_node, 1);
	}
	list_iterator_destroy(it);
	return per_node;
}
