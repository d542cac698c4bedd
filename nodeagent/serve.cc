/*
 * serve.cc - tidald's two listening sockets.
 *
 * Local (RUN_DIR/<node>/tidald.sock, for tidal-launch; open to every user,
 * the peer's uid from SO_PEERCRED):
 *   {"v":1,"op":"hello"}         -> {"v":1,"ok":true,"node":N,"ckpt_dir":D}
 *   {"v":1,"op":"fetch","job":J} -> {"v":1,"ok":true,"path":P,"step":S,
 *                                    "from":NODE}
 *     The newest checkpoint of J, local or copied from the peer that the
 *     plugin's ckpt_where names.  Optional "peer":"HOST:PORT" (and "step")
 *     fetch from that peer without asking the plugin.
 *
 * Peer (--listen, TCP; MUNGE credential line first; root/SlurmUser only):
 *   {"v":1,"op":"ckpt_get","job":J,"step":S}
 *     -> {"v":1,"ok":true,"bytes":N,"name":"ckpt-...tck","step":S} + N bytes
 *   The sender only checks completeness (.done); the receiver verifies.
 *
 * One thread per connection: a fetch may take seconds.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <fcntl.h>
#include <json.h>
#include <poll.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "nodeagent/agent.h"
#include "nodeagent/ckpt_local.h"

namespace tidal::agent
{

using namespace tidal::wire;

static std::string error_line(const std::string &msg)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "v", json_object_new_int(1));
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(msg.c_str()));
	return to_line(o);
}

static json_object *ok_reply()
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "v", json_object_new_int(1));
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

/* Wait for a connection on FD; RET it, or -1 (timeout, or stopping). */
static int accept_some(int fd, const std::atomic<bool> &stop)
{
	struct pollfd p = { fd, POLLIN, 0 };
	while (!stop) {
		if (poll(&p, 1, 500) <= 0)
			continue;
		int c = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
		if (c >= 0)
			return c;
	}
	return -1;
}

void Agent::local_loop()
{
	int c;
	while ((c = accept_some(local_fd_, stop_)) >= 0) {
		std::thread([this, c] {
			struct ucred cr {
			};
			socklen_t len = sizeof(cr);
			getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &len);
			Reader r(c);
			std::string req;
			if (r.line(&req, 10000, 64 * 1024))
				write_all(c, handle_local(req, cr.uid));
			close(c);
		}).detach();
	}
}

std::string Agent::handle_local(const std::string &req, uid_t uid)
{
	json_object *o = parse_object(req);
	if (!o)
		return error_line("request is not a JSON object");
	std::string op = get_str(o, "op"), peer = get_str(o, "peer");
	int64_t v = get_int(o, "v", get_int(o, "version"));
	int64_t job = get_int(o, "job", -1);
	uint64_t step = (uint64_t)get_int(o, "step");
	json_object_put(o);
	if (v != 1)
		return error_line("wire version " + std::to_string(v) +
				  " not supported (tidald speaks 1)");
	if (op == "hello") {
		json_object *r = ok_reply();
		json_object_object_add(
			r, "node", json_object_new_string(opt_.node.c_str()));
		json_object_object_add(
			r, "ckpt_dir",
			json_object_new_string(opt_.ckpt_dir.c_str()));
		return to_line(r);
	}
	if (op == "fetch") {
		if (job <= 0)
			return error_line(
				"fetch: \"job\" must be a job id > 0");
		return fetch((uint64_t)job, peer, step, uid);
	}
	return error_line("unknown op '" + op + "' (hello, fetch)");
}

void Agent::peer_loop()
{
	int c;
	while ((c = accept_some(peer_fd_, stop_)) >= 0)
		std::thread([this, c] {
			serve_peer(c);
			close(c);
		}).detach();
}

/* Send JOB's checkpoint STEP (0 = newest) on FD. */
static void send_ckpt(int fd, const Options &opt, uint64_t job, uint64_t step,
		      const std::string &who)
{
	if (step == 0) {
		std::vector<std::string> warn;
		auto f = newest_local(opt.ckpt_dir, job, warn);
		if (!f) {
			write_all(fd, error_line("no checkpoint of job " +
						 std::to_string(job) + " on " +
						 opt.node));
			return;
		}
		step = f->step;
	}
	std::string tck = ckpt_file(opt.ckpt_dir, job, step, ".tck");
	struct stat st;
	int in = -1;
	if (stat(ckpt_file(opt.ckpt_dir, job, step, ".done").c_str(), &st) ||
	    (in = open(tck.c_str(), O_RDONLY | O_CLOEXEC)) < 0 ||
	    fstat(in, &st)) {
		write_all(fd,
			  error_line(tck + ": no complete checkpoint here (" +
				     std::strerror(errno) + ")"));
		if (in >= 0)
			close(in);
		return;
	}
	json_object *h = ok_reply();
	json_object_object_add(h, "bytes", json_object_new_int64(st.st_size));
	json_object_object_add(
		h, "name",
		json_object_new_string(tck.substr(tck.rfind('/') + 1).c_str()));
	json_object_object_add(h, "step", json_object_new_int64((int64_t)step));
	auto t0 = std::chrono::steady_clock::now();
	bool ok = write_all(fd, to_line(h));
	off_t off = 0;
	while (ok && off < st.st_size) {
		ssize_t n = sendfile(fd, in, &off, st.st_size - off);
		ok = n > 0;
	}
	close(in);
	double s = std::chrono::duration<double>(
			   std::chrono::steady_clock::now() - t0)
			   .count();
	logf("ckpt_get from %s: job %llu step %llu, %lld bytes %s in %.2f s",
	     who.c_str(), (unsigned long long)job, (unsigned long long)step,
	     (long long)st.st_size, ok ? "sent" : "NOT sent (peer gone)", s);
}

void Agent::serve_peer(int fd)
{
	Reader r(fd);
	std::string cred, req, err;
	std::string who = peer_host(fd);
	uid_t uid;
	if (!r.line(&cred, 5000, 4096) || !r.line(&req, 5000, 64 * 1024)) {
		write_all(fd,
			  error_line("expected a MUNGE credential line and a "
				     "request line"));
		return;
	}
	if (!munge_check(opt_.munge_socket, cred, &uid, &err)) {
		logf("peer %s: %s", who.c_str(), err.c_str());
		write_all(fd, error_line(err));
		return;
	}
	if (uid != 0 && uid != opt_.slurm_user) {
		logf("peer %s: uid %u refused (root or SlurmUser only)",
		     who.c_str(), (unsigned)uid);
		write_all(fd,
			  error_line("peer operations need root or SlurmUser "
				     "(you are uid " +
				     std::to_string(uid) + ")"));
		return;
	}
	json_object *o = parse_object(req);
	std::string op = get_str(o, "op");
	int64_t job = get_int(o, "job", -1), step = get_int(o, "step");
	if (o)
		json_object_put(o);
	if (op != "ckpt_get" || job <= 0 || step < 0) {
		write_all(fd,
			  error_line("expected {\"v\":1,\"op\":\"ckpt_get\","
				     "\"job\":J,\"step\":S}"));
		return;
	}
	send_ckpt(fd, opt_, (uint64_t)job, (uint64_t)step, who);
}

} /* namespace tidal::agent */
