/*
 * params.h - Slurm-style Key=Value parameters for policies and presets.
 *
 * Keys are case-insensitive.  A bad value is reported with the key, the
 * value and the rule, and the default is used (slurm.conf(5) behaviour); the
 * caller decides whether a reported error is fatal (tidal-sim: yes, the
 * plugin: log and go on).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <map>
#include <string>
#include <vector>

namespace tidal {

class Params {
public:
	Params() = default;

	/* Parse "Key=Value Key2=Value2" or one pair per line; '#' starts a
	 * comment.  Malformed pairs are added to errors(). */
	static Params parse(const std::string &text, const std::string &origin);

	void set(const std::string &key, const std::string &value);
	bool has(const std::string &key) const;
	/* Later pairs override earlier ones. */
	void merge(const Params &other);

	std::string get_str(const std::string &key, const std::string &def) const;
	double get_double(const std::string &key, double def, double min,
			  double max) const;
	long get_long(const std::string &key, long def, long min,
		      long max) const;
	bool get_bool(const std::string &key, bool def) const;
	/* Comma separated numbers, each within [min, max]. */
	std::vector<double> get_list(const std::string &key,
				     const std::vector<double> &def,
				     double min, double max) const;
	/* VALUE must be one of CHOICES (case-insensitive). */
	std::string get_choice(const std::string &key, const std::string &def,
			       const std::vector<std::string> &choices) const;

	const std::vector<std::string> &errors() const { return errors_; }
	const std::map<std::string, std::string> &items() const { return kv_; }

private:
	void error(const std::string &msg) const;

	std::map<std::string, std::string> kv_; /* lower-cased keys */
	std::string origin_;
	mutable std::vector<std::string> errors_;
};

std::string lower(std::string s);

} /* namespace tidal */
