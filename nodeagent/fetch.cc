/*
 * fetch.cc - make a job's newest checkpoint available on this node.
 *
 *   1. the plugin's ckpt_where names every node known to hold one of the
 *      job's checkpoints (unless the request names a peer itself);
 *   2. each of them is asked what it holds now (ckpt_stat): the plugin's
 *      steps are only lower bounds, since a trainer that goes on writing
 *      rotates older checkpoints away;
 *   3. if this node has the newest step found (or a newer one), it is used
 *      as it is;
 *   4. else it is copied from the node that has it (ckpt_get), verified
 *      here with ckpt::verify and only then renamed into place with its
 *      .done marker, so a launcher never sees a partial or corrupt file;
 *      a holder that fails is passed over for the next newest; the next
 *      heartbeats tell the plugin of the copy (plugin_link.cc), so that a
 *      later fetch elsewhere finds it when the job's own nodes are gone.
 *
 * With the plugin unreachable, or no holder reachable, the newest local
 * checkpoint is used, and the reply's "warnings" say so (the launcher
 * copies them into the job's log); with none here either, the error names
 * the steps and nodes that could not be reached.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <json.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "nodeagent/agent.h"
#include "nodeagent/ckpt_local.h"
#include "nodeagent/metrics.h"
#include "nodeagent/requests.h"

namespace tidal::agent
{

using namespace tidal::wire;

namespace
{

std::string fail_line(const std::string &msg)
{
	return error_reply(msg) + "\n";
}

/* WARN: what the launcher should tell the job's log (corrupt newer
 * checkpoints skipped, the newest one out of reach). */
std::string found_line(const std::string &path, uint64_t step,
		       const std::string &from, int64_t bytes, double ms,
		       const std::vector<std::string> &warn = {})
{
	FetchReply r;
	r.ok = true;
	r.ckpt = { step, path };
	r.from = from;
	if (bytes >= 0) {
		r.bytes = (uint64_t)bytes;
		r.ms = ms;
	}
	r.warnings = warn;
	return encode(r);
}

/* A node that holds (or held) one of JOB's checkpoints; its step as the
 * plugin recorded it, then as it says.  Where the plugin says JOB's
 * checkpoints are, newest first (requests.h). */
using Holder = CkptHolder;
using Where = WhereReply;

} /* namespace */

/* Ask the plugin where JOB's checkpoints are; RET false with *ERR. */
static bool ask_where(Agent &a, uint64_t job, Where *w, std::string *err)
{
	std::string reply;
	return a.plugin_request(encode(CkptWhere{ job }), &reply, err) &&
	       parse_where_reply(reply, w, err);
}

/* One request to a holder's tidald and its reply header; the body (a
 * checkpoint) is read from RD.  Closed when it goes out of scope. */
struct PeerReply {
	int fd = -1;
	std::unique_ptr<Reader> rd;
	json_object *hdr = nullptr;

	PeerReply() = default;
	PeerReply(const PeerReply &) = delete;
	PeerReply &operator=(const PeerReply &) = delete;
	~PeerReply()
	{
		if (hdr)
			json_object_put(hdr);
		if (fd >= 0)
			close(fd);
	}
};

/* MUNGE-authenticated REQ (one line with its newline) to H; RET true
 * with an ok header in *P, or false with *ERR. */
static bool peer_ask(const Options &opt, const Holder &h, const std::string &req,
		     PeerReply *p, std::string *err)
{
	std::string cred, line;
	if (!munge_credential(opt.munge_socket, &cred, err) ||
	    (p->fd = tcp_connect(h.addr, 5000, err)) < 0)
		return false;
	p->rd = std::make_unique<Reader>(p->fd);
	if (!write_all(p->fd, cred + "\n" + req) ||
	    !p->rd->line(&line, 30000, 64 * 1024) ||
	    !(p->hdr = parse_object(line))) {
		*err = "no reply from " + h.addr.str();
		return false;
	}
	return reply_ok(p->hdr, err);
}

/* What H holds of JOB now (ckpt_stat): updates H->step, or H->problem. */
static void stat_holder(const Options &opt, uint64_t job, Holder *h)
{
	PeerReply p;
	CkptOffer o;
	if (!peer_ask(opt, *h, encode(PeerRequest{ "ckpt_stat", job, 0 }), &p,
		      &h->problem))
		return;
	if (decode(p.hdr, &o, h->step, &h->problem))
		h->step = o.step;
}

/* ckpt_get of JOB's step H.step (or newer) from H into this node's ROOT;
 * RET the reply line (with WARN), or "" with *ERR.  *GOT: the copy. */
static std::string copy_from(const Options &opt, uint64_t job,
			     const Holder &h, uid_t owner,
			     const std::vector<std::string> &warn,
			     CkptRef *got, std::string *err)
{
	auto t0 = std::chrono::steady_clock::now();
	PeerReply p;
	if (!peer_ask(opt, h, encode(PeerRequest{ "ckpt_get", job, h.step }),
		      &p, err))
		return "";
	std::string path;
	CkptOffer hdr;
	if (!decode(p.hdr, &hdr, h.step, err)) {
		*err = h.addr.str() + " " + *err;
		return "";
	}
	uint64_t s = hdr.step;
	if (!receive_ckpt(opt.ckpt_dir, job, s, hdr.bytes, *p.rd, owner,
			  h.node, &path, err))
		return "";
	double ms = std::chrono::duration<double, std::milli>(
			    std::chrono::steady_clock::now() - t0)
			    .count();
	obs::Registry &mr = agent_metrics();
	mr.add("tidal_agent_fetches_total", { "ok" });
	mr.add("tidal_agent_fetch_bytes_total", {}, (double)hdr.bytes);
	mr.observe("tidal_agent_fetch_seconds", {}, ms / 1e3);
	logf("fetch job %llu: step %llu from %s, %lld bytes in %.0f ms "
	     "(%.1f MB/s), verified",
	     (unsigned long long)job, (unsigned long long)s, h.node.c_str(),
	     (long long)hdr.bytes, ms, ms > 0 ? hdr.bytes / 1e3 / ms : 0.0);
	*got = { s, path };
	return found_line(path, s, h.node, (int64_t)hdr.bytes, ms, warn);
}

/* The warning for an older checkpoint used while JOB's newer ones are
 * out of reach (GONE: problems()): WHERE is "on n1" or "from n1". */
static std::string older_used(const std::string &job, const std::string &gone,
			      uint64_t step, const std::string &where)
{
	return "job " + job + "'s newer checkpoints are out of reach (" + gone +
	       "): using the older step " + std::to_string(step) + " " + where;
}

/* "step 1200 on n4 (why)" for each holder that could not serve. */
static std::string problems(const std::vector<Holder> &hs)
{
	std::string s;
	for (const Holder &h : hs)
		if (!h.problem.empty())
			s += (s.empty() ? "" : "; ") +
			     (h.step ? "step " + std::to_string(h.step) + " on "
				     : std::string()) +
			     h.node + " (" + h.problem + ")";
	return s;
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
		if (uid != 0) {
			logf("local: uid %u refused: fetch of job %s from a "
			     "named peer is for root", (unsigned)uid,
			     j.c_str());
			return fail_line("fetch from a named peer is for root");
		}
		Holder h;
		if (!parse_endpoint(peer, &h.addr, &err))
			return fail_line("fetch: peer " + err);
		h.node = peer;
		h.step = step;
		w.holders.push_back(h);
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
		logf("local: uid %u refused: job %s is not theirs",
		     (unsigned)uid, j.c_str());
		return fail_line("job " + j + " is not yours (uid " +
				 std::to_string(uid) + ")");
	}
	/* What each other holder has now; this node's own is LOCAL. */
	uint64_t recorded = 0;
	std::vector<Holder> others;
	for (Holder &h : w.holders) {
		recorded = std::max(recorded, h.step);
		if (h.node == opt_.node)
			continue;
		if (h.problem.empty() && peer.empty())
			stat_holder(opt_, job, &h);
		others.push_back(h);
	}
	std::stable_sort(others.begin(), others.end(),
			 [](const Holder &a, const Holder &b) {
				 return a.problem.empty() > b.problem.empty() ||
					(a.problem.empty() == b.problem.empty() &&
					 a.step > b.step);
			 });
	/* Files go to the job's owner so its trainer can write beside them. */
	uid_t owner = uid != 0 ? uid : (w.uid >= 0 ? (uid_t)w.uid : (uid_t)-1);
	for (Holder &h : others) {
		if (!h.problem.empty())
			break; /* sorted: the rest cannot serve either */
		if (local && local->step >= h.step)
			break; /* ours is as new as the best out there */
		/* An older copy than the plugin knows of: say why. */
		std::vector<std::string> w2 = warn;
		std::string gone = problems(others);
		if (!gone.empty() && h.step < recorded)
			w2.push_back(older_used(j, gone, h.step, "from " + h.node));
		CkptRef got;
		std::string out = copy_from(opt_, job, h, owner, w2, &got,
					    &err);
		if (!out.empty()) {
			copied(job, got);
			return out;
		}
		logf("fetch job %llu from %s failed: %s",
		     (unsigned long long)job, h.node.c_str(), err.c_str());
		agent_metrics().add("tidal_agent_fetches_total", { "failed" });
		h.problem = err;
	}
	std::string gone = problems(others);
	if (local) { /* the newest reachable, or an older local one */
		if (!gone.empty() && local->step < recorded)
			warn.push_back(older_used(j, gone, local->step,
						  "on " + opt_.node));
		return found_line(local->path, local->step, opt_.node, -1, 0,
				  warn);
	}
	if (others.empty())
		return fail_line("the plugin says job " + j +
				 "'s checkpoint is here, but " +
				 job_dir(opt_.ckpt_dir, job) +
				 " has no complete one");
	return fail_line("job " + j + "'s checkpoints are out of reach (" +
			 gone + ") and " + opt_.node + " has none");
}

} /* namespace tidal::agent */
