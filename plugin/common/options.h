/*
 * options.h - Tidal's job options: names, rules and parsing.
 *
 * One definition serves both ends: spank_tidal.so checks a value when
 * sbatch parses it (and names the option and the rule when it is bad), and
 * sched_tidal.so parses the same value out of job_ptr->spank_job_env.
 * Plain C, no Slurm headers.
 *
 *   option          environment (spank_job_env)  rule
 *   --elastic-gpus  TIDAL_ELASTIC_GPUS           MIN-MAX, 1 <= MIN <= MAX <=
 * 4096
 *   --train-model   TIDAL_TRAIN_MODEL            1-64 of [A-Za-z0-9._-]
 *   --train-batch   TIDAL_TRAIN_BATCH            integer in [1, 1e9]
 *   --train-max-batch TIDAL_TRAIN_MAX_BATCH      integer in [1, 1e9]
 *   --train-iters   TIDAL_TRAIN_ITERS            integer in [1, 1e15]
 *   --best-effort   TIDAL_BEST_EFFORT            (flag) 1
 *
 * and across options: --elastic-gpus needs a GPU request within its range
 * (tidal_elastic_check), checked by sbatch where it can see the request and
 * by sched/tidal on every pending job; --train-max-batch needs
 * --train-batch and is at least it (tidal_batch_check).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#ifndef TIDAL_PLUGIN_OPTIONS_H
#define TIDAL_PLUGIN_OPTIONS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TIDAL_MAX_GPUS 4096

typedef struct {
	const char *name; /* option without the dashes */
	const char *env;  /* spank_job_env variable */
	const char *arginfo;
	const char *usage;
	int has_arg;
} tidal_option_t;

/* The table's entries, by name: tidal_options[TIDAL_OPT_ELASTIC_GPUS]. */
enum {
	TIDAL_OPT_ELASTIC_GPUS,
	TIDAL_OPT_TRAIN_MODEL,
	TIDAL_OPT_TRAIN_BATCH,
	TIDAL_OPT_TRAIN_ITERS,
	TIDAL_OPT_BEST_EFFORT,
	TIDAL_OPT_TRAIN_MAX_BATCH,
	TIDAL_OPT_COUNT
};

/* The options above, TIDAL_OPT_COUNT of them, then a NULL entry. */
extern const tidal_option_t tidal_options[TIDAL_OPT_COUNT + 1];

/* ENTRY's value if it is "ENV=value" for option OPT (TIDAL_OPT_*), else
 * NULL. */
const char *tidal_option_env_value(const char *entry, int opt);

/* Check VALUE for option NAME.  RET 0 if good, else -1 with ERR (LEN bytes)
 * set to "--NAME=VALUE: RULE". */
int tidal_option_check(const char *name, const char *value, char *err,
		       size_t len);

/* An elastic job's GPU request against its --elastic-gpus=MIN-MAX and the
 * cluster.  GPUS: the GPUs it asks for (0: none), -1 if not known here;
 * HOW: how it asked (e.g. "--gpus=16"), NULL if not known; CLUSTER: the
 * GPUs the cluster has, 0 if not known here.  The rules: it asks for some
 * GPUs (the size it starts at), MIN <= GPUS <= MAX, MAX <= CLUSTER.
 * RET 0 if it may run, else -1 with ERR (LEN bytes) set to
 * "--elastic-gpus=MIN-MAX: RULE". */
int tidal_elastic_check(int min, int max, int gpus, const char *how,
			int cluster, char *err, size_t len);

/* --train-batch=BATCH against --train-max-batch=MAX (each NULL if not
 * given).  The rules: MAX needs BATCH (the batch an adaptive policy starts
 * from), and BATCH <= MAX.  RET 0 if they may go together, else -1 with
 * ERR (LEN bytes) set to "--train-max-batch=MAX: RULE".  Values that
 * break their own rule are tidal_option_check's to report: 0. */
int tidal_batch_check(const char *batch, const char *max, char *err,
		      size_t len);

/* Parsers; RET 0 on success, -1 if VALUE breaks the rule. */
int tidal_parse_range(const char *value, int *min, int *max);
int tidal_parse_count(const char *value, double lo, double hi, double *out);

/* A job's Tidal options as sched/tidal reads them from N entries of
 * spank_job_env ("NAME=VALUE"; NULL entries skipped).  A value that
 * breaks its rule is ignored, as if the option were absent: sbatch
 * checked it, so only a job submitted around the SPANK plugin has one. */
typedef struct {
	int min_gpus, max_gpus; /* 0 = not elastic */
	char model[65];		/* "" = none */
	int batch;		/* 0 = none */
	int max_batch;		/* 0 = none, or not above batch */
	double iters;		/* 0 = none */
	int best_effort;
} tidal_env_options_t;
void tidal_env_options(char *const *env, unsigned n,
		       tidal_env_options_t *out);

#ifdef __cplusplus
}
#endif

#endif /* TIDAL_PLUGIN_OPTIONS_H */
