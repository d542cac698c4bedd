/*
 * profile_gavel.cc - the Gavel throughput JSON: tuple keys parsed by hand
 * (names hold spaces, dashes and parentheses), values checked for shape,
 * every error naming the file, worker type and key.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/profiles/profile_gavel.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <json-c/json.h>

namespace tidal {

static bool fail(std::string *err, const std::string &msg)
{
	if (err)
		*err = msg;
	return false;
}

static void skip_blanks(const std::string &s, size_t *i)
{
	while (*i < s.size() && std::isspace((unsigned char)s[*i]))
		(*i)++;
}

/* A positive int in S[I, END); false on sign, junk or overflow. */
static bool positive_int(const std::string &s, size_t i, size_t end, int *out)
{
	if (i >= end || !std::isdigit((unsigned char)s[i]))
		return false;
	int v = 0;
	auto r = std::from_chars(s.data() + i, s.data() + end, v);
	if (r.ec != std::errc() || r.ptr != s.data() + end || v <= 0)
		return false;
	*out = v;
	return true;
}

/* The quoted string starting at *I (at the quote); *I ends past it. */
static bool quoted(const std::string &s, size_t *i, std::string *out,
		   std::string *why)
{
	char q = s[*i];
	out->clear();
	for (size_t k = *i + 1; k < s.size(); k++) {
		char c = s[k];
		if (c == q) {
			*i = k + 1;
			return true;
		}
		if (c == '\\' && k + 1 < s.size() &&
		    std::strchr("\\'\"", s[k + 1])) {
			c = s[++k];
		}
		out->push_back(c);
	}
	return fail(why, "unterminated job type string");
}

bool parse_gavel_key(const std::string &key, GavelJobKey *out,
		     std::string *why)
{
	const char *shape = "not \"('<job_type>', <scale_factor>)\"";
	size_t i = 0;
	skip_blanks(key, &i);
	if (i >= key.size() || key[i] != '(')
		return fail(why, shape);
	i++;
	skip_blanks(key, &i);
	if (i >= key.size() || (key[i] != '\'' && key[i] != '"'))
		return fail(why, shape);
	GavelJobKey k;
	if (!quoted(key, &i, &k.job_type, why))
		return false;
	if (k.job_type.empty())
		return fail(why, "empty job type");
	skip_blanks(key, &i);
	if (i >= key.size() || key[i] != ',')
		return fail(why, shape);
	i++;
	size_t end = key.find_last_not_of(" \t\r\n");
	if (end == std::string::npos || key[end] != ')' || end < i)
		return fail(why, shape);
	skip_blanks(key, &i);
	size_t stop = end;
	while (stop > i && std::isspace((unsigned char)key[stop - 1]))
		stop--;
	if (!positive_int(key, i, stop, &k.scale_factor))
		return fail(why, "scale factor '" + key.substr(i, stop - i) +
					 "' is not a positive integer");
	*out = std::move(k);
	return true;
}

std::string gavel_key_str(const GavelJobKey &k)
{
	return "('" + k.job_type + "', " + std::to_string(k.scale_factor) + ")";
}

GavelJobType split_gavel_job_type(const std::string &job_type)
{
	static const std::string tag = " (batch size ";
	GavelJobType t{job_type, 0};
	size_t open = job_type.rfind(tag);
	if (open == std::string::npos || job_type.back() != ')')
		return t;
	size_t first = open + tag.size(), last = job_type.size() - 1;
	int b = 0;
	if (!positive_int(job_type, first, last, &b))
		return t;
	t.model = job_type.substr(0, open);
	t.batch_size = b;
	return t;
}

std::string gavel_job_type(const std::string &model, int batch_size)
{
	return model + " (batch size " + std::to_string(batch_size) + ")";
}

/* ------------------------------------------------------------ parsing */

/* A finite, non-negative JSON number (json-c takes NaN and Infinity). */
static bool throughput(json_object *o, double *v)
{
	json_type t = json_object_get_type(o);
	if (t != json_type_double && t != json_type_int)
		return false;
	*v = json_object_get_double(o);
	return std::isfinite(*v) && *v >= 0;
}

static bool parse_pair(json_object *v, GavelPair *p)
{
	if (json_object_get_type(v) != json_type_array ||
	    json_object_array_length(v) != 2)
		return false;
	return throughput(json_object_array_get_idx(v, 0), &p->self) &&
	       throughput(json_object_array_get_idx(v, 1), &p->other);
}

/* One "('<job_type>', <sf>)" object.  WHERE is "file: worker: key \"k\"". */
static bool parse_entry(const std::string &where, json_object *obj,
			GavelEntry *e, std::string *err)
{
	if (json_object_get_type(obj) != json_type_object)
		return fail(err, where + ": value must be an object");
	json_object_object_foreach(obj, inner, val)
	{
		std::string ik = inner;
		if (ik == "null") {
			double v = 0;
			if (!throughput(val, &v))
				return fail(err, where + ": \"null\" (isolated) "
						 "must be a non-negative number");
			e->isolated = v;
			continue;
		}
		std::string why;
		GavelJobKey k;
		std::string at = where + ": inner key \"" + ik + "\"";
		if (!parse_gavel_key(ik, &k, &why))
			return fail(err, at + ": " + why);
		GavelPair p;
		if (!parse_pair(val, &p))
			return fail(err, at + ": packed value must be "
					 "[self, other], two non-negative numbers");
		if (!e->packed.emplace(k, p).second)
			return fail(err, at + ": repeats " + gavel_key_str(k));
	}
	return true;
}

static bool parse_worker(const std::string &where, json_object *obj,
			 std::map<GavelJobKey, GavelEntry> *jobs,
			 std::string *err)
{
	if (json_object_get_type(obj) != json_type_object)
		return fail(err, where + ": value must be an object of "
				 "\"('<job_type>', <sf>)\" keys");
	json_object_object_foreach(obj, key, val)
	{
		std::string at = where + ": key \"" + key + "\"";
		std::string why;
		GavelJobKey k;
		if (!parse_gavel_key(key, &k, &why))
			return fail(err, at + ": " + why);
		GavelEntry e;
		if (!parse_entry(at, val, &e, err))
			return false;
		if (!jobs->emplace(k, std::move(e)).second)
			return fail(err, at + ": repeats " + gavel_key_str(k));
	}
	return true;
}

/* "name:line: json-c's reason" for a syntax error at OFFSET. */
static std::string syntax_error(const std::string &name,
				const std::string &text, size_t offset,
				const char *what)
{
	offset = std::min(offset, text.size());
	long line = 1 + std::count(text.begin(), text.begin() + offset, '\n');
	return name + ":" + std::to_string(line) + ": invalid JSON: " + what;
}

static json_object *tokenize(const std::string &name, const std::string &text,
			     std::string *err)
{
	json_tokener *tok = json_tokener_new();
	if (!tok) {
		fail(err, name + ": out of memory");
		return nullptr;
	}
	/* Strict: accept what Python's json.load accepts, no more (no
	 * trailing commas, no single-quoted strings). */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	json_object *root = json_tokener_parse_ex(tok, text.data(),
						  (int)text.size());
	json_tokener_error je = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (je == json_tokener_continue)
		fail(err, syntax_error(name, text, text.size(),
				       "unexpected end of input"));
	else if (je != json_tokener_success)
		fail(err, syntax_error(name, text, end,
				       json_tokener_error_desc(je)));
	else if (text.find_first_not_of(" \t\r\n", end) != std::string::npos)
		fail(err, syntax_error(name, text, end,
				       "trailing text after the top-level value"));
	else
		return root;
	json_object_put(root);
	return nullptr;
}

bool GavelThroughputs::parse(const std::string &name, const std::string &text,
			     std::string *err)
{
	json_object *root = tokenize(name, text, err);
	if (!root)
		return false;
	GavelThroughputs t;
	bool ok = true;
	if (json_object_get_type(root) != json_type_object) {
		ok = fail(err, name + ": top level must be an object "
				      "{worker_type: {...}}");
	} else {
		json_object_object_foreach(root, worker, val)
		{
			t.workers_.push_back(worker);
			ok = parse_worker(name + ": " + worker, val,
					  &t.table_[worker], err);
			if (!ok)
				break;
		}
	}
	json_object_put(root);
	if (ok)
		*this = std::move(t);
	return ok;
}

bool GavelThroughputs::load(const std::string &path, std::string *err)
{
	std::ifstream f(path, std::ios::binary);
	if (!f)
		return fail(err, path + ": cannot open: " + std::strerror(errno));
	std::ostringstream s;
	s << f.rdbuf();
	if (f.bad())
		return fail(err, path + ": read error");
	return parse(path, s.str(), err);
}

/* ------------------------------------------------------------ lookups */

const GavelEntry *GavelThroughputs::entry(const std::string &worker,
					  const std::string &job_type,
					  int sf) const
{
	auto w = table_.find(worker);
	if (w == table_.end())
		return nullptr;
	auto e = w->second.find(GavelJobKey{job_type, sf});
	return e == w->second.end() ? nullptr : &e->second;
}

std::optional<double> GavelThroughputs::isolated(const std::string &worker,
						 const std::string &job_type,
						 int sf) const
{
	const GavelEntry *e = entry(worker, job_type, sf);
	return e ? e->isolated : std::nullopt;
}

std::optional<GavelPair> GavelThroughputs::packed(const std::string &worker,
						  const std::string &a, int sf_a,
						  const std::string &b,
						  int sf_b) const
{
	const GavelEntry *e = entry(worker, a, sf_a);
	if (!e)
		return std::nullopt;
	auto p = e->packed.find(GavelJobKey{b, sf_b});
	if (p == e->packed.end())
		return std::nullopt;
	return p->second;
}

bool GavelThroughputs::has_worker(const std::string &worker) const
{
	return table_.count(worker) > 0;
}

std::vector<std::string>
GavelThroughputs::job_types(const std::string &worker) const
{
	std::set<std::string> names;
	for (const auto &[w, jobs] : table_)
		if (worker.empty() || w == worker)
			for (const auto &[k, e] : jobs)
				names.insert(k.job_type);
	return {names.begin(), names.end()};
}

std::vector<int> GavelThroughputs::scale_factors(const std::string &worker,
						 const std::string &job_type) const
{
	std::vector<int> sfs;
	auto w = table_.find(worker);
	if (w == table_.end())
		return sfs;
	/* Keys sort by job type, then scale factor. */
	for (auto it = w->second.lower_bound(GavelJobKey{job_type, 0});
	     it != w->second.end() && it->first.job_type == job_type; ++it)
		sfs.push_back(it->first.scale_factor);
	return sfs;
}

} /* namespace tidal */
