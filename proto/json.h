/*
 * json.h - the wire's messages as json-c objects: the envelope every
 * message carries (see wire.h for the framing and defaults.h for the
 * version) and typed access to a message's fields.  Only json-c: the
 * plugin's engine, which never touches a socket, uses this part alone.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <string>

#include "proto/defaults.h"

struct json_object;

namespace tidal::wire
{

/* ---- the envelope ---- */

/* O's wire version: "v", else the older "version"; 0 if neither is a
 * JSON integer (or O is null). */
int64_t version_of(json_object *o);
/* A new message: {"v":1} and, with OP, "op". */
json_object *new_message(const char *op = nullptr);
/* A new reply {"v":1,"ok":true}, for the caller to add to. */
json_object *ok_reply();
/* {"v":1,"ok":false,"error":MSG}, one line without its newline. */
std::string error_reply(const std::string &msg);

/* ---- json-c access ---- */

/* Parse one JSON object; NULL if TEXT is not one. */
json_object *parse_object(const std::string &text);
/* KEY's value, or DFLT when KEY is absent or null.  These are lenient, as
 * json-c is: get_str writes any value as text (5 -> "5"), get_int and
 * get_num convert ("12" -> 12), get_bool takes any truthy value. */
std::string get_str(json_object *o, const char *key,
		    const std::string &dflt = "");
int64_t get_int(json_object *o, const char *key, int64_t dflt = 0);
double get_num(json_object *o, const char *key, double dflt = 0);
bool get_bool(json_object *o, const char *key, bool dflt = false);
/* Strict: KEY's value only if it has that JSON type (get_number: an
 * integer or a double), else DFLT; *PRESENT (if given) says which. */
std::string get_string(json_object *o, const char *key,
		       const std::string &dflt = "");
int64_t get_integer(json_object *o, const char *key, int64_t dflt = 0);
double get_number(json_object *o, const char *key, double dflt = 0,
		  bool *present = nullptr);
/* KEY as a JSON integer in [LO, HI]: RET 1 with *OUT, 0 if absent (or
 * null), -1 if present but not such an integer. */
int get_integer_in(json_object *o, const char *key, int64_t lo, int64_t hi,
		   int64_t *out);
/* The reply's "ok"; if false, *ERR = its "error" (or what is wrong). */
bool reply_ok(json_object *o, std::string *err);
/* One line, plain, with the trailing newline; takes O's reference. */
std::string to_line(json_object *o);

} /* namespace tidal::wire */
