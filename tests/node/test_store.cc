/*
 * test_store.cc - the rendezvous store: set/get/wait/add/check between
 * threads, blocking gets, timeouts that name the key, a stopped server.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "node/store.h"

#include <atomic>
#include <stdexcept>
#include <thread>

#include "tests/unit/unit.h"

using namespace tidal::store;
using namespace std::chrono;

static std::string addr(const Server &s)
{
	return "127.0.0.1:" + std::to_string(s.port());
}

static void connect(Client &c, const Server &s)
{
	std::string err;
	assert_true(c.connect(addr(s), Millis(2000), err));
}

static void test_set_get_check(void **)
{
	Server s;
	std::string err;
	assert_true(s.start("127.0.0.1", 0, err));
	assert_true(s.port() > 0);
	Client c;
	connect(c, s);
	assert_false(c.check({"a"}));
	Bytes v = {0, 1, 2, 255, 0}; /* binary, with zeros */
	c.set("a", v);
	assert_true(c.get("a") == v);
	c.set("b", std::string(3 << 20, 'x')); /* large value */
	assert_int_equal(c.get("b").size(), 3 << 20);
	assert_true(c.check({"a", "b"}));
	assert_false(c.check({"a", "zz"}));
	assert_true(c.remove("a"));
	assert_false(c.remove("a"));
	assert_false(c.check({"a"}));
}

/* get() and wait() block until other threads' clients set the keys. */
static void test_blocking_across_threads(void **)
{
	Server s;
	std::string err;
	assert_true(s.start("", 0, err));
	std::vector<std::thread> ts;
	for (int r = 0; r < 4; r++)
		ts.emplace_back([&s, r] {
			std::this_thread::sleep_for(Millis(50 * (r + 1)));
			Client c;
			std::string e;
			if (c.connect(addr(s), Millis(2000), e))
				c.set("rank" + std::to_string(r), std::to_string(r * 10));
		});
	Client c;
	connect(c, s);
	auto t0 = steady_clock::now();
	assert_true(c.get("rank0", Millis(5000)) == Bytes({'0'}));
	c.wait({"rank1", "rank2", "rank3"}, Millis(5000));
	assert_true(steady_clock::now() - t0 >= Millis(190));
	assert_true(c.get("rank3") == Bytes({'3', '0'}));
	for (auto &t : ts)
		t.join();
}

static void test_add_across_threads(void **)
{
	Server s;
	std::string err;
	assert_true(s.start("127.0.0.1", 0, err));
	std::vector<std::thread> ts;
	std::atomic<int> max_seen{0};
	for (int r = 0; r < 4; r++)
		ts.emplace_back([&] {
			Client c;
			std::string e;
			if (!c.connect(addr(s), Millis(2000), e))
				return;
			for (int i = 0; i < 100; i++) {
				int v = (int)c.add("count", 1);
				int m = max_seen.load();
				while (v > m && !max_seen.compare_exchange_weak(m, v))
					;
			}
		});
	for (auto &t : ts)
		t.join();
	Client c;
	connect(c, s);
	assert_int_equal(max_seen.load(), 400);
	assert_true(c.get("count") == Bytes({'4', '0', '0'}));
	assert_int_equal(c.add("count", -400), 0);
	assert_int_equal(c.add("fresh", 7), 7);
	c.set("text", std::string("abc"));
	bool threw = false;
	try {
		c.add("text", 1);
	} catch (const std::runtime_error &e) {
		threw = std::string(e.what()).find("add 'text'") != std::string::npos;
	}
	assert_true(threw);
}

static void test_timeout_names_key(void **)
{
	Server s;
	std::string err;
	assert_true(s.start("127.0.0.1", 0, err));
	Client c;
	connect(c, s);
	auto t0 = steady_clock::now();
	std::string what;
	try {
		c.get("never", Millis(200));
	} catch (const std::runtime_error &e) {
		what = e.what();
	}
	assert_true(steady_clock::now() - t0 >= Millis(200));
	assert_true(what.find("get 'never' (timeout 200 ms): timed out") !=
		    std::string::npos);
	c.set_timeout(Millis(100));
	what.clear();
	try {
		c.wait({"x", "y"});
	} catch (const std::runtime_error &e) {
		what = e.what();
	}
	assert_true(what.find("'x', 'y'") != std::string::npos);
	c.set("after", std::string("ok")); /* the connection still works */
	assert_true(c.check({"after"}));
}

static void test_stop_and_bad_address(void **)
{
	auto s = std::make_unique<Server>();
	std::string err;
	assert_true(s->start("127.0.0.1", 0, err));
	int port = s->port();
	Client c;
	connect(c, *s);
	std::string what;
	std::thread stopper([&] {
		std::this_thread::sleep_for(Millis(100));
		s->stop();
	});
	try {
		c.get("blocked", Millis(10000));
	} catch (const std::runtime_error &e) {
		what = e.what();
	}
	stopper.join();
	assert_true(what.find("connection lost") != std::string::npos);
	Client d;
	assert_false(d.connect("127.0.0.1:" + std::to_string(port), Millis(100), err));
	assert_true(err.find("connect") != std::string::npos);
	assert_false(d.connect("nohostport", Millis(100), err));
	assert_true(err.find("'nohostport': expected HOST:PORT") != std::string::npos);
	Server busy;
	Server again;
	assert_true(busy.start("127.0.0.1", 0, err));
	assert_false(again.start("127.0.0.1", busy.port(), err));
	assert_true(err.find("127.0.0.1:" + std::to_string(busy.port())) !=
		    std::string::npos);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_get_check),
		cmocka_unit_test(test_blocking_across_threads),
		cmocka_unit_test(test_add_across_threads),
		cmocka_unit_test(test_timeout_names_key),
		cmocka_unit_test(test_stop_and_bad_address),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
