/*
 * nvml.h - the node's GPUs as NVIDIA's management library sees them, for
 * tidald's metrics: libnvidia-ml.so.1 is opened with dlopen() the first
 * time it is asked for, so that tidald neither links nor needs it (nodes
 * without NVIDIA's driver, and the test clusters' fake GPUs, have none).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tidal::agent
{

struct GpuSample {
	unsigned index = 0;
	std::string uuid;
	double util = 0;	    /* 0..1: the time a kernel ran, NVML's */
	uint64_t mem_used = 0, mem_total = 0; /* bytes */
};

/* The GPUs now; false with *WHY (no library, nvmlInit failed, ...) if
 * NVML cannot say.  A GPU that fails a query is left out.  Safe from any
 * thread (one query at a time). */
bool nvml_sample(std::vector<GpuSample> *out, std::string *why);

} /* namespace tidal::agent */
