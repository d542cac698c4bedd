/*
 * fuzz_options.cc - libFuzzer target for Tidal's job option values
 * (plugin/common/options.h): tidal_option_check for every option as
 * sbatch checks it, the parsers behind it, tidal_elastic_check, and
 * tidal_env_options over spank_job_env entries as sched/tidal reads them.
 *
 * Input: lines.  Each line is checked as the value of every option; the
 * lines together are also the job's spank_job_env.  A refused value is a
 * normal outcome; sbatch and sched/tidal must agree (a value sbatch takes
 * is the value the plugin reads, one it refuses is read as absent), and
 * what the parsers accept must be within the rules of options.h.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "plugin/common/options.h"

static void check_value(const std::string &v)
{
	char err[256], tiny[8];
	for (const tidal_option_t *o = tidal_options; o->name; o++) {
		int rc = tidal_option_check(o->name, v.c_str(), err, sizeof err);
		if (rc != 0 && rc != -1)
			std::abort();
		if (rc && std::strncmp(err, "--", 2))
			std::abort();
		/* A short buffer is cut, never overrun. */
		if (tidal_option_check(o->name, v.c_str(), tiny, sizeof tiny) !=
			    rc ||
		    (rc && std::strlen(tiny) >= sizeof tiny))
			std::abort();

		/* What sched/tidal reads from spank_job_env for a value sbatch
		 * let through: the same value; for a refused one: nothing. */
		std::string entry = std::string(o->env) + "=" + v;
		char *env[] = {entry.data()};
		tidal_env_options_t e;
		tidal_env_options(env, 1, &e);
		bool read = e.max_gpus || e.model[0] || e.batch ||
			    e.max_batch || e.iters || e.best_effort;
		if (!std::strcmp(o->name, "best-effort"))
			continue; /* a flag: present is set */
		if (read != (rc == 0))
			std::abort();
		if (!std::strcmp(o->name, "train-model") && read &&
		    v != e.model)
			std::abort();
	}
	if (tidal_option_check("no-such-option", v.c_str(), err, sizeof err) !=
	    -1)
		std::abort();

	int lo, hi;
	if (tidal_parse_range(v.c_str(), &lo, &hi) == 0) {
		if (lo < 1 || lo > hi || hi > TIDAL_MAX_GPUS)
			std::abort();
		char back[32];
		std::snprintf(back, sizeof back, "%d-%d", lo, hi);
		int lo2, hi2;
		if (tidal_parse_range(back, &lo2, &hi2) || lo2 != lo ||
		    hi2 != hi)
			std::abort();
		/* The cross-option rule, against a few requests. */
		for (int gpus : {-1, 0, 1, lo, hi, hi + 1})
			for (int cluster : {0, hi - 1, hi, 4096}) {
				int ok = tidal_elastic_check(
					lo, hi, gpus, gpus > 0 ? "--gpus=N" : nullptr,
					cluster, err, sizeof err);
				bool want = gpus != 0 &&
					    (gpus < 0 || (gpus >= lo && gpus <= hi)) &&
					    (cluster <= 0 || hi <= cluster);
				if ((ok == 0) != want)
					std::abort();
			}
	}
	for (double hi2 : {1e9, 1e15}) {
		double d;
		if (tidal_parse_count(v.c_str(), 1, hi2, &d) == 0 &&
		    (d < 1 || d > hi2 || d != std::floor(d)))
			std::abort();
	}
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
				      std::size_t size)
{
	std::string text(reinterpret_cast<const char *>(data), size);
	std::vector<std::string> lines;
	size_t at = 0;
	while (at <= text.size() && lines.size() < 64) {
		size_t nl = text.find('\n', at);
		std::string l = text.substr(at, nl == std::string::npos
							? std::string::npos
							: nl - at);
		l = l.substr(0, l.find('\0')); /* C strings */
		lines.push_back(l);
		if (nl == std::string::npos)
			break;
		at = nl + 1;
	}
	for (const std::string &l : lines)
		check_value(l);

	/* The lines as a whole spank_job_env: whatever was read obeys the
	 * rules. */
	std::vector<char *> env;
	for (std::string &l : lines)
		env.push_back(l.data());
	env.push_back(nullptr); /* a NULL entry is skipped */
	tidal_env_options_t e;
	tidal_env_options(env.data(), (unsigned)env.size(), &e);
	if ((e.max_gpus || e.min_gpus) &&
	    (e.min_gpus < 1 || e.min_gpus > e.max_gpus ||
	     e.max_gpus > TIDAL_MAX_GPUS))
		std::abort();
	if (e.batch < 0 || e.batch > 1000000000 || e.iters < 0 ||
	    e.iters > 1e15 || std::strlen(e.model) > 64)
		std::abort();
	return 0;
}
