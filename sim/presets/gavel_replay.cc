/*
 * gavel_replay.cc - the round loop of the "gavel" preset (see gavel.cc
 * for the time model).  Rounds are events: each round jumps straight to
 * the end of its slowest micro-task.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "sim/presets/gavel_model.h"

namespace tidal::sim {

namespace {

constexpr int kMaxFailures = 5; /* Gavel's MAX_FAILED_ATTEMPTS */

struct Task {
	double finish;
	size_t job;
	int gpus;
	double steps;
};

struct JobRun {
	GavelBsJob bs;
	bool active = false, done = false;
	double exec = 0;    /* run time, for the cut-off */
	double latest = -1; /* end of the last micro-task */
	double start = -1;
	int failures = 0, preemptions = 0;
};

class Loop {
public:
	Loop(const GavelModel &m, const GavelRunConfig &c, GavelAllocator &a,
	     Shockwave *sw)
		: model_(m), cfg_(c), alloc_(a), sw_(sw),
		  rounds_(c.gpus, c.round, c.reset_interval)
	{
		for (const GavelModelJob &j : m.jobs) {
			JobRun r;
			r.bs = j.bs;
			jobs_.push_back(r);
		}
	}
	RunResult run(const Progress &progress);

private:
	void complete(const Task &t, double round_start);
	void finish_job(size_t i);
	void dispatch();
	void shockwave_progress();
	std::vector<std::pair<JobId, std::vector<int>>> shockwave_round();

	ShockwaveJob shockwave_job(size_t i) const
	{
		const GavelModelJob &m = model_.jobs[i];
		ShockwaveJob s;
		s.id = (JobId)i;
		s.gpus = m.bs.sf;
		s.submit = m.arrival;
		s.dataset = gavel_dataset_size(m.bs.model);
		s.bs = m.profile.bs_every_epoch;
		s.prof = m.profile.duration_every_epoch;
		return s;
	}

	const GavelModel &model_;
	const GavelRunConfig &cfg_;
	GavelAllocator &alloc_;
	Shockwave *sw_;
	GavelRounds rounds_;
	std::vector<JobRun> jobs_;
	std::vector<size_t> active_; /* arrival order */
	std::vector<Task> running_;
	std::vector<std::set<size_t>> sched_; /* per round */
	/* (time, +-GPUs): busy from a round's start for each credited exec,
	 * the anchor's cumulative_worker_time */
	std::vector<std::pair<double, int>> busy_;
	double now_ = 0;
	long round_ = 0, left_ = 0;
	RunResult res_;
	FILE *log_ = nullptr;
};

/* One micro-task's report (_done_callback for the job's last worker). */
void Loop::complete(const Task &t, double round_start)
{
	JobRun &j = jobs_[t.job];
	double exec = t.finish - round_start;
	double steps = t.steps;
	if (round_ != 1 && !sched_[round_ - 2].count(t.job) && exec != 0 &&
	    exec > cfg_.round - 5) {
		double f = (exec - cfg_.preempt_penalty) / exec;
		exec -= cfg_.preempt_penalty;
		steps = std::floor(steps * f);
		j.preemptions++;
	}
	j.latest = t.finish;
	if (!j.active)
		return;
	/* Every worker but the last gets steps // sf: zero fails. */
	if (sw_)
		sw_->record_throughput((JobId)t.job, round_,
				       exec > 0 ? steps / exec : 0, j.bs.bs);
	if (steps <= 0 || exec <= 0 ||
	    (t.gpus > 1 && std::floor(steps / t.gpus) <= 0)) {
		rounds_.mark_changed();
		if (++j.failures >= kMaxFailures)
			finish_job(t.job);
		return;
	}
	j.failures = 0;
	j.exec += exec;
	busy_.push_back({round_start, t.gpus});
	busy_.push_back({round_start + exec, -t.gpus});
	const GavelModelJob &mj = model_.jobs[t.job];
	bool over = j.exec > std::floor(cfg_.cutoff * mj.profile.duration);
	j.bs.steps_run += steps;
	rounds_.job_ran((JobId)t.job, exec);
	if (j.bs.total_steps - j.bs.steps_run <= 0 || over) {
		finish_job(t.job);
		return;
	}
	if (gavel_bs_apply(j.bs, model_.tp))
		rounds_.mark_changed();
}

void Loop::finish_job(size_t i)
{
	JobRun &j = jobs_[i];
	j.active = false;
	j.done = true;
	active_.erase(std::find(active_.begin(), active_.end(), i));
	rounds_.remove_job((JobId)i);
	if (sw_)
		sw_->remove_job((JobId)i);
	left_--;
	const GavelModelJob &mj = model_.jobs[i];
	JobResult r;
	r.id = (JobId)i;
	r.gpus = mj.bs.sf;
	r.submit = mj.arrival;
	r.start = j.start;
	r.end = j.latest;
	r.jct = j.latest - mj.arrival;
	r.queue = j.start >= 0 ? j.start - mj.arrival : r.jct;
	r.preemptions = j.preemptions;
	double contention = std::max(1.0, (double)model_.jobs.size() / cfg_.gpus);
	r.rho = std::round(r.jct / (mj.profile.duration * contention) * 1e5) /
		1e5;
	res_.jobs.push_back(r);
}

/* Step 7: the round's jobs and workers, and their micro-tasks. */
void Loop::dispatch()
{
	std::vector<GavelJob> in;
	for (size_t i : active_) {
		const JobRun &j = jobs_[i];
		GavelJob g;
		g.id = (JobId)i;
		g.sf = j.bs.sf;
		g.tput = j.bs.tput;
		g.remaining = j.bs.total_steps - j.bs.steps_run;
		g.since_start = now_ - model_.jobs[i].arrival;
		g.weight = model_.jobs[i].weight;
		in.push_back(g);
	}
	auto plan = sw_ ? shockwave_round() : rounds_.schedule(now_, in, alloc_);
	std::set<size_t> ran;
	for (auto &[id, workers] : plan) {
		JobRun &j = jobs_[id];
		double rem = j.bs.total_steps - j.bs.steps_run;
		/* A batch-size rescale can leave run > total: such a job
		 * gets an empty micro-task, which fails (the anchor's JCT
		 * then ends at that task's dispatch). */
		double steps = std::max(
			0.0, std::min(std::floor(j.bs.tput * cfg_.round), rem));
		running_.push_back({now_ + steps / j.bs.tput, (size_t)id,
				    (int)workers.size(), steps});
		if (j.start < 0)
			j.start = now_;
		ran.insert((size_t)id);
	}
	sched_.push_back(ran);
	if (log_) {
		std::fprintf(log_, "%ld %.6f", round_, now_);
		for (auto &[id, workers] : plan) {
			std::fprintf(log_, " %lld:", (long long)id);
			for (size_t k = 0; k < workers.size(); k++)
				std::fprintf(log_, "%s%d", k ? "," : "", workers[k]);
		}
		std::fprintf(log_, "\n");
	}
	res_.decisions++;
}

/* Step 5: epochs done by the jobs of the last round. */
void Loop::shockwave_progress()
{
	std::map<JobId, int> epochs;
	if (!sched_.empty())
		for (size_t i : sched_.back()) {
			const JobRun &j = jobs_[i];
			double spe = std::ceil(gavel_dataset_size(j.bs.model) / j.bs.bs);
			epochs[(JobId)i] =
				j.done ? model_.jobs[i].profile.epochs
				       : (int)std::floor(j.bs.steps_run / spe);
		}
	sw_->update_progress(epochs);
}

/* Shockwave's jobs for this round on the lowest free workers. */
std::vector<std::pair<JobId, std::vector<int>>> Loop::shockwave_round()
{
	std::vector<std::pair<JobId, std::vector<int>>> out;
	int next = 0;
	for (JobId id : sw_->round_schedule()) {
		const JobRun &j = jobs_[id];
		if (!j.active || next + j.bs.sf > cfg_.gpus)
			continue;
		std::vector<int> ws;
		for (int k = 0; k < j.bs.sf; k++)
			ws.push_back(next++);
		out.push_back({id, ws});
	}
	return out;
}

RunResult Loop::run(const Progress &progress)
{
	size_t n = jobs_.size(), next = 0;
	if (!cfg_.schedule_log.empty())
		log_ = std::fopen(cfg_.schedule_log.c_str(), "w");
	left_ = (long)n;
	double round_start = 0, round_end = -1;
	while (left_ > 0) {
		if (!running_.empty()) {
			if (round_end >= 0)
				round_start = round_end;
			round_end = 0;
			for (const Task &t : running_)
				round_end = std::max(round_end, t.finish);
			now_ = round_end;
		} else if (next < n) {
			now_ = model_.jobs[next].arrival;
		} else {
			break; /* nothing runs and nothing arrives */
		}
		std::stable_sort(running_.begin(), running_.end(),
				 [](const Task &a, const Task &b) {
					 return a.finish != b.finish
							? a.finish > b.finish
							: a.job < b.job;
				 });
		std::vector<Task> ended;
		ended.swap(running_);
		for (const Task &t : ended)
			complete(t, round_start);
		for (size_t i : active_)
			gavel_bs_trigger(jobs_[i].bs);
		if (sw_ && now_ != 0)
			shockwave_progress();
		for (; next < n && model_.jobs[next].arrival <= now_; next++) {
			jobs_[next].active = true;
			active_.push_back(next);
			rounds_.add_job((JobId)next);
			if (sw_)
				sw_->add_job(shockwave_job(next));
		}
		dispatch();
		round_++;
		if (progress)
			progress((long)n - left_, (long)n);
		res_.events++;
	}
	if (log_)
		std::fclose(log_);
	res_.makespan = now_;
	res_.total_gpus = cfg_.gpus;
	std::sort(busy_.begin(), busy_.end());
	int busy = 0;
	for (auto &[t, d] : busy_) {
		busy += d;
		if (!res_.util.empty() && res_.util.back().t == t)
			res_.util.back().busy = busy;
		else
			res_.util.push_back({t, busy});
	}
	std::sort(res_.jobs.begin(), res_.jobs.end(),
		  [](const JobResult &a, const JobResult &b) { return a.id < b.id; });
	return res_;
}

} /* namespace */

RunResult gavel_simulate(const GavelModel &model, const GavelRunConfig &cfg,
			 GavelAllocator &alloc, const Progress &progress,
			 Shockwave *sw)
{
	Loop loop(model, cfg, alloc, sw);
	return loop.run(progress);
}

std::string gavel_solve_stats(const std::string &policy,
			      std::vector<double> s)
{
	char buf[256];
	if (s.empty())
		return policy + ": no allocation computed";
	std::sort(s.begin(), s.end());
	auto pct = [&](double q) {
		return 1e3 * s[std::min(s.size() - 1, (size_t)(q * s.size()))];
	};
	std::snprintf(buf, sizeof buf,
		      "%s: %zu allocations, solve ms p50 %.3f p90 %.3f p99 %.3f "
		      "max %.3f",
		      policy.c_str(), s.size(), pct(0.5), pct(0.9), pct(0.99),
		      1e3 * s.back());
	return buf;
}

} /* namespace tidal::sim */
