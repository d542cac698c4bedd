/*
 * lucid_tables.cc - the tables the Lucid policy reads (sharescore labels,
 * packed pair speeds, the throughput prediction), fractional-rate
 * progress, and Lucid's consolidate placer over a node list that grows
 * and shrinks (the profiler's auto-scaling).
 *
 * The tables are the Lucid artifact's (non-commercial): tests read them
 * from the anchors; nothing here ships them.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/csv.h"
#include "sim/presets/lucid_pack.h"

namespace tidal::sim::lucid {

namespace {

WorkloadKey key_at(const Csv &csv, size_t r, const std::string &sfx)
{
	WorkloadKey k;
	k.model = csv.str(r, csv.need("model" + sfx));
	k.dataset = csv.str(r, csv.need("dataset" + sfx));
	k.batch = (long)csv.num(r, csv.need("batchsize" + sfx));
	k.amp = (long)csv.num(r, csv.need("amp" + sfx));
	return k;
}

} /* namespace */

WorkloadKey workload_key(const Job &j)
{
	WorkloadKey k;
	size_t a = j.model.find('/'), b = j.model.find('/', a + 1),
	       c = j.model.find('/', b + 1);
	if (a == std::string::npos || b == std::string::npos ||
	    c == std::string::npos)
		throw InputError("lucid preset: job " + std::to_string(j.id) +
				 " has no model/dataset/batchsize/amp (" +
				 j.model + "); the Lucid policy needs them");
	k.model = j.model.substr(0, a);
	k.dataset = j.model.substr(a + 1, b - a - 1);
	k.batch = std::atol(j.model.substr(b + 1, c - b - 1).c_str());
	k.amp = std::atol(j.model.substr(c + 1).c_str());
	return k;
}

int PackTables::score(const WorkloadKey &k, JobId job) const
{
	auto it = sharescore.find(k);
	if (it == sharescore.end())
		throw InputError("lucid preset: job " + std::to_string(job) +
				 ": workload " + workload_name(k) +
				 " is not in single_data.csv");
	return it->second;
}

std::pair<double, double> PackTables::speeds(const WorkloadKey &j,
					     const WorkloadKey &t,
					     JobId jid) const
{
	std::pair<double, double> s;
	if (colocate.speeds(j, t, &s))
		return s;
	throw InputError("lucid preset: job " + std::to_string(jid) +
			 ": no colocate_info.csv row for " + workload_name(j) +
			 " with " + workload_name(t));
}

PackTables load_pack_tables(const std::string &dir)
{
	if (dir.empty())
		throw InputError("lucid preset: the lucid policy needs "
				 "--profiles DIR (single_data.csv, "
				 "colocate_info.csv, Venus_throughput_pred.csv)");
	PackTables t;
	Csv single = Csv::load(dir + "/single_data.csv");
	int c_label = single.need("label");
	for (size_t r = 0; r < single.rows(); r++)
		t.sharescore.emplace(key_at(single, r, ""),
				     (int)single.integer(r, c_label));

	std::string err;
	if (!t.colocate.load(dir + "/colocate_info.csv", &err))
		throw InputError(err);

	Csv pred = Csv::load(dir + "/Venus_throughput_pred.csv");
	int c_time = pred.need("time"), c_job = pred.need("pred_gpu_job"),
	    c_gpu = pred.need("pred_gpu_num");
	double t0 = 0;
	for (size_t r = 0; r < pred.rows(); r++) {
		double ts = 0;
		if (!parse_datetime(pred.str(r, c_time), &ts))
			pred.fail(r, "time '" + pred.str(r, c_time) +
					     "' is not YYYY-MM-DD HH:MM:SS");
		if (r == 0)
			t0 = ts;
		t.pred_offset.push_back(ts - t0);
		t.pred_jobs.push_back(pred.num(r, c_job));
		t.pred_gpus.push_back(pred.num(r, c_gpu));
	}
	return t;
}

double Forecast::mean_after(Time t)
{
	if (next_ >= bins_.size())
		return fallback_;
	while (next_ < bins_.size() && start_ + offset_[next_] <= t)
		next_++;
	size_t left = bins_.size() - next_;
	if (left == 0)
		return std::numeric_limits<double>::quiet_NaN();
	size_t n = left >= 6 ? 5 : left;
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += bins_[next_ + i];
	return sum / (double)n;
}

long drain_seconds(double remain, double rate)
{
	if (remain <= 0)
		return 0;
	if (rate == 1.0)
		return (long)std::ceil(remain);
	long n = 0;
	while (remain > 0) {
		remain -= rate;
		n++;
	}
	return n;
}

double drain(double remain, double rate, long n)
{
	if (rate == 1.0 && remain - (double)n >= 0)
		return remain - (double)n;
	for (long i = 0; i < n; i++)
		remain -= rate;
	return remain;
}

/* --- NodeList --- */

NodeList::NodeList(int nodes, int gpus_per_node) : per_node_(gpus_per_node)
{
	for (int i = 0; i < nodes; i++)
		add(i);
}

void NodeList::add(long name)
{
	nodes_.push_back({name, per_node_});
	free_total_ += per_node_;
}

bool NodeList::has(long name) const
{
	for (const SlotNode &n : nodes_)
		if (n.name == name)
			return true;
	return false;
}

bool NodeList::is_idle(long name) const
{
	for (const SlotNode &n : nodes_)
		if (n.name == name)
			return n.free == per_node_;
	return false;
}

int NodeList::idle_nodes() const
{
	int k = 0;
	for (const SlotNode &n : nodes_)
		k += n.free == per_node_;
	return k;
}

bool NodeList::remove_highest_idle()
{
	int best = -1;
	for (int i = 0; i < (int)nodes_.size(); i++)
		if (nodes_[i].free == per_node_ &&
		    (best < 0 || nodes_[i].name > nodes_[best].name))
			best = i;
	if (best < 0)
		return false;
	free_total_ -= per_node_;
	nodes_.erase(nodes_.begin() + best);
	return true;
}

std::vector<std::pair<long, int>> NodeList::place(int gpus)
{
	std::vector<std::pair<long, int>> p;
	if (free_total_ < gpus)
		return p;
	std::vector<int> avail;
	for (int i = 0; i < (int)nodes_.size(); i++)
		if (nodes_[i].free > 0)
			avail.push_back(i);
	if (gpus <= per_node_) {
		std::stable_sort(avail.begin(), avail.end(), [&](int a, int b) {
			return nodes_[a].free < nodes_[b].free;
		});
		for (int i : avail)
			if (nodes_[i].free >= gpus) {
				p.emplace_back(i, gpus);
				break;
			}
	} else {
		std::stable_sort(avail.begin(), avail.end(), [&](int a, int b) {
			return nodes_[a].free > nodes_[b].free;
		});
		int whole = gpus / per_node_, rest = gpus % per_node_;
		for (int i : avail) {
			if (whole == 0 && rest == 0)
				break;
			if (nodes_[i].free == per_node_ && whole > 0) {
				p.emplace_back(i, per_node_);
				whole--;
			} else if (whole == 0 && nodes_[i].free >= rest) {
				p.emplace_back(i, rest);
				rest = 0;
			} else {
				break;
			}
		}
		if (whole > 0 || rest > 0)
			p.clear();
	}
	for (auto &[i, g] : p) {
		nodes_[i].free -= g;
		free_total_ -= g;
		i = nodes_[i].name;
	}
	return p;
}

void NodeList::release(const std::vector<std::pair<long, int>> &p)
{
	for (const auto &[name, g] : p)
		for (SlotNode &n : nodes_)
			if (n.name == name) {
				n.free += g;
				free_total_ += g;
			}
}

} /* namespace tidal::sim::lucid */
