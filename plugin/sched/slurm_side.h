/*
 * slurm_side.h - helpers shared by the Slurm-facing files of sched/tidal
 * (sched_tidal.c, snapshot.c, apply.c).  Includes Slurm's headers: never
 * include it from C++.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#ifndef TIDAL_PLUGIN_SLURM_SIDE_H
#define TIDAL_PLUGIN_SLURM_SIDE_H

#include <stdint.h>
#include <time.h>

#include "src/slurmctld/slurmctld.h"

#include "plugin/sched/bridge.h"

#define TIDAL_HOLD_PREFIX "TidalHold: "
#define TIDAL_PREEMPT_PREFIX "TidalPreempted: "
#define TIDAL_REJECT_PREFIX "TidalReject: "

/* Parse Tidal's options (options.h) from a job's spank_job_env into J. */
void tidal_job_options(char **env, uint32_t n, tidal_job_t *j);

/* A job Tidal requeued: Slurm delayed its begin time by the credential
 * lifetime; give it back (job write lock held). */
void tidal_fix_requeue_delay(job_record_t *job_ptr, time_t now);

/* Plugin state the apply step keeps (requeued jobs), for the state file. */
int tidal_requeued_count(void);

#endif /* TIDAL_PLUGIN_SLURM_SIDE_H */
