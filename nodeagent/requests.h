/*
 * requests.h - what tidald reads off the wire, parsed apart from the
 * sockets that carry it (serve.cc, plugin_link.cc, fetch.cc), so that the
 * rules are in one place and can be tested and fuzzed without a socket
 * (tests/node/test_requests.cc, tests/fuzz/fuzz_agent_wire.cc).
 *
 * A job id is a JSON integer in 1..4294967295 (Slurm's uint32); a step a
 * JSON integer >= 0.  Anything else (a string, a fraction, true) is
 * refused rather than read as some number.
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

/* From tidal-launch on the local socket: hello, or fetch JOB (optionally
 * from PEER, at STEP or newer). */
struct LocalRequest {
	std::string op;
	uint64_t job = 0; /* fetch: > 0 */
	std::string peer; /* "" = ask the plugin */
	uint64_t step = 0;
};
/* RET true with *OUT, or false with *ERR saying what is wrong. */
bool parse_local_request(const std::string &line, LocalRequest *out,
			 std::string *err);

/* From a peer tidald: ckpt_stat JOB, or ckpt_get JOB at STEP or newer
 * (0 = the newest). */
struct PeerRequest {
	std::string op;
	uint64_t job = 0;
	uint64_t step = 0;
};
bool parse_peer_request(const std::string &line, PeerRequest *out,
			std::string *err);

/* The plugin's reply to node_heartbeat: proto/messages.h's
 * HeartbeatReply, read with wire::decode(). */

/* The plugin's reply to ckpt_where: the nodes that hold one of the job's
 * checkpoints, newest first, each node once. */
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

/* A peer's ok ckpt_get reply header HDR: the step it sends (DFLT_STEP
 * if it does not say) and the bytes that follow.  RET false with *ERR. */
struct CkptHeader {
	uint64_t step = 0;
	uint64_t bytes = 0;
};
bool parse_ckpt_header(json_object *hdr, uint64_t dflt_step,
		       CkptHeader *out, std::string *err);

} /* namespace tidal::agent */
