/*
 * antman.cc - AntMan as a core policy (antman.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/antman.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <sstream>

#include "core/placement/packing.h"
#include "core/policies/elastic_baseline.h"

namespace tidal
{

AntmanOptions antman_options(const Params &p)
{
	AntmanOptions o;
	o.util_cap = p.get_double("AntMan.UtilCap", o.util_cap, 0, 10);
	std::string pl = p.get_choice("AntMan.Placement",
				      placement_scheme_name(o.placement),
				      { "consolidated", "switch-aware",
					"first-fit", "best-fit", "most-free" });
	placement_scheme_from_name(pl, &o.placement);
	return o;
}

bool antman_opportunistic(const Job &job)
{
	return job.best_effort || job.priority_class > 0;
}

double antman_default_util(bool opportunistic)
{
	return opportunistic ? 0.9 : 0.1;
}

double antman_util(const Job &job)
{
	if (job.gpu_util > 0)
		return job.gpu_util / 100;
	return antman_default_util(antman_opportunistic(job));
}

bool antman_before(const Job &a, const Job &b)
{
	bool oa = antman_opportunistic(a), ob = antman_opportunistic(b);
	if (oa != ob)
		return ob;
	if (a.submit != b.submit)
		return a.submit < b.submit;
	return a.index < b.index;
}

std::vector<int> antman_least_utilised(const std::vector<double> &util,
				       int n, double cap)
{
	std::vector<int> under;
	for (size_t k = 0; k < util.size(); k++)
		if (util[k] < cap)
			under.push_back((int)k);
	if (n < 0 || (int)under.size() < n)
		return {};
	std::stable_sort(under.begin(), under.end(), [&](int x, int y) {
		return util[x] < util[y];
	});
	under.resize(n);
	return under;
}

namespace
{

std::string percent(double util)
{
	std::ostringstream s;
	s << (long long)(util * 100 + 0.5) << "%";
	return s.str();
}

/* GPUs that jobs hold together: one job's own, or the shared GPU (one
 * per node) of every job on it. */
struct Unit {
	std::vector<int> members; /* indices into the snapshot's jobs */
	JobId anchor = 0;	  /* the job a partner starts beside */
	Placement where;
	bool shared = false;  /* holds shards: others may join */
	bool evicted = false; /* its opportunistic jobs leave */
	int guaranteed = 0;   /* members that are guaranteed */
	double util = 0;      /* of all members */
	double owned = 0;     /* of the guaranteed members */
};

int gpus_on(const Placement &p, int node)
{
	int n = 0;
	for (const NodeShare &s : p)
		if (s.node == node)
			n += s.gpus;
	return n;
}

class Round
{
public:
	Round(const Snapshot &snap, const AntmanOptions &o)
	    : snap_(snap), o_(o), sharing_(snap.cluster->sharing),
	      free_(*snap.cluster), unit_of_(snap.jobs.size(), -1),
	      decided_(snap.jobs.size(), false)
	{
	}
	Plan run();

private:
	const Job &job(int i) const { return *snap_.jobs[i]; }
	void add_units();
	void join(int k, int i);
	void rank();
	void guaranteed_pending(int i);
	void guaranteed_running(int i);
	void opportunistic(int i, FreeMap &opp);
	std::optional<Placement> claim(const FreeMap &base, int n, int own,
				       std::vector<int> *evict) const;
	std::string evict(const std::vector<int> &units, const Job &by,
			  const std::string &why);
	void reserve(FreeMap &map, const Placement &p);
	Decision &decide(int i, Action a, int gpus, std::string why);
	Decision &start(int i, int gpus, const Placement &p, std::string why);

	const Snapshot &snap_;
	const AntmanOptions &o_;
	const GpuSharing &sharing_;
	FreeMap free_;
	std::vector<Unit> units_;
	std::vector<int> unit_of_;
	std::vector<bool> decided_;
	std::vector<int> order_;
	std::vector<int> rank_of_;
	std::vector<Placement> reserved_;
	bool reserved_once_ = false;
	Plan plan_;
};

void Round::join(int k, int i)
{
	Unit &u = units_[k];
	const Job &j = job(i);
	double util = antman_util(j);
	u.members.push_back(i);
	u.util += util;
	if (!antman_opportunistic(j)) {
		u.guaranteed++;
		u.owned += util;
	}
	unit_of_[i] = k;
}

/* The running jobs' GPUs: jobs holding shards of the same GPUs
 * (Job::gpu_group) share one unit. */
void Round::add_units()
{
	for (const std::vector<int> &g : gpu_groups(snap_)) {
		const Job &j = job(g[0]);
		Unit u;
		u.anchor = j.id;
		u.where = j.placement;
		u.shared = j.gpu_group != 0;
		units_.push_back(u);
		free_.take(u.where);
		for (int i : g)
			join((int)units_.size() - 1, i);
	}
}

/* Guaranteed jobs first, then opportunistic ones; each by submit time,
 * then input order. */
void Round::rank()
{
	order_.resize(snap_.jobs.size());
	std::iota(order_.begin(), order_.end(), 0);
	std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) {
		return antman_before(job(a), job(b));
	});
	rank_of_.assign(order_.size(), 0);
	for (size_t r = 0; r < order_.size(); r++)
		rank_of_[order_[r]] = (int)r + 1;
}

Decision &Round::decide(int i, Action a, int gpus, std::string why)
{
	decided_[i] = true;
	Decision &d = plan_.add(job(i).id, a, gpus,
				snap_.want_reasons ? "antman: " + why : "");
	d.slot = i;
	d.at_rank(rank_of_[i], (int)order_.size());
	return d;
}

/* Start job I on P, with a unit of its own that others may join. */
Decision &Round::start(int i, int gpus, const Placement &p, std::string why)
{
	const Job &j = job(i);
	bool share = sharing_.fits(gpus);
	Decision &d = decide(i, Action::Start, gpus, std::move(why));
	d.placement = p;
	d.share = share;
	Unit u;
	u.anchor = j.id;
	u.where = p;
	u.shared = share;
	units_.push_back(u);
	join((int)units_.size() - 1, i);
	return d;
}

/* N GPUs from BASE, and if they do not suffice, also from the units that
 * only opportunistic jobs hold (other than OWN): RET the placement, with
 * *EVICT the units whose jobs must leave for it. */
std::optional<Placement> Round::claim(const FreeMap &base, int n, int own,
				      std::vector<int> *evict) const
{
	FreeMap m = base;
	std::vector<int> open;
	for (size_t k = 0; k < units_.size(); k++) {
		const Unit &u = units_[k];
		if ((int)k == own || u.evicted || u.guaranteed ||
		    u.members.empty())
			continue;
		m.release(u.where);
		open.push_back((int)k);
	}
	std::optional<Placement> p = m.place(n, o_.placement, PlaceMode::Test);
	if (!p)
		return p;
	/* Per node, as many units as its free GPUs fall short, latest
	 * started first (they lose the least work). */
	std::reverse(open.begin(), open.end());
	for (const NodeShare &s : *p) {
		int need = s.gpus - base.free_on(s.node);
		for (int k : *evict)
			need -= gpus_on(units_[k].where, s.node);
		for (int k : open) {
			if (need <= 0)
				break;
			int on = gpus_on(units_[k].where, s.node);
			if (on == 0 || std::find(evict->begin(), evict->end(),
						 k) != evict->end())
				continue;
			evict->push_back(k);
			need -= on;
		}
	}
	return p;
}

/* Preempt the opportunistic jobs of UNITS for BY.  RET: their ids. */
std::string Round::evict(const std::vector<int> &units, const Job &by,
			 const std::string &why)
{
	std::string ids;
	for (int k : units) {
		Unit &u = units_[k];
		u.evicted = true;
		for (int i : u.members) {
			const Job &j = job(i);
			if (!antman_opportunistic(j) || decided_[i])
				continue;
			ids += (ids.empty() ? "" : ", ") + std::to_string(j.id);
			decide(i, Action::Preempt, 0,
			       "evicted (checkpointed): guaranteed job " +
				       std::to_string(by.id) + " " + why)
				.note("owner", (double)by.id);
		}
	}
	return ids;
}

/* Keep the free GPUs of P out of MAP: they wait for their job. */
void Round::reserve(FreeMap &map, const Placement &p)
{
	for (const NodeShare &s : p) {
		int t = std::min(s.gpus, map.free_on(s.node));
		if (t > 0)
			map.take({ { s.node, t } });
	}
}

void Round::guaranteed_pending(int i)
{
	const Job &j = job(i);
	int cap = elastic_cap(j), floor = std::max(1, elastic_floor(j));
	for (int n = cap; n >= floor; n--)
		if (auto p = free_.place(n, o_.placement)) {
			start(i, n, *p,
			      "guaranteed, on " + std::to_string(n) +
				      " GPUs of its own" +
				      (sharing_.fits(n)
					       ? ", which best-effort jobs may "
						 "share while under the cap"
					       : ""))
				.note("util", antman_util(j));
			return;
		}
	for (int n = cap; n >= floor; n--) {
		std::vector<int> ev;
		auto p = claim(free_, n, -1, &ev);
		if (!p)
			continue;
		std::string ids = evict(ev, j, "needs its GPUs");
		reserve(free_, *p);
		decide(i, Action::Hold, n,
		       "guaranteed; starts on " + std::to_string(n) +
			       " GPUs once best-effort jobs " + ids +
			       " have left them");
		return;
	}
	int busy = 0;
	for (const Unit &u : units_)
		if (!u.guaranteed)
			busy += placement_gpus(u.where);
	decide(i, Action::Hold, floor,
	       "guaranteed; needs " + std::to_string(floor) + " GPUs, " +
		       std::to_string(free_.free_total()) + " are free and " +
		       std::to_string(busy) + " held by best-effort jobs")
		.note("free", free_.free_total());
	/* The first one that waits keeps the node with the most free GPUs
	 * for itself (opportunistic jobs may use them meanwhile). */
	const Cluster &c = *snap_.cluster;
	if (reserved_once_ || cap > c.max_gpus_per_node())
		return;
	reserved_once_ = true;
	int best = -1;
	for (size_t n = 0; n < c.nodes.size(); n++)
		if (c.nodes[n].gpus >= cap && free_.free_on((int)n) > 0 &&
		    (best < 0 || free_.free_on((int)n) > free_.free_on(best)))
			best = (int)n;
	if (best < 0)
		return;
	Placement r{ { best, std::min(cap, free_.free_on(best)) } };
	free_.take(r);
	reserved_.push_back(r);
}

void Round::guaranteed_running(int i)
{
	const Job &j = job(i);
	int cap = elastic_cap(j), own = unit_of_[i];
	Unit &u = units_[own];
	if (j.elastic() && j.alloc < cap && u.guaranteed == 1) {
		/* Its restart may use its own GPUs; partners on them leave
		 * first, as a restart takes whole GPUs. */
		FreeMap base = free_;
		base.release(u.where);
		std::vector<int> ev;
		std::optional<Placement> p;
		int n = cap;
		for (; n > j.alloc && !p; n--)
			p = base.place(n, o_.placement, PlaceMode::Test);
		for (n = cap; n > j.alloc && !p; n--) {
			ev.clear();
			p = claim(base, n, own, &ev);
		}
		if (p) {
			int to = placement_gpus(*p);
			bool partners = u.members.size() > 1;
			if (partners)
				ev.push_back(own);
			if (ev.empty()) {
				free_.release(u.where);
				free_.take(*p);
				u.where = *p; /* whole GPUs from its restart */
				u.shared = false;
				decide(i, Action::Resize, to,
				       "guaranteed, grows from " +
					       std::to_string(j.alloc) +
					       " to " + std::to_string(to) +
					       " GPUs")
					.placement = *p;
				return;
			}
			std::string ids = evict(ev, j, "grows onto its GPUs");
			free_.release(u.where);
			reserve(free_, *p);
			reserve(free_, u.where);
			decide(i, Action::Keep, j.alloc,
			       "guaranteed; grows to " + std::to_string(to) +
				       " GPUs once best-effort jobs " + ids +
				       " have left them")
				.placement = j.placement;
			return;
		}
	}
	std::string why = "guaranteed, on " + std::to_string(j.alloc) + " GPUs";
	if (u.members.size() > 1)
		why += ", shared with best-effort jobs at " + percent(u.util) +
		       " utilisation";
	decide(i, Action::Keep, j.alloc, why).placement = j.placement;
}

void Round::opportunistic(int i, FreeMap &opp)
{
	const Job &j = job(i);
	double cap = o_.util_cap, util = antman_util(j);
	if (j.state == JobState::Running) {
		const Unit &u = units_[unit_of_[i]];
		if (u.guaranteed && u.owned >= cap) {
			decide(i, Action::Preempt, 0,
			       "evicted (checkpointed): its GPU's guaranteed "
			       "jobs use " +
				       percent(u.owned) +
				       ", not under the cap of " + percent(cap))
				.note("owned_util", u.owned)
				.note("cap", cap);
			return;
		}
		std::string why = "best-effort";
		std::string with;
		for (int k : u.members)
			if (k != i)
				with += (with.empty() ? "" : ", ") +
					std::to_string(job(k).id);
		if (!with.empty())
			why += ", sharing its GPUs with job " + with;
		if (u.guaranteed)
			why += "; their guaranteed jobs use " +
			       percent(u.owned) + ", under the cap of " +
			       percent(cap);
		decide(i, Action::Keep, j.alloc,
		       why + " (" + percent(u.util) + " in all)")
			.placement = j.placement;
		return;
	}
	int n = j.gpus;
	if (auto p = opp.place(n, o_.placement)) {
		start(i, n, *p,
		      "best-effort, on " + std::to_string(n) + " idle GPUs")
			.note("util", util);
		return;
	}
	/* The least utilised unit it may join (one that may not stands at
	 * the cap, so that it is never under it). */
	std::vector<double> util_of(units_.size(), cap);
	for (size_t k = 0; k < units_.size(); k++) {
		const Unit &u = units_[k];
		if (u.shared && !u.evicted && !u.members.empty() &&
		    placement_gpus(u.where) == n && sharing_.fits(n) &&
		    (sharing_.jobs_per_gpu <= 0 ||
		     (int)u.members.size() < sharing_.jobs_per_gpu))
			util_of[k] = u.util;
	}
	std::vector<int> pick = antman_least_utilised(util_of, 1, cap);
	int best = pick.empty() ? -1 : pick[0];
	if (best < 0) {
		decide(i, Action::Hold, n,
		       "best-effort; no " + std::to_string(n) +
			       "-GPU set is idle or shared under the "
			       "utilisation cap of " +
			       percent(cap));
		return;
	}
	Unit &u = units_[best];
	double before = u.util;
	Decision &d =
		decide(i, Action::Start, n,
		       "best-effort, beside job " + std::to_string(u.anchor) +
			       " on GPUs at " + percent(before) +
			       " utilisation (cap " + percent(cap) + ")");
	d.placement = u.where;
	d.share = true;
	d.colocate = u.anchor;
	d.note("gpu_util_before", before).note("cap", cap);
	join(best, i);
}

Plan Round::run()
{
	add_units();
	rank();
	for (int i : order_) {
		const Job &j = job(i);
		if (antman_opportunistic(j) || decided_[i])
			continue;
		if (j.state == JobState::Running)
			guaranteed_running(i);
		else
			guaranteed_pending(i);
	}
	FreeMap opp = free_;
	for (const Placement &r : reserved_)
		opp.release(r);
	for (int i : order_)
		if (antman_opportunistic(job(i)) && !decided_[i])
			opportunistic(i, opp);
	return std::move(plan_);
}

} /* namespace */

Plan Antman::decide(const Snapshot &snap)
{
	return Round(snap, opt_).run();
}

static PolicyRegistrar reg_antman(
	"antman",
	"AntMan: guaranteed jobs on GPUs of their own, best-effort jobs on "
	"under-used GPUs, evicted when a guaranteed job needs them",
	[](const Params &p) {
		return std::make_unique<Antman>(antman_options(p));
	});

} /* namespace tidal */
