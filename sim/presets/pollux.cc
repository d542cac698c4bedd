/*
 * pollux.cc - the "pollux" preset: the Pollux (OSDI'21) artifact's
 * simulator (adaptdl osdi21-artifact, simulator/).
 *
 * Time model (simulator.Cluster.step), in fixed rounds of Pollux.Interval
 * (60 s) from t = 0:
 *
 *   1. every placed job advances one round (pollux_job.h): 30 s restart
 *      delay, then epochs at ground-truth goodput, each crossing rounded
 *      to a whole second; a job completes when it reaches max_epochs;
 *   2. t += interval; active = arrived and not complete;
 *   3. the policy places the active jobs (core policies);
 *   4. every job whose allocation (node list, in order) changed is
 *      reallocated, which costs the 30 s delay again.
 *
 * A job arriving at t = 53 is first placed at t = 60 and starts
 * progressing at t = 90.  JCT = completion - arrival.
 *
 * Policies:
 *   tiresias  core tiresias with the artifact's TiresiasPolicy settings:
 *             two queues split at 57600 GPU-seconds of executed time
 *             (wall time since each policy call x GPUs, kept here and
 *             passed as Job::level), FIFO by entry inside a queue, fixed
 *             num_replicas and batch_size ("TunedJobs"), skip-ahead fit
 *             by GPU count (quota), running jobs keep their nodes, new
 *             ones fill from the node with the most free GPUs (most-free).
 *   pollux    core/policies/pollux.h over the jobs' learned goodput
 *             models (pollux_policies.h): every job refits its
 *             throughput model on each new configuration and picks the
 *             batch size that maximises its goodput; ncf keeps batch
 *             32768.  Params: Pollux.Optimizer=hybrid|search|ga|best,
 *             Pollux.CompareGA=yes (also run the full GA each round,
 *             apply the chosen optimiser's), Pollux.CompareOut=FILE
 *             (per-round F1 of each).
 *   optimus   Optimus+Oracle (pollux_policies.h) with the trace's batch.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>
#include <cstdio>

#include "core/model/policy.h"
#include "sim/csv.h"
#include "sim/preset.h"
#include "sim/presets/pollux_job.h"
#include "sim/presets/pollux_policies.h"

namespace tidal::sim {

namespace {

/* TiresiasPolicy's own bookkeeping: queue entry order and executed time,
 * updated at each policy call as the artifact does (int seconds). */
struct TiresiasBook {
	double threshold = 57600; /* GPU-seconds: 3600 x 16 */
	std::uint64_t next_seq = 0;
	struct State {
		bool seen = false, running = false;
		double executed = 0, last_check = 0;
		int level = 0;
		std::uint64_t seq = 0;
	};
	std::vector<State> st;

	/* Before deciding at NOW: admit new jobs to queue 0 and demote
	 * running jobs that crossed the threshold, in workload order. */
	void update(const std::vector<size_t> &active,
		    const std::vector<PolluxJob> &jobs, double now)
	{
		for (size_t i : active)
			if (!st[i].seen) {
				st[i].seen = true;
				st[i].seq = next_seq++;
			}
		for (size_t i : active) {
			State &s = st[i];
			if (s.running) {
				s.executed += std::trunc(now - s.last_check);
				if (s.level == 0 &&
				    s.executed * jobs[i].target_replicas >=
					    threshold) {
					s.level = 1;
					s.seq = next_seq++;
				}
			}
			s.last_check = now;
		}
	}
};

class PolluxPreset : public Preset {
public:
	std::string name() const override { return "pollux"; }
	std::string summary() const override
	{
		return "Pollux OSDI'21 artifact: 60 s rounds, goodput from "
		       "measured traces, 30 s restarts (tiresias)";
	}
	void prepare(SimInput &in) override;
	Params policy_params(const std::string &policy) const override;
	std::vector<std::string> policy_names() const override
	{
		return {"tiresias", "optimus", "pollux"};
	}
	std::vector<std::string> keys() const override
	{
		/* Pollux's own policy is not in the registry: ask it. */
		Params p;
		(void)PolluxPolicy(p, 1);
		std::vector<std::string> k = p.asked();
		k.push_back("Pollux.Interval");
		k.push_back("Pollux.CompareOut");
		return k;
	}
	RunResult run(const SimInput &in, const std::string &name,
		      const Params &params, const Progress &progress,
		      RunMode mode) override;

private:
	std::map<std::string, PolluxApp> apps_;
};

void PolluxPreset::prepare(SimInput &in)
{
	if (in.profiles_path.empty())
		throw InputError("the pollux preset needs --profiles "
				 "<pollux traces directory>");
	apps_ = load_pollux_apps(in.profiles_path);
	for (const Node &n : in.cluster.nodes)
		if (n.gpus > 4)
			input_error(in.cluster_path, 0,
				    "node " + n.name + " has " +
					    std::to_string(n.gpus) +
					    " GPUs; the Pollux traces "
					    "describe at most 4 per node");
	int total = in.cluster.total_gpus();
	for (const Job &j : in.trace.jobs) {
		auto it = apps_.find(j.model);
		std::string who = "job " + j.name + ": ";
		if (it == apps_.end())
			input_error(in.trace.path, in.trace.line(j),
				    who + "no profile for application '" +
					    j.model + "' under " +
					    in.profiles_path);
		const PolluxApp &a = it->second;
		if (j.gpus < 1 || j.gpus > total)
			input_error(in.trace.path, in.trace.line(j),
				    who + "num_replicas " +
					    std::to_string(j.gpus) +
					    " is not within 1.." +
					    std::to_string(total));
		if (j.batch < a.init_batch_size || j.batch > a.max_batch_size)
			input_error(in.trace.path, in.trace.line(j),
				    who + "batch_size " +
					    std::to_string(j.batch) +
					    " is outside the validated " +
					    std::to_string(a.init_batch_size) +
					    ".." +
					    std::to_string(a.max_batch_size));
	}
}

Params PolluxPreset::policy_params(const std::string &policy) const
{
	Params p;
	if (lower(policy) == "tiresias") {
		p.set("Placement", "most-free");
		p.set("Discipline", "quota");
		p.set("Preemptive", "yes");
		p.set("Tiresias.Thresholds", "57600");
		p.set("Tiresias.Levels", "state");
		p.set("Tiresias.Order", "arrival");
	}
	return p;
}

/* Placement -> GPUs per node in allocation order (the artifact's
 * run-length count of the node list). */
static std::vector<int> counts(const Placement &p)
{
	std::vector<int> c;
	for (const NodeShare &s : p)
		c.push_back(s.gpus);
	return c;
}

struct Round {
	std::vector<PolluxJob> jobs;
	std::vector<NodeList> nodes; /* pollux, optimus: node per replica */
	std::vector<Job> views; /* what the policy sees */
	std::vector<Placement> alloc;
	std::vector<double> first_start;
};

/* Steps 3 and 4 of a round: ask POLICY about the active jobs and apply
 * what changed. */
static void decide(Policy &policy, const Cluster &cluster, Round &r,
		   TiresiasBook &book, const std::vector<size_t> &active,
		   double now)
{
	book.update(active, r.jobs, now);
	Snapshot snap;
	snap.cluster = &cluster;
	snap.now = now;
	for (size_t i : active) {
		Job &v = r.views[i];
		bool on = !r.alloc[i].empty();
		v.state = on ? JobState::Running : JobState::Pending;
		v.alloc = on ? v.gpus : 0;
		v.placement = r.alloc[i];
		v.level = book.st[i].level;
		v.seq = book.st[i].seq;
		v.attained = r.jobs[i].attained;
		snap.jobs.push_back(&v);
	}
	Plan plan = policy.decide(snap);
	for (size_t i : active) {
		const Decision *d = plan.find(r.views[i].id);
		Placement next;
		if (d && (d->action == Action::Start ||
			  d->action == Action::Keep ||
			  d->action == Action::Resize))
			next = d->placement;
		book.st[i].running = !next.empty();
		if (next == r.alloc[i])
			continue;
		r.alloc[i] = next;
		r.jobs[i].reallocate(counts(next));
		if (!next.empty() && r.first_start[i] < 0)
			r.first_start[i] = now;
	}
}

/* Run-length counts of a node list, as the artifact builds placements. */
static Placement placement_of(const NodeList &l)
{
	Placement p;
	for (size_t i = 0; i < l.size(); i++)
		if (i == 0 || l[i] != l[i - 1])
			p.push_back({l[i], 1});
		else
			p.back().gpus++;
	return p;
}

/* Pollux and Optimus: the policy returns node lists; a changed list
 * restarts the job. */
struct ElasticRun {
	std::string policy;
	std::unique_ptr<PolluxPolicy> pollux;
	std::vector<PolluxRound> rounds;
	std::vector<double> round_times;
};

/* Per round: time, jobs, F1 applied, F1 of the local search, of the
 * hybrid's short GA + polish and of the full GA (nan where not run), all
 * to the last bit so that ties read as ties. */
static void write_rounds(const std::string &path, const ElasticRun &e)
{
	FILE *f = std::fopen(path.c_str(), "w");
	if (!f)
		throw InputError(path + ": cannot write");
	std::fprintf(f, "time\tjobs\tf1\tf1_search\tf1_hybrid\tf1_ga\t"
			"ga_evals\n");
	for (size_t i = 0; i < e.rounds.size(); i++) {
		const PolluxRound &r = e.rounds[i];
		std::fprintf(f, "%.0f\t%d\t%.17g\t%.17g\t%.17g\t%.17g\t%ld\n",
			     e.round_times[i], r.jobs, r.f1, r.f1_search,
			     r.f1_hybrid, r.f1_ga, r.ga_evaluations);
	}
	std::fclose(f);
}

static void decide_elastic(ElasticRun &e, const Cluster &cluster, Round &r,
			   const std::vector<size_t> &active, double now)
{
	std::vector<const PolluxJob *> jobs;
	std::vector<NodeList> cur;
	for (size_t i : active) {
		jobs.push_back(&r.jobs[i]);
		cur.push_back(r.nodes[i]);
	}
	std::vector<NodeList> next;
	if (e.pollux) {
		PolluxRound pr;
		next = pollux_decide(*e.pollux, jobs, cur, cluster, now, &pr);
		e.rounds.push_back(pr);
		e.round_times.push_back(now);
	} else {
		next = optimus_decide(jobs, cur, cluster);
	}
	for (size_t k = 0; k < active.size(); k++) {
		size_t i = active[k];
		if (next[k] == r.nodes[i])
			continue;
		r.nodes[i] = next[k];
		r.alloc[i] = placement_of(next[k]);
		std::vector<int> c;
		for (const NodeShare &s : r.alloc[i])
			c.push_back(s.gpus);
		r.jobs[i].reallocate(c);
		if (!next[k].empty() && r.first_start[i] < 0)
			r.first_start[i] = now;
	}
}

RunResult PolluxPreset::run(const SimInput &in, const std::string &name,
			    const Params &params, const Progress &progress,
			    RunMode mode)
{
	std::string policy = lower(name);
	bool elastic = policy == "pollux" || policy == "optimus";
	if (policy != "tiresias" && !elastic)
		throw InputError("pollux preset: policy '" + policy +
				 "' is not available (tiresias, optimus, "
				 "pollux are)");
	std::string err;
	std::unique_ptr<Policy> pol;
	ElasticRun er;
	er.policy = policy;
	if (!elastic) {
		pol = make_policy(policy, params, &err);
		if (!pol)
			throw InputError(err);
	} else if (policy == "pollux") {
		er.pollux = std::make_unique<PolluxPolicy>(params, in.seed);
	}
	double interval = params.get_double("Pollux.Interval", 60, 1, 86400);
	std::string compare_out = params.get_str("Pollux.CompareOut", "");
	if (mode == RunMode::Check)
		return {};

	Round r;
	size_t n = in.trace.jobs.size();
	r.views = in.trace.jobs;
	r.alloc.resize(n);
	r.nodes.resize(n);
	r.first_start.assign(n, -1);
	for (const Job &j : in.trace.jobs) {
		PolluxJob pj;
		pj.app = &apps_.at(j.model);
		pj.name = j.name;
		pj.submit = j.submit;
		pj.target_replicas = j.gpus;
		pj.target_batch = j.batch;
		if (policy == "pollux") {
			/* Pollux picks the batch; ncf's stays at 32768 */
			pj.learn = true;
			pj.target_batch = j.model == "ncf" ? 32768 : 0;
		}
		r.jobs.push_back(pj);
	}
	TiresiasBook book;
	book.st.resize(n);

	RunResult res;
	res.total_gpus = in.cluster.total_gpus();
	double now = 0;
	size_t done = 0;
	try {
		while (done < n) {
			for (PolluxJob &j : r.jobs)
				if (!j.done())
					j.step(now, interval);
			now += interval;
			std::vector<size_t> active;
			done = 0;
			for (size_t i = 0; i < n; i++) {
				if (r.jobs[i].done())
					done++;
				else if (r.jobs[i].submit <= now)
					active.push_back(i);
			}
			if (!active.empty()) {
				if (elastic)
					decide_elastic(er, in.cluster, r, active,
						       now);
				else
					decide(*pol, in.cluster, r, book,
					       active, now);
				res.decisions++;
			}
			int busy = 0;
			for (size_t i : active)
				busy += placement_gpus(r.alloc[i]);
			res.util.push_back({now, busy});
			if (progress)
				progress((long)done, (long)n);
		}
	} catch (const ProfileError &e) {
		throw InputError(in.profiles_path + ": " + e.what());
	}
	for (size_t i = 0; i < n; i++) {
		const PolluxJob &j = r.jobs[i];
		JobResult jr;
		jr.id = in.trace.jobs[i].id;
		jr.name = j.name;
		jr.gpus = j.target_replicas;
		jr.submit = j.submit;
		jr.start = r.first_start[i];
		jr.end = j.completion;
		jr.jct = j.completion - j.submit;
		jr.queue = r.first_start[i] - j.submit;
		jr.preemptions = std::max(0, j.restarts);
		res.jobs.push_back(jr);
	}
	res.events = (long)res.util.size();
	if (!compare_out.empty())
		write_rounds(compare_out, er);
	return res;
}

PresetRegistrar reg("pollux", [] { return std::make_unique<PolluxPreset>(); });

} /* namespace */

} /* namespace tidal::sim */
