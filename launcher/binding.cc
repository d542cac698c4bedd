/*
 * binding.cc - GPU-near CPU and HCA binding of the ranks (binding.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "launcher/binding.h"

#include <sched.h>

#include <cstdlib>
#include <stdexcept>

namespace tidal::launch {

namespace {

/* The LOCAL_RANK-th entry of VISIBLE as a GPU index; -1 if it is not a
 * plain index (GPU-UUID, MIG-...). */
int visible_index(int local_rank, const char *visible)
{
	if (!visible || !*visible)
		return local_rank;
	std::string v = visible;
	size_t start = 0;
	for (int i = 0; i < local_rank; i++) {
		start = v.find(',', start);
		if (start == std::string::npos)
			return -1;
		start++;
	}
	std::string item = v.substr(start, v.find(',', start) - start);
	char *end;
	long n = std::strtol(item.c_str(), &end, 10);
	return item.empty() || *end || n < 0 ? -1 : (int)n;
}

} /* namespace */

std::string cpu_list_string(const std::vector<int> &cpus)
{
	std::string s;
	for (size_t i = 0; i < cpus.size();) {
		size_t j = i;
		while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1)
			j++;
		s += (s.empty() ? "" : ",") + std::to_string(cpus[i]);
		if (j > i)
			s += "-" + std::to_string(cpus[j]);
		i = j + 1;
	}
	return s;
}

bool Binder::load(const std::string &xml, std::string &err)
{
	try {
		summary_ = xml.empty() ? topo::summarize_live() :
					 topo::summarize_xml(xml);
	} catch (const std::exception &e) {
		err = e.what();
		return false;
	}
	return true;
}

std::optional<Binding> Binder::for_rank(int local_rank, const char *visible,
					std::string &why) const
{
	if (!summary_) {
		why = "no topology";
		return std::nullopt;
	}
	Binding b;
	b.gpu = visible_index(local_rank, visible);
	if (b.gpu < 0) {
		why = "CUDA_VISIBLE_DEVICES entry " + std::to_string(local_rank) +
		      " is not a device index";
		return std::nullopt;
	}
	std::optional<topo::GpuAffinity> a =
		topo::gpu_affinity(*summary_, b.gpu);
	if (!a) {
		why = "hwloc (" + summary_->source + ") shows no GPU " +
		      std::to_string(b.gpu);
		return std::nullopt;
	}
	b.gpu_cpus = a->cpu_list;
	b.numa = a->numa;
	b.hca = a->hca;
	cpu_set_t mine;
	CPU_ZERO(&mine);
	sched_getaffinity(0, sizeof mine, &mine);
	std::vector<int> both;
	for (int c : a->cpus)
		if (c < CPU_SETSIZE && CPU_ISSET(c, &mine))
			both.push_back(c);
	b.cpus = cpu_list_string(both);
	if (b.cpus.empty())
		why = "GPU " + std::to_string(b.gpu) + "'s CPUs " + b.gpu_cpus +
		      " are all outside this step's CPUs";
	return b;
}

} /* namespace tidal::launch */
