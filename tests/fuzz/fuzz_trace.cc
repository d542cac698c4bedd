/*
 * fuzz_trace.cc - libFuzzer target for one trace reader.
 *
 * Built once per format with -DFUZZ_FORMAT="muri" (and so on) by
 * tests/fuzz/fuzz.mk.  A reader may refuse its input with InputError;
 * anything else that escapes (another exception, a sanitizer report, a
 * job that breaks the readers' promises in trace.h) is a bug.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <unordered_set>

#include "sim/csv.h"
#include "sim/trace.h"

#ifndef FUZZ_FORMAT
#error "build with -DFUZZ_FORMAT=\"<format>\""
#endif

using namespace tidal;
using namespace tidal::sim;

static const TraceFormat &format()
{
	for (const TraceFormat &f : trace_formats())
		if (f.name == FUZZ_FORMAT)
			return f;
	std::abort(); /* the build named a format that does not exist */
}

/* What every reader promises about the jobs it returns. */
static void check_jobs(const Trace &t)
{
	std::unordered_set<JobId> ids;
	for (const Job &j : t.jobs) {
		if (!ids.insert(j.id).second || j.gpus <= 0 ||
		    !std::isfinite(j.submit) || !std::isfinite(j.duration) ||
		    !std::isfinite(j.iterations) || j.duration < 0 ||
		    j.iterations < 0 || j.state != JobState::Future)
			std::abort();
	}
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
				      std::size_t size)
{
	std::string text(reinterpret_cast<const char *>(data), size);
	for (const TraceFormat &f : trace_formats())
		(void)f.detect(text.substr(0, 4096));
	Trace t;
	t.path = "fuzz";
	try {
		format().read("fuzz", text, t);
	} catch (const InputError &) {
		return 0;
	}
	check_jobs(t);
	return 0;
}
