/*
 * elasticflow_gandiva.cc - placeholder.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "sim/csv.h"
#include "sim/presets/elasticflow.h"

namespace tidal::sim::elasticflow {

RunResult run_gandiva(Context &ctx, int)
{
	throw InputError(ctx.in->trace_path + ": gandiva: not yet");
}

RunResult run_themis(Context &ctx, int)
{
	throw InputError(ctx.in->trace_path + ": themis: not yet");
}

} /* namespace tidal::sim::elasticflow */
