/*
 * emu.h - the emulated slurmctld of tests/emu (emu.c) and its driver
 * (emu_main.c).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#ifndef TIDAL_TESTS_EMU_H
#define TIDAL_TESTS_EMU_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
	uint32_t id;
	int gpus;     /* per job (when per_node is 0) */
	int per_node; /* GPUs per node, 0 = a per-job count */
	int nodes;
	int min_gpus, max_gpus; /* --elastic-gpus, 0 = rigid */
	double deadline;	/* seconds from now, 0 = none */
	int limit_min;		/* time limit, minutes; 0 = none */
	int batch;
	char train_model[65];	/* --train-model, "" = none */
	int train_batch;	/* --train-batch, 0 = none */
	double train_iters;	/* --train-iters, 0 = none */
} emu_job_spec_t;

typedef struct {
	double snapshot_ms, decide_ms, apply_ms; /* wall */
	double hold_cpu_ms, decide_cpu_ms;	 /* this thread's CPU time */
	double hold_max_cpu_ms;	/* the longest lock section */
	double unlocked_cpu_ms;	/* finish and prepare (no lock, not decide) */
	double slurm_cpu_ms;	/* of the hold: in the emulated select_nodes,
				 * job_requeue, update_job */
	int sections;		/* lock sections */
	int jobs;
} emu_times_t;

void emu_init(const char *conf_text, const char *state_dir, bool verbose);
/* Nothing to stderr from slurmctld's log any more, errors included (the
 * state fuzz target feeds it a torn file on every input). */
void emu_quiet(void);
void emu_nodes(int n, int gpus);
struct job_record *emu_job(const emu_job_spec_t *spec);
void emu_end(uint32_t id);
void emu_advance(double secs);
/* One cycle as sched_tidal.c's _cycle() runs it, the locks left out
 * (snapshot, decide, apply in lock sections, state save).  RET jobs started, or
 * -1 if decide failed. */
int emu_cycle(emu_times_t *times);
void emu_print(FILE *out);
/* As if slurmctld restarted: the engine forgets, then loads the state
 * file (CORRUPT: with its end marker cut off first; BOTH: the previous
 * good file's too).  LOST, if not 0: slurmctld's own job state was saved
 * before job LOST's last requeue, so the run that requeue ended is listed
 * as running again. */
void emu_restart(bool corrupt, bool both, uint32_t lost);

#endif /* TIDAL_TESTS_EMU_H */
