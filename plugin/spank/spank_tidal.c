/*
 * spank_tidal.c - Tidal's sbatch/salloc/srun options.
 *
 *   sbatch --elastic-gpus=2-8 --train-model=resnet50 --train-batch=256 \
 *          --train-iters=100000 --deadline=now+6hours job.sh
 *
 * Each value is checked when the command line is parsed (options.c names
 * the option and the rule when it is bad, and the submission fails), then
 * handed to slurmctld through spank_job_control_setenv(): it arrives in
 * job_ptr->spank_job_env, where sched/tidal reads it.
 *
 *   slurm_spank_init           register the options (allocator and local
 *                              contexts; sbatch ignores the static table)
 *   option callback            check the value, remember it
 *   slurm_spank_init_post_opt  check --elastic-gpus against the job's GPU
 *                              request, then spank_job_control_setenv()
 *                              each value (not for srun inside a job: a
 *                              step, whose job was checked)
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>

#include "plugin/common/options.h"

SPANK_PLUGIN(tidal, 1);

static char *values[TIDAL_OPT_COUNT]; /* given value per tidal_options[] */

static int _option_cb(int val, const char *optarg, int remote)
{
	char err[256];
	const tidal_option_t *o = &tidal_options[val];

	if (remote)
		return 0;
	if (o->has_arg &&
	    tidal_option_check(o->name, optarg, err, sizeof(err))) {
		slurm_error("%s", err);
		return -1;
	}
	free(values[val]);
	values[val] = strdup(o->has_arg ? optarg : "1");
	return values[val] ? 0 : -1;
}

/* ---- the job's GPU request, as the command parsed it ----
 *
 * SPANK hands a plugin its own options only.  sbatch, salloc and srun keep
 * theirs in a global "opt" (slurm_opt_t) that they export, and
 * libslurmfull's slurm_option_get() and slurm_option_isset() read any of
 * them by name.  All three are looked up at run time: where one is missing
 * (another program, another Slurm) the request is "not known here" and
 * sched/tidal alone makes the check, on the submitted job.
 */
typedef char *(*opt_get_fn)(void *opt, const char *name);
typedef bool (*opt_isset_fn)(void *opt, const char *name);
typedef void (*xfree_fn)(void **p);

/* Option NAME's value (malloc'd), or NULL if it was not given. */
static char *_cmd_option(const char *name)
{
	void *opt = dlsym(RTLD_DEFAULT, "opt");
	opt_get_fn get = (opt_get_fn)dlsym(RTLD_DEFAULT, "slurm_option_get");
	opt_isset_fn isset =
		(opt_isset_fn)dlsym(RTLD_DEFAULT, "slurm_option_isset");
	xfree_fn xfree = (xfree_fn)dlsym(RTLD_DEFAULT, "slurm_xfree");
	char *v, *copy;

	if (!opt || !get || !isset || !xfree || !isset(opt, name))
		return NULL;
	if (!(v = get(opt, name)))
		return NULL;
	copy = strdup(v);
	xfree((void **)&v);
	return copy;
}

static bool _cmd_options_visible(void)
{
	return dlsym(RTLD_DEFAULT, "opt") &&
	       dlsym(RTLD_DEFAULT, "slurm_option_get") &&
	       dlsym(RTLD_DEFAULT, "slurm_option_isset") &&
	       dlsym(RTLD_DEFAULT, "slurm_xfree");
}

static bool _all_digits(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 6)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* GPUs in a list of GRES items "[gres:|gres/]NAME[:TYPE][:N]" (GRES: other
 * names are skipped, no N means 1) or of "[TYPE:]N" items.  RET the count,
 * -1 if an item's count is not a plain number. */
static int _count_gpus(const char *list, bool gres)
{
	char *copy = strdup(list), *save = NULL, *item;
	int total = 0;

	for (item = strtok_r(copy, ",", &save); item && total >= 0;
	     item = strtok_r(NULL, ",", &save)) {
		char *f[3] = { NULL, NULL, NULL }, *fsave = NULL, *w;
		int n = 0;

		if (gres &&
		    (!strncmp(item, "gres:", 5) || !strncmp(item, "gres/", 5)))
			item += 5;
		for (w = strtok_r(item, ":", &fsave); w && n < 3;
		     w = strtok_r(NULL, ":", &fsave))
			f[n++] = w;
		if (w || n == 0) { /* more than three fields, or none */
			total = -1;
		} else if (gres) {
			if (strcmp(f[0], "gpu"))
				continue;
			if (n == 1 || (n == 2 && !_all_digits(f[1])))
				total += 1; /* "gpu", "gpu:TYPE" */
			else if (_all_digits(f[n - 1]))
				total += atoi(f[n - 1]);
			else
				total = -1;
		} else {
			total = n <= 2 && _all_digits(f[n - 1])
					? total + atoi(f[n - 1])
					: -1;
		}
	}
	free(copy);
	return total;
}

/* The leading count of a "N" or "N-M" option value; 1 when unset. */
static int _lead_count(const char *name)
{
	char *v = _cmd_option(name);
	int n = v ? atoi(v) : 1;

	free(v);
	return n > 0 ? n : 1;
}

/* The job's GPU request as sched/tidal counts it (plugin/sched/snapshot.c:
 * per job, else per node times the minimum node count, else per task
 * times the task count).  RET the GPUs (0: none asked), -1 if not known
 * here; *HOW (HOW_LEN bytes) says which option gave it. */
static int _gpu_request(char *how, size_t how_len)
{
	static const struct {
		const char *name;
		bool gres;
		const char *times; /* count multiplied by this option's */
	} src[] = {
		{ "gpus", false, NULL },
		{ "gpus-per-node", false, "nodes" },
		{ "gres", true, "nodes" },
		{ "gpus-per-task", false, "ntasks" },
	};
	char *v;

	if (!_cmd_options_visible())
		return -1;
	for (size_t i = 0; i < sizeof(src) / sizeof(src[0]); i++) {
		int n;
		char *t, *shown;

		if (!(v = _cmd_option(src[i].name)))
			continue;
		if ((n = _count_gpus(v, src[i].gres)) == 0 && src[i].gres) {
			free(v); /* --gres without a GPU */
			continue;
		}
		/* sbatch keeps --gres=gpu:2 as "gres:gpu:2" */
		shown = src[i].gres && !strncmp(v, "gres:", 5) ? v + 5 : v;
		t = src[i].times ? _cmd_option(src[i].times) : NULL;
		if (n > 0 && src[i].times && !t &&
		    !strcmp(src[i].times, "ntasks"))
			n = -1; /* the task count is Slurm's to choose */
		else if (n > 0 && src[i].times)
			n *= _lead_count(src[i].times);
		if (t)
			snprintf(how, how_len, "--%s=%s --%s=%s", src[i].times,
				 t, src[i].name, shown);
		else
			snprintf(how, how_len, "--%s=%s", src[i].name, shown);
		free(t);
		free(v);
		return n;
	}
	/* A request the count above does not cover is still a request. */
	v = _cmd_option("gpus-per-socket");
	free(v);
	return v ? -1 : 0;
}

/* --elastic-gpus against the GPU request, once every option is parsed. */
static int _check_elastic(void)
{
	const char *e = values[TIDAL_OPT_ELASTIC_GPUS];
	int min, max, gpus;
	char how[128] = "", err[320];

	if (!e || tidal_parse_range(e, &min, &max))
		return 0;
	gpus = _gpu_request(how, sizeof(how));
	if (!tidal_elastic_check(min, max, gpus, how[0] ? how : NULL, 0, err,
				 sizeof(err)))
		return 0;
	slurm_error("%s", err);
	return -1;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();

	if (ctx != S_CTX_ALLOCATOR && ctx != S_CTX_LOCAL)
		return 0;
	for (int i = 0; i < TIDAL_OPT_COUNT; i++) {
		struct spank_option opt = {
			.name = (char *)tidal_options[i].name,
			.arginfo = (char *)tidal_options[i].arginfo,
			.usage = (char *)tidal_options[i].usage,
			.has_arg = tidal_options[i].has_arg,
			.val = i,
			.cb = _option_cb,
		};
		if (spank_option_register(sp, &opt) != ESPANK_SUCCESS) {
			slurm_error("tidal: cannot register --%s", opt.name);
			return -1;
		}
	}
	return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();

	if (ctx != S_CTX_ALLOCATOR && ctx != S_CTX_LOCAL)
		return 0;
	/* srun inside a job makes a step of that job: it inherits the
	 * job's options (SLURM_SPANK_* in its environment) but not its GPU
	 * request, which sbatch or salloc checked already. */
	if (ctx == S_CTX_LOCAL && getenv("SLURM_JOB_ID"))
		return 0;
	if (_check_elastic())
		return -1;
	{
		char err[320];
		if (tidal_batch_check(values[TIDAL_OPT_TRAIN_BATCH],
				      values[TIDAL_OPT_TRAIN_MAX_BATCH], err,
				      sizeof(err))) {
			slurm_error("%s", err);
			return -1;
		}
	}
	for (int i = 0; i < TIDAL_OPT_COUNT; i++) {
		if (!values[i])
			continue;
		if (spank_job_control_setenv(sp, tidal_options[i].env,
					     values[i], 1) != ESPANK_SUCCESS) {
			slurm_error("tidal: cannot pass --%s to slurmctld",
				    tidal_options[i].name);
			return -1;
		}
	}
	return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	for (int i = 0; i < TIDAL_OPT_COUNT; i++) {
		free(values[i]);
		values[i] = NULL;
	}
	return 0;
}
