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
 *   slurm_spank_init_post_opt  spank_job_control_setenv() each value
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>

#include "plugin/common/options.h"

SPANK_PLUGIN(tidal, 1);

#define N_OPTS 8
static char *values[N_OPTS]; /* given value per tidal_options[] entry */

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

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();

	if (ctx != S_CTX_ALLOCATOR && ctx != S_CTX_LOCAL)
		return 0;
	for (int i = 0; tidal_options[i].name && i < N_OPTS; i++) {
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
	for (int i = 0; tidal_options[i].name && i < N_OPTS; i++) {
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
	for (int i = 0; i < N_OPTS; i++) {
		free(values[i]);
		values[i] = NULL;
	}
	return 0;
}
