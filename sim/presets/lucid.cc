/*
 * lucid.cc - the "lucid" preset: the Lucid (ASPLOS'23) trace simulator.
 *
 * Data and hooks only; the time model is in lucid_vc.cc, the policies are
 * the core baselines configured as the original runs them:
 *
 *   policy    order (core params)                     model (lucid.h)
 *   fifo      submit, block                           end = start + duration
 *   sjf       duration, block                         end = start + duration
 *   qssf      estimate x GPUs, ties by GPUs; a queue  end = start + duration
 *             of only new jobs by GPUs; block
 *   srtf      remaining, quota over all GPUs          count-down (+1 s),
 *                                                     queue before running
 *   tiresias  2 levels (attained > 18000 GPU-s is     count-down (+1 s),
 *             low), submit inside; quota              place at t % 60 == 0,
 *                                                     running before queue
 *
 * Placement is best-fit (Lucid's "consolidate", MODEL.md §3) inside each
 * virtual cluster; every VC is its own simulation (Node::group = Job::group
 * = the VC) and the results are concatenated as the original's "all" log.
 *
 * Parameters (--policy-config / --param):
 *   Lucid.Window=sept|july       the month simulated (default sept)
 *   Lucid.Estimates=FILE         estimates for this policy instead of
 *                                --estimates (e.g. the LGB file that the
 *                                original's `-s qssf` reads; its --sweep
 *                                reads the EBM file)
 *   (no --estimates)             qssf and lucid rank by Tidal's own
 *                                additive estimator, trained on the
 *                                trace's jobs before the window
 *   Lucid.NegativeEstimate=S     an estimate < 0 becomes S (default 1000:
 *                                the EBM rule; the LGB path has no such
 *                                rule, and neither shipped file has any)
 *
 *   lucid     profiler pass, then estimate x GPUs;    remain -= rate (+1 s)
 *             PAS off: block; on: pack, else place,
 *             skip (lucid_pack.h)
 *
 * The Lucid policy reads --profiles DIR (single_data.csv, colocate_info.csv,
 * Venus_throughput_pred.csv) and runs with vc8Gr and vcefl one node short:
 * those two nodes are its profiler cluster (MODEL.md §1.2).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "core/profiles/estimator_ebm.h"
#include "sim/csv.h"
#include "sim/presets/lucid.h"
#include "sim/presets/lucid_pack.h"

namespace tidal::sim::lucid {

namespace {

/* MODEL.md §1.1: the window is relative to 2020-04-01 00:00:00. */
constexpr const char *kEpoch = "2020-04-01 00:00:00";
constexpr double kDay = 86400;

struct PolicyData {
	const char *name;
	const char *params;
	Model model;
	bool needs_estimates;
};

Model fixed_end()
{
	return Model{};
}

Model count_down(long period, bool running_first, Model::Watch w)
{
	Model m;
	m.progress = Model::Progress::CountDown;
	m.period = period;
	m.running_first = running_first;
	m.watch = w;
	return m;
}

Model rate_model()
{
	Model m;
	m.progress = Model::Progress::Rate;
	return m;
}

/* The VCs that lend one node each to Lucid's profiler (MODEL.md §1.2). */
bool lends_profiler_node(const std::string &vc)
{
	return vc == "vc8Gr" || vc == "vcefl";
}

const std::vector<PolicyData> &policies()
{
	static const std::vector<PolicyData> p = {
		{"fifo", "Placement=best-fit Discipline=block", fixed_end(),
		 false},
		{"sjf", "Placement=best-fit Discipline=block", fixed_end(),
		 false},
		{"qssf",
		 "Placement=best-fit Discipline=block Qssf.Ties=gpus "
		 "Qssf.NewOrder=gpus",
		 fixed_end(), true},
		{"srtf", "Placement=best-fit Discipline=quota Preemptive=yes",
		 count_down(1, false, Model::Watch::Remaining), false},
		{"tiresias",
		 "Placement=best-fit Discipline=quota Preemptive=yes "
		 "Tiresias.Thresholds=18000 Tiresias.Order=submit "
		 "Tiresias.Demote=exceed",
		 count_down(60, true, Model::Watch::Attained), false},
		{"lucid", "", rate_model(), false}, /* checks its own */
	};
	return p;
}

const PolicyData &policy_data(const std::string &name)
{
	for (const PolicyData &d : policies())
		if (name == d.name)
			return d;
	std::string known;
	for (const PolicyData &d : policies())
		known += (known.empty() ? "" : ", ") + std::string(d.name);
	throw InputError("the lucid preset models " + known + "; not '" +
			 name + "'");
}

/* job_id,priority: predicted duration in seconds per job. */
std::unordered_map<JobId, double> load_estimates(const std::string &path,
						 double negative)
{
	Csv csv = Csv::load(path);
	int c_id = csv.need("job_id"), c_est = csv.need("priority");
	std::unordered_map<JobId, double> est;
	for (size_t r = 0; r < csv.rows(); r++) {
		double v = csv.num(r, c_est);
		est[csv.integer(r, c_id)] = v < 0 ? negative : v;
	}
	return est;
}

/* The VCs in the order the cluster file lists them. */
std::vector<std::string> vc_names(const Cluster &c)
{
	std::vector<std::string> names;
	for (const Node &n : c.nodes)
		if (std::find(names.begin(), names.end(), n.group) ==
		    names.end())
			names.push_back(n.group);
	return names;
}

/* MODEL.md §1.1 steps 2-8, on times the reader gave as epoch seconds.
 * OUT: HISTORY, the jobs before the window (for the estimator).
 * RET: the Unix time of the new time 0. */
double window_trace(SimInput &in, const std::string &month,
		    std::vector<Job> *history)
{
	std::vector<std::string> vcs = vc_names(in.cluster);
	std::set<std::string> known(vcs.begin(), vcs.end());
	double epoch = 0;
	parse_datetime(kEpoch, &epoch);
	std::vector<Job> jobs;
	for (Job &j : in.trace.jobs)
		if (known.count(j.group))
			jobs.push_back(std::move(j));
	std::stable_sort(jobs.begin(), jobs.end(), [](const Job &a, const Job &b) {
		return a.submit < b.submit;
	});
	jobs.erase(std::remove_if(jobs.begin(), jobs.end(),
				  [&](const Job &j) { return j.submit < epoch; }),
		   jobs.end());
	if (jobs.empty())
		input_error(in.trace_path, 0,
			    "no job of a configured VC on or after " +
				    std::string(kEpoch));
	/* Time 0 is the first kept job, assumed to be at kEpoch (Q2). */
	double base = jobs.front().submit;
	double begin = month == "july" ? 91 * kDay : 153 * kDay;
	double end = begin + (month == "july" ? 30 : 25) * kDay + 86340;
	std::vector<Job> kept;
	for (Job &j : jobs) {
		j.submit -= base;
		if (j.submit >= begin && j.submit <= end)
			kept.push_back(std::move(j));
		else if (j.submit < begin)
			history->push_back(std::move(j));
	}
	in.trace.jobs = std::move(kept);
	if (in.trace.jobs.empty())
		input_error(in.trace_path, 0, "no job in the " + month +
						      " window");
	return base;
}

/* No --estimates: learn them from the jobs before the window with Tidal's
 * own additive estimator (core/profiles/estimator_ebm.h). */
void learn_estimates(SimInput &in, const std::vector<Job> &history,
		     double epoch)
{
	EbmOptions opt;
	opt.holdout = 0; /* every past job teaches; bench/ reports the MAE */
	EbmEstimator ebm;
	if (!ebm.fit(history, epoch, opt))
		input_error(in.trace_path, 0,
			    "no --estimates and too few jobs before the window "
			    "to learn them from");
	for (Job &j : in.trace.jobs)
		j.estimate = ebm.predict(j, epoch);
}

/* VC's nodes (one short if it lends one to the profiler) and jobs. */
VcInput vc_input(const Cluster &c, const std::vector<Job> &jobs,
		 const std::string &vc, bool lend_one)
{
	VcInput v;
	v.name = vc;
	for (const Node &n : c.nodes)
		if (n.group == vc)
			v.cluster.nodes.push_back(n);
	if (lend_one && v.cluster.nodes.size() > 1)
		v.cluster.nodes.pop_back();
	for (const Job &j : jobs)
		if (j.group == vc)
			v.jobs.push_back(j);
	return v;
}

/* The "all" log: VC logs in file order, stably sorted by submit. */
void merge(RunResult &res, std::vector<VcOutput> &outs)
{
	std::vector<std::pair<Time, int>> busy;
	for (VcOutput &o : outs) {
		res.decisions += o.decisions;
		res.events += o.events;
		res.jobs.insert(res.jobs.end(), o.jobs.begin(), o.jobs.end());
		busy.insert(busy.end(), o.busy.begin(), o.busy.end());
	}
	std::stable_sort(res.jobs.begin(), res.jobs.end(),
			 [](const JobResult &a, const JobResult &b) {
				 return a.submit < b.submit;
			 });
	std::stable_sort(busy.begin(), busy.end(),
			 [](const auto &a, const auto &b) {
				 return a.first < b.first;
			 });
	int now_busy = 0;
	for (const auto &[t, d] : busy) {
		now_busy += d;
		if (!res.util.empty() && res.util.back().t == t)
			res.util.back().busy = now_busy;
		else
			res.util.push_back({t, now_busy});
	}
}

class LucidPreset : public Preset {
public:
	std::string name() const override { return "lucid"; }
	std::string summary() const override
	{
		return "Lucid (ASPLOS'23) simulator: per-VC, 1-s clock, "
		       "consolidate placement, +40/60 s preemption; "
		       "policy lucid: profiler, packing, PAS";
	}
	void prepare(SimInput &in) override;
	Params policy_params(const std::string &policy) const override
	{
		for (const PolicyData &d : policies())
			if (lower(policy) == d.name)
				return Params::parse(d.params, "lucid preset");
		return {};
	}
	std::vector<std::string> policy_names() const override
	{
		std::vector<std::string> out;
		for (const PolicyData &d : policies())
			out.push_back(d.name);
		return out;
	}
	std::vector<std::string> keys() const override
	{
		return {"Lucid.Window", "Lucid.Estimates",
			"Lucid.NegativeEstimate"};
	}
	RunResult run(const SimInput &in, const std::string &policy,
		      const Params &params, const Progress &progress,
		      RunMode mode) override;

private:
	RunResult run_lucid(const SimInput &in, const std::vector<Job> &jobs,
			    const Progress &progress) const;
	void set_estimates(std::vector<Job> &jobs, const std::string &path,
			   double negative) const;

	Time start_ts_ = 153 * kDay; /* the window's first second */
};

void LucidPreset::prepare(SimInput &in)
{
	std::string month = in.policy_config.get_choice(
		"Lucid.Window", "sept", {"sept", "july"});
	start_ts_ = (month == "july" ? 91 : 153) * kDay;
	std::vector<Job> history;
	double epoch = window_trace(in, month, &history);
	std::map<std::string, int> vc_gpus;
	for (const Node &n : in.cluster.nodes)
		vc_gpus[n.group] += n.gpus;
	std::set<JobId> ids;
	for (Job &j : in.trace.jobs) {
		if (!ids.insert(j.id).second)
			input_error(in.trace_path, in.trace.line(j),
				    "job " + std::to_string(j.id) +
					    " appears twice in the window");
		if (j.gpus > vc_gpus[j.group])
			input_error(in.trace_path, in.trace.line(j),
				    "job " + std::to_string(j.id) + " asks for " +
					    std::to_string(j.gpus) + " GPUs; VC " +
					    j.group + " has " +
					    std::to_string(vc_gpus[j.group]));
		j.iterations = j.duration;
		j.iter_time = 1;
	}
	/* Read whether or not it is used, so that it is never reported
	 * as a key nobody read. */
	double negative = in.policy_config.get_double(
		"Lucid.NegativeEstimate", 1000, -1e18, 1e18);
	if (!in.estimates_path.empty())
		set_estimates(in.trace.jobs, in.estimates_path, negative);
	else
		learn_estimates(in, history, epoch);
	if (!in.policy_config.errors().empty())
		throw InputError(in.policy_config.errors().front());
}

void LucidPreset::set_estimates(std::vector<Job> &jobs, const std::string &path,
				double negative) const
{
	std::unordered_map<JobId, double> est = load_estimates(path, negative);
	for (Job &j : jobs) {
		auto it = est.find(j.id);
		j.estimate = it == est.end() ? -1 : it->second;
	}
}

RunResult LucidPreset::run(const SimInput &in, const std::string &policy,
			   const Params &params, const Progress &progress,
			   RunMode mode)
{
	const PolicyData &data = policy_data(lower(policy));
	Model model = data.model;
	model.levels = tiresias_options(params);
	std::vector<Job> jobs = in.trace.jobs;
	std::string est_path = params.get_str("Lucid.Estimates",
					      in.estimates_path);
	double negative = params.get_double("Lucid.NegativeEstimate", 1000,
					    -1e18, 1e18);
	if (est_path != in.estimates_path)
		set_estimates(jobs, est_path, negative);
	if (data.needs_estimates)
		for (const Job &j : jobs)
			if (j.estimate < 0)
				input_error(est_path.empty() ? "--estimates"
							     : est_path,
					    0,
					    "no estimate for job " +
						    std::to_string(j.id) +
						    " (" + policy +
						    " needs one per job)");

	if (model.progress == Model::Progress::Rate)
		return mode == RunMode::Check ? RunResult()
					      : run_lucid(in, jobs, progress);
	if (mode == RunMode::Check) {
		/* One VC's policy reads what every VC's does. */
		std::string err;
		if (!make_policy(policy, params, &err))
			throw InputError(err);
		return {};
	}

	RunResult res;
	res.policy = policy;
	res.total_gpus = in.cluster.total_gpus();
	std::vector<VcOutput> outs;
	for (const std::string &vc : vc_names(in.cluster)) {
		VcInput v = vc_input(in.cluster, jobs, vc, false);
		std::string err;
		std::unique_ptr<Policy> p = make_policy(policy, params, &err);
		if (!p)
			throw InputError(err);
		outs.push_back(replay_vc(v, *p, model));
		if (progress)
			progress((long)outs.size(), (long)vc_names(in.cluster).size());
	}
	merge(res, outs);
	return res;
}

RunResult LucidPreset::run_lucid(const SimInput &in,
				 const std::vector<Job> &jobs,
				 const Progress &progress) const
{
	PackTables tables = load_pack_tables(in.profiles_path);
	ProfilerResult prof = run_profiler(jobs, tables, start_ts_);
	int scaled = 0;
	for (const auto &[t, d] : prof.scaling)
		scaled += d;
	if (scaled != 0)
		throw InputError("lucid preset: the profiler's extra node is "
				 "still in use at the end; the original aborts "
				 "here (MODEL.md §4.6.1)");
	std::vector<std::pair<Time, bool>> pas = pas_schedule(tables, start_ts_);
	RunResult res;
	res.policy = "lucid";
	res.total_gpus = in.cluster.total_gpus();
	std::vector<VcOutput> outs;
	for (const std::string &vc : vc_names(in.cluster)) {
		VcInput v = vc_input(in.cluster, jobs, vc, lends_profiler_node(vc));
		PackInput p;
		p.vc = &v;
		p.tables = &tables;
		p.profiler = &prof;
		p.pas = &pas;
		p.echo_scaling = vc == "vcYVn";
		outs.push_back(replay_lucid_vc(p));
		if (progress)
			progress((long)outs.size(), (long)vc_names(in.cluster).size());
	}
	merge(res, outs);
	return res;
}

PresetRegistrar reg("lucid", [] { return std::make_unique<LucidPreset>(); });

} /* namespace */

} /* namespace tidal::sim::lucid */
