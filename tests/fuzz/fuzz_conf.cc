/*
 * fuzz_conf.cc - libFuzzer target for tidal.conf: core's Params::parse,
 * sched/tidal's configure (plugin/sched/engine.cc: the policy, its keys,
 * CycleInterval, CtlPort, ResizeSignal, CheckpointTimeout, RejectAction,
 * AccountingComment,
 * did-you-mean for unknown keys) and the node side's conf_value
 * (proto/wire.cc), which tidald and tidalctl read CtlHost and CtlPort
 * with.
 *
 * The input is the whole file.  A refused file is a normal outcome; what
 * is taken must be in range, the parsed pairs written back as Key=Value
 * lines must parse to the same pairs, and `tidalctl show policy` and
 * `show config` must answer.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <json.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "core/model/params.h"
#include "proto/wire.h"
#include "plugin/sched/bridge.h"

using namespace tidal;

static std::string path;

static void cleanup()
{
	unlink(path.c_str());
}

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
	/* tmpfs where there is one: each input is written and read 6 times,
	 * which on a disk's file system cost a third of the run. */
	std::string tmpl = access("/dev/shm", W_OK) == 0
				   ? "/dev/shm/tidal-fuzz-conf.XXXXXX"
				   : "/tmp/tidal-fuzz-conf.XXXXXX";
	int fd = mkstemp(tmpl.data());
	if (fd < 0)
		std::abort();
	close(fd);
	path = tmpl;
	std::atexit(cleanup);
	return 0;
}

static bool one_word(const std::string &s)
{
	for (unsigned char c : s)
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
		    c == '\v' || c == '\f' || c == '#')
			return false;
	return true;
}

static void check_params(const std::string &text)
{
	Params p = Params::parse(text, "tidal.conf");
	std::string back;
	for (const auto &[k, v] : p.items()) {
		if (k.empty() || k != lower(k) || !one_word(k) || !one_word(v) ||
		    k.find('=') != std::string::npos)
			std::abort();
		back += k + "=" + v + "\n";
	}
	Params q = Params::parse(back, "again");
	if (q.items() != p.items() || !q.errors().empty())
		std::abort();
	/* Each getter either takes a value within its rule or records why
	 * not; none throws. */
	for (const auto &[k, v] : p.items()) {
		double d = p.get_double(k, 1, 0, 10);
		long l = p.get_long(k, 1, -5, 5);
		if (d < 0 || d > 10 || l < -5 || l > 5)
			std::abort();
		(void)p.get_bool(k, true);
		(void)p.get_list(k, {1, 2}, 0, 100);
		(void)p.get_choice(k, "a", {"a", "b"});
	}
	if (p.errors_using_defaults().size() != p.errors().size())
		std::abort();
	(void)p.unused();
}

static void check_engine(const std::string &text)
{
	char *msg = nullptr;
	int rc = tidal_engine_configure(text.c_str(), "tidal.conf", &msg);
	std::free(msg);
	if (rc != 0 && rc != -1)
		std::abort();
	if (rc == 0) {
		double iv = tidal_engine_interval();
		int port = tidal_engine_ctl_port();
		tidal_apply_conf_t ac;
		tidal_engine_apply_conf(&ac);
		if (!(iv >= 0.1 && iv <= 3600) || port < 0 || port > 65535 ||
		    ac.resize_signal < 0 || ac.resize_signal > 64 ||
		    !(ac.checkpoint_timeout >= 0 &&
		      ac.checkpoint_timeout <= 86400) ||
		    (ac.reject_cancel != 0 && ac.reject_cancel != 1) ||
		    (ac.acct_comment != TIDAL_ACCT_NONE &&
		     ac.acct_comment != TIDAL_ACCT_ADMIN) ||
		    !*tidal_engine_policy())
			std::abort();
	}
	for (const char *req :
	     { "{\"version\":1,\"op\":\"show\",\"what\":\"policy\"}",
	       "{\"version\":1,\"op\":\"show\",\"what\":\"config\"}" }) {
		char *r = tidal_engine_request(req, 0, 1, 0, nullptr);
		json_object *o = r ? json_tokener_parse(r) : nullptr;
		if (!o)
			std::abort();
		json_object_put(o);
		std::free(r);
	}
}

static void check_conf_value(const std::string &text)
{
	{
		std::ofstream out(path, std::ios::binary | std::ios::trunc);
		out << text;
	}
	for (const char *k : {"CtlHost", "CtlPort", "Policy"}) {
		std::string v = tidal::wire::conf_value(path, k);
		std::string f = tidal::wire::conf_value(path, k, true);
		if (!one_word(v) || !one_word(f))
			std::abort();
	}
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
				      std::size_t size)
{
	std::string text(reinterpret_cast<const char *>(data), size);
	check_params(text);
	check_engine(text.substr(0, text.find('\0'))); /* a C string */
	check_conf_value(text);
	return 0;
}
