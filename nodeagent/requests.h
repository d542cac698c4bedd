/*
 * requests.h - what tidald makes of the plugin's ckpt_where reply
 * (proto/messages.h's CkptWhereReply): the holders it can ask, each with a
 * parsed address or the reason it cannot serve.  Apart from the sockets
 * (fetch.cc), so that it can be tested and fuzzed without one
 * (tests/node/test_requests.cc, tests/fuzz/fuzz_agent_wire.cc).
 *
 * Every other message tidald reads or writes is proto/messages.h's.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "proto/messages.h"
#include "proto/wire.h"

namespace tidal::agent
{

/* A node that holds one of a job's checkpoints, newest first, each node
 * once. */
struct CkptHolder {
	std::string node;
	wire::Endpoint addr;
	uint64_t step = 0;   /* as the plugin recorded it */
	std::string problem; /* why it cannot serve ("" = it can) */
};
struct WhereReply {
	std::vector<CkptHolder> holders;
	int64_t uid = -1; /* the job's owner, -1 if the plugin does not say */
};
/* RET true with *OUT, or false with *ERR (not ok, or not JSON). */
bool parse_where_reply(const std::string &line, WhereReply *out,
		       std::string *err);

} /* namespace tidal::agent */
