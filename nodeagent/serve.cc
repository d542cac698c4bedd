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
 *   {"v":1,"op":"job_plan","job":J} -> {"v":1,"ok":true,"job":J,"batch":B}
 *     The plugin's answer, passed on: the global batch its policy chose
 *     for J's next generation, 0 for none.
 *   {"v":1,"op":"interleave",...}
 *     From tidal-train: the connection stays for its group's turns
 *     (interleave.cc).
 *   {"v":1,"op":"pack",...}
 *     From tidal-train: the connection stays, and is told the pack's
 *     members at every change (pack.cc).
 *
 * Peer (--listen, TCP; MUNGE credential line first; root/SlurmUser only):
 *   {"v":1,"op":"ckpt_stat","job":J}
 *     -> {"v":1,"ok":true,"step":S,"bytes":N}  the newest complete one that
 *        verifies here
 *   {"v":1,"op":"ckpt_get","job":J,"step":S}
 *     -> {"v":1,"ok":true,"bytes":N,"name":"ckpt-...tck","step":S'} + N bytes
 *   S' = S if that checkpoint is still here, else the newest complete one
 *   newer than S (the trainer rotates checkpoints away as it writes new
 *   ones); S = 0 asks for the newest.  The sender checks completeness
 *   (.done); the receiver verifies.
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
#include "nodeagent/requests.h"

namespace tidal::agent
{

using namespace tidal::wire;

static std::string error_line(const std::string &msg)
{
	return error_reply(msg) + "\n";
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
			LocalRequest q;
			std::string err;
			if (r.line(&req, 10000, 64 * 1024)) {
				/* a trainer's group keeps the connection
				 * (it sends nothing before its first turn) */
				bool ok = decode(req, &q, &err);
				if (ok && q.op == "interleave")
					serve_interleave(c, q.join, cr.uid);
				else if (ok && q.op == "pack")
					serve_pack(c, q.pack, cr.uid);
				else
					write_all(c, handle_local(req, cr.uid));
			}
			close(c);
		}).detach();
	}
}

std::string Agent::handle_local(const std::string &req, uid_t uid)
{
	LocalRequest q;
	std::string err;
	if (!decode(req, &q, &err)) {
		logf("local: uid %u: bad request refused: %s", (unsigned)uid,
		     err.c_str());
		return error_line(err);
	}
	if (q.op == "hello")
		return encode(HelloReply{ opt_.node, opt_.ckpt_dir });
	if (q.op == "job_plan") {
		/* Read-only and harmless (a batch size): any local user. */
		std::string reply;
		JobPlanReply r;
		if (!plugin_request(encode(JobPlan{ q.job }), &reply, &err))
			return error_line("job_plan: " + err);
		if (!decode(reply, &r))
			return error_line("job_plan: bad reply from "
					  "sched/tidal");
		return encode(r);
	}
	return fetch(q.job, q.peer, q.step, uid);
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

/* Open JOB's complete checkpoint STEP; RET the fd (-1 with *ERR). */
static int open_complete(const Options &opt, uint64_t job, uint64_t step,
			 struct stat *st, std::string *err)
{
	std::string tck = ckpt_file(opt.ckpt_dir, job, step, ".tck");
	int in = -1;
	if (stat(ckpt_file(opt.ckpt_dir, job, step, ".done").c_str(), st) ||
	    (in = open(tck.c_str(), O_RDONLY | O_CLOEXEC)) < 0 ||
	    fstat(in, st)) {
		*err = tck + ": no complete checkpoint here (" +
		       std::strerror(errno) + ")";
		if (in >= 0)
			close(in);
		return -1;
	}
	return in;
}

/* Open JOB's checkpoint STEP, or if rotation took it, the newest complete
 * one newer than STEP (0: the newest).  Once open, the file is ours even
 * if the trainer deletes it.  OUT *STEP: the one opened. */
static int open_at_least(const Options &opt, uint64_t job, uint64_t *step,
			 struct stat *st, std::string *err)
{
	int in = *step ? open_complete(opt, job, *step, st, err) : -1;
	/* A few tries: a trainer writing fast may rotate the newest away
	 * between the look and the open. */
	for (int tries = 0; in < 0 && tries < 3; tries++) {
		std::vector<std::string> warn;
		auto f = newest_local(opt.ckpt_dir, job, warn);
		if (!f || f->step < *step) {
			*err = "no complete checkpoint of job " +
			       std::to_string(job) +
			       (*step ? " at or after step " +
						std::to_string(*step)
				      : std::string()) +
			       " on " + opt.node +
			       (f ? " (its newest is step " +
					    std::to_string(f->step) + ")"
				  : std::string());
			return -1;
		}
		in = open_complete(opt, job, f->step, st, err);
		if (in >= 0)
			*step = f->step;
	}
	return in;
}

/* {"step", "bytes"} of JOB's newest complete checkpoint here. */
static std::string stat_ckpt(const Options &opt, uint64_t job)
{
	std::vector<std::string> warn;
	auto f = newest_local(opt.ckpt_dir, job, warn);
	struct stat st;
	if (!f || stat(f->path.c_str(), &st))
		return error_line("no complete checkpoint of job " +
				  std::to_string(job) + " on " + opt.node);
	return encode(CkptOffer{ f->step, (uint64_t)st.st_size, "" });
}

/* Send JOB's checkpoint STEP (or the newest newer one; 0 = newest) on
 * FD. */
static void send_ckpt(int fd, const Options &opt, uint64_t job, uint64_t step,
		      const std::string &who)
{
	struct stat st;
	std::string err;
	int in = open_at_least(opt, job, &step, &st, &err);
	if (in < 0) {
		write_all(fd, error_line(err));
		return;
	}
	std::string tck = ckpt_file(opt.ckpt_dir, job, step, ".tck");
	CkptOffer h{ step, (uint64_t)st.st_size,
		     tck.substr(tck.rfind('/') + 1) };
	auto t0 = std::chrono::steady_clock::now();
	bool ok = write_all(fd, encode(h));
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
		logf("peer %s: refused: expected a MUNGE credential line and "
		     "a request line", who.c_str());
		write_all(fd,
			  error_line("expected a MUNGE credential line and a "
				     "request line"));
		return;
	}
	if (!munge_check(opt_.munge_socket, cred, &uid, &err)) {
		logf("peer %s: refused: %s", who.c_str(), err.c_str());
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
	PeerRequest q;
	if (!decode(req, &q, &err)) {
		logf("peer %s: uid %u: bad request refused: %s", who.c_str(),
		     (unsigned)uid, err.c_str());
		write_all(fd, error_line(err));
		return;
	}
	if (q.op == "ckpt_stat")
		write_all(fd, stat_ckpt(opt_, q.job));
	else
		send_ckpt(fd, opt_, q.job, q.step, who);
}

} /* namespace tidal::agent */
