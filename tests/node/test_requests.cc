/*
 * test_requests.cc - what tidald reads off the wire: proto/messages.h's
 * requests and replies, and nodeagent/requests.h's holders.
 * Regression: a "job" that is not a JSON integer (true, 12.5, "12") was
 * read as some number (json-c converts); it is refused now.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <stdlib.h>

#include "nodeagent/requests.h"

#include "tests/unit/unit.h"

using namespace tidal::agent;
using namespace tidal::wire;

static void test_local(void **state)
{
	LocalRequest q;
	std::string err;
	assert_true(decode("{\"v\":1,\"op\":\"hello\"}", &q, &err));
	assert_true(
		decode("{\"v\":1,\"op\":\"fetch\",\"job\":12,\"peer\":\"h:1\","
		       "\"step\":7}",
		       &q, &err));
	assert_int_equal(q.job, 12);
	assert_int_equal(q.step, 7);
	assert_string_equal(q.peer.c_str(), "h:1");
	for (const char *bad : {"true", "12.5", "\"12\"", "0", "-3",
				"4294967296", "null"}) {
		std::string r = std::string("{\"v\":1,\"op\":\"fetch\",\"job\":") +
				bad + "}";
		assert_false(decode(r, &q, &err));
		assert_non_null(strstr(err.c_str(), "must be a job id"));
	}
	assert_false(decode("{\"v\":1,\"op\":\"fetch\",\"job\":1,\"step\":-1}",
			    &q, &err));
	assert_false(decode("{\"v\":2,\"op\":\"hello\"}", &q, &err));
	assert_non_null(strstr(err.c_str(), "wire version 2"));
	assert_false(decode("[]", &q, &err));
}

static void test_peer(void **state)
{
	PeerRequest q;
	std::string err;
	assert_true(
		decode("{\"v\":1,\"op\":\"ckpt_get\",\"job\":12,\"step\":1200}",
		       &q, &err));
	assert_string_equal(q.op.c_str(), "ckpt_get");
	assert_int_equal(q.step, 1200);
	assert_true(
		decode("{\"v\":1,\"op\":\"ckpt_stat\",\"job\":3}", &q, &err));
	assert_false(
		decode("{\"v\":1,\"op\":\"ckpt_get\",\"job\":true}", &q, &err));
	assert_false(
		decode("{\"v\":1,\"op\":\"ckpt_get\",\"job\":12.5}", &q, &err));
	assert_false(
		decode("{\"v\":1,\"op\":\"ckpt_get\",\"job\":1,\"step\":\"2\"}",
		       &q, &err));
	assert_false(decode("not json", &q, &err));
}

static void test_heartbeat_reply(void **state)
{
	HeartbeatReply r;
	assert_true(decode(
		"{\"ok\":true,\"commands\":[{\"id\":3,\"op\":\"checkpoint_stop\","
		"\"job\":12},{\"id\":\"4\",\"op\":\"x\",\"job\":1}],"
		"\"keep\":[{\"job\":12,\"step\":1200},{\"job\":12,\"step\":0}]}",
		&r));
	assert_true(r.ok);
	assert_int_equal(r.commands.size(), 1);
	assert_string_equal(r.commands[0].op.c_str(), "checkpoint_stop");
	assert_int_equal(r.keep.size(), 1);
	assert_int_equal(r.keep[0].second, 1200);
	assert_true(decode(
		"{\"ok\":false,\"error\":\"no\",\"register\":true}", &r));
	assert_false(r.ok);
	assert_true(r.reregister);
	assert_false(decode("x", &r));
}

static void test_where_reply(void **state)
{
	WhereReply w;
	std::string err;
	assert_true(parse_where_reply(
		"{\"ok\":true,\"node\":\"n2\",\"addr\":\"h2:1\",\"step\":9,"
		"\"holders\":[{\"node\":\"n2\",\"addr\":\"h2:1\",\"step\":9},"
		"{\"node\":\"n2\",\"addr\":\"h2:1\",\"step\":9},"
		"{\"node\":\"n1\",\"addr\":\"bad\",\"step\":8}],\"uid\":1000}",
		&w, &err));
	assert_int_equal(w.holders.size(), 2); /* each node once */
	assert_int_equal(w.uid, 1000);
	assert_true(w.holders[0].problem.empty());
	assert_false(w.holders[1].problem.empty());
	assert_false(parse_where_reply("{\"ok\":false,\"error\":\"none\"}", &w,
				       &err));
	assert_string_equal(err.c_str(), "none");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_local),
		cmocka_unit_test(test_peer),
		cmocka_unit_test(test_heartbeat_reply),
		cmocka_unit_test(test_where_reply),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
