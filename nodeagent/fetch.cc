/*
 * fetch.cc - make a job's newest checkpoint available on this node.
 *
 *   1. the plugin's ckpt_where names the node holding the newest one
 *      (unless the request names a peer itself);
 *   2. if this node has that step (or a newer one), it is used as it is;
 *   3. else it is copied from that node's tidald (ckpt_get), verified
 *      here with ckpt::verify and only then renamed into place with its
 *      .done marker, so a launcher never sees a partial or corrupt file.
 *
 * With the plugin unreachable, or the newest one's node unreachable, the
 * newest local checkpoint is used, and the reply's "warnings" say so (the
 * launcher copies them into the job's log); with none here either, the
 * error names the step and node that could not be reached.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <json.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include "nodeagent/agent.h"
#include "nodeagent/ckpt_local.h"

namespace tidal::agent
{

using namespace tidal::wire;

namespace
{

std::string fail_line(const std::string &msg)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "v", json_object_new_int(1));
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(msg.c_str()));
	return to_line(o);
}

/* WARN: what the launcher should tell the job's log (corrupt newer
 * checkpoints skipped, the newest one out of reach). */
std::string found_line(const std::string &path, uint64_t step,
		       const std::string &from, int64_t bytes, double ms,
		       const std::vector<std::string> &warn = {})
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "v", json_object_new_int(1));
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object_object_add(o, "path", json_object_new_string(path.c_str()));
	json_object_object_add(o, "step", json_object_new_int64((int64_t)step));
	json_object_object_add(o, "from", json_object_new_string(from.c_str()));
	if (bytes >= 0) {
		json_object_object_add(o, "bytes",
				       json_object_new_int64(bytes));
		json_object_object_add(o, "ms", json_object_new_double(ms));
	}
	if (!warn.empty()) {
		json_object *a = json_object_new_array();
		for (const std::string &w : warn)
			json_object_array_add(a,
					      json_object_new_string(w.c_str()));
		json_object_object_add(o, "warnings", a);
	}
	return to_line(o);
}

/* Where the plugin says JOB's newest checkpoint is. */
struct Where {
	std::string node;
	Endpoint addr;
	uint64_t step = 0;
	int64_t uid = -1;
};

} /* namespace */

/* Ask the plugin where JOB's newest checkpoint is; RET false with *ERR. */
static bool ask_where(Agent &a, uint64_t job, Where *w, std::string *err)
{
	json_object *q = json_object_new_object();
	json_object_object_add(q, "version", json_object_new_int(1));
	json_object_object_add(q, "op", json_object_new_string("ckpt_where"));
	json_object_object_add(q, "job", json_object_new_int64((int64_t)job));
	std::string reply;
	json_object *r = nullptr;
	if (a.plugin_request(to_line(q), &reply, err))
		r = parse_object(reply);
	if (!r || !reply_ok(r, err)) {
		if (r)
			json_object_put(r);
		return false;
	}
	w->node = get_str(r, "node");
	w->step = (uint64_t)get_int(r, "step");
	w->uid = get_int(r, "uid", -1);
	std::string addr = get_str(r, "addr");
	json_object_put(r);
	if (!parse_endpoint(addr, &w->addr, err))
		w->addr = Endpoint{};
	return true;
}

/* ckpt_get from W's node into this node's ROOT; RET the reply line, or
 * "" with *ERR. */
static std::string copy_from(const Options &opt, uint64_t job, Where &w,
			     uid_t owner, std::string *err)
{
	auto t0 = std::chrono::steady_clock::now();
	std::string cred, line, path;
	if (!munge_credential(opt.munge_socket, &cred, err))
		return "";
	int fd = tcp_connect(w.addr, 5000, err);
	if (fd < 0)
		return "";
	std::string req = cred + "\n{\"v\":1,\"op\":\"ckpt_get\",\"job\":" +
			  std::to_string(job) +
			  ",\"step\":" + std::to_string(w.step) + "}\n";
	Reader r(fd);
	json_object *h = nullptr;
	std::string out;
	if (!write_all(fd, req) || !r.line(&line, 30000, 64 * 1024) ||
	    !(h = parse_object(line))) {
		*err = "no reply from " + w.addr.str();
	} else if (reply_ok(h, err)) {
		uint64_t s = (uint64_t)get_int(h, "step", (int64_t)w.step);
		int64_t bytes = get_int(h, "bytes", -1);
		if (bytes >= 0 &&
		    receive_ckpt(opt.ckpt_dir, job, s, (uint64_t)bytes, r,
				 owner, w.node, &path, err)) {
			double ms =
				std::chrono::duration<double, std::milli>(
					std::chrono::steady_clock::now() - t0)
					.count();
			logf("fetch job %llu: step %llu from %s, %lld bytes in "
			     "%.0f ms (%.1f MB/s), verified",
			     (unsigned long long)job, (unsigned long long)s,
			     w.node.c_str(), (long long)bytes, ms,
			     ms > 0 ? bytes / 1e3 / ms : 0.0);
			out = found_line(path, s, w.node, bytes, ms);
		}
	}
	if (h)
		json_object_put(h);
	close(fd);
	return out;
}

std::string Agent::fetch(uint64_t job, const std::string &peer, uint64_t step,
			 uid_t uid)
{
	std::vector<std::string> warn;
	auto local = newest_local(opt_.ckpt_dir, job, warn);
	for (const std::string &w : warn)
		logf("fetch job %llu: %s", (unsigned long long)job, w.c_str());
	std::string j = std::to_string(job), err;
	Where w;
	if (!peer.empty()) {
		if (uid != 0)
			return fail_line("fetch from a named peer is for root");
		if (!parse_endpoint(peer, &w.addr, &err))
			return fail_line("fetch: peer " + err);
		w.node = peer;
		w.step = step;
	} else if (!ask_where(*this, job, &w, &err)) {
		if (local) { /* the plugin is away: what we have will do */
			warn.push_back("the plugin cannot say where job " + j +
				       "'s newest checkpoint is (" + err +
				       "): using " + opt_.node + "'s newest");
			return found_line(local->path, local->step, opt_.node,
					  -1, 0, warn);
		}
		return fail_line(
			"no checkpoint of job " + j + " on " + opt_.node +
			", and the plugin cannot say where one is: " + err);
	} else if (uid != 0 && (w.uid < 0 || uid != (uid_t)w.uid)) {
		/* A copy would belong to the caller: only the owner may. */
		return fail_line("job " + j + " is not yours (uid " +
				 std::to_string(uid) + ")");
	} else if (w.node == opt_.node && !local) {
		return fail_line("the plugin says job " + j +
				 "'s checkpoint is "
				 "here, but " +
				 job_dir(opt_.ckpt_dir, job) +
				 " has no complete one");
	} else if (w.node != opt_.node && w.addr.port.empty()) {
		return fail_line("ckpt_where for job " + j +
				 ": no address for " + w.node);
	}
	if (local && (w.node == opt_.node || local->step >= w.step))
		return found_line(local->path, local->step, opt_.node, -1, 0,
				  warn);
	/* Files go to the job's owner so its trainer can write beside them. */
	uid_t owner = uid != 0 ? uid : (w.uid >= 0 ? (uid_t)w.uid : (uid_t)-1);
	std::string out = copy_from(opt_, job, w, owner, &err);
	if (!out.empty())
		return out;
	logf("fetch job %llu from %s failed: %s", (unsigned long long)job,
	     w.node.c_str(), err.c_str());
	if (local) { /* an older local one beats none */
		warn.push_back("job " + j + "'s newest checkpoint (step " +
			       std::to_string(w.step) + " on " + w.node +
			       ") is out of reach (" + err +
			       "): using the older step " +
			       std::to_string(local->step) + " on " +
			       opt_.node);
		return found_line(local->path, local->step, opt_.node, -1, 0,
				  warn);
	}
	return fail_line("job " + j + "'s newest checkpoint (step " +
			 std::to_string(w.step) + " on " + w.node +
			 ") is out of reach (" + err + ") and " + opt_.node +
			 " has none");
}

} /* namespace tidal::agent */
