/*
 * test_engine_views.cc - sched/tidal's engine from cycle to cycle
 * (plugin/sched/engine.cc): what tidalctl shows of a job or a node is
 * what this cycle saw and decided, although each cycle reuses the
 * storage of the cycle before last (a job's nodes, reason and decision
 * must not carry over from whichever job had its place then, nor a
 * node's jobs); and the plan's decisions find their jobs' snapshot index
 * and their share arrays (one allocation for all).
 *
 * Linked with the plugin's engine objects (no Slurm in them).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <json.h>
#include <stdlib.h>

#include "plugin/sched/bridge.h"

#include "tests/unit/unit.h"

static char *cs(const char *s) { return const_cast<char *>(s); }

static tidal_node_t nodes[2] = {
	{ cs("n1"), 0, 8, 8, 64, 256000, -1, 1 },
	{ cs("n2"), 1, 8, 8, 64, 256000, -1, 1 },
};

/* Job ID of GPUS GPUs, running on snapshot node NODE (8 there) if
 * NODE >= 0, else pending. */
static tidal_job_t job(uint32_t id, int gpus, int node)
{
	static int alloc_node[2][1] = { { 0 }, { 1 } };
	static int alloc_gpus[1] = { 8 };
	tidal_job_t j = {};
	j.id = id;
	j.uid = 1000;
	j.name = cs("train");
	j.user = cs("alice");
	j.partition = cs("gpu");
	j.state = node >= 0 ? TIDAL_JOB_RUNNING : TIDAL_JOB_PENDING;
	j.submit = 900 + id;
	j.start = node >= 0 ? 950 : 0;
	j.time_limit = 3600;
	j.gpus = gpus;
	j.min_nodes = 1;
	j.shard_node = -1;
	j.shard_gpu = -1;
	if (node >= 0 && gpus > 0) {
		j.n_alloc = 1;
		j.alloc_node = alloc_node[node];
		j.alloc_gpus = alloc_gpus;
	}
	return j;
}

static void decide(double now, std::vector<tidal_job_t> jobs,
		   tidal_plan_t *plan)
{
	tidal_snap_t snap = {};
	snap.now = now;
	snap.share_jobs_per_gpu = 1;
	snap.n_nodes = 2;
	snap.nodes = nodes;
	snap.n_jobs = (int)jobs.size();
	snap.jobs = jobs.data();
	char *msg = nullptr;
	assert_int_equal(tidal_engine_decide(&snap, plan, &msg), 0);
	free(msg);
}

/* Field KEY of tidalctl's record of job ID: "None" where it is empty,
 * "" where job ID has no record. */
static std::string shown(uint32_t id, const char *key)
{
	std::string req = "{\"v\":1,\"op\":\"show\",\"what\":\"job\",\"id\":" +
			  std::to_string(id) + "}";
	char *r = tidal_engine_request(req.c_str(), 0, 1, 0, nullptr);
	assert_non_null(r);
	json_object *o = json_tokener_parse(r), *recs, *v;
	free(r);
	assert_non_null(o);
	std::string out;
	if (json_object_object_get_ex(o, "records", &recs) &&
	    json_object_array_length(recs) == 1 &&
	    json_object_object_get_ex(json_object_array_get_idx(recs, 0), key,
				      &v))
		out = json_object_get_string(v);
	json_object_put(o);
	return out;
}

/* Field KEY of tidalctl's record of node NAME, as shown() does. */
static std::string node_shown(const char *name, const char *key)
{
	char *r = tidal_engine_request(
		"{\"v\":1,\"op\":\"show\",\"what\":\"nodes\"}", 0, 1, 0,
		nullptr);
	assert_non_null(r);
	json_object *o = json_tokener_parse(r), *recs, *v;
	free(r);
	assert_non_null(o);
	std::string out;
	if (json_object_object_get_ex(o, "records", &recs))
		for (size_t i = 0; i < json_object_array_length(recs); i++) {
			json_object *n = json_object_array_get_idx(recs, i);
			if (json_object_object_get_ex(n, "NodeName", &v) &&
			    !strcmp(json_object_get_string(v), name) &&
			    json_object_object_get_ex(n, key, &v))
				out = json_object_get_string(v);
		}
	json_object_put(o);
	return out;
}

static const tidal_decision_t *find(const tidal_plan_t &p, uint32_t id)
{
	for (int i = 0; i < p.n; i++)
		if (p.d[i].job == id)
			return &p.d[i];
	return nullptr;
}

static void test_views_do_not_carry_over(void **)
{
	char *msg = nullptr;
	tidal_engine_shutdown();
	assert_int_equal(tidal_engine_configure("Policy=fifo\n", "tidal.conf",
						&msg),
			 0);
	free(msg);

	/* Cycle 1: job 1 runs on n1; job 2 starts on n2; job 5 (no GPUs)
	 * is started by Slurm's placement. */
	tidal_plan_t p;
	decide(1000, { job(1, 8, 0), job(2, 8, -1), job(5, 0, -1) }, &p);
	const tidal_decision_t *d2 = find(p, 2);
	assert_non_null(d2);
	assert_int_equal(d2->action, TIDAL_START);
	assert_int_equal(d2->snap_index, 1);
	assert_int_equal(d2->n_shares, 1);
	assert_int_equal(d2->share_node[0], 1);
	assert_int_equal(d2->share_gpus[0], 8);
	const tidal_decision_t *d1 = find(p, 1);
	assert_non_null(d1);
	assert_int_equal(d1->snap_index, 0);
	assert_non_null(find(p, 5));
	assert_int_equal(find(p, 5)->snap_index, 2);
	assert_int_equal(find(p, 5)->n_shares, 0);
	tidal_plan_free(&p);
	assert_string_equal(shown(1, "Nodes").c_str(), "n1");
	assert_string_equal(shown(2, "Action").c_str(), "Start");
	std::string reason2 = shown(2, "Reason");
	assert_true(reason2.size() > 0);

	/* Cycle 2: both run. */
	decide(1010, { job(1, 8, 0), job(2, 8, 1) }, &p);
	tidal_plan_free(&p);
	assert_string_equal(shown(2, "Nodes").c_str(), "n2");
	assert_string_equal(node_shown("n2", "Jobs").c_str(), "2:8");
	assert_string_equal(node_shown("n2", "AllocGPUs").c_str(), "8");

	/* Cycle 3 reuses cycle 1's places: job 1 where it was, job 4 (a
	 * running job without GPUs, which no policy decides) where job 2's
	 * Start was, job 6 (pending) where job 5 was. */
	decide(1020, { job(1, 8, 0), job(4, 0, 0), job(6, 16, -1) }, &p);
	assert_int_equal(find(p, 6)->snap_index, 2);
	assert_null(find(p, 4));
	tidal_plan_free(&p);
	assert_string_equal(shown(1, "Nodes").c_str(), "n1");
	assert_string_equal(shown(4, "Nodes").c_str(), "None");
	/* n2's job of cycle 2 is gone; n1 holds job 1 once. */
	assert_string_equal(node_shown("n2", "Jobs").c_str(), "None");
	assert_string_equal(node_shown("n2", "AllocGPUs").c_str(), "0");
	assert_string_equal(node_shown("n1", "Jobs").c_str(), "1:8");
	assert_string_equal(shown(4, "Action").c_str(), "None");
	assert_string_equal(shown(4, "Reason").c_str(), "None");
	assert_string_equal(shown(4, "AllocGPUs").c_str(), "0");
	assert_string_equal(shown(6, "Action").c_str(), "Hold");
	assert_string_equal(shown(6, "State").c_str(), "PENDING");
	assert_string_equal(shown(6, "Nodes").c_str(), "None");
	assert_string_not_equal(shown(6, "Reason").c_str(), reason2.c_str());
	/* Jobs gone from the snapshot are gone from tidalctl. */
	assert_string_equal(shown(2, "JobId").c_str(), "");

	/* Fewer jobs than the views kept, then more again. */
	decide(1030, { job(6, 16, -1) }, &p);
	tidal_plan_free(&p);
	decide(1040, { job(6, 16, -1) }, &p);
	tidal_plan_free(&p);
	assert_string_equal(shown(1, "JobId").c_str(), "");
	decide(1050, { job(7, 8, -1), job(6, 16, -1), job(8, 8, -1) }, &p);
	assert_int_equal(find(p, 8)->snap_index, 2);
	tidal_plan_free(&p);
	/* Job 6, first in line, takes all 16 GPUs. */
	assert_string_equal(shown(6, "Action").c_str(), "Start");
	assert_string_equal(shown(7, "Action").c_str(), "Hold");
	assert_string_equal(shown(8, "Action").c_str(), "Hold");
	assert_string_equal(shown(8, "Nodes").c_str(), "None");
	tidal_engine_shutdown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_views_do_not_carry_over),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
