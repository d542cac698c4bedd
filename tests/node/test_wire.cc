/*
 * test_wire.cc - proto/: endpoints, slurm.conf/tidal.conf lookup, the
 * buffered reader (a header line then raw bytes, as ckpt_get sends them),
 * the envelope and the JSON access, and the C entry points sched/tidal's
 * listener reads requests with, over a real socketpair.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <json.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/messages.h"
#include "proto/wire.h"
#include "proto/wire_c.h"

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

static std::string line_of(json_object *o)
{
	std::string l = to_line(o);
	l.pop_back();
	return l;
}

static void test_envelope(void **state)
{
	json_object *o = parse_object("{\"v\":1}");
	assert_int_equal(version_of(o), 1);
	json_object_put(o);
	o = parse_object("{\"version\":1}"); /* the older key */
	assert_int_equal(version_of(o), 1);
	json_object_put(o);
	o = parse_object("{\"v\":\"1\",\"version\":true}");
	assert_int_equal(version_of(o), 0);
	json_object_put(o);
	assert_int_equal(version_of(nullptr), 0);
	assert_string_equal(line_of(new_message("ping")).c_str(),
			    "{\"v\":1,\"op\":\"ping\"}");
	assert_string_equal(line_of(ok_reply()).c_str(),
			    "{\"v\":1,\"ok\":true}");
	assert_string_equal(
		error_reply("a/b \"q\"").c_str(),
		"{\"v\":1,\"ok\":false,\"error\":\"a/b \\\"q\\\"\"}");
}

static void test_typed_access(void **state)
{
	json_object *o = parse_object("{\"s\":\"x\",\"i\":12,\"q\":\"12\","
				      "\"d\":2.5,\"b\":true,\"n\":null}");
	/* lenient, as json-c is */
	assert_string_equal(get_str(o, "i").c_str(), "12");
	assert_int_equal(get_int(o, "q"), 12);
	/* strict: the type or the default */
	assert_string_equal(get_string(o, "s").c_str(), "x");
	assert_string_equal(get_string(o, "i", "d").c_str(), "d");
	assert_string_equal(get_string(o, "n", "d").c_str(), "d");
	assert_int_equal(get_integer(o, "i"), 12);
	assert_int_equal(get_integer(o, "q", -1), -1);
	assert_int_equal(get_integer(o, "d", -1), -1);
	assert_int_equal(get_integer(o, "b", -1), -1);
	bool present = false;
	assert_true(get_number(o, "d", 0, &present) == 2.5 && present);
	assert_true(get_number(o, "i", 0, &present) == 12 && present);
	assert_true(get_number(o, "q", 7, &present) == 7 && !present);
	assert_true(get_number(o, "missing", 7, &present) == 7 && !present);
	assert_int_equal(get_integer(nullptr, "i", 3), 3);
	json_object_put(o);
}

static void test_authinfo(void **state)
{
	assert_string_equal(authinfo_socket("socket=/x/m.sock,ttl=60").c_str(),
			    "/x/m.sock");
	assert_string_equal(authinfo_socket("ttl=60,SOCKET=/y").c_str(), "/y");
	assert_string_equal(authinfo_socket("ttl=60").c_str(), "");
	assert_string_equal(authinfo_socket("").c_str(), "");
	char *c = tidal_wire_authinfo_socket("cred_expire=5,socket=/z");
	assert_string_equal(c, "/z");
	free(c);
	assert_null(tidal_wire_authinfo_socket(NULL));
	assert_null(tidal_wire_authinfo_socket("ttl=60"));
}

/* What sched/tidal's listener does with a peer that sends S and closes. */
static int read_after(const char *s, char **req, char **err)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(tidal_wire_write(sv[0], s), 0);
	shutdown(sv[0], SHUT_WR);
	uid_t uid;
	int rc = tidal_wire_read_request(sv[1], nullptr, 200, req, &uid, err);
	char peer[64] = "x";
	tidal_wire_peer_host(sv[1], peer, sizeof(peer));
	assert_string_equal(peer, ""); /* a unix socket has no host */
	close(sv[0]);
	close(sv[1]);
	return rc;
}

static void test_c_listener(void **state)
{
	char *req = nullptr, *err = nullptr;
	assert_int_equal(read_after("only one line\n", &req, &err), -1);
	assert_null(req);
	assert_string_equal(err, "expected a MUNGE credential line and a "
				 "request line");
	free(err);
	/* No munged needed to refuse a forged credential: decoding fails
	 * either way, and the reason is MUNGE's. */
	assert_int_equal(read_after("MUNGE:forged:\n{\"v\":1}\n", &req, &err),
			 -1);
	assert_null(req);
	assert_non_null(strstr(err, "MUNGE credential rejected: "));
	free(err);
	char *r = tidal_wire_error_reply("busy");
	assert_string_equal(r, "{\"v\":1,\"ok\":false,\"error\":\"busy\"}\n");
	free(r);
}

/* The plugin encodes node_heartbeat's reply, tidald decodes it. */
static void test_heartbeat_reply_round_trip(void **state)
{
	HeartbeatReply m;
	m.ok = true;
	m.commands = { { 7, "checkpoint_stop", 12 }, { 8, "checkpoint", 13 } };
	m.keep = { { 12, 3000 } };
	std::string line = encode(m);
	assert_string_equal(
		line.c_str(),
		"{\"v\":1,\"ok\":true,\"commands\":[{\"id\":7,\"op\":"
		"\"checkpoint_stop\",\"job\":12},{\"id\":8,\"op\":"
		"\"checkpoint\",\"job\":13}],\"keep\":[{\"job\":12,"
		"\"step\":3000}]}\n");
	HeartbeatReply back;
	assert_true(decode(line, &back));
	assert_true(back.ok);
	assert_int_equal(back.commands.size(), 2);
	assert_int_equal(back.commands[1].id, 8);
	assert_string_equal(back.commands[1].op.c_str(), "checkpoint");
	assert_int_equal(back.commands[1].job, 13);
	assert_true(back.keep == m.keep);

	HeartbeatReply no;
	no.error = "node n9 is not registered";
	no.reregister = true;
	assert_true(decode(encode(no), &back));
	assert_false(back.ok);
	assert_true(back.reregister);
	assert_string_equal(back.error.c_str(), "node n9 is not registered");
	assert_true(back.commands.empty() && back.keep.empty());
	/* Entries outside the schema are dropped, not misread. */
	assert_true(decode("{\"v\":1,\"ok\":true,\"commands\":[{\"id\":0,"
			   "\"op\":\"x\",\"job\":1},{\"id\":1,\"op\":\"x\","
			   "\"job\":4294967296}],\"keep\":[{\"job\":1,"
			   "\"step\":\"5\"}]}",
			   &back));
	assert_true(back.ok && back.commands.empty() && back.keep.empty());
	assert_false(decode("[]", &back));
}

/* decode(encode(M)) == M, and encode of that is the same line. */
template <typename T> static void round_trip(const T &m)
{
	std::string line = encode(m), err;
	assert_true(line.size() > 1 && line.back() == '\n');
	T back;
	json_object *o = parse_object(line);
	assert_non_null(o);
	assert_int_equal(version_of(o), TIDAL_WIRE_VERSION);
	bool ok;
	if constexpr (requires { decode(o, &back, uint64_t(0), &err); })
		ok = decode(o, &back, uint64_t(0), &err);
	else if constexpr (requires { decode(o, &back, &err); })
		ok = decode(o, &back, &err);
	else if constexpr (requires { decode(line, &back, &err); })
		ok = decode(line, &back, &err);
	else
		ok = decode(line, &back);
	json_object_put(o);
	if (!ok)
		fail_msg("%s: %s", line.c_str(), err.c_str());
	assert_true(back == m);
	assert_string_equal(encode(back).c_str(), line.c_str());
}

static TrainStatus a_status()
{
	TrainStatus s;
	s.node = "n1";
	s.state = "running";
	s.world = 4;
	s.generation = 2;
	s.restarts_left = 3;
	s.step = 3000;
	s.loss = 2.3125;
	s.gns = 812.5;
	s.it_s = 5.25;
	s.batch = 256;
	s.progress = 3400.5;
	s.grad_sqr = 2.125;
	s.grad_var = 6.25;
	s.stages = { true, 3.5, 150, 20.25 };
	s.gpu = { true, 86.5, 3000 };
	s.last_ckpt = { 3000, "/nvme/tidal/12/ckpt-000000003000.tck" };
	s.ranks = { { 0, 4242 }, { 1, 4243 } };
	return s;
}

/* Every message of messages.h, each way. */
static void test_every_message_round_trips(void **state)
{
	NodeRegister reg;
	reg.node = "n1";
	reg.addr = "10.0.0.1:6830";
	reg.agent_version = "0.9";
	reg.ckpt_dir = "/nvme/tidal";
	reg.ckpt_free_bytes = 1ull << 40;
	reg.heartbeat_s = 2.5;
	reg.topology = "{\"gpus\":[{\"index\":0}]}";
	round_trip(reg);
	reg.fabric = "{\"switches\":[]}";
	round_trip(reg);

	NodeHeartbeat hb;
	hb.node = "n1";
	round_trip(hb);
	hb.ckpt_free_bytes = 12345;
	hb.heartbeat_s = 10;
	hb.jobs = { { 12, a_status() }, { 13, TrainStatus() } };
	hb.jobs[1].status.state = "unknown";
	round_trip(hb);
	hb.held = { { 14, { 2900, "/nvme/tidal/14/ckpt-2900.tck" } } };
	round_trip(hb);

	NodeAck ack;
	ack.node = "n2";
	ack.id = 7;
	ack.job = 12;
	ack.error = "launcher gone";
	round_trip(ack);
	ack = NodeAck();
	ack.node = "n2";
	ack.id = 8;
	ack.job = 12;
	ack.ok = true;
	ack.ckpt = { 3000, "/nvme/x.tck" };
	ack.bytes = 1 << 20;
	ack.ms = 840.5;
	round_trip(ack);

	round_trip(CkptWhere{ 12 });
	CkptWhereReply where;
	where.error = "no checkpoint of job 12 is known to sched/tidal";
	round_trip(where);
	where = CkptWhereReply();
	where.ok = true;
	where.job = 12;
	where.newest = { "n4", "10.0.0.4:6830", 3000 };
	where.path = "/nvme/x.tck";
	where.holders = { where.newest, { "n2", "10.0.0.2:6830", 1000 } };
	round_trip(where);
	where.uid = 1000;
	round_trip(where);

	round_trip(JobPlan{ 12 });
	JobPlanReply plan;
	plan.error = "job_plan: \"job\" must be a job id > 0";
	round_trip(plan);
	plan = JobPlanReply();
	plan.ok = true;
	plan.job = 12;
	plan.batch = 256;
	round_trip(plan);
	plan.batch = 0;
	round_trip(plan);
	plan.group_size = 2;
	plan.share = "pack";
	round_trip(plan);
	plan.share = "interleave";
	round_trip(plan);

	LocalRequest local;
	local.op = "hello";
	round_trip(local);
	local = { "fetch", 12, "10.0.0.4:6830", 3000, {}, {} };
	round_trip(local);
	local = { "job_plan", 12, "", 0, {}, {} };
	round_trip(local);
	local = LocalRequest();
	local.op = "interleave";
	local.job = 12;
	local.join = { 12, 1, "n1-gpu0", 2, { 0.3, 0.125, 0.05 } };
	round_trip(local);
	local = LocalRequest();
	local.op = "pack";
	local.job = 14;
	local.pack = { 14, 0, "n1-gpu0", "DCGAN/LSUN/128/0" };
	round_trip(local);
	local.pack.workload = ""; /* not said */
	round_trip(local);
	round_trip(Partners{ "n1-gpu0",
			     { { 12, 0, "ResNet18/CIFAR-10/64/0" },
			       { 14, 1, "" } } });
	round_trip(Turn{ 1, 2, 1.33 / 1.015, 2, 1 });
	round_trip(TurnDone{ { 0.301, 0.12 } });
	round_trip(HelloReply{ "n1", "/nvme/tidal" });
	FetchReply fr;
	fr.ok = true;
	fr.ckpt = { 3000, "/nvme/x.tck" };
	fr.from = "n4";
	round_trip(fr);
	fr.bytes = 1 << 20;
	fr.ms = 12.5;
	fr.warnings = { "a corrupt newer checkpoint was skipped" };
	round_trip(fr);

	round_trip(PeerRequest{ "ckpt_stat", 12, 0 });
	round_trip(PeerRequest{ "ckpt_get", 12, 3000 });
	round_trip(CkptOffer{ 3000, 1 << 20, "" });
	round_trip(CkptOffer{ 3000, 1 << 20, "ckpt-000000003000.tck" });

	for (const char *op : { "status", "checkpoint", "checkpoint_stop" })
		round_trip(ControlRequest{ op });
	round_trip(LauncherStatus{ "12", a_status() });
	CkptDone done;
	done.error = "stopped without a checkpoint";
	round_trip(done);
	done = CkptDone();
	done.ok = true;
	done.ckpt = { 3000, "/nvme/x.tck" };
	done.bytes = 99;
	done.ms = 3.25;
	round_trip(done);

	CtlRequest ctl;
	ctl.op = "show";
	ctl.what = "jobs";
	round_trip(ctl);
	ctl.what = "job";
	ctl.id = 12;
	round_trip(ctl);
	ctl = CtlRequest();
	ctl.op = "set";
	ctl.what = "policy";
	ctl.policy = "sjf";
	round_trip(ctl);
	CtlReply reply;
	reply.error = "unknown policy 'sjff'";
	round_trip(reply);
	reply = CtlReply();
	reply.ok = true;
	round_trip(reply);
	reply.records = { { { "JobId", { CtlValue::Integer, "", 12 } },
			    { "JobName", { CtlValue::Text, "train", 0 } },
			    { "DecideMs", { CtlValue::Number, "0.054", 0 } },
			    { "Deadline", {} } },
			  { { "NodeName", { CtlValue::Text, "n1", 0 } } } };
	round_trip(reply);
	/* The record's order is kept: it is the order tidalctl prints. */
	assert_string_equal(
		encode(reply).c_str(),
		"{\"v\":1,\"ok\":true,\"records\":[{\"JobId\":12,"
		"\"JobName\":\"train\",\"DecideMs\":0.054,\"Deadline\":null},"
		"{\"NodeName\":\"n1\"}]}\n");
}

/* What a decoder refuses, and what it drops rather than misreads. */
static void test_decoders_keep_the_rules(void **state)
{
	std::string err;
	NodeAck ack;
	json_object *o = parse_object(
		"{\"v\":1,\"op\":\"node_ack\",\"node\":\"n1\",\"id\":-1}");
	assert_false(decode(o, &ack, &err));
	assert_string_equal(err.c_str(), "\"id\" must be an integer from 0 to "
					 "9223372036854775807");
	json_object_put(o);
	/* "ok" must be JSON true, not a truthy string. */
	o = parse_object("{\"v\":1,\"node\":\"n1\",\"id\":1,\"ok\":\"yes\"}");
	assert_true(decode(o, &ack, &err));
	assert_false(ack.ok);
	json_object_put(o);

	NodeHeartbeat hb;
	o = parse_object("{\"v\":1,\"node\":\"n1\",\"jobs\":[{\"job\":0},"
			 "{\"job\":\"12\"},{\"job\":4294967296},{\"job\":5,"
			 "\"step\":-4,\"loss\":\"x\",\"ranks\":[{\"rank\":0,"
			 "\"pid\":0}]}]}");
	assert_true(decode(o, &hb, &err));
	assert_int_equal(hb.jobs.size(), 1);
	assert_int_equal(hb.jobs[0].job, 5);
	assert_int_equal(hb.jobs[0].status.step, 0);
	assert_false(hb.jobs[0].status.loss.has_value());
	assert_true(hb.jobs[0].status.ranks.empty());
	assert_false(hb.ckpt_free_bytes.has_value());
	assert_true(hb.held.empty());
	json_object_put(o);
	/* A held copy needs a job in range and a step. */
	o = parse_object("{\"v\":1,\"node\":\"n1\",\"held\":[{\"job\":0,"
			 "\"step\":3},{\"job\":7},{\"job\":8,\"step\":-1},3,"
			 "{\"job\":9,\"step\":12,\"path\":\"/c/9.tck\"}]}");
	assert_true(decode(o, &hb, &err));
	assert_int_equal(hb.held.size(), 1);
	assert_int_equal(hb.held[0].job, 9);
	assert_int_equal(hb.held[0].ckpt.step, 12);
	assert_string_equal(hb.held[0].ckpt.path.c_str(), "/c/9.tck");
	json_object_put(o);
	/* A non-finite number (json-c reads NaN) is no measurement. */
	o = parse_object("{\"v\":1,\"node\":\"n1\",\"heartbeat_s\":NaN,"
			 "\"jobs\":[{\"job\":5,\"it_s\":Infinity}]}");
	if (o) {
		assert_true(decode(o, &hb, &err));
		assert_false(hb.heartbeat_s.has_value());
		assert_true(hb.jobs[0].status.it_s == 0);
		json_object_put(o);
	}

	ControlRequest c;
	assert_false(decode("{\"v\":2,\"op\":\"status\"}", &c, &err));
	assert_string_equal(err.c_str(), "unsupported version: need \"v\":1");
	assert_false(decode("{\"v\":1,\"op\":5}", &c, &err));
	assert_string_equal(err.c_str(), "no \"op\" string");

	CtlRequest ctl;
	o = parse_object("{\"version\":1,\"op\":\"explain\",\"id\":\"12\"}");
	assert_true(decode(o, &ctl, &err)); /* the older version key */
	assert_int_equal(ctl.id, -1);	    /* a string is no job id */
	json_object_put(o);

	CkptOffer offer;
	o = parse_object("{\"v\":1,\"ok\":true,\"bytes\":10}");
	assert_true(decode(o, &offer, 7, &err));
	assert_int_equal(offer.step, 7);
	json_object_put(o);
	o = parse_object("{\"v\":1,\"ok\":true,\"step\":3}");
	assert_false(decode(o, &offer, 7, &err));
	assert_string_equal(err.c_str(), "sent no size");
	json_object_put(o);

	/* json-c writes the whole double 0e as 0, an integer when read
	 * again: it is read as one the first time (found by agent-wire). */
	CtlReply cr;
	assert_true(decode("{\"v\":1,\"ok\":true,\"records\":[{\"X\":0e,"
			   "\"Y\":1.50,\"Z\":[1]}]}",
			   &cr));
	assert_int_equal(cr.records.size(), 1);
	assert_int_equal(cr.records[0].size(), 2); /* Z is no record value */
	assert_true(cr.records[0][0].second.kind == CtlValue::Integer);
	assert_true(cr.records[0][1].second ==
		    (CtlValue{ CtlValue::Number, "1.50", 0 }));

	LauncherStatus ls;
	assert_false(
		decode("{\"v\":1,\"ok\":false,\"error\":\"gone\"}", &ls, &err));
	assert_string_equal(err.c_str(), "gone");
	/* A refusal always says something, even with an empty "error"
	 * (found by agent-wire). */
	assert_false(decode("{\"v\":1,\"ok\":false,\"error\":\"\"}", &ls,
			    &err));
	assert_string_equal(err.c_str(), "failed (no error given)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_endpoint),
		cmocka_unit_test(test_slurm_side),
		cmocka_unit_test(test_reader),
		cmocka_unit_test(test_line_limits),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_envelope),
		cmocka_unit_test(test_typed_access),
		cmocka_unit_test(test_authinfo),
		cmocka_unit_test(test_c_listener),
		cmocka_unit_test(test_heartbeat_reply_round_trip),
		cmocka_unit_test(test_every_message_round_trips),
		cmocka_unit_test(test_decoders_keep_the_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
