/*
 * messages.h - wire messages that two components read and write, defined
 * once here with their encoder and decoder, so that the writer and the
 * reader cannot drift apart.  Each decoder takes what the schema allows
 * and drops what it does not (an entry with a bad id is skipped, not read
 * as some number); tests/node/test_wire.cc checks that decode(encode(m))
 * is m, and tests/fuzz/fuzz_agent_wire.cc feeds the decoders.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "proto/json.h"

namespace tidal::wire
{

constexpr int64_t kMaxJobId = 4294967295LL; /* Slurm's job ids: uint32 */

/*
 * node_heartbeat's reply, sched/tidal (plugin/sched/agents/node_ops.cc)
 * to tidald (nodeagent/plugin_link.cc):
 *
 *   {"v":1,"ok":true,"commands":[{"id":7,"op":"checkpoint_stop","job":12}],
 *    "keep":[{"job":12,"step":3000}]}
 *   {"v":1,"ok":false,"error":"...","register":true}
 *
 * commands: what the plugin asks of this node's agent (resize.c), each id
 * >= 1, job 1..kMaxJobId.  keep: per job, the checkpoint step the plugin's
 * saved state names for this node, which tidald must not rotate away
 * (step >= 1).  register: the plugin does not know this node (it
 * restarted without its state): register again.
 */
struct AgentCommand {
	uint64_t id = 0;
	std::string op;
	uint64_t job = 0;
};
struct HeartbeatReply {
	bool ok = false;
	bool reregister = false; /* !ok: the plugin does not know us */
	std::string error;	 /* !ok */
	std::vector<AgentCommand> commands;
	std::vector<std::pair<uint64_t, uint64_t>> keep; /* job, step */
};
/* M as one line with its newline. */
std::string encode(const HeartbeatReply &m);
/* RET false if LINE is not a JSON object (*OUT->error says so). */
bool decode(const std::string &line, HeartbeatReply *out);

} /* namespace tidal::wire */
