/*
 * policy.cc - the policy registry and small model helpers.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/model/policy.h"

#include <algorithm>
#include <map>

namespace tidal {

/* --- model.h helpers --- */

int Cluster::total_gpus() const
{
	int sum = 0;
	for (const Node &n : nodes)
		sum += n.gpus;
	return sum;
}

int Cluster::max_gpus_per_node() const
{
	int m = 0;
	for (const Node &n : nodes)
		m = std::max(m, n.gpus);
	return m;
}

int Cluster::find_node(const std::string &name) const
{
	for (size_t i = 0; i < nodes.size(); i++)
		if (nodes[i].name == name)
			return (int)i;
	return -1;
}

const char *job_state_name(JobState s)
{
	switch (s) {
	case JobState::Future:
		return "FUTURE";
	case JobState::Pending:
		return "PENDING";
	case JobState::Running:
		return "RUNNING";
	case JobState::Done:
		return "COMPLETED";
	case JobState::Rejected:
		return "REJECTED";
	}
	return "?";
}

int placement_gpus(const Placement &p)
{
	int sum = 0;
	for (const NodeShare &s : p)
		sum += s.gpus;
	return sum;
}

/* --- plan.h helpers --- */

const char *action_name(Action a)
{
	switch (a) {
	case Action::Start:
		return "Start";
	case Action::Keep:
		return "Keep";
	case Action::Resize:
		return "Resize";
	case Action::Preempt:
		return "Preempt";
	case Action::Hold:
		return "Hold";
	case Action::Reject:
		return "Reject";
	}
	return "?";
}

const Decision *Plan::find(JobId job) const
{
	for (const Decision &d : decisions)
		if (d.job == job)
			return &d;
	return nullptr;
}

/* --- registry --- */

static std::map<std::string, PolicyInfo> &registry()
{
	static std::map<std::string, PolicyInfo> r;
	return r;
}

void register_policy(PolicyInfo info)
{
	std::string key = lower(info.name);
	registry()[key] = std::move(info);
}

const PolicyInfo *find_policy(const std::string &name)
{
	auto it = registry().find(lower(name));
	return it == registry().end() ? nullptr : &it->second;
}

std::vector<const PolicyInfo *> all_policies()
{
	std::vector<const PolicyInfo *> out;
	for (const auto &[k, v] : registry())
		out.push_back(&v);
	return out;
}

const std::vector<std::string> &policy_keys()
{
	static const std::vector<std::string> keys = [] {
		std::vector<std::string> out;
		for (const PolicyInfo *i : all_policies()) {
			Params probe;
			i->make(probe);
			for (const std::string &k : probe.asked())
				out.push_back(k);
		}
		return out;
	}();
	return keys;
}

std::unique_ptr<Policy> make_policy(const std::string &name,
				    const Params &params, std::string *err)
{
	const PolicyInfo *info = find_policy(name);
	if (!info) {
		std::string known;
		for (const PolicyInfo *p : all_policies())
			known += (known.empty() ? "" : ", ") + p->name;
		*err = "unknown policy '" + name + "' (known: " + known + ")";
		return nullptr;
	}
	size_t before = params.errors().size();
	std::unique_ptr<Policy> p = info->make(params);
	if (params.errors().size() > before) {
		*err = params.errors()[before];
		return nullptr;
	}
	return p;
}

} /* namespace tidal */
