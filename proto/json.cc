/*
 * json.cc - the envelope and typed field access (see json.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "proto/json.h"

#include <json.h>

namespace tidal::wire
{

int64_t version_of(json_object *o)
{
	int64_t v = get_integer(o, TIDAL_WIRE_VERSION_KEY, 0);
	return v ? v : get_integer(o, TIDAL_WIRE_VERSION_KEY_OLD, 0);
}

json_object *new_message(const char *op)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, TIDAL_WIRE_VERSION_KEY,
			       json_object_new_int(TIDAL_WIRE_VERSION));
	if (op)
		json_object_object_add(o, "op", json_object_new_string(op));
	return o;
}

json_object *ok_reply()
{
	json_object *o = new_message();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

std::string error_reply(const std::string &msg)
{
	json_object *o = new_message();
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(msg.c_str()));
	std::string s = to_line(o);
	s.pop_back();
	return s;
}

json_object *parse_object(const std::string &text)
{
	json_object *o = json_tokener_parse(text.c_str());
	if (o && json_object_get_type(o) != json_type_object) {
		json_object_put(o);
		o = nullptr;
	}
	return o;
}

/* KEY's value in O; null if O is null, KEY is absent, or it is null. */
static json_object *field(json_object *o, const char *key)
{
	json_object *v = nullptr;
	return o && json_object_object_get_ex(o, key, &v) ? v : nullptr;
}

static bool is(json_object *v, json_type t)
{
	return v && json_object_is_type(v, t);
}

std::string get_str(json_object *o, const char *key, const std::string &dflt)
{
	json_object *v = field(o, key);
	return v ? json_object_get_string(v) : dflt;
}

int64_t get_int(json_object *o, const char *key, int64_t dflt)
{
	json_object *v = field(o, key);
	return v ? json_object_get_int64(v) : dflt;
}

double get_num(json_object *o, const char *key, double dflt)
{
	json_object *v = field(o, key);
	return v ? json_object_get_double(v) : dflt;
}

bool get_bool(json_object *o, const char *key, bool dflt)
{
	json_object *v = field(o, key);
	return v ? json_object_get_boolean(v) : dflt;
}

std::string get_string(json_object *o, const char *key, const std::string &dflt)
{
	json_object *v = field(o, key);
	return is(v, json_type_string) ? json_object_get_string(v) : dflt;
}

int64_t get_integer(json_object *o, const char *key, int64_t dflt)
{
	json_object *v = field(o, key);
	return is(v, json_type_int) ? json_object_get_int64(v) : dflt;
}

double get_number(json_object *o, const char *key, double dflt, bool *present)
{
	json_object *v = field(o, key);
	bool ok = is(v, json_type_double) || is(v, json_type_int);
	if (present)
		*present = ok;
	return ok ? json_object_get_double(v) : dflt;
}

int get_integer_in(json_object *o, const char *key, int64_t lo, int64_t hi,
		   int64_t *out)
{
	json_object *v = field(o, key);
	if (!v)
		return 0;
	if (!is(v, json_type_int))
		return -1;
	/* json-c clamps a literal beyond int64 to its limits. */
	int64_t n = json_object_get_int64(v);
	if (n < lo || n > hi)
		return -1;
	*out = n;
	return 1;
}

bool reply_ok(json_object *o, std::string *err)
{
	if (!o) {
		*err = "malformed reply (not a JSON object)";
		return false;
	}
	if (get_bool(o, "ok"))
		return true;
	*err = get_str(o, "error");
	if (err->empty()) /* absent, null or "": say so all the same */
		*err = "failed (no error given)";
	return false;
}

std::string to_line(json_object *o)
{
	std::string s = json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	json_object_put(o);
	return s + "\n";
}

} /* namespace tidal::wire */
