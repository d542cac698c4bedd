/*
 * metrics.cc - summary metrics over a run, and the preset registry.
 *
 * Definitions (MetricRules switches the anchors' variants):
 *   JCT          end - submit of each completed job
 *   makespan     max(end) - min(submit), or max(end)
 *   p99 JCT      linear interpolation at 0.99 (n-1), or sorted[int(0.99 n)]
 *   queue        seconds a job waited, as the replay model counts them
 *   p99.9 queue  linear interpolation at 0.999 (n-1)
 *   utilisation  busy GPU-seconds / (GPUs x makespan window)
 *   deadline     on-time completions / jobs with a deadline (rejected
 *                jobs, and live jobs that did not finish their work,
 *                count as misses), unless the preset sets its own
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <map>

#include "core/model/policy.h"
#include "sim/preset.h"

namespace tidal::sim {

static double interpolate(const std::vector<double> &sorted, double q)
{
	if (sorted.empty())
		return 0;
	double pos = q * (double)(sorted.size() - 1);
	size_t lo = (size_t)std::floor(pos);
	size_t hi = std::min(lo + 1, sorted.size() - 1);
	return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - (double)lo);
}

JobResult completed_result(const Job &j, Time end)
{
	JobResult r;
	r.id = j.id;
	r.name = j.name;
	r.gpus = j.gpus;
	r.submit = j.submit;
	r.start = j.start;
	r.end = end;
	r.jct = end - j.submit;
	r.preemptions = j.preemptions;
	r.deadline = j.deadline;
	return r;
}

JobResult rejected_result(const Job &j)
{
	JobResult r;
	r.id = j.id;
	r.name = j.name;
	r.gpus = j.gpus;
	r.submit = j.submit;
	r.deadline = j.deadline;
	r.rejected = true;
	return r;
}

Summary summarize(const RunResult &r, const MetricRules &rules)
{
	Summary s;
	s.policy = r.policy;
	std::vector<double> jct, queue;
	double first_submit = INFINITY, last_end = 0;
	long with_deadline = 0, on_time = 0;
	for (const JobResult &j : r.jobs) {
		if (j.deadline != kNoDeadline) {
			with_deadline++;
			if (!j.rejected && !j.unfinished &&
			    j.end <= j.deadline)
				on_time++;
		}
		if (j.rejected) {
			s.rejected++;
			continue;
		}
		double t = rules.truncate_jct ? std::trunc(j.jct) : j.jct;
		jct.push_back(t);
		queue.push_back(j.queue);
		first_submit = std::min(first_submit, j.submit);
		last_end = std::max(last_end, j.end);
	}
	s.jobs = (long)jct.size();
	if (!jct.empty()) {
		double sum = 0, qsum = 0;
		for (double v : jct)
			sum += v;
		for (double v : queue)
			qsum += v;
		s.avg_jct = sum / (double)jct.size();
		s.avg_queue = qsum / (double)queue.size();
		std::sort(jct.begin(), jct.end());
		std::sort(queue.begin(), queue.end());
		s.median_jct = interpolate(jct, 0.5);
		if (rules.percentile_by_index)
			s.p99_jct = jct[std::min(jct.size() - 1,
						 (size_t)((double)jct.size() * 0.99))];
		else
			s.p99_jct = interpolate(jct, 0.99);
		s.p999_queue = interpolate(queue, 0.999);
		s.makespan = rules.makespan_from_first_submit
				     ? last_end - first_submit
				     : last_end;
	}
	if (r.makespan)
		s.makespan = *r.makespan;
	if (r.deadline_ratio)
		s.deadline_ratio = r.deadline_ratio;
	else if (with_deadline > 0)
		s.deadline_ratio = (double)on_time / (double)with_deadline;
	s.worst_rho = r.worst_rho;
	s.unfair_fraction = r.unfair_fraction;
	if (!s.worst_rho) {
		double worst = -1;
		long unfair = 0, n = 0;
		for (const JobResult &j : r.jobs)
			if (j.rho >= 0) {
				worst = std::max(worst, j.rho);
				unfair += j.rho > 1;
				n++;
			}
		if (n > 0) {
			s.worst_rho = worst;
			s.unfair_fraction = (double)unfair / (double)n;
		}
	}
	/* Busy GPU-seconds over the window [first submit, last end]. */
	double busy = 0;
	double t0 = std::isfinite(first_submit) ? first_submit : 0;
	for (size_t i = 0; i + 1 < r.util.size(); i++) {
		double a = std::max(r.util[i].t, t0);
		double b = std::min(r.util[i + 1].t, last_end);
		if (b > a)
			busy += (b - a) * r.util[i].busy;
	}
	double window = last_end - t0;
	if (window > 0 && r.total_gpus > 0)
		s.utilization = busy / (window * r.total_gpus);
	return s;
}

/* --- preset registry --- */

std::vector<std::string> Preset::policy_names() const
{
	std::vector<std::string> out;
	for (const PolicyInfo *p : all_policies())
		out.push_back(lower(p->name));
	return out;
}

static std::map<std::string, PresetFactory> &presets()
{
	static std::map<std::string, PresetFactory> p;
	return p;
}

void register_preset(const std::string &name, PresetFactory make)
{
	presets()[name] = std::move(make);
}

std::unique_ptr<Preset> make_preset(const std::string &name, std::string *err)
{
	auto it = presets().find(lower(name));
	if (it == presets().end()) {
		std::string known;
		for (const auto &[k, v] : presets())
			known += (known.empty() ? "" : ", ") + k;
		*err = "unknown preset '" + name + "' (known: " + known + ")";
		return nullptr;
	}
	return it->second();
}

std::vector<std::string> preset_names()
{
	std::vector<std::string> out;
	for (const auto &[k, v] : presets())
		out.push_back(k);
	return out;
}

} /* namespace tidal::sim */
