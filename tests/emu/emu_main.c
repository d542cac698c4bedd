/*
 * emu_main.c - tidal-emu: run a job file, or benchmark the plugin's cycle.
 * The emulated slurmctld and the job-file format are described in emu.c.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/emu/emu.h"

static void die(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: %s\n", file, line, what);
	exit(2);
}

static void parse_job(char *args, emu_job_spec_t *s, const char *file, int line)
{
	char *save = NULL, *w;
	unsigned id;

	memset(s, 0, sizeof(*s));
	s->batch = 1;
	if (sscanf(args, "%u %d", &id, &s->gpus) != 2 || id == 0 || s->gpus < 0)
		die(file, line, "job ID GPUS [key=value...] expected");
	s->id = id;
	strtok_r(args, " \t", &save);
	strtok_r(NULL, " \t", &save);
	while ((w = strtok_r(NULL, " \t", &save))) {
		if (sscanf(w, "pernode=%d", &s->per_node) == 1 ||
		    sscanf(w, "nodes=%d", &s->nodes) == 1 ||
		    sscanf(w, "deadline=+%lf", &s->deadline) == 1 ||
		    sscanf(w, "limit=%d", &s->limit_min) == 1 ||
		    sscanf(w, "batch=%d", &s->batch) == 1 ||
		    sscanf(w, "elastic=%d-%d", &s->min_gpus, &s->max_gpus) == 2 ||
		    sscanf(w, "train-model=%64s", s->train_model) == 1 ||
		    sscanf(w, "train-batch=%d", &s->train_batch) == 1 ||
		    sscanf(w, "train-iters=%lf", &s->train_iters) == 1)
			continue;
		die(file, line,
		    "unknown job attribute (pernode= nodes= "
		    "elastic=MIN-MAX deadline=+S limit=MIN batch= "
		    "train-model= train-batch= train-iters=)");
	}
}

/* Two passes: "conf" lines first (the engine is configured once), then
 * the commands in order. */
static int run_file(const char *file, const char *state_dir, bool verbose)
{
	FILE *f = fopen(file, "r");
	char buf[1024], *conf = calloc(1, 1);
	size_t conf_len = 0;
	int line = 0, cycle = 0;

	if (!f) {
		perror(file);
		return 2;
	}
	while (fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, "conf ", 5)) {
			conf = realloc(conf, conf_len + strlen(buf) + 1);
			strcpy(conf + conf_len, buf + 5);
			conf_len += strlen(buf + 5);
		}
	emu_init(conf, state_dir, verbose);
	free(conf);
	rewind(f);
	while (fgets(buf, sizeof(buf), f)) {
		char *c = strchr(buf, '#'), cmd[16] = "";
		int a = 0, b = 0, n = 1;
		emu_job_spec_t s;
		line++;
		if (c)
			*c = '\0';
		if (sscanf(buf, "%15s", cmd) != 1 || !strcmp(cmd, "conf"))
			continue;
		if (!strcmp(cmd, "nodes") &&
		    sscanf(buf, "nodes %d %d", &a, &b) == 2 && a > 0 &&
		    b >= 0) {
			emu_nodes(a, b);
		} else if (!strcmp(cmd, "job")) {
			parse_job(buf + 4, &s, file, line);
			emu_job(&s);
		} else if (!strcmp(cmd, "end") &&
			   sscanf(buf, "end %d", &a) == 1) {
			emu_end((uint32_t)a);
		} else if (!strcmp(cmd, "advance") &&
			   sscanf(buf, "advance %d", &a) == 1) {
			emu_advance(a);
		} else if (!strcmp(cmd, "restart")) {
			const char *l = strstr(buf, "lost=");
			emu_restart(strstr(buf, "corrupt") != NULL,
				    strstr(buf, "both") != NULL,
				    l ? (uint32_t)atoi(l + 5) : 0);
		} else if (!strcmp(cmd, "cycle")) {
			sscanf(buf, "cycle %d", &n);
			for (int i = 0; i < n; i++) {
				if (emu_cycle(NULL) < 0)
					return 1;
				emu_advance(1);
			}
			printf("-- cycle %d\n", cycle += n);
			emu_print(stdout);
		} else {
			die(file, line,
			    "unknown command (nodes, conf, job, "
			    "cycle, end, advance, restart)");
		}
	}
	fclose(f);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
	qsort(v, n, sizeof(*v), cmp_double);
	int i = (int)(p / 100 * (n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

/* A deterministic job mix: sizes 1, 2, 4, 8 and 16 GPUs. */
static int bench(int jobs, int nodes, int cycles, const char *policy,
		 const char *state_dir)
{
	static const int sizes[] = { 1, 2, 4, 8, 8, 16, 1, 2 };
	unsigned seed = 12345;
	char conf[256];
	double *hold = calloc(cycles, sizeof(double));
	double *decide = calloc(cycles, sizeof(double));
	double *hold_cpu = calloc(cycles, sizeof(double));
	double *decide_cpu = calloc(cycles, sizeof(double));
	double *section_cpu = calloc(cycles, sizeof(double));
	double *unlocked_cpu = calloc(cycles, sizeof(double));
	double *own_cpu = calloc(cycles, sizeof(double));
	emu_times_t t;
	int n = 0;

	snprintf(conf, sizeof(conf), "Policy=%s\nCycleInterval=1\n", policy);
	emu_init(conf, state_dir, false);
	emu_nodes(nodes, 8);
	for (int i = 1; i <= jobs; i++) {
		emu_job_spec_t s = { 0 };
		seed = seed * 1103515245u + 12345u;
		s.id = i;
		s.gpus = sizes[(seed >> 16) % 8];
		if (s.gpus == 16) {
			s.per_node = 8;
			s.nodes = 2;
		}
		if ((seed >> 8) % 4 == 0)
			s.deadline = 3600 + (seed >> 4) % 86400;
		s.limit_min = 60 + (seed >> 12) % 600;
		s.batch = 1;
		emu_job(&s);
	}
	/* Cycle 0 starts the first jobs and fills the cluster; it is not
	 * counted (it starts thousands of jobs at once). */
	emu_cycle(&t);
	for (int c = 0; c < cycles; c++) {
		emu_advance(10);
		for (int i = 0; i < jobs / 100; i++) { /* 1% end */
			seed = seed * 1103515245u + 12345u;
			emu_end(1 + (seed >> 8) % jobs);
		}
		int started = emu_cycle(&t);
		if (started < 0)
			return 1;
		hold[n] = t.snapshot_ms + t.apply_ms;
		hold_cpu[n] = t.hold_cpu_ms;
		decide_cpu[n] = t.decide_cpu_ms;
		section_cpu[n] = t.hold_max_cpu_ms;
		unlocked_cpu[n] = t.unlocked_cpu_ms;
		own_cpu[n] = t.hold_cpu_ms - t.slurm_cpu_ms;
		decide[n++] = t.decide_ms;
	}
	printf("%-12s %6d %5d %6d | %8.3f %8.3f %8.3f | %8.3f %8.3f %8.3f "
	       "%8.3f %8.3f | %8.3f %8.3f %8.3f | %8.3f\n",
	       policy, jobs, nodes, t.jobs, pct(hold, n, 50), pct(hold, n, 99),
	       pct(decide, n, 99), pct(hold_cpu, n, 50), pct(hold_cpu, n, 99),
	       pct(section_cpu, n, 99), pct(own_cpu, n, 50), pct(own_cpu, n, 99),
	       pct(decide_cpu, n, 50),
	       pct(decide_cpu, n, 99), pct(decide_cpu, n, 100),
	       pct(unlocked_cpu, n, 50));
	return 0;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/tidal-emu.XXXXXX";
	bool verbose = false;
	int rc;

	if (argc > 1 && !strcmp(argv[1], "-v")) {
		verbose = true;
		argv++;
		argc--;
	}
	if (argc < 2 || !mkdtemp(dir)) {
		fprintf(stderr, "usage: tidal-emu [-v] JOBFILE\n"
				"       tidal-emu --bench JOBS NODES CYCLES "
				"[POLICY]\n");
		return 2;
	}
	if (!strcmp(argv[1], "--bench") && argc >= 5)
		rc = bench(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]),
			   argc > 5 ? argv[5] : "fifo", dir);
	else
		rc = run_file(argv[1], dir, verbose);
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		rc = rc ? rc : 1;
	return rc;
}
