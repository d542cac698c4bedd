/*
 * pollux_live.cc - Pollux as a registry policy (see pollux_live.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/pollux_live.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace tidal
{

namespace
{

/* A job's floor and ceiling in GPUs: its elastic range, or its size. */
int floor_of(const Job &j)
{
	return j.max_gpus > 0 ? std::max(1, j.min_gpus) : std::max(1, j.gpus);
}

int cap_of(const Job &j)
{
	return j.max_gpus > 0 ? j.max_gpus : std::max(1, j.gpus);
}

/* Node per replica, in node order, of a placement. */
std::vector<int> node_list(const Placement &p)
{
	std::vector<int> out;
	for (const NodeShare &s : p)
		out.insert(out.end(), std::max(0, s.gpus), s.node);
	std::sort(out.begin(), out.end());
	return out;
}

Placement placement_of(const std::vector<int> &nodes)
{
	Placement p;
	for (int n : nodes) {
		if (!p.empty() && p.back().node == n)
			p.back().gpus++;
		else
			p.push_back({ n, 1 });
	}
	return p;
}

int distinct_nodes(const std::vector<int> &nodes)
{
	int k = 0;
	for (size_t i = 0; i < nodes.size(); i++)
		k += i == 0 || nodes[i] != nodes[i - 1];
	return k;
}

std::string fmt(double x)
{
	char b[40];
	std::snprintf(b, sizeof b, "%.17g", x);
	return b;
}

} /* namespace */

PolluxLive::PolluxLive(const Params &p)
    : opt_(p, 1), interval_(p.get_double("Pollux.Interval", 60, 1, 86400))
{
}

const PolluxLive::Model *PolluxLive::model(JobId id) const
{
	auto it = m_.find(id);
	return it == m_.end() ? nullptr : &it->second;
}

/* One measurement of a running job at its current size (pollux_live.h,
 * observe); the latest per configuration is kept. */
void PolluxLive::observe(const Job &j)
{
	if (j.state != JobState::Running || !j.measured || j.run_batch <= 0 ||
	    j.alloc <= 0 || j.run_world != j.alloc ||
	    !(j.step_time > 0 && std::isfinite(j.step_time)))
		return;
	Model &m = m_[j.id];
	if (std::isfinite(j.grad_sqr) && std::isfinite(j.grad_var) &&
	    j.grad_sqr >= 0 && j.grad_var >= 0)
		m.grad = GradParams{ j.grad_sqr, j.grad_var };
	PerfSample s;
	s.nodes = distinct_nodes(node_list(j.placement));
	s.replicas = j.alloc;
	s.atomic_bsz =
		std::max(1, (int)std::lround((double)j.run_batch / j.alloc));
	s.optim_time = j.step_time;
	double sync = std::isfinite(j.sync_time) ? j.sync_time : 0;
	s.accum_time = j.step_time - std::clamp(sync, 0.0, j.step_time);
	if (s.nodes < 1 || !(s.accum_time > 0))
		return;
	for (PerfSample &o : m.samples) {
		if (o.nodes != s.nodes || o.replicas != s.replicas ||
		    o.atomic_bsz != s.atomic_bsz)
			continue;
		/* The same configuration: keep the newer time when it moved
		 * by more than 2% (noise would refit every cycle). */
		if (std::fabs(o.optim_time - s.optim_time) >
			    0.02 * o.optim_time ||
		    std::fabs(o.accum_time - s.accum_time) >
			    0.02 * o.accum_time) {
			o = s;
			m.refit = true;
			serial_++;
		}
		return;
	}
	m.samples.push_back(s);
	m.refit = true;
	serial_++;
}

bool PolluxLive::must_allocate(const Snapshot &snap) const
{
	if (last_ < 0 || snap.now - last_ >= interval_)
		return true;
	for (const Job *j : snap.jobs) /* a job no allocation has seen */
		if (auto it = m_.find(j->id);
		    it == m_.end() || !it->second.placed)
			return true;
	const Cluster &c = *snap.cluster;
	if (c.nodes.size() != gpus_.size())
		return true;
	for (size_t n = 0; n < gpus_.size(); n++)
		if (c.nodes[n].gpus != gpus_[n])
			return true;
	return false;
}

void PolluxLive::allocate(const Snapshot &snap)
{
	std::vector<PolluxJobState> in;
	std::vector<int> maxb(snap.jobs.size(), 0);
	for (size_t k = 0; k < snap.jobs.size(); k++) {
		const Job &j = *snap.jobs[k];
		Model &m = m_[j.id];
		if (m.refit && !m.samples.empty()) {
			m.perf = fit_perf_params(m.samples);
			m.refit = false;
		}
		PolluxJobState s;
		s.id = j.id;
		s.submit = j.submit;
		s.attained = j.attained;
		s.age = std::max(0.0, snap.now - j.submit);
		s.restarts = m.restarts;
		s.fresh = j.state != JobState::Running && !m.ran;
		int lo = floor_of(j), hi = cap_of(j), seen = 0;
		for (const PerfSample &p : m.samples)
			seen = std::max(seen, p.replicas);
		s.max_replicas = std::min(hi, std::max(lo, 2 * seen));
		s.min_replicas = lo;
		if (m.perf && j.batch > 0) {
			maxb[k] = std::max(j.batch, j.max_batch);
			GoodputFunction fn(*m.perf,
					   m.grad.value_or(GradParams{}),
					   j.batch);
			s.speedup.emplace(fn, maxb[k], 1, maxb[k], false);
		}
		if (j.state == JobState::Running)
			s.alloc = node_list(j.placement);
		else if (m.ran && m.placed)
			s.alloc = m.target; /* requeued on its way there */
		in.push_back(std::move(s));
	}
	std::vector<int> gpus;
	int total = 0;
	for (const Node &n : snap.cluster->nodes) {
		gpus.push_back(std::max(0, n.gpus));
		total += std::max(0, n.gpus);
	}
	/* A node the cluster no longer has is in no current allocation. */
	for (PolluxJobState &s : in)
		s.alloc.erase(
			std::remove_if(s.alloc.begin(), s.alloc.end(),
				       [&](int n) {
					       return n < 0 ||
						      n >= (int)gpus.size();
				       }),
			s.alloc.end());
	std::vector<std::vector<int>> out;
	if (!in.empty() && total > 0) {
		out = opt_.optimize(in, gpus, &round_);
	} else {
		out.assign(in.size(), {});
		round_ = PolluxRound{};
	}
	int fair = in.empty() ? 1
			      : std::max(1, (total + (int)in.size() - 1) /
						    (int)in.size());
	for (size_t k = 0; k < in.size(); k++) {
		const Job &j = *snap.jobs[k];
		Model &m = m_[j.id];
		if (j.state == JobState::Running && out[k] != in[k].alloc) {
			m.restarts++;
			serial_++;
		}
		m.target = out[k];
		m.placed = true;
		int r = (int)m.target.size(), nodes = distinct_nodes(m.target);
		m.batch = 0;
		m.efficiency = m.throughput = NAN;
		m.speedup = r ? (double)r / fair : 0;
		if (in[k].speedup && r > 0) {
			GoodputFunction fn(*m.perf,
					   m.grad.value_or(GradParams{}),
					   j.batch);
			GoodputChoice c = fn.optimize(nodes, r, maxb[k], 1,
						      maxb[k], false);
			if (c.atomic_bsz > 0) {
				/* The local batch is rounded up: the
				 * total stays within the range (the
				 * trainer spreads a remainder). */
				m.batch = std::min(c.atomic_bsz * r, maxb[k]);
				m.throughput = fn.throughput(nodes, r,
							     c.atomic_bsz, 0);
				m.efficiency = fn.efficiency(m.batch);
			}
			m.speedup = (*in[k].speedup)(nodes, r);
		}
	}
	last_ = snap.now;
	gpus_ = std::move(gpus);
}

void PolluxLive::decide_job(const Job &j, Model &m, Plan &plan,
			    bool reasons) const
{
	bool running = j.state == JobState::Running;
	int r = (int)m.target.size(), nodes = distinct_nodes(m.target);
	char why[200] = "";
	Decision *d;
	if (r == 0) {
		if (reasons)
			std::snprintf(
				why, sizeof why,
				"Pollux: no GPUs this interval: they give "
				"more goodput to the other %d jobs",
				std::max(0, round_.jobs - 1));
		d = &plan.add(j.id, running ? Action::Preempt : Action::Hold, 0,
			      why);
	} else {
		bool same = running && node_list(j.placement) == m.target;
		Action a = same	     ? Action::Keep
			   : running ? Action::Resize
				     : Action::Start;
		if (reasons) {
			int n = std::snprintf(why, sizeof why,
					      "Pollux: %d GPU%s on %d node%s",
					      r, r == 1 ? "" : "s", nodes,
					      nodes == 1 ? "" : "s");
			if (a == Action::Resize)
				n += std::snprintf(why + n, sizeof why - n,
						   " (from %d)", j.alloc);
			if (m.batch > 0)
				std::snprintf(why + n, sizeof why - n,
					      ", batch %d", m.batch);
		}
		d = &plan.add(j.id, a, r, why);
		d->placement = same ? j.placement : placement_of(m.target);
		d->batch = m.batch;
	}
	d->note("speedup", m.speedup);
	for (auto [key, v] : { std::pair{ "efficiency", m.efficiency },
			       std::pair{ "throughput", m.throughput } })
		if (std::isfinite(v))
			d->note(key, v);
	if (m.batch > 0)
		d->note("batch", m.batch);
	d->note("restarts", m.restarts);
	d->note("objective", -round_.f1);
	if (std::isfinite(round_.f1_base))
		d->note("objective_keep", -round_.f1_base);
}

Plan PolluxLive::decide(const Snapshot &snap)
{
	for (const Job *j : snap.jobs) {
		observe(*j);
		Model &m = m_[j->id];
		m.seen = snap.now;
		if (j->state == JobState::Running && !m.ran) {
			m.ran = true;
			serial_++;
		}
	}
	/* Jobs gone for a while are forgotten; one that is back within it
	 * (requeued for a resize) is the same job. */
	for (auto it = m_.begin(); it != m_.end();)
		if (it->second.seen < 0) { /* loaded from a restart */
			it->second.seen = snap.now;
			++it;
		} else if (snap.now - it->second.seen > kForget) {
			it = m_.erase(it);
			serial_++;
		} else {
			++it;
		}
	if (must_allocate(snap))
		allocate(snap);
	Plan plan;
	for (const Job *j : snap.jobs)
		decide_job(*j, m_[j->id], plan, snap.want_reasons);
	plan.wake_at = last_ + interval_;
	return plan;
}

/* One line per job with anything learned:
 *   job ID restarts R ran 0|1 grad SQR VAR samples N:R:A:ACCUM:OPTIM ...
 * (grad - - when not measured). */
std::vector<std::string> PolluxLive::save_state() const
{
	std::vector<std::string> out;
	for (const auto &[id, m] : m_) {
		if (m.samples.empty() && !m.grad && !m.restarts && !m.ran)
			continue;
		std::string l =
			"job " + std::to_string(id) + " restarts " +
			std::to_string(m.restarts) + " ran " +
			(m.ran ? "1" : "0") + " grad " +
			(m.grad ? fmt(m.grad->sqr) + " " + fmt(m.grad->var)
				: std::string("- -")) +
			" samples";
		for (const PerfSample &s : m.samples)
			l += " " + std::to_string(s.nodes) + ":" +
			     std::to_string(s.replicas) + ":" +
			     std::to_string(s.atomic_bsz) + ":" +
			     fmt(s.accum_time) + ":" + fmt(s.optim_time);
		out.push_back(std::move(l));
	}
	return out;
}

bool PolluxLive::load_state(const std::string &line)
{
	std::istringstream in(line);
	std::string w, rs, rn, g, sq, va, sm;
	unsigned long long id;
	long restarts;
	int ran;
	if (!(in >> w >> id >> rs >> restarts >> rn >> ran >> g >> sq >> va >>
	      sm) ||
	    w != "job" || rs != "restarts" || rn != "ran" || g != "grad" ||
	    sm != "samples" || id == 0 || id > 4294967295ULL ||
	    restarts < 0 || restarts > 1000000 || (ran != 0 && ran != 1))
		return false;
	Model m;
	m.restarts = (int)restarts;
	m.ran = ran == 1;
	m.seen = -1;
	auto number = [](const std::string &t, double *v) {
		char *end;
		*v = std::strtod(t.c_str(), &end);
		return !t.empty() && !*end && std::isfinite(*v) && *v >= 0;
	};
	if (sq != "-" || va != "-") {
		GradParams gp;
		if (!number(sq, &gp.sqr) || !number(va, &gp.var))
			return false;
		m.grad = gp;
	}
	std::string t;
	while (in >> t) {
		PerfSample s;
		char a[40], o[40];
		int used = 0;
		if (t.size() > 120 ||
		    std::sscanf(t.c_str(), "%d:%d:%d:%39[^:]:%39s%n", &s.nodes,
				&s.replicas, &s.atomic_bsz, a, o, &used) != 5 ||
		    (size_t)used != t.size() || s.nodes < 1 ||
		    s.replicas < s.nodes || s.replicas > 1000000 ||
		    s.atomic_bsz < 1 || !number(a, &s.accum_time) ||
		    !number(o, &s.optim_time) || !(s.accum_time > 0) ||
		    s.optim_time < s.accum_time)
			return false;
		m.samples.push_back(s);
	}
	m.refit = !m.samples.empty();
	m_[(JobId)id] = std::move(m);
	serial_++;
	return true;
}

namespace
{

PolicyRegistrar reg("pollux",
		    "Pollux: co-adapts each job's GPUs and batch size for "
		    "goodput, learned from its trainer's reports",
		    [](const Params &p) {
			    return std::make_unique<PolluxLive>(p);
		    });

} /* namespace */

} /* namespace tidal */
