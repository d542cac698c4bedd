/*
 * unit.h - CMocka from C++: the headers it needs first, C linkage, and a
 * few helpers for building hand-made snapshots.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

/* C++ headers before cmocka.h: it defines a fail() macro that breaks
 * <ios>.  Include this header after every other header of a test. */
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern "C" {
#include <cmocka.h>
}

#include "core/model/model.h"

namespace tidal::test {

/* NODES nodes of GPUS each, one leaf switch per SWITCH_SIZE nodes. */
inline Cluster cluster(int nodes, int gpus, int switch_size = 0)
{
	Cluster c;
	for (int i = 0; i < nodes; i++) {
		Node n;
		n.name = "n" + std::to_string(i);
		n.gpus = gpus;
		if (switch_size > 0) {
			int s = i / switch_size;
			if ((int)c.switches.size() <= s) {
				Switch sw;
				sw.name = "s" + std::to_string(s);
				c.switches.push_back(sw);
			}
			c.switches[s].nodes.push_back(i);
			n.switch_id = s;
		}
		c.nodes.push_back(n);
	}
	return c;
}

inline Job job(JobId id, int gpus, Time submit, double duration)
{
	Job j;
	j.id = id;
	j.index = (size_t)id;
	j.gpus = gpus;
	j.submit = submit;
	j.duration = duration;
	j.iterations = duration;
	j.remaining = duration;
	j.iter_time = 1;
	j.state = JobState::Pending;
	return j;
}

inline Snapshot snapshot(const Cluster &c, const std::vector<Job> &jobs,
			 Time now)
{
	Snapshot s;
	s.cluster = &c;
	s.now = now;
	for (const Job &j : jobs)
		s.jobs.push_back(&j);
	return s;
}

/* Files for tests of readers: a directory of this run's own under /tmp,
 * made and removed around the group (cmocka_run_group_tests(tests,
 * scratch_setup, scratch_teardown)); put() writes TEXT to a new file in
 * it, <root>/tN.txt, and returns its path. */
inline std::string scratch_root;
inline int scratch_files = 0;

inline int scratch_setup(void **)
{
	char tmpl[] = "/tmp/tidal-test.XXXXXX";
	if (!mkdtemp(tmpl))
		return -1;
	scratch_root = tmpl;
	return 0;
}

inline int scratch_teardown(void **)
{
	std::filesystem::remove_all(scratch_root);
	return 0;
}

inline std::string put(const std::string &text)
{
	std::string path = scratch_root + "/t" +
			   std::to_string(scratch_files++) + ".txt";
	std::ofstream(path) << text;
	return path;
}

/* GOT is WANT to within 1e-9 (relative, or absolute near 0). */
inline void near(double got, double want)
{
	if (std::fabs(got - want) > 1e-9 * std::max(1.0, std::fabs(want)))
		fail_msg("got %.12g, want %.12g", got, want);
}

} /* namespace tidal::test */
