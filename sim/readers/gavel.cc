/*
 * gavel.cc - Gavel/Shockwave ".trace" files: 12 tab-separated columns,
 * no header:
 *
 *   job_type command working_directory num_steps_arg needs_data_dir
 *   total_steps scale_factor mode priority_weight SLO duration arrival_time
 *
 * job_type reads "<Model> (batch size <B>)"; scale_factor is the GPU count.
 * `duration` is a placeholder the anchor's driver overwrites, so it is
 * kept only as a fallback.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cstdlib>

#include "sim/csv.h"
#include "sim/trace.h"

namespace tidal::sim {

bool detect_gavel(const std::string &head)
{
	std::string first = head.substr(0, head.find('\n'));
	size_t tabs = 0;
	for (char c : first)
		tabs += c == '\t';
	return tabs == 11 && first.find("(batch size") != std::string::npos;
}

void read_gavel(const std::string &path, const std::string &text, Trace &t)
{
	Csv csv(path, text, '\t', false);
	for (size_t r = 0; r < csv.rows(); r++)
		t.row_lines.push_back(csv.line(r)); /* index = row */
	for (size_t r = 0; r < csv.rows(); r++) {
		if (csv.row(r).size() != 12)
			csv.fail(r, "expected 12 tab-separated columns, found " +
					    std::to_string(csv.row(r).size()));
		const std::string &type = csv.str(r, 0);
		size_t open = type.find(" (batch size ");
		size_t close = type.rfind(')');
		if (open == std::string::npos || close == std::string::npos ||
		    close < open)
			csv.fail(r, "job type '" + type +
					    "' is not '<Model> (batch size <B>)'");
		Job j;
		j.index = r;
		j.id = (JobId)r;
		j.name = type;
		j.model = type.substr(0, type.find(' '));
		std::string bs = type.substr(open + 13, close - open - 13);
		if (!bs.empty() && bs.size() <= 9 &&
		    bs.find_first_not_of("0123456789") == std::string::npos)
			j.batch = std::atoi(bs.c_str());
		j.iterations = csv.num(r, 5);
		j.gpus = csv.small_integer(r, 6);
		/* A placeholder; a negative one (-1) means "not given". */
		j.duration = std::max(0.0, csv.num(r, 10));
		j.submit = csv.num(r, 11);
		j.iter_time = j.iterations > 0 && j.duration > 0
				      ? j.duration / j.iterations
				      : 0;
		if (j.batch <= 0)
			csv.fail(r, "batch size must be positive in '" + type + "'");
		if (j.gpus <= 0 || j.submit < 0 || j.iterations <= 0)
			csv.fail(r, "scale_factor, total_steps must be positive "
				    "and arrival_time non-negative");
		if (r > 0 && j.submit < t.jobs.back().submit)
			csv.fail(r, "arrival times must not decrease");
		t.jobs.push_back(std::move(j));
	}
}

} /* namespace tidal::sim */
