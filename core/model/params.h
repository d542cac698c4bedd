/*
 * params.h - Slurm-style Key=Value parameters for policies and presets.
 *
 * Keys are case-insensitive.  A bad value is recorded as an error naming
 * where it came from, the key, the value and the rule
 * ("tidal.conf:3: CycleInterval=abc: must be a number in [0.1, 3600]"),
 * and the getter returns the default.  Whether that is fatal is the
 * caller's choice: tidal-sim stops, the slurmctld plugin logs
 * errors_using_defaults() and goes on (slurm.conf(5) behaviour).
 *
 * Every key a caller asks for (get_*, has) is remembered, so that keys
 * which were set but never read - typos, keys of another policy - can be
 * listed with unused() instead of being ignored silently.
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
	 * comment.  Each pair's origin is "ORIGIN:LINE".  Malformed pairs
	 * are added to errors(). */
	static Params parse(const std::string &text, const std::string &origin);

	/* ORIGIN says where the pair came from, for messages: a file and
	 * line ("tidal.conf:3") or a command-line option ("--param"); ""
	 * takes the origin given to parse(), if any. */
	void set(const std::string &key, const std::string &value,
		 const std::string &origin = "");
	bool has(const std::string &key) const;
	/* Later pairs override earlier ones; errors and asked-for keys add
	 * up. */
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

	/* For callers that check a value themselves (a directory that must
	 * load): record that KEY's value breaks RULE, and what the caller
	 * does instead (FALLBACK, e.g. "every job is held"; "" = nothing to
	 * say).  No-op if KEY is not set. */
	void invalid(const std::string &key, const std::string &rule,
		     const std::string &fallback) const;

	/* Each error as "ORIGIN: KEY=VALUE: RULE" (or "ORIGIN:LINE: 'WORD'
	 * is not Key=Value"), saying nothing about a fallback: right for
	 * callers that stop on an error.  An option origin reads as on the
	 * command line: "--param KEY=VALUE: RULE". */
	const std::vector<std::string> &errors() const { return errors_; }
	/* The same errors followed by what was done instead ("...; using the
	 * default 2", "...; ignored"), for callers that go on. */
	std::vector<std::string> errors_using_defaults() const;

	const std::map<std::string, std::string> &items() const { return kv_; }
	/* Keys (lower-cased) whose value a get_*() above rejected, with the
	 * value used instead (the default, as text): with items(), what is
	 * in force (tidalctl show policy). */
	const std::map<std::string, std::string> &rejected() const
	{
		return rejected_;
	}

	/* A key that was set but that no caller asked for. */
	struct Unused {
		std::string key;        /* as written where it was set */
		std::string value;
		std::string pair;       /* "ORIGIN: KEY=VALUE", for messages */
		std::string suggestion; /* nearest asked-for key, or "" */
	};
	/* The keys set here and never asked for, in key order; each with the
	 * nearest key that was asked for (core/model/suggest.h). */
	std::vector<Unused> unused() const;
	/* "ORIGIN: KEY=VALUE" of KEY as it was set, for messages ("KEY=" if
	 * it was not set). */
	std::string pair_of(const std::string &key) const;
	/* Keys callers asked for, spelled as they asked. */
	std::vector<std::string> asked() const;
	/* Count what was asked of OTHER (a copy of this object that a policy
	 * read) as asked of this one too, with the defaults it used. */
	void add_asked(const Params &other);

	/* One key as it is in force (tidalctl show config). */
	struct Setting {
		std::string key;    /* as asked for, else as written */
		std::string value;  /* in force: as given, or the default
				     * ("" for a reader without one) */
		std::string source; /* ORIGIN ("tidal.conf:3") where it was
				     * set, else "default" */
		std::string rejected; /* the value given, when a getter
				       * refused it and the default is in
				       * force; else "" */
		bool read = true;     /* false: set, and nobody read it */
	};
	/* Every key that was set or asked for, in key order. */
	std::vector<Setting> settings() const;

private:
	struct Source {
		std::string key;    /* as written */
		std::string origin; /* file:line, option, or "" */
	};
	void ask(const std::string &key) const;
	/* ask(), noting DEF as the value in force when KEY is not set. */
	void ask(const std::string &key, const std::string &def) const;
	std::string pair(const std::string &lkey) const;
	void error(const std::string &key, const std::string &rule,
		   const std::string &fallback) const;

	std::map<std::string, std::string> kv_; /* lower-cased keys */
	std::map<std::string, Source> src_;     /* same keys */
	std::string origin_;
	mutable std::vector<std::string> errors_;
	mutable std::vector<std::string> fallbacks_; /* one per error */
	/* lower-cased -> as the caller spelled it */
	mutable std::map<std::string, std::string> asked_;
	mutable std::map<std::string, std::string> rejected_;
	/* lower-cased -> the default its getter was given, as text */
	mutable std::map<std::string, std::string> defaults_;
};

std::string lower(std::string s);

} /* namespace tidal */
