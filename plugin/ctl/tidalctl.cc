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
#include <munge.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Config {
	std::string host = "localhost";
	std::string port = "6829";
	std::string munge_socket;
};

[[noreturn]] void die(const std::string &msg)
{
	std::fprintf(stderr, "tidalctl: error: %s\n", msg.c_str());
	std::exit(1);
}

/* Value of KEY= in FILE (case-insensitive key; the last one wins, as in
 * the plugin, unless FIRST), or "". */
std::string conf_value(const std::string &file, const std::string &key,
		       bool first = false)
{
	std::ifstream in(file);
	std::string line, word, found;
	while (std::getline(in, line)) {
		line = line.substr(0, line.find('#'));
		std::istringstream ws(line);
		while (ws >> word) {
			size_t eq = word.find('=');
			if (eq == std::string::npos ||
			    strcasecmp(word.substr(0, eq).c_str(), key.c_str()))
				continue;
			found = word.substr(eq + 1);
			if (first)
				return found;
		}
	}
	return found;
}

Config read_config()
{
	Config c;
	const char *env = std::getenv("SLURM_CONF");
	std::string slurm = env ? env : "/etc/slurm/slurm.conf";
	std::string dir = slurm.substr(0, slurm.rfind('/') + 1);
	std::string tidal = dir + "tidal.conf";
	/* The first SlurmctldHost is the primary controller. */
	std::string h = conf_value(slurm, "SlurmctldHost", true);
	if (h.empty())
		h = conf_value(slurm, "ControlMachine");
	size_t lp = h.find('(');
	if (lp != std::string::npos) /* name(addr) */
		h = h.substr(lp + 1, h.find(')') - lp - 1);
	if (!h.empty())
		c.host = h;
	std::string v;
	if (!(v = conf_value(tidal, "CtlHost")).empty())
		c.host = v;
	if (!(v = conf_value(tidal, "CtlPort")).empty())
		c.port = v;
	std::string auth = conf_value(slurm, "AuthInfo");
	size_t s = auth.find("socket=");
	if (s != std::string::npos)
		c.munge_socket = auth.substr(s + 7, auth.find(',', s) - s - 7);
	return c;
}

std::string credential(const Config &c)
{
	munge_ctx_t ctx = munge_ctx_create();
	if (!ctx)
		die("cannot create a MUNGE context");
	if (!c.munge_socket.empty())
		munge_ctx_set(ctx, MUNGE_OPT_SOCKET, c.munge_socket.c_str());
	char *cred = nullptr;
	munge_err_t e = munge_encode(&cred, ctx, nullptr, 0);
	if (e != EMUNGE_SUCCESS)
		die(std::string("MUNGE: ") + munge_strerror(e) +
		    "\nHINT: is munged running (socket " +
		    (c.munge_socket.empty() ? "default" : c.munge_socket) + ")?");
	std::string s = cred;
	std::free(cred);
	munge_ctx_destroy(ctx);
	return s;
}

std::string exchange(const Config &c, const std::string &request)
{
	addrinfo hints{}, *res = nullptr;
	hints.ai_socktype = SOCK_STREAM;
	int rc = getaddrinfo(c.host.c_str(), c.port.c_str(), &hints, &res);
	if (rc)
		die("cannot resolve " + c.host + ": " + gai_strerror(rc));
	int fd = -1;
	for (addrinfo *a = res; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
		if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen)) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		die("cannot connect to sched/tidal at " + c.host + ":" + c.port +
		    ": " + std::strerror(errno) +
		    "\nHINT: is SchedulerType=sched/tidal loaded, and CtlPort "
		    "in tidal.conf the same here and there?");
	std::string out = credential(c) + "\n" + request + "\n";
	if (write(fd, out.data(), out.size()) != (ssize_t)out.size())
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

	std::string reply = exchange(read_config(), request);
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
