/*
 * params.cc - Key=Value parsing with Slurm's error behaviour.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/model/params.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/model/suggest.h"

namespace tidal {

std::string lower(std::string s)
{
	std::transform(s.begin(), s.end(), s.begin(),
		       [](unsigned char c) { return std::tolower(c); });
	return s;
}

static std::string trim(const std::string &s)
{
	size_t b = s.find_first_not_of(" \t\r\n");
	if (b == std::string::npos)
		return "";
	size_t e = s.find_last_not_of(" \t\r\n");
	return s.substr(b, e - b + 1);
}

static std::string num(double v)
{
	std::ostringstream s;
	s << v;
	return s.str();
}

Params Params::parse(const std::string &text, const std::string &origin)
{
	Params p;
	p.origin_ = origin;
	std::istringstream in(text);
	std::string line;
	int lineno = 0;
	while (std::getline(in, line)) {
		lineno++;
		std::string where = origin + ":" + std::to_string(lineno);
		size_t hash = line.find('#');
		if (hash != std::string::npos)
			line.resize(hash);
		std::istringstream words(line);
		std::string word, bad;
		while (words >> word) {
			size_t eq = word.find('=');
			if (eq == std::string::npos || eq == 0) {
				bad += (bad.empty() ? "" : " ") + word;
				continue;
			}
			p.set(word.substr(0, eq), trim(word.substr(eq + 1)),
			      where);
		}
		/* One error per line, however many words it has: "Polcy
		 * srtf" is one mistake. */
		if (!bad.empty()) {
			p.errors_.push_back(where + ": '" + bad +
					    "' is not Key=Value");
			p.fallbacks_.push_back("ignored");
		}
	}
	return p;
}

void Params::set(const std::string &key, const std::string &value,
		 const std::string &origin)
{
	std::string k = lower(key);
	kv_[k] = value;
	src_[k] = {key, origin.empty() ? origin_ : origin};
	rejected_.erase(k);
}

/* Every read goes through here, so unused() knows what was read. */
void Params::ask(const std::string &key) const
{
	asked_.emplace(lower(key), key);
}

void Params::ask(const std::string &key, const std::string &def) const
{
	ask(key);
	defaults_[lower(key)] = def;
}

bool Params::has(const std::string &key) const
{
	ask(key);
	return kv_.count(lower(key)) > 0;
}

void Params::merge(const Params &other)
{
	for (const auto &[k, v] : other.kv_) {
		kv_[k] = v;
		src_[k] = other.src_.at(k);
		rejected_.erase(k);
	}
	for (const auto &[k, v] : other.rejected_)
		rejected_[k] = v;
	errors_.insert(errors_.end(), other.errors_.begin(),
		       other.errors_.end());
	fallbacks_.insert(fallbacks_.end(), other.fallbacks_.begin(),
			  other.fallbacks_.end());
	add_asked(other);
}

void Params::add_asked(const Params &other)
{
	asked_.insert(other.asked_.begin(), other.asked_.end());
	defaults_.insert(other.defaults_.begin(), other.defaults_.end());
}

std::vector<Params::Setting> Params::settings() const
{
	std::map<std::string, Setting> all;
	for (const auto &[k, spelled] : asked_) {
		Setting &s = all[k];
		s.key = spelled;
		auto d = defaults_.find(k);
		s.value = d == defaults_.end() ? "" : d->second;
		s.source = "default";
	}
	for (const auto &[k, v] : kv_) {
		Setting &s = all[k];
		const Source &src = src_.at(k);
		if (s.key.empty()) {
			s.key = src.key;
			s.read = false;
		}
		s.source = src.origin.empty() ? origin_ : src.origin;
		auto r = rejected_.find(k);
		if (r == rejected_.end()) {
			s.value = v;
		} else {
			s.value = r->second;
			s.rejected = v;
		}
	}
	std::vector<Setting> out;
	for (auto &[k, s] : all)
		out.push_back(std::move(s));
	return out;
}

std::vector<std::string> Params::asked() const
{
	std::vector<std::string> out;
	for (const auto &[k, spelled] : asked_)
		out.push_back(spelled);
	return out;
}

std::vector<Params::Unused> Params::unused() const
{
	std::vector<std::string> known = asked();
	std::vector<Unused> out;
	for (const auto &[k, v] : kv_)
		if (!asked_.count(k))
			out.push_back({src_.at(k).key, v, pair(k),
				       nearest(src_.at(k).key, known)});
	return out;
}

/* "ORIGIN: KEY=VALUE" as the user wrote it.  An option is followed by its
 * value as on the command line ("--param K=V"), a file by a colon. */
std::string Params::pair(const std::string &lkey) const
{
	const Source &s = src_.at(lkey);
	std::string kv = s.key + "=" + kv_.at(lkey);
	if (s.origin.empty())
		return kv;
	return s.origin + (s.origin[0] == '-' ? " " : ": ") + kv;
}

std::string Params::pair_of(const std::string &key) const
{
	std::string k = lower(key);
	return src_.count(k) ? pair(k) : key + "=";
}

void Params::error(const std::string &key, const std::string &rule,
		   const std::string &fallback) const
{
	errors_.push_back(pair(lower(key)) + ": " + rule);
	fallbacks_.push_back(fallback);
}

void Params::invalid(const std::string &key, const std::string &rule,
		     const std::string &fallback) const
{
	if (kv_.count(lower(key)))
		error(key, rule, fallback);
}

std::vector<std::string> Params::errors_using_defaults() const
{
	std::vector<std::string> out;
	for (size_t i = 0; i < errors_.size(); i++)
		out.push_back(errors_[i] + (fallbacks_[i].empty()
						    ? ""
						    : "; " + fallbacks_[i]));
	return out;
}

std::string Params::get_str(const std::string &key,
			    const std::string &def) const
{
	ask(key, def);
	auto it = kv_.find(lower(key));
	return it == kv_.end() ? def : it->second;
}

static bool parse_double(const std::string &s, double *out)
{
	if (s.empty())
		return false;
	char *end = nullptr;
	errno = 0;
	double v = std::strtod(s.c_str(), &end);
	if (errno || *end || !std::isfinite(v))
		return false;
	*out = v;
	return true;
}

double Params::get_double(const std::string &key, double def, double min,
			  double max) const
{
	ask(key, num(def));
	auto it = kv_.find(lower(key));
	if (it == kv_.end())
		return def;
	double v;
	if (!parse_double(it->second, &v) || v < min || v > max) {
		error(key, "must be a number in [" + num(min) + ", " +
				   num(max) + "]",
		      "using the default " + num(def));
		rejected_[lower(key)] = num(def);
		return def;
	}
	return v;
}

long Params::get_long(const std::string &key, long def, long min,
		      long max) const
{
	ask(key, std::to_string(def));
	auto it = kv_.find(lower(key));
	if (it == kv_.end())
		return def;
	char *end = nullptr;
	errno = 0;
	long v = std::strtol(it->second.c_str(), &end, 10);
	if (it->second.empty() || errno || *end || v < min || v > max) {
		error(key, "must be an integer in [" + std::to_string(min) +
				   ", " + std::to_string(max) + "]",
		      "using the default " + std::to_string(def));
		rejected_[lower(key)] = std::to_string(def);
		return def;
	}
	return v;
}

bool Params::get_bool(const std::string &key, bool def) const
{
	ask(key, def ? "yes" : "no");
	auto it = kv_.find(lower(key));
	if (it == kv_.end())
		return def;
	std::string v = lower(it->second);
	if (v == "yes" || v == "true" || v == "1" || v == "on")
		return true;
	if (v == "no" || v == "false" || v == "0" || v == "off")
		return false;
	error(key, "must be yes or no",
	      std::string("using the default ") + (def ? "yes" : "no"));
	rejected_[lower(key)] = def ? "yes" : "no";
	return def;
}

std::vector<double> Params::get_list(const std::string &key,
				     const std::vector<double> &def,
				     double min, double max) const
{
	std::string d;
	for (double x : def)
		d += (d.empty() ? "" : ",") + num(x);
	ask(key, d);
	auto it = kv_.find(lower(key));
	if (it == kv_.end())
		return def;
	/* An empty value is an empty list; an empty item ("1,,2", "1,")
	 * is an error. */
	std::vector<double> out;
	const std::string &s = it->second;
	if (trim(s).empty())
		return out;
	size_t start = 0;
	for (;;) {
		size_t comma = s.find(',', start);
		std::string item = trim(s.substr(start, comma - start));
		double v;
		if (!parse_double(item, &v) || v < min || v > max) {
			error(key, "must be a comma separated list of numbers "
				   "in [" + num(min) + ", " + num(max) + "]",
			      "using the default " +
				      (d.empty() ? "(an empty list)" : d));
			rejected_[lower(key)] = d;
			return def;
		}
		out.push_back(v);
		if (comma == std::string::npos)
			return out;
		start = comma + 1;
	}
}

std::string Params::get_choice(const std::string &key, const std::string &def,
			       const std::vector<std::string> &choices) const
{
	ask(key, def);
	auto it = kv_.find(lower(key));
	if (it == kv_.end())
		return def;
	std::string v = lower(it->second);
	for (const auto &c : choices)
		if (lower(c) == v)
			return c;
	std::string all;
	for (const auto &c : choices)
		all += (all.empty() ? "" : ", ") + c;
	error(key, "must be one of " + all + did_you_mean(it->second, choices),
	      "using the default " + def);
	rejected_[lower(key)] = def;
	return def;
}

} /* namespace tidal */
