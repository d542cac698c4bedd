/*
 * metrics.h - tidald's Prometheus metrics (tidald(8), METRICS), served
 * on --metrics ADDR:PORT by proto/http.h's MetricsServer.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/obs/metrics.h"
#include "proto/messages.h"

namespace tidal::agent
{

/* tidald's registry, its families declared; NODE labels tidal_agent_info
 * (the first call's). */
obs::Registry &agent_metrics(const std::string &node = "");

/* Each heartbeat: the launchers' reports (launchers, their restarts, the
 * GPU use their trainers measured), the checkpoint directory's free
 * bytes, and whether sched/tidal knows this node. */
void metrics_heartbeat(const std::vector<wire::JobReport> &jobs,
		       std::optional<uint64_t> ckpt_free, bool registered);

} /* namespace tidal::agent */
