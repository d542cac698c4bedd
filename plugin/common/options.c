/*
 * options.c - rules for Tidal's job options (see options.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "plugin/common/options.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off */
const tidal_option_t tidal_options[TIDAL_OPT_COUNT + 1] = {
	[TIDAL_OPT_ELASTIC_GPUS] = {"elastic-gpus", "TIDAL_ELASTIC_GPUS",
		"MIN-MAX",
		"Tidal: run on any GPU count from MIN to MAX; the scheduler "
		"resizes the job (checkpoint and restart) within the range", 1},
	[TIDAL_OPT_TRAIN_MODEL] = {"train-model", "TIDAL_TRAIN_MODEL", "NAME",
		"Tidal: model name, the key of its throughput profile", 1},
	[TIDAL_OPT_TRAIN_BATCH] = {"train-batch", "TIDAL_TRAIN_BATCH", "N",
		"Tidal: global batch size", 1},
	[TIDAL_OPT_TRAIN_ITERS] = {"train-iters", "TIDAL_TRAIN_ITERS", "N",
		"Tidal: total work in iterations", 1},
	[TIDAL_OPT_BEST_EFFORT] = {"best-effort", "TIDAL_BEST_EFFORT", NULL,
		"Tidal: run only on GPUs no other job wants; may be preempted",
		0},
	[TIDAL_OPT_TRAIN_MAX_BATCH] = {"train-max-batch",
		"TIDAL_TRAIN_MAX_BATCH", "N",
		"Tidal: largest global batch an adaptive policy (pollux) may "
		"train at; --train-batch is where it starts", 1},
	[TIDAL_OPT_COUNT] = {NULL, NULL, NULL, NULL, 0},
};
/* clang-format on */

const char *tidal_option_env_value(const char *entry, int opt)
{
	const char *env = tidal_options[opt].env;
	size_t n = strlen(env);

	return !strncmp(entry, env, n) && entry[n] == '=' ? entry + n + 1
							  : NULL;
}

/* Strict decimal integer: digits only, no sign, no spaces. */
static int _parse_int(const char *s, const char **end, double *out)
{
	char *e = NULL;
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	double v = strtod(s, &e);
	if (errno || !isfinite(v) || v != floor(v))
		return -1;
	for (const char *p = s; p < e; p++)
		if (!isdigit((unsigned char)*p))
			return -1;
	*end = e;
	*out = v;
	return 0;
}

int tidal_parse_count(const char *value, double lo, double hi, double *out)
{
	const char *end;
	double v;
	if (!value || _parse_int(value, &end, &v) || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int tidal_parse_range(const char *value, int *min, int *max)
{
	const char *end;
	double a, b;
	if (!value || _parse_int(value, &end, &a) || *end != '-' ||
	    _parse_int(end + 1, &end, &b) || *end)
		return -1;
	if (a < 1 || a > b || b > TIDAL_MAX_GPUS)
		return -1;
	*min = (int)a;
	*max = (int)b;
	return 0;
}

static int _model_ok(const char *v)
{
	size_t n = v ? strlen(v) : 0;
	if (n < 1 || n > 64)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)v[i]) && !strchr("._-", v[i]))
			return 0;
	return 1;
}

int tidal_option_check(const char *name, const char *value, char *err,
		       size_t len)
{
	const char *rule = NULL;
	int lo, hi;
	double d;

	if (!strcmp(name, "elastic-gpus")) {
		if (tidal_parse_range(value, &lo, &hi))
			rule = "must be MIN-MAX with integers "
			       "1 <= MIN <= MAX <= 4096";
	} else if (!strcmp(name, "train-model")) {
		if (!_model_ok(value))
			rule = "must be 1 to 64 characters of A-Z a-z 0-9 . _ -";
	} else if (!strcmp(name, "train-batch") ||
		   !strcmp(name, "train-max-batch")) {
		if (tidal_parse_count(value, 1, 1e9, &d))
			rule = "must be an integer in [1, 1000000000]";
	} else if (!strcmp(name, "train-iters")) {
		if (tidal_parse_count(value, 1, 1e15, &d))
			rule = "must be an integer in [1, 1000000000000000]";
	} else if (!strcmp(name, "best-effort")) {
		rule = NULL;
	} else {
		rule = "is not a Tidal option";
	}
	if (!rule)
		return 0;
	snprintf(err, len, "--%s=%s: %s", name, value ? value : "", rule);
	return -1;
}

int tidal_batch_check(const char *batch, const char *max, char *err, size_t len)
{
	double b, m;

	if (!max || tidal_parse_count(max, 1, 1e9, &m))
		return 0;
	if (!batch) {
		snprintf(err, len,
			 "--train-max-batch=%s: needs --train-batch=N, the "
			 "global batch the job starts at (and its learning "
			 "rate is set for)",
			 max);
		return -1;
	}
	if (tidal_parse_count(batch, 1, 1e9, &b) || b <= m)
		return 0;
	snprintf(err, len,
		 "--train-max-batch=%s: is below --train-batch=%s; it must be "
		 "at least the batch the job starts at",
		 max, batch);
	return -1;
}

int tidal_elastic_check(int min, int max, int gpus, const char *how,
			int cluster, char *err, size_t len)
{
	if (gpus == 0) {
		snprintf(err, len,
			 "--elastic-gpus=%d-%d: the job asks for no GPUs; give "
			 "the size it starts at with --gpus=N, %d <= N <= %d",
			 min, max, min, max);
		return -1;
	}
	if (gpus > 0 && (gpus < min || gpus > max)) {
		snprintf(err, len,
			 "--elastic-gpus=%d-%d: the job asks for %d GPUs%s%s%s, "
			 "outside the range; its GPU request must be from MIN "
			 "to MAX",
			 min, max, gpus, how ? " (" : "", how ? how : "",
			 how ? ")" : "");
		return -1;
	}
	if (cluster > 0 && max > cluster) {
		snprintf(err, len,
			 "--elastic-gpus=%d-%d: MAX is more than the %d GPUs of "
			 "the cluster; MAX must be at most %d",
			 min, max, cluster, cluster);
		return -1;
	}
	return 0;
}

void tidal_env_options(char *const *env, unsigned n, tidal_env_options_t *out)
{
	double d;

	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; env && i < n; i++) {
		const char *e = env[i], *v;
		if (!e || strncmp(e, "TIDAL_", 6))
			continue;
		if ((v = tidal_option_env_value(e, TIDAL_OPT_ELASTIC_GPUS))) {
			if (tidal_parse_range(v, &out->min_gpus, &out->max_gpus))
				out->min_gpus = out->max_gpus = 0;
		} else if ((v = tidal_option_env_value(e,
							TIDAL_OPT_TRAIN_MODEL))) {
			if (_model_ok(v))
				snprintf(out->model, sizeof(out->model), "%s",
					 v);
		} else if ((v = tidal_option_env_value(e,
							TIDAL_OPT_TRAIN_BATCH))) {
			if (!tidal_parse_count(v, 1, 1e9, &d))
				out->batch = (int)d;
		} else if ((v = tidal_option_env_value(
				    e, TIDAL_OPT_TRAIN_MAX_BATCH))) {
			if (!tidal_parse_count(v, 1, 1e9, &d))
				out->max_batch = (int)d;
		} else if ((v = tidal_option_env_value(
				    e, TIDAL_OPT_TRAIN_ITERS))) {
			if (!tidal_parse_count(v, 1, 1e15, &d))
				out->iters = d;
		} else if (tidal_option_env_value(e, TIDAL_OPT_BEST_EFFORT)) {
			out->best_effort = 1;
		}
	}
	if (out->max_batch <= out->batch)
		out->max_batch = 0;
}
