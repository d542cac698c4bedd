/*
 * ctl_engine.cc - answer tidalctl requests from the engine's last cycle.
 *
 * The wire is newline-delimited JSON, one request and one reply per
 * connection (the C side, ctl_server.c, authenticates the peer with MUNGE
 * and passes its uid here):
 *
 *   {"v":1,"op":"show","what":"jobs"}          every job
 *   {"v":1,"op":"show","what":"job","id":12}
 *   {"v":1,"op":"show","what":"nodes"}         GPUs per node, agents
 *   {"v":1,"op":"show","what":"policy"}
 *   {"v":1,"op":"show","what":"decisions"}
 *   {"v":1,"op":"show","what":"config"}        tidal.conf in force
 *   {"v":1,"op":"explain","id":12}
 *   {"v":1,"op":"set","what":"policy","policy":"sjf"}   admin only
 *
 *   reply: {"v":1,"ok":true,"records":[{"JobId":12,...},...]}
 *          {"v":1,"ok":false,"error":"..."}
 *
 * (The messages are proto/messages.h's CtlRequest and CtlReply; a
 * request with the older "version" key is answered too.)
 *
 * Records keep their keys in scontrol's order, so tidalctl prints them as
 * they come.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <json.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "core/model/number_text.h"
#include "core/version.h"
#include "plugin/sched/agents.h"
#include "plugin/sched/c_api.h"
#include "plugin/sched/engine.h"
#include "proto/json.h"
#include "proto/messages.h"

namespace tidal {
namespace plugin {

namespace {

/* K's value in record O: replaced where K is already, else added last
 * (the order is scontrol's, and tidalctl prints it as it comes). */
void put(wire::CtlRecord &o, const char *k, const wire::CtlValue &v)
{
	for (auto &[key, val] : o)
		if (key == k) {
			val = v;
			return;
		}
	o.emplace_back(k, v);
}

void put_str(wire::CtlRecord &o, const char *k, const std::string &v)
{
	put(o, k, { wire::CtlValue::Text, v.empty() ? "None" : v, 0 });
}

/* Whole numbers as integers; others written with three decimals (json-c
 * would write 0.054 as 0.053999999999999999), trailing zeros dropped, or
 * three significant digits for a value too small for that.  tidalctl
 * prints them the same way. */
void put_num(wire::CtlRecord &o, const char *k, double v)
{
	if (v == std::floor(v) && std::fabs(v) < 9e15)
		put(o, k, { wire::CtlValue::Integer, "", (int64_t)v });
	else if (!std::isfinite(v)) /* JSON has no inf or nan */
		put(o, k, {});
	else
		put(o, k, { wire::CtlValue::Number, decimal_text(v), 0 });
}

/* A number that is not known: JSON null, "None" in tidalctl's records. */
void put_none(wire::CtlRecord &o, const char *k)
{
	put(o, k, {});
}

std::string placement_str(const JobView &v, const Placement &p,
			  const std::vector<std::string> &names)
{
	std::ostringstream s;
	for (size_t i = 0; i < p.size(); i++) {
		int n = p[i].node;
		s << (i ? "," : "")
		  << (n >= 0 && n < (int)names.size() ? names[n] : "?") << ":"
		  << p[i].gpus;
	}
	return s.str();
}

wire::CtlRecord job_record(const JobView &v, bool full)
{
	const Job &j = v.job;
	wire::CtlRecord o;
	put_num(o, "JobId", (double)j.id);
	put_str(o, "JobName", j.name);
	put_str(o, "User", j.user);
	put_str(o, "State", j.state == JobState::Running ? "RUNNING"
							 : "PENDING");
	put_num(o, "GPUs", j.gpus);
	put_num(o, "AllocGPUs", j.alloc);
	put_str(o, "Nodes", v.nodes);
	put_str(o, "ElasticGPUs",
		j.max_gpus ? std::to_string(j.min_gpus) + "-" +
				     std::to_string(j.max_gpus)
			   : "");
	if (full) {
		put_str(o, "Partition", j.group);
		put_str(o, "Model", j.model);
		put_num(o, "Batch", j.batch);
		if (j.iterations_known) /* --train-iters */
			put_num(o, "Iterations", j.iterations);
		else
			put_none(o, "Iterations");
		/* What the policy used: measured when an agent reports the
		 * job (agents/show.cc), else from the time limit. */
		if (j.iterations_known)
			put_num(o, "RemainingIters", std::round(j.remaining));
		else
			put_none(o, "RemainingIters");
		if (j.time_known)
			put_num(o, "RemainingSec",
				std::round(j.remaining_time()));
		else
			put_none(o, "RemainingSec");
		put_num(o, "Submit", j.submit);
		if (j.has_deadline())
			put_num(o, "Deadline", j.deadline);
		else
			put_none(o, "Deadline");
		put_num(o, "AttainedGPUSec", std::round(j.attained));
		/* Jobs on the same GPUs (gres/shard: sched_tidal(8)) */
		if (!v.partners.empty())
			put_str(o, "SharesGPUsWith", v.partners);
		/* the GPU it holds a shard of: its interleaving group on
		 * that node's tidald */
		if (!v.shared_gpu.empty())
			put_str(o, "SharedGPU", v.shared_gpu);
	}
	put_str(o, "Action", v.decided ? action_name(v.decision.action) : "");
	/* The policy's order, apart from the Reason (which Slurm shows too,
	 * and which would change whenever a job ahead starts or ends). */
	if (v.decided && v.decision.ranked > 0) {
		put_num(o, "Rank", v.decision.rank);
		put_num(o, "Ranked", v.decision.ranked);
	} else {
		put_none(o, "Rank");
		put_none(o, "Ranked");
	}
	put_str(o, "Reason", v.decided ? v.decision.reason : "");
	agent_job_fields(j.id, o, full); /* checkpoint, resize story */
	return o;
}

/* Jobs on a node as "12:8,13:4"; others' jobs hidden when PRIVATE. */
wire::CtlRecord node_record(const NodeView &n, std::uint32_t uid, bool admin,
			    bool private_jobs, const LastCycle &last)
{
	wire::CtlRecord o;
	std::string jobs;
	int hidden = 0;
	for (const auto &[id, g] : n.jobs) {
		bool mine = true;
		if (private_jobs && !admin)
			for (const JobView &v : last.jobs)
				if (v.job.id == id)
					mine = v.uid == uid;
		if (!mine) {
			hidden++;
			continue;
		}
		jobs += (jobs.empty() ? "" : ",") + std::to_string(id) + ":" +
			std::to_string(g);
	}
	if (hidden)
		jobs += (jobs.empty() ? "" : ",") + std::to_string(hidden) +
			" other";
	put_str(o, "NodeName", n.name);
	put_str(o, "State", n.up ? "UP" : "DOWN");
	put_num(o, "GPUs", n.gpus_total);
	put_num(o, "AllocGPUs", n.gpus_alloc);
	put_num(o, "OtherGPUs", n.gpus_other);
	put_num(o, "FreeGPUs",
		n.up ? std::max(0, n.gpus_total - n.gpus_other - n.gpus_alloc)
		     : 0);
	put_str(o, "Switch", n.leaf_switch);
	put_str(o, "Jobs", jobs);
	agent_node_fields(n.name, o, last.now); /* tidald's columns */
	return o;
}

std::string error_line(const std::string &msg)
{
	return wire::error_reply(msg) + "\n";
}

/* {"v":1,"ok":true,"records":RECORDS}, one line. */
std::string records_line(std::vector<wire::CtlRecord> records)
{
	wire::CtlReply r;
	r.ok = true;
	r.records = std::move(records);
	return wire::encode(r);
}

} /* namespace */

std::string Engine::handle(const std::string &request, std::uint32_t uid,
			   bool admin, bool private_jobs,
			   const char **refused)
{
	*refused = nullptr;
	json_object *req = json_tokener_parse(request.c_str());
	if (!req || json_object_get_type(req) != json_type_object) {
		if (req)
			json_object_put(req);
		*refused = "the request is not a JSON object";
		return error_line("request is not a JSON object");
	}
	wire::CtlRequest q;
	std::string err;
	bool decoded = wire::decode(req, &q, &err);
	json_object_put(req);
	if (!decoded) {
		*refused = "a wire version this plugin does not speak";
		return error_line(err);
	}
	const std::string &op = q.op, &what = q.what, &policy = q.policy;
	long long id = q.id;

	if (op == "set" && what == "policy") {
		if (!admin) {
			*refused = "changing the policy needs root or "
				   "SlurmUser";
			return error_line(
				"changing the policy needs root or SlurmUser "
				"(you are uid " +
				std::to_string(uid) + ")");
		}
		return set_policy(policy);
	}

	std::lock_guard<std::mutex> g(mu_);
	std::vector<wire::CtlRecord> records;
	if (op == "show" && what == "policy") {
		wire::CtlRecord o;
		put_str(o, "Policy", name_);
		put_num(o, "CycleInterval", interval_);
		put_num(o, "Cycles", (double)cycles_);
		if (cycles_)
			put_num(o, "LastCycle", std::round(last_.now));
		else
			put_none(o, "LastCycle");
		put_num(o, "DecideMs", last_.decide_ms);
		put_num(o, "Jobs", (double)last_.jobs.size());
		/* What is in force: a value tidal.conf gave that was rejected
		 * (logged by slurmctld) shows as the default used instead,
		 * and is listed as given under Rejected. */
		std::string kv, bad;
		const auto &rejected = params_.rejected();
		for (const auto &[k, v] : params_.items()) {
			auto r = rejected.find(k);
			kv += (kv.empty() ? "" : ",") + k + "=" +
			      (r == rejected.end() ? v : r->second);
			if (r != rejected.end())
				bad += (bad.empty() ? "" : ",") + k + "=" + v;
		}
		put_str(o, "Parameters", kv);
		put_str(o, "Rejected", bad);
		put_str(o, "Version", TIDAL_VERSION);
		put_str(o, "SlurmVersion", slurm_version_);
		records.push_back(o);
	} else if (op == "show" && what == "config") {
		/* Each key that tidal.conf set or a reader asked for: the
		 * value in force and where it came from (the file and line,
		 * or the default); a rejected value beside the default used
		 * instead; a key no reader of this policy reads, marked. */
		for (const Params::Setting &s : params_.settings()) {
			wire::CtlRecord o;
			put_str(o, "Key", s.key);
			put_str(o, "Value", s.value);
			put_str(o, "Source", s.source);
			put_str(o, "Rejected", s.rejected);
			put_str(o, "Read", s.read ? "yes"
						  : "no (Policy=" + name_ +
							    " does not read it)");
			records.push_back(o);
		}
	} else if (op == "show" && what == "nodes") {
		for (const NodeView &n : last_.nodes)
			records.push_back(node_record(n, uid, admin,
						      private_jobs, last_));
	} else if (op == "show" || op == "explain") {
		bool one = op == "explain" || what == "job";
		if (op == "show" && what != "jobs" && what != "job" &&
		    what != "decisions") {
			return error_line("show what? jobs, job ID, nodes, "
					  "policy, config or decisions");
		}
		for (const JobView &v : last_.jobs) {
			if (one && v.job.id != id)
				continue;
			if (private_jobs && !admin && v.uid != uid)
				continue;
			wire::CtlRecord o = job_record(v, one);
			if (op == "explain" || what == "decisions") {
				put_str(o, "Placement",
					placement_str(v, v.decision.placement,
						      node_names_));
				for (const auto &[k, n] : v.decision.numbers)
					put_num(o, k.c_str(), n);
			}
			records.push_back(std::move(o));
		}
		if (one && records.empty()) {
			return error_line(
				"job " + std::to_string(id) +
				" is not pending or running under Tidal "
				"(or is not yours to see)");
		}
	} else {
		*refused = "an unknown op";
		return error_line("unknown op '" + op + "'");
	}
	return records_line(records);
}

std::int64_t Engine::job_uid(std::uint32_t id)
{
	std::lock_guard<std::mutex> g(mu_);
	for (const JobView &v : last_.jobs)
		if (v.job.id == id)
			return v.uid;
	return -1;
}

JobPlanInfo Engine::job_plan(std::uint32_t id)
{
	std::lock_guard<std::mutex> g(mu_);
	JobPlanInfo p;
	if (policy_ && policy_->shares_gpus())
		p.share = policy_->interleaves() ? "interleave" : "pack";
	for (const JobView &v : last_.jobs) {
		if (v.job.id != id)
			continue;
		if (v.decided)
			p.batch = v.decision.batch;
		if (v.job.gpu_group) /* the partners, "12,14", and itself */
			p.group_size =
				1 + (v.partners.empty()
					     ? 0
					     : (int)std::count(
						       v.partners.begin(),
						       v.partners.end(), ',') +
						       1);
		break;
	}
	return p;
}

std::string Engine::set_policy(const std::string &name)
{
	std::lock_guard<std::mutex> g(mu_);
	const PolicyInfo *info = find_policy(lower(name));
	if (!info)
		return error_line("unknown policy '" + name + "'");
	Params p = params_;
	p.set("Policy", lower(name));
	policy_ = info->make(p);
	params_ = p;
	name_ = lower(name);
	wire::CtlRecord rec;
	put_str(rec, "Policy", name_);
	return records_line({ rec });
}

} /* namespace plugin */
} /* namespace tidal */

extern "C" char *tidal_engine_request(const char *request, uint32_t uid,
				      int admin, int private_jobs,
				      const char **refused)
{
	const char *why = nullptr;
	char *p;
	try {
		p = tidal::plugin::c_string(tidal::plugin::engine().handle(
			request ? request : "", uid, admin != 0,
			private_jobs != 0, &why));
	} catch (...) {
		p = tidal::plugin::internal_error_reply();
	}
	if (refused)
		*refused = why;
	return p;
}
