/*
 * fuzz_agent_wire.cc - libFuzzer target for every message of the wire
 * (proto/messages.h), each decoded from the whole input as one line:
 * node_register, node_heartbeat, node_ack and ckpt_where as sched/tidal
 * reads them; hello/fetch and ckpt_stat/ckpt_get as tidald reads them,
 * with their replies as tidal-launch and a peer tidald read them;
 * status/checkpoint/checkpoint_stop and their replies between tidald and
 * tidal-launch; interleave/turn/turn_done and pack/partners between
 * tidal-train and tidald; tidalctl's requests and the plugin's records.  Also
 * tidald's view of the ckpt_where reply (nodeagent/requests.h) and
 * parse_endpoint on every address.
 *
 * Refusing the input is a normal outcome (a request's refusal must say
 * why).  What a decoder accepts must keep the schema's rules (job ids in
 * 1..4294967295, steps and counts >= 0, no NaN, one holder per node), and
 * must survive a round trip: encode() of it decodes to the same message,
 * and encodes to the same line again.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <json.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include "nodeagent/requests.h"
#include "proto/messages.h"
#include "proto/wire.h"

using namespace tidal::agent;
using namespace tidal::wire;

namespace
{

constexpr uint64_t kMaxJob = 4294967295ull;
constexpr uint64_t kMaxCount = (uint64_t)INT64_MAX;

void check(bool ok)
{
	if (!ok)
		std::abort();
}

bool finite(const std::optional<double> &d)
{
	return !d || std::isfinite(*d);
}

void rules(const CkptRef &c)
{
	check(c.step <= kMaxCount);
}

void rules(const TrainStatus &s)
{
	check(s.step <= kMaxCount && std::isfinite(s.it_s) && finite(s.loss) &&
	      finite(s.gns));
	/* batch: 0 (unknown) or a global batch; the AdaScale and Pollux
	 * statistics: finite and never negative. */
	check(s.batch >= 0 && s.batch <= 1000000000);
	for (const auto *v : {&s.progress, &s.grad_sqr, &s.grad_var})
		check(finite(*v) && (!*v || **v >= 0));
	check(std::isfinite(s.stages.data) && std::isfinite(s.stages.compute) &&
	      std::isfinite(s.stages.comm));
	rules(s.last_ckpt);
	for (const auto &[rank, pid] : s.ranks)
		check(rank >= 0 && pid > 0);
}

/* M decoded by DECODE (which RET true); the rules of its type. */
void rules(const NodeRegister &m)
{
	check(m.ckpt_free_bytes <= kMaxCount && std::isfinite(m.heartbeat_s));
}
void rules(const NodeHeartbeat &m)
{
	check(finite(m.heartbeat_s));
	for (const JobReport &j : m.jobs) {
		check(j.job >= 1 && j.job <= kMaxJob);
		rules(j.status);
	}
}
void rules(const HeartbeatReply &m)
{
	check(m.ok || (m.commands.empty() && m.keep.empty()));
	for (const auto &[job, step] : m.keep)
		check(job >= 1 && job <= kMaxJob && step >= 1);
	for (const AgentCommand &c : m.commands)
		check(c.id >= 1 && c.job >= 1 && c.job <= kMaxJob);
}
void rules(const NodeAck &m)
{
	check(m.job <= kMaxJob && std::isfinite(m.ms));
	rules(m.ckpt);
}
void rules(const CkptWhere &m)
{
	check(m.job <= kMaxJob);
}
void rules(const CkptWhereReply &m)
{
	check(m.job <= kMaxJob && m.uid >= -1 && m.uid <= (int64_t)kMaxJob);
}
void rules(const JobPlan &m)
{
	check(m.job <= kMaxJob);
}
void rules(const JobPlanReply &m)
{
	check(m.job <= kMaxJob && m.batch >= 0 && m.batch <= 1000000000);
	check(m.share.empty() || m.share == "interleave" || m.share == "pack");
}
/* A pack's workload: what messages.h allows. */
void workload_rules(const std::string &w)
{
	check(w.size() <= 128);
	for (unsigned char c : w)
		check(std::isalnum(c) || (c && std::strchr("._:/+-", c)));
}
void rules(const LocalRequest &m)
{
	check(m.op == "hello" || ((m.op == "fetch" || m.op == "job_plan" ||
				   m.op == "interleave" || m.op == "pack") &&
				  m.job >= 1 && m.job <= kMaxJob));
	check(m.op != "job_plan" || (m.peer.empty() && m.step == 0));
	if (m.op == "pack") {
		const PackJoin &p = m.pack;
		check(p.job == m.job && m.peer.empty() && m.step == 0);
		check(p.rank <= 65535);
		check(!p.group.empty() && p.group.size() <= 64);
		workload_rules(p.workload);
		return;
	}
	if (m.op != "interleave")
		return;
	const InterleaveJoin &j = m.join;
	check(j.job == m.job && m.peer.empty() && m.step == 0);
	check(j.rank <= 65535 && j.size >= 1 && j.size <= 4);
	check(!j.group.empty() && j.group.size() <= 64);
	check(j.stages.size() == 3);
	double sum = 0;
	for (double x : j.stages) {
		check(std::isfinite(x) && x >= 0 && x <= 3600);
		sum += x;
	}
	check(sum > 0);
}
void rules(const Turn &m)
{
	check(m.first >= 0 && m.first <= m.last && m.last <= 2);
	check(std::isfinite(m.factor) && m.factor > 0 && m.factor <= 100);
	check(m.n >= 1 && m.n <= 4 && m.position >= 0 && m.position < m.n);
}
void rules(const Partners &m)
{
	check(!m.group.empty() && m.group.size() <= 64);
	check(!m.members.empty() && m.members.size() <= 64);
	for (const PackMember &p : m.members) {
		check(p.job >= 1 && p.job <= kMaxJob && p.rank <= 65535);
		workload_rules(p.workload);
	}
}
void rules(const TurnDone &m)
{
	check(!m.secs.empty() && m.secs.size() <= 3);
	for (double x : m.secs)
		check(std::isfinite(x) && x >= 0);
}
void rules(const HelloReply &) {}
void rules(const FetchReply &m)
{
	rules(m.ckpt);
	check(std::isfinite(m.ms));
}
void rules(const PeerRequest &m)
{
	check((m.op == "ckpt_stat" || m.op == "ckpt_get") && m.job >= 1 &&
	      m.job <= kMaxJob && m.step <= kMaxCount);
}
void rules(const CkptOffer &m)
{
	check(m.step <= kMaxCount && m.bytes <= kMaxCount);
}
void rules(const ControlRequest &) {}
void rules(const LauncherStatus &m)
{
	rules(m.status);
}
void rules(const CkptDone &m)
{
	rules(m.ckpt);
	check(std::isfinite(m.ms));
}
void rules(const CtlRequest &m)
{
	check(m.id == -1 || (m.id >= 1 && (uint64_t)m.id <= kMaxJob));
}
void rules(const CtlReply &m)
{
	check(m.ok || m.records.empty());
	for (const CtlRecord &r : m.records)
		for (const auto &[key, v] : r)
			check(v.kind != CtlValue::Number ||
			      std::isfinite(
				      std::strtod(v.text.c_str(), nullptr)));
}

/* Decode TEXT as a T in whichever form T's decoder takes; RET whether it
 * was accepted. */
template <typename T> bool decode_any(const std::string &text, T *m)
{
	std::string err;
	if constexpr (requires {
			      decode((json_object *)nullptr, m, uint64_t(0),
				     &err);
		      }) {
		json_object *o = parse_object(text);
		bool ok = o && decode(o, m, 7, &err);
		if (o)
			json_object_put(o);
		check(ok || !o || !err.empty());
		return ok;
	} else if constexpr (requires {
				     decode((json_object *)nullptr, m, &err);
			     }) {
		json_object *o = parse_object(text);
		bool ok = o && decode(o, m, &err);
		if (o)
			json_object_put(o);
		check(ok || !o || !err.empty());
		return ok;
	} else if constexpr (requires { decode(text, m, &err); }) {
		bool ok = decode(text, m, &err);
		check(ok || !err.empty());
		return ok;
	} else {
		return decode(text, m);
	}
}

/* TEXT as a T: if accepted, its rules hold and it survives a round
 * trip. */
template <typename T> void one(const std::string &text)
{
	T m;
	if (!decode_any(text, &m))
		return;
	rules(m);
	std::string line = encode(m);
	T back;
	check(decode_any(line, &back) && back == m && encode(back) == line);
}

void check_where(const std::string &text)
{
	WhereReply w;
	std::string err;
	if (!parse_where_reply(text, &w, &err))
		return;
	std::set<std::string> nodes;
	for (const CkptHolder &h : w.holders) {
		check(nodes.insert(h.node).second);
		check(!h.problem.empty() || !h.addr.port.empty());
	}
	check(w.uid >= -1 && w.uid <= (int64_t)UINT32_MAX);
}

} /* namespace */

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
				      std::size_t size)
{
	std::string text(reinterpret_cast<const char *>(data), size);
	one<NodeRegister>(text);
	one<NodeHeartbeat>(text);
	one<HeartbeatReply>(text);
	one<NodeAck>(text);
	one<CkptWhere>(text);
	one<CkptWhereReply>(text);
	one<JobPlan>(text);
	one<JobPlanReply>(text);
	one<LocalRequest>(text);
	one<Turn>(text);
	one<TurnDone>(text);
	one<Partners>(text);
	one<HelloReply>(text);
	one<FetchReply>(text);
	one<PeerRequest>(text);
	one<CkptOffer>(text);
	one<ControlRequest>(text);
	one<LauncherStatus>(text);
	one<CkptDone>(text);
	one<CtlRequest>(text);
	one<CtlReply>(text);
	check_where(text);
	Endpoint e;
	std::string err;
	if (parse_endpoint(text, &e, &err))
		check(!e.port.empty() && std::atol(e.port.c_str()) <= 65535);
	return 0;
}
