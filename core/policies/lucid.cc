/*
 * lucid.cc - Lucid as a core policy (lucid.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/lucid.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>

#include "core/model/hostlist.h"

namespace tidal
{

LucidOptions lucid_options(const Params &p)
{
	LucidOptions o;
	std::string nodes = p.get_str("Lucid.ProfilerNodes", "");
	std::string err;
	if (!expand_hostlist(nodes, &o.profiler_nodes, &err)) {
		p.invalid("Lucid.ProfilerNodes", err, "no profiler");
		o.profiler_nodes.clear();
	}
	o.profile_time =
		p.get_double("Lucid.ProfileTime", o.profile_time, 1, 86400);
	o.rules.gpu_mem_mb =
		p.get_double("Lucid.GpuMemory", o.rules.gpu_mem_mb, 1, 1e7);
	o.rules.max_score =
		(int)p.get_long("Lucid.MaxScore", o.rules.max_score, 0, 4);
	o.rules.priority_ratio = p.get_double(
		"Lucid.PriorityRatio", o.rules.priority_ratio, 1e-6, 1e6);
	std::vector<double> b =
		p.get_list("Lucid.ScoreBounds",
			   { o.score_bounds[0], o.score_bounds[1] }, 0, 100);
	if (b.size() == 2 && b[0] <= b[1])
		o.score_bounds = { b[0], b[1] };
	else
		p.invalid("Lucid.ScoreBounds",
			  "must be two percentages, the first not above the "
			  "second",
			  "using the default 25,58");
	std::string s = p.get_choice("Lucid.Sharing", "auto",
				     { "auto", "always", "never" });
	o.sharing = s == "always"  ? LucidOptions::Sharing::Always
		    : s == "never" ? LucidOptions::Sharing::Never
				   : LucidOptions::Sharing::Auto;
	o.sharing_jobs =
		p.get_double("Lucid.SharingJobs", o.sharing_jobs, 0, 1e6);
	o.sharing_window = p.get_double("Lucid.SharingWindow", o.sharing_window,
					600, 86400 * 7.0);
	std::string pl = p.get_choice("Lucid.Placement",
				      placement_scheme_name(o.placement),
				      { "consolidated", "switch-aware",
					"first-fit", "best-fit", "most-free" });
	placement_scheme_from_name(pl, &o.placement);
	return o;
}

int lucid_score(double util, const LucidOptions &o)
{
	return util < o.score_bounds[0] ? 0 : util < o.score_bounds[1] ? 1 : 2;
}

double lucid_priority(double estimate, int gpus)
{
	return estimate * std::max(1, gpus);
}

bool lucid_profile_before(const Job &a, const Job &b)
{
	return a.gpus < b.gpus;
}

namespace
{

/* How long the profile of a job out of the snapshots is kept. */
constexpr double kForgetAfter = 3600;

std::string num(double v)
{
	std::ostringstream s;
	s << (long long)std::llround(v);
	return s.str();
}

std::string gpus(int n)
{
	return std::to_string(n) + (n == 1 ? " GPU" : " GPUs");
}

/* Lucid's priority, by the job's estimate, else what it has left, else
 * a year. */
double priority(const Job &j)
{
	double est = j.estimate > 0 ? j.estimate
		     : j.time_known ? j.remaining_time()
				    : 365 * 86400.0;
	return lucid_priority(est, j.gpus);
}

} /* namespace */

class LucidRound
{
public:
	LucidRound(Lucid &pol, const Snapshot &snap)
	    : pol_(pol), o_(pol.opt_), snap_(snap),
	      sharing_(snap.cluster->sharing), main_(*snap.cluster),
	      prof_(*snap.cluster), on_prof_(snap.cluster->nodes.size(), false)
	{
	}
	Plan run();

private:
	/* Running jobs on the same GPUs (one per node, shards). */
	struct Unit {
		std::vector<int> members;
		Placement where;
		bool shared = false; /* on shards: a job may pack beside */
		Time start = 0;
	};

	const Job &job(int i) const { return *snap_.jobs[i]; }
	void split_nodes();
	void add_units();
	void learn();
	bool sharing_on();
	void running(int i);
	void profile_queue(std::vector<int> &q);
	void main_queue(std::vector<int> &q, bool share);
	bool profiled(const Job &j) const;
	LucidProfile use(int i) const;
	PackView view(int i) const;
	Decision &decide(int i, Action a, int gpus, std::string why);
	Decision &start(int i, int gpus, const Placement &p, bool profiler,
			std::string why);

	Lucid &pol_;
	const LucidOptions &o_;
	const Snapshot &snap_;
	const GpuSharing &sharing_;
	FreeMap main_, prof_;
	std::vector<bool> on_prof_;
	bool has_prof_ = false;
	std::optional<FreeMap> prof_empty_; /* the profiler nodes, all free */
	std::vector<Unit> units_;
	std::vector<int> unit_of_;
	int rank_ = 0;
	double rate_ = 0; /* submissions per 10 minutes, observed */
	Plan plan_;
};

void LucidRound::split_nodes()
{
	const Cluster &c = *snap_.cluster;
	std::string unknown;
	for (const std::string &n : o_.profiler_nodes) {
		int k = c.find_node(n);
		if (k >= 0 && c.nodes[k].gpus > 0) {
			on_prof_[k] = true;
			has_prof_ = true;
			plan_.kept_nodes.push_back(k);
		} else {
			unknown += (unknown.empty() ? "" : ", ") + n;
		}
	}
	if (!unknown.empty() && !pol_.told_unknown_) {
		plan_.log.push_back("Lucid.ProfilerNodes: " + unknown +
				    ": no such node with GPUs; not used");
		pol_.told_unknown_ = true;
	}
	for (size_t k = 0; k < c.nodes.size(); k++) {
		FreeMap &other = on_prof_[k] ? main_ : prof_;
		int f = other.free_on((int)k);
		if (f > 0)
			other.take({ { (int)k, f } });
	}
	prof_empty_.emplace(prof_);
}

void LucidRound::add_units()
{
	unit_of_.assign(snap_.jobs.size(), -1);
	for (const std::vector<int> &g : gpu_groups(snap_)) {
		const Job &j = job(g[0]);
		Unit u;
		u.where = j.placement;
		u.shared = j.gpu_group != 0;
		u.start = j.start;
		for (const NodeShare &s : j.placement) {
			FreeMap &m = on_prof_[s.node] ? prof_ : main_;
			int t = std::min(s.gpus, m.free_on(s.node));
			if (t > 0)
				m.take({ { s.node, t } });
		}
		for (int i : g) {
			u.members.push_back(i);
			u.start = std::min(u.start, job(i).start);
			unit_of_[i] = (int)units_.size();
		}
		units_.push_back(u);
	}
}

/* What the running jobs' trainers measure is their profile; the
 * submissions seen feed the sharing forecast. */
void LucidRound::learn()
{
	Time now = snap_.now;
	for (const Job *j : snap_.jobs) {
		if (pol_.submits_.emplace(j->id, j->submit).second)
			pol_.serial_++;
		if (j->state != JobState::Running || j->gpu_util <= 0)
			continue;
		LucidProfile &p = pol_.profiles_[j->id];
		if (!p.fixed &&
		    (p.util != j->gpu_util || p.mem_mb != j->gpu_mem_mb)) {
			p.util = j->gpu_util;
			p.mem_mb = j->gpu_mem_mb;
			pol_.serial_++;
		}
	}
	/* Forget what left the window, and the profiles of gone jobs. */
	std::set<JobId> active;
	for (const Job *j : snap_.jobs)
		active.insert(j->id);
	long recent = 0;
	for (auto it = pol_.submits_.begin(); it != pol_.submits_.end();) {
		bool in = it->second > now - o_.sharing_window &&
			  it->second <= now;
		if (in)
			recent++;
		if (!in && !active.count(it->first)) {
			it = pol_.submits_.erase(it);
			pol_.serial_++;
		} else {
			++it;
		}
	}
	for (auto it = pol_.profiles_.begin(); it != pol_.profiles_.end();) {
		LucidProfile &p = it->second;
		if (active.count(it->first) || std::isnan(p.seen))
			p.seen = now;
		if (now - p.seen > kForgetAfter) {
			it = pol_.profiles_.erase(it);
			pol_.serial_++;
		} else {
			++it;
		}
	}
	rate_ = recent * 600.0 / o_.sharing_window;
}

bool LucidRound::sharing_on()
{
	switch (o_.sharing) {
	case LucidOptions::Sharing::Always:
		return true;
	case LucidOptions::Sharing::Never:
		return false;
	default:
		return rate_ > o_.sharing_jobs;
	}
}

bool LucidRound::profiled(const Job &j) const
{
	auto it = pol_.profiles_.find(j.id);
	return it != pol_.profiles_.end() && it->second.done;
}

/* What job I's GPU use is known to be: what its trainer measured (while
 * profiled or running), else its own numbers (a trace's). */
LucidProfile LucidRound::use(int i) const
{
	const Job &j = job(i);
	auto it = pol_.profiles_.find(j.id);
	if (it != pol_.profiles_.end() && it->second.util > 0)
		return it->second;
	LucidProfile p;
	p.util = j.gpu_util;
	p.mem_mb = j.gpu_mem_mb;
	return p;
}

PackView LucidRound::view(int i) const
{
	const Job &j = job(i);
	LucidProfile u = use(i);
	PackView v;
	v.gpus = j.state == JobState::Running ? j.alloc : j.gpus;
	v.gpu_mem_mb = u.mem_mb;
	v.score = lucid_score(u.util, o_);
	v.priority = priority(j);
	v.exclusive = true;
	return v;
}

Decision &LucidRound::decide(int i, Action a, int gpus, std::string why)
{
	Decision &d = plan_.add(job(i).id, a, gpus,
				snap_.want_reasons ? "lucid: " + why : "");
	d.slot = i;
	d.at_rank(++rank_, (int)snap_.jobs.size());
	return d;
}

Decision &LucidRound::start(int i, int gpus, const Placement &p, bool profiler,
			    std::string why)
{
	bool share = !profiler && sharing_.fits(gpus);
	Decision &d = decide(i, Action::Start, gpus, std::move(why));
	d.placement = p;
	d.share = share;
	Unit u;
	u.members.push_back(i);
	u.where = p;
	u.shared = share;
	u.start = snap_.now;
	units_.push_back(u);
	return d;
}

void LucidRound::running(int i)
{
	const Job &j = job(i);
	bool on_prof = false;
	for (const NodeShare &s : j.placement)
		on_prof = on_prof || on_prof_[s.node];
	if (on_prof) {
		double ran = (double)(snap_.now - j.start);
		if (ran < o_.profile_time) {
			decide(i, Action::Keep, j.alloc,
			       "profiling, " + num(ran) + " s of " +
				       num(o_.profile_time))
				.placement = j.placement;
			return;
		}
		LucidProfile &p = pol_.profiles_[j.id];
		p.done = true;
		p.fixed = p.util > 0;
		pol_.serial_++;
		std::string what =
			p.util > 0 ? "GPU utilisation " + num(p.util) + "%, " +
					     num(p.mem_mb) +
					     " MiB of GPU memory, sharescore " +
					     std::to_string(
						     lucid_score(p.util, o_))
				   : "no GPU utilisation measured: it will run "
				     "alone";
		decide(i, Action::Preempt, 0,
		       "profiled for " + num(ran) + " s (" + what +
			       "); leaves the profiler, checkpointed, for "
			       "the cluster")
			.note("gpu_util", p.util)
			.note("gpu_mem_mb", p.mem_mb);
		return;
	}
	if (has_prof_) { /* it never goes to the profiler now */
		LucidProfile &p = pol_.profiles_[j.id];
		if (!p.done) {
			p.done = true;
			pol_.serial_++;
		}
	}
	const Unit &u = units_[unit_of_[i]];
	std::string why = "running on " + gpus(j.alloc);
	std::string with;
	for (int k : u.members)
		if (k != i)
			with += (with.empty() ? "" : ", ") +
				std::to_string(job(k).id);
	if (!with.empty())
		why += ", packed with job " + with;
	Decision &d = decide(i, Action::Keep, j.alloc, why);
	d.placement = j.placement;
	if (use(i).util > 0)
		d.note("sharescore", lucid_score(use(i).util, o_));
}

/* Least-GPU-First on the profiler nodes; the first that does not fit
 * stops the queue. */
void LucidRound::profile_queue(std::vector<int> &q)
{
	std::stable_sort(q.begin(), q.end(), [&](int a, int b) {
		return lucid_profile_before(job(a), job(b));
	});
	JobId blocked = 0;
	for (int i : q) {
		const Job &j = job(i);
		if (blocked) {
			decide(i, Action::Hold, j.gpus,
			       "waits for the profiler nodes (Least-GPU-First: "
			       "job " + std::to_string(blocked) +
				       " goes first)");
			continue;
		}
		if (auto p = prof_.place(j.gpus, o_.placement)) {
			start(i, j.gpus, *p, true,
			      "profiled first: up to " + num(o_.profile_time) +
				      " s on the profiler nodes");
			continue;
		}
		blocked = j.id;
		decide(i, Action::Hold, j.gpus,
		       "waits for " + gpus(j.gpus) +
			       " on the profiler nodes, " +
			       std::to_string(prof_.free_total()) + " free");
	}
}

void LucidRound::main_queue(std::vector<int> &q, bool share)
{
	std::stable_sort(q.begin(), q.end(), [&](int a, int b) {
		return priority(job(a)) < priority(job(b));
	});
	std::ostringstream rate;
	rate.precision(2);
	rate << rate_;
	std::string mode =
		std::string(share ? "sharing on" : "sharing off") +
		(o_.sharing == LucidOptions::Sharing::Auto
			 ? " (" + rate.str() + " submissions per 10 min, " +
				   (share ? "over " : "not over ") +
				   num(o_.sharing_jobs) + ")"
			 : " (Lucid.Sharing)");
	JobId blocked = 0;
	for (int i : q) {
		const Job &j = job(i);
		double prio = priority(j);
		if (blocked) {
			decide(i, Action::Hold, j.gpus,
			       mode + "; in priority order behind job " +
				       std::to_string(blocked))
				.note("priority", prio);
			continue;
		}
		if (share && sharing_.fits(j.gpus) && use(i).util > 0) {
			/* The first running job, by start, it may join. */
			PackView me = view(i);
			int best = -1;
			std::string refusal;
			for (size_t k = 0; k < units_.size(); k++) {
				const Unit &u = units_[k];
				if (!u.shared || u.members.size() != 1 ||
				    (best >= 0 &&
				     units_[best].start <= u.start))
					continue;
				int h = u.members[0];
				if (use(h).util <= 0)
					continue;
				PackView hv = view(h);
				hv.gpus = placement_gpus(u.where);
				std::string r = pack_refusal(me, hv, o_.rules);
				if (r.empty())
					best = (int)k;
				else if (refusal.empty())
					refusal = "job " +
						  std::to_string(job(h).id) +
						  " " + r;
			}
			if (best >= 0) {
				Unit &u = units_[best];
				int h = u.members[0];
				PackView hv = view(h);
				Decision &d = decide(
					i, Action::Start, j.gpus,
					mode + "; packed beside job " +
						std::to_string(job(h).id) +
						": sharescore " +
						std::to_string(me.score) +
						" + " +
						std::to_string(hv.score) +
						", GPU memory " +
						num(me.gpu_mem_mb) + " + " +
						num(hv.gpu_mem_mb) + " MiB");
				d.placement = u.where;
				d.share = true;
				d.colocate = job(h).id;
				d.note("sharescore", me.score)
					.note("partner_sharescore", hv.score)
					.note("priority", prio);
				u.members.push_back(i);
				continue;
			}
			if (auto p = main_.place(j.gpus, o_.placement)) {
				start(i, j.gpus, *p, false,
				      mode + "; on " + gpus(j.gpus) + " free" +
					      (refusal.empty()
						       ? std::string()
						       : ", not packed: " +
								 refusal))
					.note("priority", prio);
				continue;
			}
			decide(i, Action::Hold, j.gpus,
			       mode + "; needs " + gpus(j.gpus) + ", " +
				       std::to_string(main_.free_total()) +
				       " free" +
				       (refusal.empty()
						? ", and no running job to "
						  "pack beside"
						: "; not packed: " + refusal))
				.note("priority", prio);
			continue;
		}
		if (auto p = main_.place(j.gpus, o_.placement)) {
			start(i, j.gpus, *p, false,
			      mode + "; on " + gpus(j.gpus) + " free")
				.note("priority", prio);
			continue;
		}
		decide(i, Action::Hold, j.gpus,
		       mode + "; needs " + gpus(j.gpus) + ", " +
			       std::to_string(main_.free_total()) + " free")
			.note("priority", prio);
		if (!share)
			blocked = j.id;
	}
}

Plan LucidRound::run()
{
	split_nodes();
	add_units();
	learn();
	bool share = sharing_on();
	std::vector<int> run, prof, rest;
	for (size_t i = 0; i < snap_.jobs.size(); i++) {
		const Job &j = job((int)i);
		if (j.state == JobState::Running)
			run.push_back((int)i);
		else if (has_prof_ && !profiled(j) &&
			 prof_empty_->place(j.gpus, o_.placement,
					    PlaceMode::Test))
			prof.push_back((int)i);
		else
			rest.push_back((int)i);
	}
	std::stable_sort(run.begin(), run.end(), [&](int a, int b) {
		return job(a).start < job(b).start;
	});
	auto by_submit = [&](int a, int b) {
		const Job &x = job(a), &y = job(b);
		return x.submit != y.submit ? x.submit < y.submit
					    : x.index < y.index;
	};
	std::stable_sort(prof.begin(), prof.end(), by_submit);
	std::stable_sort(rest.begin(), rest.end(), by_submit);
	for (int i : run)
		running(i);
	profile_queue(prof);
	main_queue(rest, share);
	return std::move(plan_);
}

Plan Lucid::decide(const Snapshot &snap)
{
	return LucidRound(*this, snap).run();
}

/* "job ID profile UTIL MEM DONE FIXED" and "job ID submit T". */
std::vector<std::string> Lucid::save_state() const
{
	std::vector<std::string> out;
	for (const auto &[id, p] : profiles_) {
		std::ostringstream l;
		l.precision(17);
		l << "job " << id << " profile " << p.util << " " << p.mem_mb
		  << " " << (p.done ? 1 : 0) << " " << (p.fixed ? 1 : 0);
		out.push_back(l.str());
	}
	for (const auto &[id, t] : submits_)
		out.push_back("job " + std::to_string(id) + " submit " +
			      std::to_string((long long)t));
	return out;
}

bool Lucid::load_state(const std::string &line)
{
	std::istringstream in(line);
	std::string w, kind;
	unsigned long long id;
	if (!(in >> w >> id >> kind) || w != "job" || id == 0 ||
	    id > 4294967295ULL)
		return false;
	std::string rest;
	if (kind == "submit") {
		long long t;
		if (!(in >> t) || (in >> rest))
			return false;
		submits_[(JobId)id] = (Time)t;
		return true;
	}
	if (kind != "profile")
		return false;
	LucidProfile p;
	int done, fixed;
	if (!(in >> p.util >> p.mem_mb >> done >> fixed) || (in >> rest) ||
	    !std::isfinite(p.util) || !std::isfinite(p.mem_mb) || p.util < 0 ||
	    p.util > 100 || p.mem_mb < 0 || (done != 0 && done != 1) ||
	    (fixed != 0 && fixed != 1))
		return false;
	p.done = done == 1;
	p.fixed = fixed == 1;
	profiles_[(JobId)id] = p;
	return true;
}

static PolicyRegistrar reg_lucid(
	"lucid",
	"Lucid: new jobs profiled on lent nodes, then by estimated size, "
	"packed beside a running job when their measured GPU use allows",
	[](const Params &p) {
		return std::make_unique<Lucid>(lucid_options(p));
	});

} /* namespace tidal */
