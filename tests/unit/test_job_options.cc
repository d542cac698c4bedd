/*
 * test_job_options.cc - plugin/common/options.c: the table is indexed by
 * its TIDAL_OPT_* names, and sched/tidal reads each option's variable out
 * of spank_job_env by the table's name for it (a job's options as the
 * SPANK plugin set them), ignoring look-alike names and bad values.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cstring>

#include "plugin/common/options.h"

#include "tests/unit/unit.h"

static void test_table_by_name(void **state)
{
	assert_string_equal(tidal_options[TIDAL_OPT_ELASTIC_GPUS].name,
			    "elastic-gpus");
	assert_string_equal(tidal_options[TIDAL_OPT_ELASTIC_GPUS].env,
			    "TIDAL_ELASTIC_GPUS");
	assert_string_equal(tidal_options[TIDAL_OPT_BEST_EFFORT].env,
			    "TIDAL_BEST_EFFORT");
	assert_int_equal(tidal_options[TIDAL_OPT_BEST_EFFORT].has_arg, 0);
	for (int i = 0; i < TIDAL_OPT_COUNT; i++)
		assert_non_null(tidal_options[i].name);
	assert_null(tidal_options[TIDAL_OPT_COUNT].name);
}

static void test_env_value(void **state)
{
	assert_string_equal(tidal_option_env_value("TIDAL_TRAIN_BATCH=64",
						   TIDAL_OPT_TRAIN_BATCH),
			    "64");
	assert_null(tidal_option_env_value("TIDAL_TRAIN_BATCHES=64",
					   TIDAL_OPT_TRAIN_BATCH));
	assert_null(tidal_option_env_value("TIDAL_TRAIN_BATCH",
					   TIDAL_OPT_TRAIN_BATCH));
	assert_null(tidal_option_env_value("TIDAL_TRAIN_ITERS=5",
					   TIDAL_OPT_TRAIN_BATCH));
}

static void test_env_options(void **state)
{
	char e1[] = "TIDAL_ELASTIC_GPUS=2-8", e2[] = "TIDAL_TRAIN_MODEL=resnet",
	     e3[] = "TIDAL_TRAIN_BATCH=256", e4[] = "TIDAL_TRAIN_ITERS=1000",
	     e5[] = "TIDAL_BEST_EFFORT=1", e6[] = "TIDAL_ELASTIC_GPUSX=1-2",
	     e7[] = "OTHER=1";
	char *env[] = { e1, e2, nullptr, e3, e4, e5, e6, e7 };
	tidal_env_options_t o;
	tidal_env_options(env, 8, &o);
	assert_int_equal(o.min_gpus, 2);
	assert_int_equal(o.max_gpus, 8);
	assert_string_equal(o.model, "resnet");
	assert_int_equal(o.batch, 256);
	assert_true(o.iters == 1000);
	assert_int_equal(o.best_effort, 1);

	/* Values that break their rule are ignored, as if absent. */
	char b1[] = "TIDAL_ELASTIC_GPUS=8-2", b2[] = "TIDAL_TRAIN_BATCH=0",
	     b3[] = "TIDAL_TRAIN_MODEL=a b";
	char *bad[] = { b1, b2, b3 };
	tidal_env_options(bad, 3, &o);
	assert_int_equal(o.min_gpus, 0);
	assert_int_equal(o.max_gpus, 0);
	assert_int_equal(o.batch, 0);
	assert_string_equal(o.model, "");
	tidal_env_options(nullptr, 0, &o);
	assert_int_equal(o.best_effort, 0);

	/* --train-max-batch: read beside --train-batch; not above it is
	 * no range at all. */
	char m1[] = "TIDAL_TRAIN_MAX_BATCH=1024", m2[] = "TIDAL_TRAIN_BATCH=64";
	char *adaptive[] = { m1, m2 };
	tidal_env_options(adaptive, 2, &o);
	assert_int_equal(o.batch, 64);
	assert_int_equal(o.max_batch, 1024);
	char m3[] = "TIDAL_TRAIN_MAX_BATCH=32";
	char *below[] = { m3, m2 };
	tidal_env_options(below, 2, &o);
	assert_int_equal(o.max_batch, 0);
}

/* --train-max-batch against --train-batch, as sbatch checks them. */
static void test_batch_check(void **state)
{
	char err[320];
	assert_int_equal(tidal_batch_check("64", "1024", err, sizeof err), 0);
	assert_int_equal(tidal_batch_check("64", "64", err, sizeof err), 0);
	assert_int_equal(tidal_batch_check(nullptr, nullptr, err, sizeof err),
			 0);
	assert_int_equal(tidal_batch_check("64", nullptr, err, sizeof err), 0);
	assert_int_equal(tidal_batch_check(nullptr, "1024", err, sizeof err),
			 -1);
	assert_string_equal(err,
			    "--train-max-batch=1024: needs "
			    "--train-batch=N, the global batch the job "
			    "starts at (and its learning rate is set for)");
	assert_int_equal(tidal_batch_check("256", "128", err, sizeof err), -1);
	assert_string_equal(err, "--train-max-batch=128: is below "
				 "--train-batch=256; it must be at least the "
				 "batch the job starts at");
	char rule[320];
	assert_int_equal(
		tidal_option_check("train-max-batch", "0", rule, sizeof rule),
		-1);
	assert_string_equal(rule, "--train-max-batch=0: must be an integer "
				  "in [1, 1000000000]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_by_name),
		cmocka_unit_test(test_env_value),
		cmocka_unit_test(test_env_options),
		cmocka_unit_test(test_batch_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
