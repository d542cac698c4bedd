/*
 * tidalctl.cc - query and steer sched/tidal, in the manner of scontrol.
 *
 *   tidalctl [-o] [--json] show jobs | job ID | nodes | policy | decisions
 *   tidalctl [-o] [--json] explain ID
 *   tidalctl set policy NAME              (root or SlurmUser)
 *
 * Finds the plugin from the configuration: slurm.conf ($SLURM_CONF or
 * /etc/slurm/slurm.conf) gives SlurmctldHost and AuthInfo=socket=; the
 * tidal.conf beside it gives CtlPort (and CtlHost, to override the host).
 * Each connection carries a MUNGE credential; see plugin/sched/ctl_server.c
 * for the wire.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <json.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "nodeagent/wire.h"

namespace {

constexpr int kConnectTimeoutMs = 10000;

[[noreturn]] void die(const std::string &msg)
{
	std::fprintf(stderr, "tidalctl: error: %s\n", msg.c_str());
	std::exit(1);
}

/* Send REQUEST with a MUNGE credential to the plugin (where slurm.conf and
 * tidal.conf say it listens: nodeagent/wire.h, shared with tidald) and
 * read its whole reply (a long `show jobs` may be megabytes). */
std::string exchange(const std::string &request)
{
	tidal::wire::SlurmSide c = tidal::wire::read_slurm_side();
	std::string cred, err;
	if (!tidal::wire::munge_credential(c.munge_socket, &cred, &err))
		die(err);
	int fd = tidal::wire::tcp_connect(c.plugin, kConnectTimeoutMs, &err);
	if (fd < 0)
		die("sched/tidal: " + err +
		    "\nHINT: is SchedulerType=sched/tidal loaded, and CtlPort "
		    "in tidal.conf the same here and there?");
	if (!tidal::wire::write_all(fd, cred + "\n" + request + "\n"))
		die("write to sched/tidal failed");
	std::string reply;
	char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		reply.append(buf, n);
	close(fd);
	return reply;
}

std::string value_str(json_object *v)
{
	if (json_object_get_type(v) == json_type_string)
		return json_object_get_string(v);
	return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
}

/* scontrol layout: Key=Value pairs, a few per line, 3-space continuation;
 * a long Reason gets a line of its own. */
void print_record(json_object *rec, bool one_line)
{
	std::string line, out;
	int on_line = 0;
	json_object_object_foreach(rec, key, val) {
		std::string kv = std::string(key) + "=" + value_str(val);
		bool alone = !one_line && kv.size() > 60;
		if (!one_line && on_line > 0 && (on_line == 4 || alone)) {
			out += line + "\n";
			line = "   ";
			on_line = 0;
		}
		line += (on_line ? " " : "") + kv;
		on_line++;
		if (!one_line && alone) {
			out += line + "\n";
			line = "   ";
			on_line = 0;
		}
	}
	if (on_line)
		out += line + "\n";
	std::fputs(out.c_str(), stdout);
	if (!one_line)
		std::fputs("\n", stdout);
}

void usage(int rc)
{
	std::fputs("usage: tidalctl [-o|--oneliner] [--json] show jobs|job ID|"
		   "nodes|policy|decisions\n"
		   "       tidalctl [-o] [--json] explain JOBID\n"
		   "       tidalctl set policy NAME   (root or SlurmUser)\n",
		   rc ? stderr : stdout);
	std::exit(rc);
}

long long job_id(const std::string &s)
{
	char *end = nullptr;
	long long v = std::strtoll(s.c_str(), &end, 10);
	if (s.empty() || *end || v <= 0)
		die("'" + s + "' is not a job id");
	return v;
}

} /* namespace */

int main(int argc, char **argv)
{
	bool one_line = false, as_json = false;
	std::vector<std::string> words;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if (a == "-o" || a == "--oneliner")
			one_line = true;
		else if (a == "--json")
			as_json = true;
		else if (a == "-h" || a == "--help")
			usage(0);
		else
			words.push_back(a);
	}
	if (words.empty())
		usage(2);
	json_object *req = json_object_new_object();
	json_object_object_add(req, "version", json_object_new_int(1));
	json_object_object_add(req, "op", json_object_new_string(words[0].c_str()));
	if (words[0] == "show" && words.size() >= 2) {
		json_object_object_add(req, "what",
				       json_object_new_string(words[1].c_str()));
		if (words[1] == "job") {
			if (words.size() != 3)
				usage(2);
			json_object_object_add(req, "id",
					       json_object_new_int64(job_id(words[2])));
		}
	} else if (words[0] == "explain" && words.size() == 2) {
		json_object_object_add(req, "id",
				       json_object_new_int64(job_id(words[1])));
	} else if (words[0] == "set" && words.size() == 3 &&
		   words[1] == "policy") {
		json_object_object_add(req, "what", json_object_new_string("policy"));
		json_object_object_add(req, "policy",
				       json_object_new_string(words[2].c_str()));
	} else {
		usage(2);
	}
	std::string request = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	json_object_put(req);

	std::string reply = exchange(request);
	json_object *r = json_tokener_parse(reply.c_str());
	json_object *ok, *err, *records;
	if (!r || !json_object_object_get_ex(r, "ok", &ok))
		die("malformed reply from sched/tidal: " + reply);
	if (as_json)
		std::fputs(reply.c_str(), stdout);
	if (!json_object_get_boolean(ok)) {
		std::string msg = json_object_object_get_ex(r, "error", &err)
					  ? json_object_get_string(err) : "failed";
		json_object_put(r);
		die(msg);
	}
	if (!as_json && json_object_object_get_ex(r, "records", &records)) {
		size_t n = json_object_array_length(records);
		if (n == 0 && words[0] == "show")
			std::puts(words.size() > 1 && words[1] == "nodes"
					  ? "No nodes seen yet"
					  : "No jobs under Tidal");
		for (size_t i = 0; i < n; i++)
			print_record(json_object_array_get_idx(records, i),
				     one_line);
	}
	json_object_put(r);
	return 0;
}
