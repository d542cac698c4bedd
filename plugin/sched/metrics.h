/*
 * metrics.h - sched/tidal's Prometheus metrics (metrics.cc), for the
 * engine's C++ side; the C side reaches them through bridge.h's
 * tidal_metrics_* entry points.  Served by metrics_http.cc on
 * MetricsPort (tidal.conf(5)); sched_tidal(8), METRICS, lists them.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <vector>

#include "core/model/model.h"
#include "core/model/plan.h"
#include "core/obs/metrics.h"

namespace tidal::plugin
{

struct JobView; /* engine.h */

/* The plugin's registry, its families declared. */
obs::Registry &metrics();

/* After a decide: decisions by action, jobs by state and class, the
 * policy in force. */
void metrics_plan(const std::vector<JobView> &views, const Plan &plan,
		  const std::string &policy);

} /* namespace tidal::plugin */
