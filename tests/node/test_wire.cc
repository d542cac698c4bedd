/*
 * test_wire.cc - nodeagent/wire: endpoints, slurm.conf/tidal.conf lookup,
 * the buffered reader (a header line then raw bytes, as ckpt_get sends
 * them) and the JSON helpers, over a real socketpair.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <json.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nodeagent/wire.h"

#include "tests/unit/unit.h"

using namespace tidal::wire;

static void test_endpoint(void **state)
{
	Endpoint e;
	std::string err;
	assert_true(parse_endpoint("10.0.0.1:6830", &e, &err));
	assert_string_equal(e.host.c_str(), "10.0.0.1");
	assert_string_equal(e.port.c_str(), "6830");
	assert_true(parse_endpoint("[::1]:7", &e, &err));
	assert_string_equal(e.host.c_str(), "::1");
	assert_true(parse_endpoint(":0", &e, &err)); /* any address */
	assert_string_equal(e.host.c_str(), "");
	assert_false(parse_endpoint("host", &e, &err));
	assert_non_null(strstr(err.c_str(), "'host' is not HOST:PORT"));
	assert_false(parse_endpoint("h:70000", &e, &err));
	assert_non_null(strstr(err.c_str(), "port '70000' is not 0..65535"));
	for (const char *bad : { "h:-0", "h:+80", "h: 80", "h:0x50", "h:000080" }) {
		assert_false(parse_endpoint(bad, &e, &err));
		assert_non_null(strstr(err.c_str(), "is not 0..65535"));
	}
}

static void test_slurm_side(void **state)
{
	char dir[] = "/tmp/tidal-wire.XXXXXX";
	assert_non_null(mkdtemp(dir));
	std::string d = dir;
	std::ofstream(d + "/slurm.conf")
		<< "# comment SlurmctldHost=no\nSlurmctldHost=ctl1(192.0.2.7)\n"
		   "SlurmctldHost=ctl2\nAuthInfo=socket=/x/munge.sock,ttl=60\n";
	std::ofstream(d + "/tidal.conf") << "Policy=fifo\nctlport=7001\n";
	setenv("SLURM_CONF", (d + "/slurm.conf").c_str(), 1);
	SlurmSide s = read_slurm_side();
	/* The first SlurmctldHost is the primary; its address is used. */
	assert_string_equal(s.plugin.host.c_str(), "192.0.2.7");
	assert_string_equal(s.plugin.port.c_str(), "7001");
	assert_string_equal(s.munge_socket.c_str(), "/x/munge.sock");
	std::ofstream(d + "/tidal.conf") << "CtlHost=ctl9\n";
	s = read_slurm_side();
	assert_string_equal(s.plugin.host.c_str(), "ctl9");
	assert_string_equal(s.plugin.port.c_str(), "6829"); /* default */
	unsetenv("SLURM_CONF");
	assert_int_equal(system(("rm -rf " + d).c_str()), 0);
}

static void test_reader(void **state)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	/* A header line and a body that contains newlines, in one write:
	 * the reader must hand back the body bytes it buffered. */
	std::string body = "ab\ncd\n\x01\x02";
	assert_true(
		write_all(sv[0], "{\"v\":1,\"ok\":true,\"bytes\":8}\n" + body));
	close(sv[0]);
	Reader r(sv[1]);
	std::string line;
	assert_true(r.line(&line, 1000));
	json_object *h = parse_object(line);
	std::string err;
	assert_true(reply_ok(h, &err));
	assert_int_equal(get_int(h, "bytes"), 8);
	json_object_put(h);
	char buf[16];
	std::string got;
	ssize_t n;
	while ((n = r.some(buf, 3, 1000)) > 0)
		got.append(buf, n);
	assert_int_equal(n, 0); /* EOF */
	assert_true(got == body);
	close(sv[1]);
}

static void test_line_limits(void **state)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_true(write_all(sv[0], std::string(100, 'x')));
	Reader r(sv[1]);
	std::string line;
	assert_false(r.line(&line, 1000, 10)); /* longer than MAX */
	Reader r2(sv[1]);
	assert_false(r2.line(&line, 50)); /* no newline: timeout */
	close(sv[0]);
	close(sv[1]);
}

static void test_json(void **state)
{
	std::string err;
	assert_null(parse_object("[1,2]"));
	assert_null(parse_object("garbage"));
	json_object *o =
		parse_object("{\"ok\":false,\"error\":\"no\",\"x\":2.5}");
	assert_false(reply_ok(o, &err));
	assert_string_equal(err.c_str(), "no");
	assert_true(get_num(o, "x") == 2.5);
	assert_string_equal(get_str(o, "missing", "d").c_str(), "d");
	assert_false(reply_ok(nullptr, &err));
	assert_non_null(strstr(err.c_str(), "malformed reply"));
	std::string l = to_line(o);
	assert_true(l.back() == '\n');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_endpoint),
		cmocka_unit_test(test_slurm_side),
		cmocka_unit_test(test_reader),
		cmocka_unit_test(test_line_limits),
		cmocka_unit_test(test_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
