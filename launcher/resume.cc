/*
 * resume.cc - picking the checkpoint a generation resumes from.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "launcher/resume.h"

#include "launcher/control.h"
#include "launcher/log.h"
#include "node/checkpoint.h"

#include <json.h>
#include <sys/stat.h>

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

/* One request to tidald; RET the parsed reply (caller puts it) or null
 * with ERR. */
json_object *tidald_call(const std::string &sock, json_object *req,
			 double timeout_s, std::string &err)
{
	std::string line = json_object_to_json_string_ext(
		req, JSON_C_TO_STRING_PLAIN);
	json_object_put(req);
	std::string reply;
	if (!wire::unix_request(sock, line, &reply, (int)(timeout_s * 1000),
				&err))
		return nullptr;
	json_object *o = json_tokener_parse(reply.c_str());
	json_object *ok;
	if (!o || !json_object_object_get_ex(o, "ok", &ok)) {
		err = sock + ": bad reply '" + reply + "'";
		if (o)
			json_object_put(o);
		return nullptr;
	}
	if (!json_object_get_boolean(ok)) {
		json_object *e;
		err = sock + ": " +
		      (json_object_object_get_ex(o, "error", &e) ?
			       json_object_get_string(e) : "refused");
		json_object_put(o);
		return nullptr;
	}
	return o;
}

json_object *request(const char *op)
{
	return wire::new_message(op);
}

/* Ask tidald to make JOB's newest checkpoint available locally. */
bool tidald_fetch(const std::string &sock, const std::string &job,
		  Resume &out, std::string &err)
{
	json_object *r = request("fetch");
	char *end;
	long long id = std::strtoll(job.c_str(), &end, 10);
	json_object_object_add(r, "job", *end ? json_object_new_string(
							job.c_str()) :
						json_object_new_int64(id));
	json_object *o = tidald_call(sock, r, kFetchTimeoutS, err);
	if (!o)
		return false;
	json_object *v;
	if (json_object_object_get_ex(o, "path", &v))
		out.path = json_object_get_string(v);
	if (json_object_object_get_ex(o, "step", &v))
		out.step = (uint64_t)json_object_get_int64(v);
	out.from = json_object_object_get_ex(o, "from", &v) ?
			   json_object_get_string(v) : "tidald";
	/* Corrupt newer ones it skipped, an unreachable newest one. */
	if (json_object_object_get_ex(o, "warnings", &v) &&
	    json_object_is_type(v, json_type_array))
		for (size_t i = 0; i < json_object_array_length(v); i++)
			note("warning: tidald: %s",
			     json_object_get_string(
				     json_object_array_get_idx(v, i)));
	json_object_put(o);
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
		std::string err;
		json_object *o = tidald_call(tidald_sock, request("hello"), 10,
					     err);
		json_object *v;
		if (o && json_object_object_get_ex(o, "ckpt_dir", &v)) {
			std::string d = json_object_get_string(v);
			json_object_put(o);
			return d;
		}
		if (o)
			json_object_put(o);
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
