/*
 * resume.cc - picking the checkpoint a generation resumes from.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "launcher/resume.h"

#include "launcher/control.h"
#include "launcher/log.h"
#include "node/checkpoint.h"
#include "proto/messages.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

namespace tidal::launch {

/* How long find_step() waits for the plugin to learn of node 0's newest
 * checkpoint: three of tidald's default 10 s heartbeats. */
constexpr std::chrono::seconds kCatchUp{30};

namespace {

/* tidald may have to copy a checkpoint from another node. */
constexpr double kFetchTimeoutS = 600;

bool exists(const std::string &p)
{
	struct stat st;
	return stat(p.c_str(), &st) == 0;
}

/* A request OP to tidald about JOB; false with ERR if JOB is not a
 * Slurm job id (tidald's requests name jobs by id). */
bool job_request(const std::string &op, const std::string &job,
		 wire::LocalRequest &q, std::string &err)
{
	q.op = op;
	char *end;
	q.job = std::strtoull(job.c_str(), &end, 10);
	if (job.empty() || *end || q.job == 0 ||
	    q.job > (uint64_t)wire::kMaxJobId) {
		err = "job '" + job + "' is not a Slurm job id (1 to " +
		      std::to_string(wire::kMaxJobId) + "): tidald's " + op +
		      " takes a job id";
		return false;
	}
	return true;
}

/* Ask tidald to make JOB's newest checkpoint available locally. */
bool tidald_fetch(const std::string &sock, const std::string &job,
		  Resume &out, std::string &err)
{
	wire::LocalRequest q;
	if (!job_request("fetch", job, q, err))
		return false;
	std::string reply;
	wire::FetchReply r;
	if (!wire::unix_request(sock, wire::encode(q), &reply,
				(int)(kFetchTimeoutS * 1000), &err))
		return false;
	if (!wire::decode(reply, &r) || !r.ok) {
		err = sock + ": " +
		      (r.error.empty() ? "bad reply '" + reply + "'" : r.error);
		return false;
	}
	out.path = r.ckpt.path;
	out.step = r.ckpt.step;
	out.from = r.from.empty() ? "tidald" : r.from;
	/* Corrupt newer ones it skipped, an unreachable newest one. */
	for (const std::string &w : r.warnings)
		note("warning: tidald: %s", w.c_str());
	/* Trust, but verify: it is what the trainers will load. */
	uint64_t step;
	if (!ckpt::verify(out.path, &step, err))
		return false;
	out.step = step;
	return true;
}

} /* namespace */

std::string tidald_socket(const std::string &run_dir, const std::string &node)
{
	return run_dir + "/" + node + "/tidald.sock";
}

std::string resolve_ckpt_root(const std::string &flag,
			      const std::string &tidald_sock)
{
	if (!flag.empty())
		return flag;
	if (exists(tidald_sock)) {
		std::string err, reply;
		wire::LocalRequest q;
		wire::HelloReply h;
		q.op = "hello";
		if (wire::unix_request(tidald_sock, wire::encode(q), &reply,
				       10 * 1000, &err) &&
		    wire::decode(reply, &h, &err) && !h.ckpt_dir.empty())
			return h.ckpt_dir;
		note("warning: tidald hello: %s; not using its checkpoint "
		     "directory", err.c_str());
	}
	const char *e = std::getenv("TIDAL_CKPT_DIR");
	return e && *e ? e : "/var/lib/tidal/ckpt";
}

/* This node's newest complete checkpoint, warnings logged. */
static std::optional<Resume> local_newest(const std::string &job_dir)
{
	std::vector<std::string> warnings;
	std::optional<ckpt::Found> f = ckpt::newest(job_dir, warnings);
	for (const std::string &w : warnings)
		note("warning: %s", w.c_str());
	if (f)
		return Resume{ f->path, f->step, "local" };
	return std::nullopt;
}

std::optional<Resume> find_newest(const std::string &job_dir,
				  const std::string &job,
				  const std::string &tidald_sock,
				  std::string &none_why)
{
	/* tidald first: it compares what is here with the plugin's newest
	 * location, so a job back on a node with an older checkpoint does
	 * not resume from that one. */
	std::string terr;
	if (exists(tidald_sock)) {
		Resume r;
		if (tidald_fetch(tidald_sock, job, r, terr))
			return r;
		note("tidald could not give a checkpoint of job %s: %s; "
		     "looking in %s", job.c_str(), terr.c_str(),
		     job_dir.c_str());
	}
	std::optional<Resume> r = local_newest(job_dir);
	if (!r)
		none_why = "no checkpoint in " + job_dir +
			   (terr.empty() ? std::string() :
					   " and none from tidald: " + terr);
	return r;
}

int64_t plan_batch(const std::string &job, const std::string &tidald_sock,
		   std::string &err, int *group_size, std::string *share)
{
	if (group_size)
		*group_size = 0;
	if (share)
		*share = "interleave";
	if (!exists(tidald_sock))
		return 0; /* no scheduler to ask: nothing chosen */
	wire::LocalRequest q;
	if (!job_request("job_plan", job, q, err))
		return -1;
	std::string reply;
	wire::JobPlanReply r;
	if (!wire::unix_request(tidald_sock, wire::encode(q), &reply, 10 * 1000,
				&err))
		return -1;
	if (!wire::decode(reply, &r) || !r.ok) {
		err = tidald_sock + ": " +
		      (r.error.empty() ? "bad reply '" + reply + "'" : r.error);
		return -1;
	}
	if (group_size)
		*group_size = r.group_size;
	if (share && !r.share.empty())
		*share = r.share;
	return r.batch;
}

std::string shared_gpu(const std::string &node, int local,
		       const char *shards_on_node, const char *visible)
{
	if (!shards_on_node || atoi(shards_on_node) <= 0 || !visible)
		return "";
	std::string v = visible, dev;
	size_t at = 0;
	for (int i = 0; i <= local; i++) {
		if (at > v.size())
			return "";
		size_t comma = v.find(',', at);
		dev = v.substr(at, comma == std::string::npos
					   ? std::string::npos
					   : comma - at);
		at = comma == std::string::npos ? v.size() + 1 : comma + 1;
	}
	if (dev.empty() ||
	    dev.find_first_not_of("0123456789") != std::string::npos)
		return ""; /* a UUID or MIG name: no index to name it by */
	return node + "-gpu" + dev;
}

std::string interleave_group(const std::string &node, int local,
			     const char *shards_on_node, const char *visible,
			     int group_size)
{
	std::string gpu = shared_gpu(node, local, shards_on_node, visible);
	if (gpu.empty())
		return "";
	return gpu + "/" + std::to_string(std::max(1, std::min(4, group_size)));
}

bool find_step(const std::string &job_dir, const std::string &job,
	       const std::string &tidald_sock, uint64_t step, Resume &out,
	       std::string &err)
{
	std::string p = ckpt::file_name(job_dir, step, ".tck");
	uint64_t got;
	if (exists(ckpt::file_name(job_dir, step, ".done")) &&
	    ckpt::verify(p, &got, err) && got == step) {
		out = Resume{ p, step, "local" };
		return true;
	}
	if (!exists(tidald_sock)) {
		err = "checkpoint step " + std::to_string(step) +
		      " is not in " + job_dir + " and there is no tidald (" +
		      tidald_sock + ") to fetch it; HINT: put the checkpoint "
		      "directory on shared storage or run tidald on every node";
		return false;
	}
	/* The plugin learns of a checkpoint from node 0's agent heartbeat,
	 * so right after node 0 wrote it tidald may still offer an older
	 * one: ask again until it catches up (a few heartbeats). */
	auto give_up = std::chrono::steady_clock::now() + kCatchUp;
	for (;;) {
		if (!tidald_fetch(tidald_sock, job, out, err))
			return false;
		if (out.step >= step)
			break;
		if (std::chrono::steady_clock::now() >= give_up) {
			err = "tidald still offers step " +
			      std::to_string(out.step) + " after " +
			      std::to_string(kCatchUp.count()) +
			      " s; node 0 resumes from step " +
			      std::to_string(step);
			return false;
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(500));
	}
	if (out.step != step) {
		err = "tidald fetched step " + std::to_string(out.step) +
		      ", node 0 resumes from step " + std::to_string(step);
		return false;
	}
	return true;
}

} /* namespace tidal::launch */
