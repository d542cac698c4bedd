/*
 * test_agents_state.cc - sched/tidal's agent registry (plugin/sched/
 * agents/): what node agents send must not break the state lines it
 * saves, and the lines must load back the same.  Regressions found by
 * tests/fuzz (plugin-wire, state):
 *
 *   - a node name with a space was saved as two words
 *   - a newline in a checkpoint path added a line to the state file
 *   - an address and path were cut at 256 bytes of the line
 *   - a saved time past LONG_MAX was converted back from double (UB)
 *   - the job's newest checkpoint kept a stale path when its node
 *     reported the same step at another path
 *
 * Also: an ack that a resize waits for calls the registered wake-up, and
 * a heartbeat's "held" copies are holders; the engine's job lines (its
 * numbers in to_chars' shortest text) read back as the same doubles.
 *
 * Linked with the plugin's engine objects (no Slurm in them).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <json.h>
#include <stdlib.h>

#include "plugin/sched/bridge.h"

#include "tests/unit/unit.h"

static std::string ask(const std::string &req)
{
	char *r = tidal_agent_request(req.c_str(), 0, 1, "192.0.2.9",
				      nullptr);
	assert_non_null(r);
	std::string s = r;
	free(r);
	return s;
}

static std::string reg(const std::string &node, const std::string &addr)
{
	return ask("{\"version\":1,\"op\":\"node_register\",\"node\":\"" +
		   node + "\",\"addr\":\"" + addr + "\"}");
}

static std::string beat(const std::string &node, const std::string &path)
{
	return ask("{\"version\":1,\"op\":\"node_heartbeat\",\"node\":\"" +
		   node + "\",\"jobs\":[{\"job\":10,\"last_ckpt\":{\"step\":5,"
			  "\"path\":\"" + path + "\"}}]}");
}

static std::string dump()
{
	char *d = tidal_agent_state_dump();
	assert_non_null(d);
	std::string s = d;
	free(d);
	return s;
}

/* Dump, forget, load the lines back: the same dump. */
static void round_trip(const std::string &first)
{
	tidal_agent_clear();
	std::istringstream in(first);
	std::string l;
	while (std::getline(in, l))
		assert_int_equal(tidal_agent_state_line(l.c_str()), 1);
	assert_string_equal(dump().c_str(), first.c_str());
}

static void test_node_name_with_space(void **state)
{
	tidal_agent_clear();
	std::string r = reg("n 1", "10.0.0.1:6830");
	assert_non_null(strstr(r.c_str(), "\"ok\":false"));
	assert_non_null(strstr(r.c_str(), "no spaces"));
}

/* Counts are JSON integers in range: json-c alone would read "10", 10.5,
 * true or -1 as a job id, and 2^32 + 10 would wrap to 10. */
static void test_counts_are_integers(void **state)
{
	tidal_agent_clear();
	assert_non_null(strstr(reg("n1", "10.0.0.1:6830").c_str(), "true"));
	for (const char *job : { "\"10\"", "10.5", "true", "-1", "4294967306" }) {
		std::string r = ask(std::string("{\"version\":1,\"op\":"
						"\"node_ack\",\"node\":\"n1\","
						"\"id\":1,\"ok\":true,\"job\":") +
				    job + ",\"step\":5,\"path\":\"/c.tck\"}");
		assert_non_null(strstr(r.c_str(), "\"ok\":false"));
		assert_non_null(strstr(r.c_str(), "job\\\" must be an integer"));
	}
	std::string r = ask("{\"version\":1,\"op\":\"ckpt_where\",\"job\":10,"
			    "\"step\":\"5\"}");
	assert_non_null(strstr(r.c_str(), "step\\\" must be an integer"));
	/* Nothing of those was recorded. */
	assert_null(strstr(dump().c_str(), "ckpt 10 "));
}

static void test_path_with_newline(void **state)
{
	tidal_agent_clear();
	assert_non_null(strstr(reg("n1", "10.0.0.1:6830").c_str(), "true"));
	beat("n1", "/ckpt/a.tck\\nresize 10 8 1 0 0 1700000100 1");
	std::string d = dump();
	assert_null(strstr(d.c_str(), "resize"));
	assert_null(strstr(d.c_str(), "ckpt 10"));
	round_trip(d);
}

static void test_long_address_and_path(void **state)
{
	tidal_agent_clear();
	std::string addr(300, 'a');
	assert_non_null(strstr(reg("n1", addr + ":6830").c_str(),
			       "\"ok\":false"));
	std::string host(250, 'h'), path = "/" + std::string(400, 'p');
	assert_non_null(strstr(reg("n1", host + ":6830").c_str(), "true"));
	beat("n1", path);
	std::string d = dump();
	assert_non_null(strstr(d.c_str(), (path + "\n").c_str()));
	round_trip(d);
}

static void test_time_overflow(void **state)
{
	tidal_agent_clear();
	/* sscanf's %ld saturates; the time went through a double, whose
	 * LONG_MAX is 2^63, and back to long: undefined. */
	assert_int_equal(tidal_agent_state_line(
				 "ckpt 10 5 99999999999999999999 n1 - /c/a.tck"),
			 1);
	assert_int_equal(tidal_agent_state_line(
				 "agentcmd 1 10 99999999999999999999 n1 "
				 "checkpoint_stop"),
			 1);
	round_trip(dump());
}

static void test_same_step_new_path(void **state)
{
	tidal_agent_clear();
	reg("n1", "10.0.0.1:6830");
	beat("n1", "/ckpt/old.tck");
	beat("n1", "/ckpt/new.tck");
	std::string w = ask("{\"version\":1,\"op\":\"ckpt_where\",\"job\":10}");
	assert_non_null(strstr(w.c_str(), "/ckpt/new.tck"));
	round_trip(dump());
	w = ask("{\"version\":1,\"op\":\"ckpt_where\",\"job\":10}");
	assert_non_null(strstr(w.c_str(), "/ckpt/new.tck"));
}

/* A copy a node fetched of a job that runs elsewhere ("held"): named by
 * ckpt_where beside the job's own node, and kept across a state reload,
 * so that a fetch finds it once the job's own nodes are gone. */
static void test_held_copy_is_a_holder(void **state)
{
	tidal_agent_clear();
	reg("n1", "10.0.0.1:6830");
	reg("n3", "10.0.0.3:6830");
	beat("n3", "/ckpt/n3.tck"); /* job 10's own node: step 5 */
	std::string r = ask("{\"v\":1,\"op\":\"node_heartbeat\",\"node\":"
			    "\"n1\",\"jobs\":[],\"held\":[{\"job\":10,"
			    "\"step\":4,\"path\":\"/ckpt/n1.tck\"},{\"job\":0,"
			    "\"step\":4,\"path\":\"/x\"},{\"job\":11,\"step\":0,"
			    "\"path\":\"/y\"},{\"job\":12,\"step\":3,\"path\":"
			    "\"rel.tck\"}]}");
	assert_non_null(strstr(r.c_str(), "\"ok\":true"));
	std::string w = ask("{\"v\":1,\"op\":\"ckpt_where\",\"job\":10}");
	/* The newest stays n3's; n1 is a holder of the older step. */
	assert_non_null(strstr(w.c_str(), "\"node\":\"n3\""));
	assert_non_null(strstr(w.c_str(), "{\"node\":\"n1\",\"addr\":"
					  "\"10.0.0.1:6830\",\"step\":4"));
	/* The malformed entries left nothing: no job 11, no relative path. */
	std::string d = dump();
	assert_null(strstr(d.c_str(), "ckpt 11 "));
	assert_null(strstr(d.c_str(), "rel.tck"));
	assert_non_null(strstr(d.c_str(), "/ckpt/n1.tck"));
	round_trip(d);
	w = ask("{\"v\":1,\"op\":\"ckpt_where\",\"job\":10}");
	assert_non_null(strstr(w.c_str(), "\"node\":\"n1\""));
}

static int wakes;
static void wake()
{
	wakes++;
}

/* An ack that a resize waits for wakes the scheduling thread through
 * the callback it registered, once; an ack nobody waits for does not. */
static void test_awaited_ack_wakes(void **state)
{
	tidal_agent_clear();
	wakes = 0;
	tidal_agent_on_awaited_ack(wake);
	reg("n1", "10.0.0.1:6830");
	uint64_t id = tidal_agent_command("n1", "checkpoint_stop", 10, 1.0);
	assert_true(id > 0);
	std::string a = ask("{\"v\":1,\"op\":\"node_ack\",\"node\":\"n1\","
			    "\"id\":" +
			    std::to_string(id + 7) +
			    ",\"ok\":true,\"job\":10,\"step\":3,"
			    "\"path\":\"/ckpt/a.tck\"}");
	assert_non_null(strstr(a.c_str(), "\"ok\":true"));
	assert_int_equal(wakes, 0); /* nobody waits for that id */
	ask("{\"v\":1,\"op\":\"node_ack\",\"node\":\"n1\",\"id\":" +
	    std::to_string(id) +
	    ",\"ok\":true,\"job\":10,\"step\":4,"
	    "\"path\":\"/ckpt/b.tck\"}");
	assert_int_equal(wakes, 1);
	ask("{\"v\":1,\"op\":\"ckpt_where\",\"job\":10}");
	assert_int_equal(wakes, 1); /* once per ack */
	tidal_agent_on_awaited_ack(nullptr);
	uint64_t id2 = tidal_agent_command("n1", "checkpoint", 10, 2.0);
	ask("{\"v\":1,\"op\":\"node_ack\",\"node\":\"n1\",\"id\":" +
	    std::to_string(id2) +
	    ",\"ok\":true,\"job\":10,\"step\":5,"
	    "\"path\":\"/ckpt/c.tck\"}");
	assert_int_equal(wakes, 1); /* nobody registered */
}

/* The engine's per-job lines: each number the shortest text that reads
 * back as the same double (not %.17g's 0.10000000000000001), so that a
 * dump, read back, dumps the same bytes. */
static void test_memo_lines_round_trip(void **state)
{
	(void)state;
	const char *in[] = {
		"memo 7 3 0.1 1e-300 86399.99999999999 1796676037.123456 8 "
		"1796676099.75",
		"memo 4294967295 18446744073709551615 1796676000 0 0 0 0 "
		"1796676000",
	};
	for (const char *l : in)
		assert_int_equal(tidal_engine_state_line(l), 1);
	char *d = tidal_engine_state_dump(1);
	assert_non_null(d);
	std::string text = d;
	free(d);
	for (const char *l : in)
		assert_non_null(strstr(text.c_str(),
				       (std::string(l) + "\n").c_str()));
	/* Read back and dumped again: the same bytes. */
	size_t at = 0, nl;
	while ((nl = text.find('\n', at)) != std::string::npos) {
		assert_int_equal(tidal_engine_state_line(
					 text.substr(at, nl - at).c_str()),
				 1);
		at = nl + 1;
	}
	d = tidal_engine_state_dump(1);
	assert_non_null(d);
	assert_string_equal(d, text.c_str());
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_name_with_space),
		cmocka_unit_test(test_counts_are_integers),
		cmocka_unit_test(test_path_with_newline),
		cmocka_unit_test(test_long_address_and_path),
		cmocka_unit_test(test_time_overflow),
		cmocka_unit_test(test_same_step_new_path),
		cmocka_unit_test(test_held_copy_is_a_holder),
		cmocka_unit_test(test_awaited_ack_wakes),
		cmocka_unit_test(test_memo_lines_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
