/*
 * fuzz_agent_wire.cc - libFuzzer target for what tidald reads off the
 * wire (nodeagent/requests.h, proto/messages.h): the local socket's
 * hello/fetch from tidal-launch, a peer's ckpt_stat/ckpt_get, and the
 * plugin's replies (node_heartbeat's keep list and commands such as
 * checkpoint_stop, ckpt_where's holders, a ckpt_get header), plus
 * parse_endpoint on every holder address.
 *
 * Every parser gets the whole input as one line.  Refusing it is a normal
 * outcome; what a parser accepts must keep its promises (ids in range,
 * one holder per node), and an accepted request, written back as JSON,
 * must parse to the same thing; a heartbeat reply, encoded again as the
 * plugin would send it, must decode to the same thing.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <json.h>

#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "nodeagent/requests.h"
#include "proto/wire.h"

using namespace tidal::agent;
using namespace tidal::wire;

static constexpr uint64_t kMaxJob = 4294967295ull;

static std::string request_line(const char *op, uint64_t job, uint64_t step,
				const std::string *peer)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "v", json_object_new_int(1));
	json_object_object_add(o, "op", json_object_new_string(op));
	json_object_object_add(o, "job", json_object_new_int64((int64_t)job));
	json_object_object_add(o, "step", json_object_new_int64((int64_t)step));
	if (peer)
		json_object_object_add(o, "peer",
				       json_object_new_string(peer->c_str()));
	return to_line(o);
}

static void check_local(const std::string &text)
{
	LocalRequest q, again;
	std::string err;
	if (!parse_local_request(text, &q, &err)) {
		if (err.empty())
			std::abort();
		return;
	}
	if (q.op == "hello")
		return;
	if (q.op != "fetch" || q.job == 0 || q.job > kMaxJob ||
	    q.step > (uint64_t)INT64_MAX)
		std::abort();
	if (!parse_local_request(request_line("fetch", q.job, q.step, &q.peer),
				 &again, &err) ||
	    again.job != q.job || again.step != q.step || again.peer != q.peer)
		std::abort();
}

static void check_peer(const std::string &text)
{
	PeerRequest q, again;
	std::string err;
	if (!parse_peer_request(text, &q, &err)) {
		if (err.empty())
			std::abort();
		return;
	}
	if ((q.op != "ckpt_get" && q.op != "ckpt_stat") || q.job == 0 ||
	    q.job > kMaxJob || q.step > (uint64_t)INT64_MAX)
		std::abort();
	if (!parse_peer_request(request_line(q.op.c_str(), q.job, q.step,
					     nullptr),
				&again, &err) ||
	    again.op != q.op || again.job != q.job || again.step != q.step)
		std::abort();
}

static void check_heartbeat(const std::string &text)
{
	HeartbeatReply r;
	if (!decode(text, &r)) {
		if (r.ok || r.error.empty())
			std::abort();
		return;
	}
	if (!r.ok) {
		if (!r.keep.empty() || !r.commands.empty())
			std::abort();
		return;
	}
	for (const auto &[job, step] : r.keep)
		if (job == 0 || job > kMaxJob || step == 0)
			std::abort();
	for (const AgentCommand &c : r.commands)
		if (c.id == 0 || c.job == 0 || c.job > kMaxJob)
			std::abort();
	/* What the plugin would send of it reads back the same. */
	HeartbeatReply back;
	if (!decode(encode(r), &back) || back.ok != r.ok ||
	    back.keep != r.keep || back.commands.size() != r.commands.size())
		std::abort();
	for (size_t i = 0; i < r.commands.size(); i++)
		if (back.commands[i].id != r.commands[i].id ||
		    back.commands[i].op != r.commands[i].op ||
		    back.commands[i].job != r.commands[i].job)
			std::abort();
}

static void check_where(const std::string &text)
{
	WhereReply w;
	std::string err;
	if (!parse_where_reply(text, &w, &err))
		return;
	std::set<std::string> nodes;
	for (const CkptHolder &h : w.holders) {
		if (!nodes.insert(h.node).second)
			std::abort();
		if (h.problem.empty() && h.addr.port.empty())
			std::abort();
	}
	if (w.uid < -1 || w.uid > (int64_t)UINT32_MAX)
		std::abort();
}

static void check_header(const std::string &text)
{
	json_object *h = parse_object(text);
	CkptHeader c;
	std::string err;
	if (parse_ckpt_header(h, 7, &c, &err) &&
	    (c.bytes > (uint64_t)INT64_MAX || c.step > (uint64_t)INT64_MAX))
		std::abort();
	if (h)
		json_object_put(h);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
				      std::size_t size)
{
	std::string text(reinterpret_cast<const char *>(data), size);
	check_local(text);
	check_peer(text);
	check_heartbeat(text);
	check_where(text);
	check_header(text);
	Endpoint e;
	std::string err;
	if (parse_endpoint(text, &e, &err) &&
	    (e.port.empty() || std::atol(e.port.c_str()) > 65535))
		std::abort();
	return 0;
}
