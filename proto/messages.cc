/*
 * messages.cc - encoders and decoders of the shared messages (see
 * messages.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "proto/messages.h"

#include <json.h>

namespace tidal::wire
{

std::string encode(const HeartbeatReply &m)
{
	json_object *o = new_message();
	json_object_object_add(o, "ok", json_object_new_boolean(m.ok));
	if (!m.ok) {
		json_object_object_add(o, "error",
				       json_object_new_string(m.error.c_str()));
		if (m.reregister)
			json_object_object_add(o, "register",
					       json_object_new_boolean(1));
		return to_line(o);
	}
	json_object *cmds = json_object_new_array();
	for (const AgentCommand &c : m.commands) {
		json_object *e = json_object_new_object();
		json_object_object_add(e, "id",
				       json_object_new_int64((int64_t)c.id));
		json_object_object_add(e, "op",
				       json_object_new_string(c.op.c_str()));
		json_object_object_add(e, "job",
				       json_object_new_int64((int64_t)c.job));
		json_object_array_add(cmds, e);
	}
	json_object_object_add(o, "commands", cmds);
	json_object *keep = json_object_new_array();
	for (const auto &[job, step] : m.keep) {
		json_object *e = json_object_new_object();
		json_object_object_add(e, "job",
				       json_object_new_int64((int64_t)job));
		json_object_object_add(e, "step",
				       json_object_new_int64((int64_t)step));
		json_object_array_add(keep, e);
	}
	json_object_object_add(o, "keep", keep);
	return to_line(o);
}

/* KEY's JSON array in O, or null. */
static json_object *array(json_object *o, const char *key)
{
	json_object *a;
	return json_object_object_get_ex(o, key, &a) &&
			       json_object_is_type(a, json_type_array)
		       ? a
		       : nullptr;
}

bool decode(const std::string &line, HeartbeatReply *out)
{
	*out = HeartbeatReply();
	json_object *r = parse_object(line), *a;
	if (!reply_ok(r, &out->error)) {
		out->reregister = get_bool(r, "register");
		if (r)
			json_object_put(r);
		return r != nullptr;
	}
	out->ok = true;
	if ((a = array(r, "keep")))
		for (size_t i = 0; i < json_object_array_length(a); i++) {
			json_object *k = json_object_array_get_idx(a, i);
			int64_t job, step;
			if (get_integer_in(k, "job", 1, kMaxJobId, &job) > 0 &&
			    get_integer_in(k, "step", 1, INT64_MAX, &step) > 0)
				out->keep.emplace_back(job, step);
		}
	if ((a = array(r, "commands")))
		for (size_t i = 0; i < json_object_array_length(a); i++) {
			json_object *c = json_object_array_get_idx(a, i);
			int64_t id, job;
			if (get_integer_in(c, "id", 1, INT64_MAX, &id) <= 0 ||
			    get_integer_in(c, "job", 1, kMaxJobId, &job) <= 0)
				continue;
			out->commands.push_back({ (uint64_t)id,
						  get_str(c, "op"),
						  (uint64_t)job });
		}
	json_object_put(r);
	return true;
}

} /* namespace tidal::wire */
