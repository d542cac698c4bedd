/*
 * params.cc - Key=Value parsing with Slurm's error behaviour.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/params.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

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

Params Params::parse(const std::string &text, const std::string &origin)
{
	Params p;
	p.origin_ = origin;
	std::istringstream in(text);
	std::string line;
	int lineno = 0;
	while (std::getline(in, line)) {
		lineno++;
		size_t hash = line.find('#');
		if (hash != std::string::npos)
			line.resize(hash);
		std::istringstream words(line);
		std::string word;
		while (words >> word) {
			size_t eq = word.find('=');
			if (eq == std::string::npos || eq == 0) {
				p.errors_.push_back(origin + ":" +
						    std::to_string(lineno) +
						    ": '" + word +
						    "' is not Key=Value");
				continue;
			}
			p.set(word.substr(0, eq), trim(word.substr(eq + 1)));
		}
	}
	return p;
}

void Params::set(const std::string &key, const std::string &value)
{
	kv_[lower(key)] = value;
}

bool Params::has(const std::string &key) const
{
	return kv_.count(lower(key)) > 0;
}

void Params::merge(const Params &other)
{
	for (const auto &[k, v] : other.kv_)
		kv_[k] = v;
	errors_.insert(errors_.end(), other.errors_.begin(),
		       other.errors_.end());
}

void Params::error(const std::string &msg) const
{
	errors_.push_back((origin_.empty() ? "" : origin_ + ": ") + msg);
}

std::string Params::get_str(const std::string &key,
			    const std::string &def) const
{
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
	auto it = kv_.find(lower(key));
	if (it == kv_.end())
		return def;
	double v;
	if (!parse_double(it->second, &v) || v < min || v > max) {
		std::ostringstream m;
		m << key << "=" << it->second << ": must be a number in [" << min
		  << ", " << max << "]; using the default " << def;
		error(m.str());
		return def;
	}
	return v;
}

long Params::get_long(const std::string &key, long def, long min,
		      long max) const
{
	auto it = kv_.find(lower(key));
	if (it == kv_.end())
		return def;
	char *end = nullptr;
	errno = 0;
	long v = std::strtol(it->second.c_str(), &end, 10);
	if (it->second.empty() || errno || *end || v < min || v > max) {
		std::ostringstream m;
		m << key << "=" << it->second << ": must be an integer in ["
		  << min << ", " << max << "]; using the default " << def;
		error(m.str());
		return def;
	}
	return v;
}

bool Params::get_bool(const std::string &key, bool def) const
{
	auto it = kv_.find(lower(key));
	if (it == kv_.end())
		return def;
	std::string v = lower(it->second);
	if (v == "yes" || v == "true" || v == "1" || v == "on")
		return true;
	if (v == "no" || v == "false" || v == "0" || v == "off")
		return false;
	error(key + "=" + it->second + ": must be yes or no; using the default " +
	      (def ? "yes" : "no"));
	return def;
}

std::vector<double> Params::get_list(const std::string &key,
				     const std::vector<double> &def,
				     double min, double max) const
{
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
			std::ostringstream m;
			m << key << "=" << s
			  << ": must be a comma separated list of numbers in ["
			  << min << ", " << max << "]; using the default";
			error(m.str());
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
	error(key + "=" + it->second + ": must be one of " + all +
	      "; using the default " + def);
	return def;
}

} /* namespace tidal */
