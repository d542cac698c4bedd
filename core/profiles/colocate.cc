/*
 * colocate.cc - packed pair speeds (colocate.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/profiles/colocate.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace tidal {

namespace {

/* The four models Lucid packs at speed 1 without a lookup. */
bool outside_model(const std::string &m)
{
	return m == "NeuMF" || m == "ResNet50" || m == "BERT" ||
	       m == "Transformer";
}

/* TEXT's fields between SEP (no quoting: the tables have none). */
std::vector<std::string> split(const std::string &text, char sep)
{
	std::vector<std::string> f;
	size_t at = 0;
	for (;;) {
		size_t next = text.find(sep, at);
		f.push_back(text.substr(at, next == std::string::npos
						    ? std::string::npos
						    : next - at));
		if (next == std::string::npos)
			return f;
		at = next + 1;
	}
}

/* A finite number, or false. */
bool number(const std::string &s, double *v)
{
	char *end = nullptr;
	errno = 0;
	*v = std::strtod(s.c_str(), &end);
	return !s.empty() && !errno && !*end && std::isfinite(*v);
}

/* An integer in [0, 2^31), or false. */
bool count(const std::string &s, long *v)
{
	double d;
	if (!number(s, &d) || d != std::floor(d) || d < 0 || d >= 2147483648.0)
		return false;
	*v = (long)d;
	return true;
}

} /* namespace */

bool parse_workload(const std::string &text, WorkloadKey *out,
		    std::string *err)
{
	std::vector<std::string> f = split(text, '/');
	WorkloadKey k;
	if (f.size() != 4 || f[0].empty() || f[1].empty() ||
	    !count(f[2], &k.batch) || !count(f[3], &k.amp)) {
		*err = "'" + text +
		       "': a workload is MODEL/DATASET/BATCH/AMP, BATCH and "
		       "AMP integers >= 0 (e.g. ResNet18/CIFAR-10/64/0)";
		return false;
	}
	k.model = f[0];
	k.dataset = f[1];
	*out = k;
	return true;
}

std::string workload_name(const WorkloadKey &k)
{
	return k.model + "/" + k.dataset + "/" + std::to_string(k.batch) +
	       "/" + std::to_string(k.amp);
}

bool ColocateTable::parse(const std::string &file, const std::string &text,
			  std::string *err)
{
	std::istringstream in(text);
	std::string line;
	std::vector<std::string> head;
	/* Columns: model, dataset, batchsize, amp, speed for jobs 1 and 2. */
	static const char *const kCols[] = { "model", "dataset", "batchsize",
					     "amp", "speed" };
	int col[2][5];
	std::map<std::pair<WorkloadKey, WorkloadKey>, std::pair<double, double>>
		got;
	long n = 0;
	while (std::getline(in, line)) {
		n++;
		if (!line.empty() && line.back() == '\r')
			line.pop_back();
		std::string where = file + ":" + std::to_string(n) + ": ";
		if (n == 1) {
			head = split(line, ',');
			for (int j = 0; j < 2; j++)
				for (int c = 0; c < 5; c++) {
					std::string name = kCols[c] +
							   std::to_string(j + 1);
					col[j][c] = -1;
					for (size_t i = 0; i < head.size(); i++)
						if (head[i] == name)
							col[j][c] = (int)i;
					if (col[j][c] < 0) {
						*err = where +
						       "missing column " + name;
						return false;
					}
				}
			continue;
		}
		if (line.empty())
			continue;
		std::vector<std::string> f = split(line, ',');
		if (f.size() != head.size()) {
			*err = where + "expected " +
			       std::to_string(head.size()) + " cells, got " +
			       std::to_string(f.size());
			return false;
		}
		WorkloadKey k[2];
		double speed[2];
		for (int j = 0; j < 2; j++) {
			k[j].model = f[(size_t)col[j][0]];
			k[j].dataset = f[(size_t)col[j][1]];
			const std::string &b = f[(size_t)col[j][2]],
					  &a = f[(size_t)col[j][3]],
					  &s = f[(size_t)col[j][4]];
			if (k[j].model.empty() || k[j].dataset.empty()) {
				*err = where + "job " + std::to_string(j + 1) +
				       " has no model or dataset";
				return false;
			}
			if (!count(b, &k[j].batch) || !count(a, &k[j].amp)) {
				*err = where + "'" + b + "', '" + a +
				       "': a batch size and amp are "
				       "integers >= 0";
				return false;
			}
			if (!number(s, &speed[j]) || !(speed[j] > 0) ||
			    speed[j] > 100) {
				*err = where + "'" + s +
				       "': a packed speed is a number above "
				       "0, at most 100 (1 = as fast as alone)";
				return false;
			}
		}
		if (!got.emplace(std::make_pair(k[0], k[1]),
				 std::make_pair(speed[0], speed[1]))
			     .second) {
			*err = where + "a second row for " +
			       workload_name(k[0]) + " with " +
			       workload_name(k[1]);
			return false;
		}
	}
	if (n == 0) {
		*err = file + ": empty; expected colocate_info.csv's header";
		return false;
	}
	pair_speed_ = std::move(got);
	return true;
}

bool ColocateTable::load(const std::string &path, std::string *err)
{
	std::ifstream in(path, std::ios::binary);
	if (!in) {
		*err = path + ": cannot be read";
		return false;
	}
	std::stringstream ss;
	ss << in.rdbuf();
	return parse(path, ss.str(), err);
}

bool ColocateTable::speeds(const WorkloadKey &j, const WorkloadKey &t,
			   std::pair<double, double> *out) const
{
	if (outside_model(j.model) || outside_model(t.model)) {
		*out = { 1.0, 1.0 };
		return true;
	}
	auto it = pair_speed_.find({ j, t });
	if (it != pair_speed_.end()) {
		*out = it->second;
		return true;
	}
	it = pair_speed_.find({ t, j });
	if (it != pair_speed_.end()) {
		*out = { it->second.second, it->second.first };
		return true;
	}
	return false;
}

} /* namespace tidal */
