/*
 * muri.cc - Muri-S and Muri-L (muri.h).
 *
 * The steps follow the Muri simulator (shared/anchors/muri/MODEL.md §4.4)
 * closely, including its orders (dict keys = widths in order of first
 * appearance, stable sorts), because the grouping is a chain of greedy
 * choices and any reordering changes who shares GPUs with whom.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/muri.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>

namespace tidal {

MuriOptions muri_options(const Params &p, MuriOptions o)
{
	o.packing = (int)p.get_long("Muri.Packing", o.packing, 1, 4);
	std::string ord = p.get_choice("Muri.Ordering", "best",
				       {"best", "worst", "none"});
	o.ordering = ord == "worst"  ? Ordering::Worst
		     : ord == "none" ? Ordering::None
				     : Ordering::Best;
	o.blossom = p.get_bool("Muri.Blossom", o.blossom);
	o.autopack = p.get_bool("Muri.Autopack", o.autopack);
	std::string m =
		p.get_choice("Muri.Matcher", "lemon", {"lemon", "anchor"});
	matcher_from_name(m, &o.matcher);
	/* first-fit is the anchor's Yarn placement */
	std::string pl = p.get_choice(
		"Muri.Placement", placement_scheme_name(o.placement),
		{"first-fit", "consolidated", "switch-aware", "best-fit",
		 "count", "most-free"});
	placement_scheme_from_name(pl, &o.placement);
	std::string file = p.get_str("Muri.Profiles", "");
	std::string err;
	if (!file.empty() && !load_stage_profiles(file, &o.profiles, &err))
		p.invalid("Muri.Profiles", err,
			  "jobs without measured stage times run alone");
	return o;
}

bool load_stage_profiles(const std::string &path,
			 std::map<std::string, StageTimes> *out,
			 std::string *err)
{
	std::ifstream in(path);
	if (!in) {
		*err = path + ": cannot be read";
		return false;
	}
	std::string line;
	int n = 0;
	std::map<std::string, StageTimes> got;
	while (std::getline(in, line)) {
		n++;
		if (!line.empty() && line.back() == '\r')
			line.pop_back();
		if (line.empty() || line[0] == '#')
			continue;
		std::vector<std::string> f;
		std::stringstream ss(line);
		std::string cell;
		while (std::getline(ss, cell, ','))
			f.push_back(cell);
		std::string where = path + ":" + std::to_string(n) + ": ";
		if (got.empty() && f.size() == 4 && f[0] == "model") {
			if (f[1] != "data" || f[2] != "compute" ||
			    f[3] != "comm") {
				*err = where + "the header must be "
					       "model,data,compute,comm";
				return false;
			}
			continue;
		}
		if (f.size() != 4 || f[0].empty()) {
			*err = where + "'" + line +
			       "': a row is model,data,compute,comm";
			return false;
		}
		StageTimes st{};
		for (int k = 0; k < 3; k++) {
			char *end = nullptr;
			double v = std::strtod(f[k + 1].c_str(), &end);
			if (end == f[k + 1].c_str() || *end ||
			    !std::isfinite(v) || v < 0) {
				*err = where + "'" + f[k + 1] +
				       "': a stage time is seconds per "
				       "iteration, a number >= 0";
				return false;
			}
			st[k] = v;
		}
		if (st[0] + st[1] + st[2] <= 0) {
			*err = where + "model " + f[0] +
			       ": its stage times add up to 0";
			return false;
		}
		got[f[0]] = st;
	}
	if (got.empty()) {
		*err = path + ": no model in it";
		return false;
	}
	*out = std::move(got);
	return true;
}

bool InterleaveMemo::Key::operator==(const Key &o) const
{
	return n == o.n && ordering == o.ordering &&
	       std::memcmp(stages.data(), o.stages.data(),
			   sizeof(StageTimes) * n) == 0;
}

std::size_t InterleaveMemo::KeyHash::operator()(const Key &k) const
{
	/* The bits of the stage times in use, a word at a time. */
	std::uint64_t h = 0x9e3779b97f4a7c15ull * (k.n * 4u + k.ordering + 1);
	for (int i = 0; i < k.n; i++)
		for (double x : k.stages[i]) {
			std::uint64_t w;
			std::memcpy(&w, &x, sizeof w);
			h = (h ^ w) * 0xff51afd7ed558ccdull;
			h ^= h >> 32;
		}
	return (std::size_t)h;
}

double InterleaveMemo::raw_time(const std::vector<const InterleaveJob *> &jobs,
				Ordering ordering)
{
	if (ordering == Ordering::None || jobs.size() > 4)
		return interleave_raw_time(jobs, ordering);
	Key k;
	k.n = (std::uint8_t)jobs.size();
	k.ordering = (std::uint8_t)ordering;
	for (std::size_t i = 0; i < jobs.size(); i++)
		k.stages[i] = jobs[i]->stages;
	/* Any order of the members gives the same time: sort them by their
	 * bits (insertion: at most four), so that every order finds the
	 * same entry. */
	for (int i = 1; i < k.n; i++)
		for (int j = i; j > 0 &&
				std::memcmp(k.stages[j].data(), k.stages[j - 1].data(),
					    sizeof(StageTimes)) < 0;
		     j--)
			std::swap(k.stages[j], k.stages[j - 1]);
	auto it = memo_.find(k);
	if (it != memo_.end())
		return it->second;
	if (memo_.size() >= kMaxEntries)
		memo_.clear();
	double t = interleave_raw_time(jobs, ordering);
	memo_.emplace(k, t);
	return t;
}

namespace {

/* JOB as an interleaving input: its measured stages, or, before it has
 * any, its model's from Muri.Profiles with the speed alone they give. */
InterleaveJob interleave_input(const Job &job, const MuriOptions &o)
{
	InterleaveJob in{ job.stages, job.iter_time, job.index };
	const StageTimes &s = job.stages;
	auto it = o.profiles.find(job.model);
	if (s[0] + s[1] + s[2] > 0 || it == o.profiles.end())
		return in;
	in.stages = it->second;
	in.solo =
		(it->second[0] + it->second[1] + it->second[2]) * o.factors[0];
	return in;
}

using Pack = std::vector<int>; /* indices into the ranked jobs */

/* The per-decision working set: the ranked jobs as interleaving inputs,
 * and the candidate packs per width in the anchor's key order. */
struct Grouper {
	const std::vector<const Job *> &jobs;
	const std::vector<double> &rank;
	const Cluster &cluster;
	const MuriOptions &o;
	std::vector<InterleaveJob> ij;
	std::vector<int> widths; /* first-appearance order */
	std::map<int, std::vector<Pack>> packs;
	std::map<int, int> slots;
	int required = 0;

	InterleaveMemo *memo;

	Grouper(const std::vector<const Job *> &j, const std::vector<double> &r,
		const Cluster &c, const MuriOptions &opt, InterleaveMemo *m)
	    : jobs(j), rank(r), cluster(c), o(opt), ij(j.size()), memo(m)
	{
		for (size_t i = 0; i < j.size(); i++)
			ij[i] = interleave_input(*j[i], o);
	}
	/* Most jobs of width G in one group: Packing, or fewer where the
	 * cluster cannot share GPUs that far (sched/tidal: gres/shard). */
	int pack_limit(int g) const
	{
		const GpuSharing &sh = cluster.sharing;
		if (!sh.fits(g))
			return 1;
		return sh.jobs_per_gpu > 0
			       ? std::min(o.packing, sh.jobs_per_gpu)
			       : o.packing;
	}
	/* group_iter_time() of P's members, the interleaved time from
	 * MEMO where there is one. */
	double iter_time(const Pack &p, Ordering ord) const
	{
		thread_local std::vector<const InterleaveJob *> v;
		v.clear();
		for (int i : p)
			v.push_back(&ij[i]);
		if (!memo || v.size() == 1)
			return group_iter_time(v, ord, o.factors);
		return memo->raw_time(v, ord) * o.factors[v.size() - 1];
	}
	/* Resource use of the merged pack: stage sums over (time x 4). */
	double used_ratio(const Pack &p) const
	{
		double used = 0;
		for (int i : p) {
			const StageTimes &s = ij[i].stages;
			used += 0.0 + s[0] + s[1] + s[2];
		}
		return used / (iter_time(p, o.ordering) * 4);
	}
	void candidates();
	void match_round(int g);
	void consecutive();
	std::vector<MuriGroup> autopack() const;
};

/* Step A: every ranked job that still fits opens a slot of its width that
 * brings the next Packing jobs of that width. */
void Grouper::candidates()
{
	std::map<int, std::vector<int>> by_width;
	for (size_t i = 0; i < jobs.size(); i++) {
		int g = jobs[i]->gpus;
		if (!by_width.count(g))
			widths.push_back(g);
		by_width[g].push_back((int)i);
	}
	std::map<int, size_t> chosen;
	std::vector<char> used(jobs.size(), 0);
	FreeMap free(cluster);
	for (size_t i = 0; i < jobs.size(); i++) {
		if (used[i])
			continue;
		int g = jobs[i]->gpus;
		if (!free.place(g, o.placement))
			continue;
		std::vector<int> &w = by_width[g];
		size_t up = std::min(chosen[g] + pack_limit(g), w.size());
		for (size_t k = chosen[g]; k < up; k++)
			used[w[k]] = 1;
		chosen[g] = up;
		slots[g]++;
	}
	for (int g : widths) {
		std::vector<Pack> &ps = packs[g];
		for (size_t k = 0; k < chosen[g]; k++)
			ps.push_back({by_width[g][k]});
		required += (int)chosen[g] * g;
	}
}

/* One matching round over the packs of width G.  Results come out in the
 * anchor's order: scanning u upwards, a pair (v < u) is emitted at u. */
void Grouper::match_round(int g)
{
	std::vector<Pack> &ps = packs[g];
	int n = (int)ps.size();
	/* The anchor weighs both directions (u's jobs first, then v's); the
	 * sums may differ in the last bit, and its matcher sees both. */
	bool both = o.matcher == Matcher::Anchor;
	std::vector<WeightedEdge> edges;
	for (int u = 0; u < n; u++)
		for (int v = both ? 0 : u + 1; v < n; v++) {
			if (u == v ||
			    (int)(ps[u].size() + ps[v].size()) > pack_limit(g))
				continue;
			Pack uv = ps[u];
			uv.insert(uv.end(), ps[v].begin(), ps[v].end());
			double w = used_ratio(uv);
			if (w > 0)
				edges.push_back({u, v, w});
		}
	std::vector<int> mate = max_weight_matching(n, edges, o.matcher);
	std::vector<Pack> out;
	int total = cluster.total_gpus();
	for (int u = 0; u < n; u++) {
		int v = mate[u];
		if (v < 0) {
			out.push_back(ps[u]);
		} else if (v < u) {
			if (required > total) {
				Pack m = ps[v];
				m.insert(m.end(), ps[u].begin(), ps[u].end());
				out.push_back(std::move(m));
				required -= g;
			} else {
				out.push_back(ps[v]);
				out.push_back(ps[u]);
			}
		}
	}
	ps = std::move(out);
}

/* The "no Blossom" ablation: each slot's jobs are merged in candidate
 * order while demand exceeds the cluster; jobs left out of a merge come
 * before their slot's group (the anchor's append order). */
void Grouper::consecutive()
{
	int total = cluster.total_gpus();
	for (int g : widths) {
		std::vector<Pack> in = std::move(packs[g]), out;
		int limit = pack_limit(g);
		for (int s = 0; s < slots[g]; s++) {
			size_t first = (size_t)s * limit;
			if (first >= in.size())
				break;
			Pack p = in[first];
			for (int j = 1; j < limit; j++) {
				size_t k = first + j;
				if (k >= in.size())
					break;
				if (required > total) {
					p.push_back(in[k][0]);
					required -= g;
				} else {
					out.push_back(in[k]);
				}
			}
			out.push_back(std::move(p));
		}
		packs[g] = std::move(out);
	}
}

/* Step C: split groups that are slower than running their members one
 * after another, rank groups by their best member, keep those whose first
 * member still fits. */
std::vector<MuriGroup> Grouper::autopack() const
{
	std::vector<MuriGroup> all;
	for (int g : widths)
		for (const Pack &p : packs.at(g)) {
			double t = iter_time(p, Ordering::Best), sum = 0;
			for (int i : p)
				sum += ij[i].solo;
			if (o.autopack && t / sum > 1) {
				for (int i : p)
					all.push_back({{i}, 0, rank[i]});
				continue;
			}
			double r = rank[p[0]];
			for (int i : p)
				r = std::min(r, rank[i]);
			all.push_back({p, 0, r});
		}
	if (!o.autopack) {
		for (MuriGroup &m : all)
			m.iter_time = iter_time(m.members, o.ordering);
		return all;
	}
	std::stable_sort(all.begin(), all.end(),
			 [](const MuriGroup &a, const MuriGroup &b) {
				 return a.rank < b.rank;
			 });
	FreeMap free(cluster);
	std::vector<MuriGroup> kept;
	for (MuriGroup &m : all) {
		if (!free.place(jobs[m.members[0]]->gpus, o.placement))
			continue;
		m.iter_time = iter_time(m.members, o.ordering);
		kept.push_back(std::move(m));
	}
	return kept;
}

} /* namespace */

std::vector<MuriGroup> muri_groups(const std::vector<const Job *> &jobs,
				   const std::vector<double> &rank,
				   const Cluster &cluster, const MuriOptions &o,
				   InterleaveMemo *memo)
{
	Grouper gr(jobs, rank, cluster, o, memo);
	gr.candidates();
	int total = cluster.total_gpus();
	if (o.blossom) {
		for (int r = 0; r < o.packing; r++) {
			for (int g : gr.widths)
				gr.match_round(g);
			if (gr.required <= total)
				break;
		}
	} else {
		gr.consecutive();
	}
	return gr.autopack();
}

double Muri::sort_value(const Job &j) const
{
	if (!opt_.know_duration)
		return j.executed * j.gpus;
	if (j.start < 0 && j.duration > 0)
		return j.duration * j.gpus;
	return j.remaining * j.iter_time * j.gpus;
}

static std::string group_reason(const std::vector<JobId> &ids, JobId self,
				double t, const GpuSharing &sharing, int gpus)
{
	if (ids.size() == 1)
		return sharing.fits(gpus) || sharing.why.empty()
			       ? "runs alone"
			       : "runs alone: " + sharing.why;
	std::string s = "interleaved with job";
	if (ids.size() > 2)
		s += "s";
	const char *sep = " ";
	for (JobId id : ids)
		if (id != self) {
			s += sep + std::to_string(id);
			sep = ", ";
		}
	return s + " (" + std::to_string(t) + " s per iteration)";
}

Plan Muri::decide(const Snapshot &snap)
{
	size_t n = snap.jobs.size();
	std::vector<int> order(n);
	std::iota(order.begin(), order.end(), 0);
	std::vector<double> sv(n);
	for (size_t i = 0; i < n; i++)
		sv[i] = sort_value(*snap.jobs[i]);
	std::stable_sort(order.begin(), order.end(),
			 [&](int a, int b) { return sv[a] < sv[b]; });
	std::vector<const Job *> ranked;
	std::vector<double> rank;
	for (int i : order) {
		ranked.push_back(snap.jobs[i]);
		rank.push_back(sv[i]);
	}
	std::vector<MuriGroup> groups =
		muri_groups(ranked, rank, *snap.cluster, opt_, &memo_);
	std::vector<int> group_of(n, -1);
	placed_.assign(groups.size(), {});
	for (size_t g = 0; g < groups.size(); g++) {
		for (int i : groups[g].members) {
			group_of[i] = (int)g;
			placed_[g].members.push_back(ranked[i]->id);
		}
		placed_[g].iter_time = groups[g].iter_time;
	}
	/* Step D: widest first, stable; partners reuse the group's GPUs. */
	std::vector<int> d(n);
	std::iota(d.begin(), d.end(), 0);
	std::stable_sort(d.begin(), d.end(), [&](int a, int b) {
		return ranked[a]->gpus > ranked[b]->gpus;
	});
	/* A group's anchor: the GPUs its partners start on.  A member that
	 * runs already, else the first placed. */
	std::vector<JobId> anchor(groups.size(), 0);
	for (int k : d) {
		int g = group_of[k];
		if (g >= 0 && ranked[k]->state == JobState::Running &&
		    !anchor[g])
			anchor[g] = ranked[k]->id;
	}
	const GpuSharing &sharing = snap.cluster->sharing;
	/* The groups running jobs are in (Job::gpu_group), for reasons. */
	struct Actual {
		std::vector<JobId> ids;
		std::vector<InterleaveJob> in;
		double iter_time = 0;
	};
	std::map<JobId, Actual> actual;
	if (snap.want_reasons) {
		for (const Job *j : snap.jobs)
			if (j->state == JobState::Running && j->gpu_group) {
				Actual &a = actual[j->gpu_group];
				a.ids.push_back(j->id);
				a.in.push_back(interleave_input(*j, opt_));
			}
		for (auto &[id, a] : actual) {
			std::vector<const InterleaveJob *> v;
			for (const InterleaveJob &x : a.in)
				v.push_back(&x);
			if (v.size() <= 4)
				a.iter_time = group_iter_time(v, opt_.ordering,
							      opt_.factors);
		}
	}
	FreeMap free(*snap.cluster);
	std::vector<std::optional<Placement>> where(groups.size());
	Plan plan;
	for (int k : d) {
		const Job &j = *ranked[k];
		bool running = j.state == JobState::Running;
		int g = group_of[k];
		if (g >= 0 && !where[g])
			where[g] = free.place(j.gpus, opt_.placement);
		if (g >= 0 && where[g] && !anchor[g])
			anchor[g] = j.id;
		if (g < 0 || !where[g]) {
			std::string why =
				g < 0 ? "not among the groups that fit"
				      : "its group does not fit";
			plan.add(j.id, running ? Action::Preempt : Action::Hold,
				 0, snap.want_reasons ? why : "");
			continue;
		}
		double t = groups[g].iter_time;
		std::string why;
		if (snap.want_reasons) {
			const std::vector<JobId> *ids = &placed_[g].members;
			/* A running job's partners are those it shares its
			 * GPUs with (sched/tidal); its group stays until
			 * they end. */
			auto shared = actual.find(j.gpu_group);
			if (running && shared != actual.end()) {
				ids = &shared->second.ids;
				t = shared->second.iter_time;
			}
			why = group_reason(*ids, j.id, t, sharing, j.gpus);
		}
		Decision &dec =
			plan.add(j.id, running ? Action::Keep : Action::Start,
				 j.gpus, why);
		dec.placement = *where[g];
		dec.share = sharing.fits(j.gpus);
		if (!running && anchor[g] != j.id)
			dec.colocate = anchor[g];
		if (snap.want_reasons)
			dec.note("sort_value", rank[k])
				.note("group_iter_time", t);
	}
	return plan;
}

static PolicyRegistrar reg_muri_s(
	"muri-s", "Muri: multi-resource interleaving groups, SRSF order",
	[](const Params &p) {
		MuriOptions o;
		o.know_duration = true;
		return std::make_unique<Muri>("muri-s", muri_options(p, o));
	});
static PolicyRegistrar
	reg_muri_l("muri-l",
		   "Muri: multi-resource interleaving groups, least attained "
		   "service (no durations)",
		   [](const Params &p) {
			   MuriOptions o;
			   o.know_duration = false;
			   return std::make_unique<Muri>("muri-l",
							 muri_options(p, o));
		   });

} /* namespace tidal */
