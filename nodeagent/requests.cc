/*
 * requests.cc - tidald's wire parsing (see requests.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "nodeagent/requests.h"

#include <json.h>

namespace tidal::agent
{

using namespace tidal::wire;

bool parse_local_request(const std::string &line, LocalRequest *out,
			 std::string *err)
{
	json_object *o = parse_object(line);
	if (!o) {
		*err = "request is not a JSON object";
		return false;
	}
	int64_t v = version_of(o), job = 0, step = 0;
	out->op = get_str(o, "op");
	out->peer = get_str(o, "peer");
	int has_job = get_integer_in(o, "job", 1, kMaxJobId, &job);
	int has_step = get_integer_in(o, "step", 0, INT64_MAX, &step);
	json_object_put(o);
	if (v != 1) {
		*err = "wire version " + std::to_string(v) +
		       " not supported (tidald speaks 1)";
		return false;
	}
	if (out->op == "hello")
		return true;
	if (out->op != "fetch") {
		*err = "unknown op '" + out->op + "' (hello, fetch)";
		return false;
	}
	if (has_job <= 0) {
		*err = "fetch: \"job\" must be a job id > 0";
		return false;
	}
	if (has_step < 0) {
		*err = "fetch: \"step\" must be an integer >= 0";
		return false;
	}
	out->job = (uint64_t)job;
	out->step = (uint64_t)step;
	return true;
}

bool parse_peer_request(const std::string &line, PeerRequest *out,
			std::string *err)
{
	json_object *o = parse_object(line);
	int64_t job = 0, step = 0;
	out->op = get_str(o, "op");
	int has_job = get_integer_in(o, "job", 1, kMaxJobId, &job);
	int has_step = get_integer_in(o, "step", 0, INT64_MAX, &step);
	if (o)
		json_object_put(o);
	if ((out->op != "ckpt_get" && out->op != "ckpt_stat") ||
	    has_job <= 0 || has_step < 0) {
		*err = "expected {\"v\":1,\"op\":\"ckpt_get\",\"job\":J,"
		       "\"step\":S} or {\"v\":1,\"op\":\"ckpt_stat\","
		       "\"job\":J} (J > 0 and S >= 0 integers)";
		return false;
	}
	out->job = (uint64_t)job;
	out->step = (uint64_t)step;
	return true;
}

bool parse_where_reply(const std::string &line, WhereReply *out,
		       std::string *err)
{
	*out = WhereReply();
	json_object *r = parse_object(line), *hs;
	if (!reply_ok(r, err)) {
		if (r)
			json_object_put(r);
		return false;
	}
	int64_t uid;
	if (get_integer_in(r, "uid", 0, 4294967295LL, &uid) > 0)
		out->uid = uid;
	auto add = [&](json_object *e) {
		CkptHolder h;
		int64_t step = 0;
		h.node = get_str(e, "node");
		if (get_integer_in(e, "step", 0, INT64_MAX, &step) < 0)
			h.problem = "no step for " + h.node;
		h.step = (uint64_t)step;
		std::string e_err;
		if (!parse_endpoint(get_str(e, "addr"), &h.addr, &e_err))
			h.problem = "no address for " + h.node;
		for (const CkptHolder &o : out->holders)
			if (o.node == h.node)
				return;
		out->holders.push_back(h);
	};
	/* "holders" (every node known, newest first); a plugin without it
	 * names only the newest one's node. */
	if (json_object_object_get_ex(r, "holders", &hs) &&
	    json_object_get_type(hs) == json_type_array)
		for (size_t i = 0; i < json_object_array_length(hs); i++)
			add(json_object_array_get_idx(hs, i));
	if (out->holders.empty())
		add(r);
	json_object_put(r);
	return true;
}

bool parse_ckpt_header(json_object *hdr, uint64_t dflt_step, CkptHeader *out,
		       std::string *err)
{
	int64_t step = (int64_t)dflt_step, bytes;
	if (get_integer_in(hdr, "step", 0, INT64_MAX, &step) < 0) {
		*err = "sent no valid step";
		return false;
	}
	if (get_integer_in(hdr, "bytes", 0, INT64_MAX, &bytes) <= 0) {
		*err = "sent no size";
		return false;
	}
	out->step = (uint64_t)step;
	out->bytes = (uint64_t)bytes;
	return true;
}

} /* namespace tidal::agent */
