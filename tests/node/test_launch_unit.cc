/*
 * test_launch_unit.cc - tidal-launch's pieces without processes: event
 * lines, exit descriptions, CPU lists, the control socket round trip and
 * its refusals, and the checkpoint choice with a stand-in tidald (hello,
 * fetch) on a unix socket.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "launcher/binding.h"
#include "launcher/control.h"
#include "launcher/options.h"
#include "launcher/ranks.h"
#include "launcher/resume.h"
#include "node/checkpoint.h"

#include <getopt.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

#include "tests/unit/unit.h"

namespace fs = std::filesystem;
using namespace tidal;
using namespace tidal::launch;

static std::string tmpdir()
{
	char t[] = "/tmp/tidal-launch-unit-XXXXXX";
	assert_non_null(mkdtemp(t));
	return t;
}

static void test_events(void **)
{
	Event e;
	std::string err;
	assert_true(parse_event(
		"{\"ev\":\"step\",\"step\":120,\"loss\":0.5,\"it_s\":12.5,"
		"\"samples_s\":800,\"stages\":{\"data\":1,\"compute\":7.5,"
		"\"comm\":2},\"gns\":null}", e, err));
	assert_string_equal(e.ev.c_str(), "step");
	assert_int_equal(e.step, 120);
	assert_true(e.has_loss);
	assert_true(e.loss == 0.5 && e.it_s == 12.5);
	assert_false(e.gns.has_value());
	assert_true(e.stages.present && e.stages.data == 1 &&
		    e.stages.compute == 7.5 && e.stages.comm == 2);
	assert_int_equal(e.batch, 0);
	assert_false(e.progress || e.grad_sqr || e.grad_var);
	assert_false(e.gpu.present);
	/* The GPU's use; a percentage out of range is not a measurement. */
	assert_true(parse_event("{\"ev\":\"step\",\"gpu\":{\"util\":62.5,"
				"\"mem_mb\":3000}}",
				e, err));
	assert_true(e.gpu.present && e.gpu.util == 62.5 &&
		    e.gpu.mem_mb == 3000);
	assert_true(parse_event("{\"ev\":\"step\",\"gpu\":{\"util\":101,"
				"\"mem_mb\":3000}}",
				e, err));
	assert_false(e.gpu.present);
	/* AdaScale's and Pollux's fields; a negative statistic or a batch
	 * out of range is dropped. */
	assert_true(parse_event(
		"{\"ev\":\"step\",\"step\":121,\"batch\":256,\"gain\":2.5,"
		"\"progress\":140.25,\"grad_sqr\":2,\"grad_var\":6.5}", e,
		err));
	assert_int_equal(e.batch, 256);
	assert_true(e.progress == 140.25 && e.grad_sqr == 2.0 &&
		    e.grad_var == 6.5);
	assert_true(parse_event("{\"ev\":\"step\",\"batch\":0,"
				"\"grad_sqr\":-1,\"progress\":\"5\"}",
				e, err));
	assert_int_equal(e.batch, 0);
	assert_false(e.grad_sqr || e.progress);
	assert_true(parse_event("{\"ev\":\"ckpt\",\"step\":7,\"path\":\"/c/x."
				"tck\",\"bytes\":1000,\"ms\":4,\"mb_s\":250}",
				e, err));
	assert_string_equal(e.path.c_str(), "/c/x.tck");
	assert_int_equal(e.bytes, 1000);
	assert_true(parse_event("{\"ev\":\"start\",\"rank\":3,\"step\":9,"
				"\"resumed\":\"/r.tck\",\"backend\":\"cpu-gloo\"}",
				e, err));
	assert_int_equal(e.rank, 3);
	assert_string_equal(e.path.c_str(), "/r.tck");
	assert_false(parse_event("step 5", e, err));
	assert_false(parse_event("{\"step\":5}", e, err));
	assert_string_equal(err.c_str(), "no \"ev\" member");
}

static void test_status_and_lists(void **)
{
	assert_string_equal(describe_status(1 << 8).c_str(), "exit status 1");
	assert_string_equal(describe_status(9).c_str(),
			    "killed by signal 9 (Killed)");
	std::vector<int> cpus;
	assert_true(tidal::topo::parse_cpu_list("0-3,8,10-11", &cpus));
	assert_int_equal(cpus.size(), 7);
	assert_string_equal(cpu_list_string(cpus).c_str(), "0-3,8,10-11");
	assert_int_equal(count_devices("0,1,3"), 3);
	assert_int_equal(count_devices(""), 0);
	assert_int_equal(count_devices("NoDevFiles"), 0);
}

/* A unix-socket server on PATH answering COUNT connections: one line in,
 * ANSWER(line) out. */
static std::thread fake_server(const std::string &path, int count,
			       std::function<std::string(std::string)> answer)
{
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	sockaddr_un a = {};
	a.sun_family = AF_UNIX;
	strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
	assert_int_equal(bind(fd, (sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(fd, 4), 0);
	return std::thread([fd, count, answer] {
		for (int i = 0; i < count; i++) {
			int c = accept(fd, nullptr, nullptr);
			std::string line;
			char ch;
			while (read(c, &ch, 1) == 1 && ch != '\n')
				line += ch;
			std::string r = answer(line) + "\n";
			ssize_t w = write(c, r.data(), r.size());
			(void)w;
			close(c);
		}
		close(fd);
	});
}

static void test_control_round_trip(void **)
{
	std::string dir = tmpdir(), err, reply;
	ControlServer srv;
	assert_true(srv.open(dir + "/n0/launch-7.sock", err));
	std::atomic<int> phase{ 0 };
	std::string r1, r2;
	std::thread client([&] {
		std::string e;
		wire::unix_request(dir + "/n0/launch-7.sock",
				   "{\"v\":1,\"op\":\"status\"}", &r1, 5000,
				   &e);
		wire::unix_request(dir + "/n0/launch-7.sock", "nonsense", &r2,
				   5000, &e);
		phase = 1;
	});
	for (int i = 0; i < 500 && !phase; i++) {
		std::vector<pollfd> fds;
		srv.poll_fds(fds);
		poll(fds.data(), fds.size(), 10);
		std::vector<Request> reqs;
		srv.service(fds, reqs);
		for (const Request &q : reqs)
			srv.reply(q.client,
				  q.error.empty()
					  ? "{\"v\":1,\"ok\":true,\"op\":\"" +
						    q.op + "\"}"
					  : wire::error_reply(q.error));
	}
	client.join();
	assert_string_equal(r1.c_str(), "{\"v\":1,\"ok\":true,\"op\":\"status\"}");
	assert_string_equal(r2.c_str(), "{\"v\":1,\"ok\":false,\"error\":"
			    "\"request is not a JSON object\"}");
	srv.close();
	assert_false(fs::exists(dir + "/n0/launch-7.sock"));
	assert_false(wire::unix_request(dir + "/n0/launch-7.sock", "{}", &reply,
					1000, &err));
	fs::remove_all(dir);
}

static ckpt::State small_state(uint64_t step)
{
	ckpt::State s;
	s.step = step;
	s.global_batch = 8;
	s.world = 1;
	s.model = "test";
	s.tensors.push_back({ "w", std::vector<float>(64, 1.0f) });
	return s;
}

static void test_resume_through_tidald(void **)
{
	std::string dir = tmpdir(), remote = dir + "/fetched";
	std::string job_dir = dir + "/ckpt/42", sock = dir + "/tidald.sock";
	/* Nothing local and no tidald: start fresh. */
	std::string why;
	assert_false(find_newest(job_dir, "42", sock, why).has_value());
	assert_non_null(strstr(why.c_str(), "no checkpoint in"));
	std::string path = ckpt::write(remote, small_state(300));
	std::string seen;
	std::thread t = fake_server(sock, 2, [&](std::string line) {
		seen += line + "\n";
		if (line.find("\"hello\"") != std::string::npos)
			return std::string("{\"v\":1,\"ok\":true,\"node\":\"n0\","
					   "\"ckpt_dir\":\"/nvme/ck\"}");
		return "{\"v\":1,\"ok\":true,\"path\":\"" + path +
		       "\",\"step\":300,\"from\":\"n7\"}";
	});
	assert_string_equal(resolve_ckpt_root("", sock).c_str(), "/nvme/ck");
	assert_string_equal(resolve_ckpt_root("/flag", sock).c_str(), "/flag");
	/* tidald is asked first: its newer copy beats the local step 100. */
	ckpt::write(job_dir, small_state(100));
	std::optional<Resume> r = find_newest(job_dir, "42", sock, why);
	t.join();
	assert_true(r.has_value());
	assert_int_equal(r->step, 300);
	assert_string_equal(r->path.c_str(), path.c_str());
	assert_string_equal(r->from.c_str(), "n7");
	assert_non_null(strstr(seen.c_str(), "{\"v\":1,\"op\":\"fetch\",\"job\":42}"));
	/* Another node told to resume from step 300 finds it locally. */
	std::string local = ckpt::write(job_dir, small_state(300));
	Resume found;
	std::string err;
	assert_true(find_step(job_dir, "42", sock, 300, found, err));
	assert_string_equal(found.path.c_str(), local.c_str());
	/* ... but not a step it does not have, with no tidald to ask. */
	unlink(sock.c_str());
	assert_false(find_step(job_dir, "42", sock, 500, found, err));
	assert_non_null(strstr(err.c_str(), "HINT"));
	fs::remove_all(dir);
}

static void test_tidald_refusal(void **)
{
	std::string dir = tmpdir(), sock = dir + "/tidald.sock";
	std::thread t = fake_server(sock, 1, [](std::string) {
		return std::string("{\"v\":1,\"ok\":false,\"error\":\"no "
				   "checkpoint of job 5 anywhere\"}");
	});
	std::string why;
	assert_false(find_newest(dir + "/ckpt/5", "5", sock, why).has_value());
	t.join();
	assert_non_null(strstr(why.c_str(), "anywhere"));
	/* tidald refuses: the local newest is used. */
	std::string local = ckpt::write(dir + "/ckpt/5", small_state(7));
	unlink(sock.c_str());
	t = fake_server(sock, 1, [](std::string) {
		return std::string("{\"v\":1,\"ok\":false,\"error\":\"no\"}");
	});
	std::optional<Resume> r = find_newest(dir + "/ckpt/5", "5", sock, why);
	t.join();
	assert_true(r.has_value());
	assert_int_equal(r->step, 7);
	assert_string_equal(r->path.c_str(), local.c_str());
	fs::remove_all(dir);
}

/* The rendezvous store's port without --store-port: Slurm's reserved
 * step port, else the job id within TIDAL_STORE_PORTS (29400-29899). */
static void test_store_port(void **)
{
	auto port = [](const char *job) {
		std::string j = std::string("--job=") + job;
		char a0[] = "tidal-launch", a2[] = "--", a3[] = "true";
		std::vector<char> a1(j.begin(), j.end());
		a1.push_back('\0');
		char *argv[] = { a0, a1.data(), a2, a3, nullptr };
		optind = 0; /* getopt from the start, each time */
		return parse_options(4, argv).store_port;
	};
	unsetenv("SLURM_STEP_RESV_PORTS");
	unsetenv("SLURM_LAUNCH_NODE_IPADDR");
	unsetenv("TIDAL_STORE_PORTS");
	assert_int_equal(port("1"), 29401);
	assert_int_equal(port("501"), 29401);
	setenv("TIDAL_STORE_PORTS", "24010-24019", 1);
	assert_int_equal(port("1"), 24011);
	assert_int_equal(port("23"), 24013);
	setenv("SLURM_STEP_RESV_PORTS", "12000-12007", 1);
	assert_int_equal(port("23"), 12000);
	unsetenv("SLURM_STEP_RESV_PORTS");
	unsetenv("TIDAL_STORE_PORTS");
}

/* A job on GPU shards names its group by node and GPU; a whole-GPU job
 * (no shards) or a GPU without an index has none. */
static void test_interleave_group(void **)
{
	assert_string_equal(interleave_group("n1", 0, "1", "3", 2).c_str(),
			    "n1-gpu3/2");
	assert_string_equal(interleave_group("n1", 1, "2", "0,5", 0).c_str(),
			    "n1-gpu5/1");
	assert_string_equal(interleave_group("n1", 0, "1", "1", 9).c_str(),
			    "n1-gpu1/4");
	assert_true(interleave_group("n1", 0, nullptr, "0", 2).empty());
	assert_true(interleave_group("n1", 0, "0", "0", 2).empty());
	assert_true(interleave_group("n1", 2, "1", "0,1", 2).empty());
	assert_true(interleave_group("n1", 0, "1", "GPU-1a2b", 2).empty());
	assert_true(interleave_group("n1", 0, "1", nullptr, 2).empty());
	/* a pack is named by the GPU alone */
	assert_string_equal(shared_gpu("n1", 1, "2", "0,5").c_str(), "n1-gpu5");
	assert_true(shared_gpu("n1", 0, "0", "0").empty());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_status_and_lists),
		cmocka_unit_test(test_control_round_trip),
		cmocka_unit_test(test_resume_through_tidald),
		cmocka_unit_test(test_tidald_refusal),
		cmocka_unit_test(test_store_port),
		cmocka_unit_test(test_interleave_group),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
