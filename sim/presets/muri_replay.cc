/*
 * muri_replay.cc - the Muri simulator's event loop (muri_model.h).
 *
 * Every floating-point expression keeps the anchor's order of operations
 * (e.g. executed = (executed + now) - last_check): the queue boundaries of
 * dlas are compared exactly, and an ulp decides whether an extra event, and
 * so an extra overhead charge for every running job, happens.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "sim/presets/muri_model.h"

namespace tidal::sim::muri {

/* overhead_dict of the anchor: seconds lost per event interval. */
static const std::map<int, std::map<std::string, double>> overheads = {
	{1, {{"vgg16", 7}, {"vgg19", 7}, {"resnet18", 4},
	     {"shufflenet_v2_x1_0", 4}, {"bert", 10}, {"gpt2", 10},
	     {"a2c", 38}, {"dqn", 5}}},
	{2, {{"vgg16", 7}, {"vgg19", 7}, {"resnet18", 5},
	     {"shufflenet_v2_x1_0", 4}, {"bert", 10}, {"gpt2", 10},
	     {"a2c", 39}, {"dqn", 5}}},
	{4, {{"vgg16", 8}, {"vgg19", 8}, {"resnet18", 5},
	     {"shufflenet_v2_x1_0", 5}, {"bert", 10}, {"gpt2", 10},
	     {"a2c", 39}, {"dqn", 6}}},
	{8, {{"vgg16", 9}, {"vgg19", 9}, {"resnet18", 7},
	     {"shufflenet_v2_x1_0", 5}, {"bert", 10}, {"gpt2", 10},
	     {"a2c", 46}, {"dqn", 6}}},
	{16, {{"vgg16", 9}, {"vgg19", 10}, {"resnet18", 7},
	      {"shufflenet_v2_x1_0", 7}, {"bert", 10}, {"gpt2", 10},
	      {"a2c", 46}, {"dqn", 8}}},
	{32, {{"vgg16", 10}, {"vgg19", 10}, {"resnet18", 7},
	      {"shufflenet_v2_x1_0", 8}, {"bert", 10}, {"gpt2", 10},
	      {"a2c", 46}, {"dqn", 8}}},
};

static thread_local double overhead_override = -1;

OverheadOverride::OverheadOverride(double seconds) : saved_(overhead_override)
{
	overhead_override = seconds;
}

OverheadOverride::~OverheadOverride()
{
	overhead_override = saved_;
}

double restart_overhead(int gpus, const std::string &model)
{
	if (overhead_override >= 0)
		return overhead_override;
	auto row = overheads.find(gpus);
	if (row == overheads.end())
		return 10;
	auto cell = row->second.find(model);
	return cell == row->second.end() ? 10 : cell->second;
}

double solo_iteration_time(double iter_time_s)
{
	/* The reader computed ms / 1000; find the ms value it came from
	 * (traces hold whole or short decimal ms). */
	double ms = iter_time_s * 1000.0;
	double tidy = std::round(ms * 1e6) / 1e6;
	if (tidy / 1000.0 == iter_time_s)
		ms = tidy;
	return ms * kSoloFactor / 1000.0;
}

bool isclose(double a, double b, double rel, double abs)
{
	if (a == b)
		return true;
	if (std::isinf(a) || std::isinf(b))
		return false;
	double d = std::fabs(a - b);
	return d <= std::fabs(rel * b) || d <= std::fabs(rel * a) || d <= abs;
}

std::vector<ArrivalBin> bin_arrivals(std::vector<MJob> &jobs)
{
	std::vector<MJob *> order;
	for (MJob &j : jobs)
		order.push_back(&j);
	std::stable_sort(order.begin(), order.end(), [](MJob *a, MJob *b) {
		return a->job.submit < b->job.submit;
	});
	/* The anchor joins the first existing bin that is close; bins are
	 * ascending, so that is the earliest of the trailing close ones. */
	std::vector<ArrivalBin> bins;
	for (MJob *j : order) {
		Time t = j->job.submit;
		size_t hit = bins.size();
		while (hit > 0 && isclose(bins[hit - 1].time, t, 1e-9))
			hit--;
		if (hit == bins.size())
			bins.push_back({t, {}, {}});
		bins[hit].jobs.push_back(j);
	}
	return bins;
}

Time next_end(const std::vector<MJob *> &runnable, Time now,
	      const LoopRules &rules, std::vector<MJob *> *ending)
{
	ending->clear();
	if (rules.earliest_end_only) {
		Time best = kNever;
		for (MJob *j : runnable) {
			if (j->job.state != JobState::Running)
				continue;
			Time end = now + j->job.remaining * j->itertime_cur;
			if (end < best) {
				best = end;
				ending->assign(1, j);
			} else if (end == best) {
				ending->push_back(j);
			}
		}
		return best;
	}
	/* Bins keyed by their first member's time; then the earliest bin
	 * (a stable sort by time keeps the first-created on ties). */
	std::vector<std::pair<Time, std::vector<MJob *>>> bins;
	for (MJob *j : runnable) {
		if (j->job.state != JobState::Running)
			continue;
		Time end = now + j->job.remaining * j->itertime_cur;
		auto it = std::find_if(bins.begin(), bins.end(), [&](auto &b) {
			return isclose(b.first, end, 1e-9);
		});
		if (it == bins.end())
			bins.push_back({end, {j}});
		else
			it->second.push_back(j);
	}
	if (bins.empty())
		return kNever;
	auto first = std::min_element(
		bins.begin(), bins.end(),
		[](const auto &a, const auto &b) { return a.first < b.first; });
	*ending = first->second;
	if (rules.end_merge_abs >= 0) {
		std::stable_sort(bins.begin(), bins.end(),
				 [](const auto &a, const auto &b) {
					 return a.first < b.first;
				 });
		for (size_t i = 1; i < bins.size(); i++)
			if (isclose(bins[0].first, bins[i].first, 1e-9,
				    rules.end_merge_abs))
				ending->insert(ending->end(),
					       bins[i].second.begin(),
					       bins[i].second.end());
		return bins[0].first;
	}
	return first->first;
}

void apply_solo_plan(const Plan &plan, std::vector<MJob *> &runnable,
		     Time now)
{
	std::unordered_map<JobId, const Decision *> by_job;
	for (const Decision &d : plan.decisions)
		by_job.emplace(d.job, &d);
	for (MJob *m : runnable) {
		Job &j = m->job;
		auto it = by_job.find(j.id);
		const Decision *d = it == by_job.end() ? nullptr : it->second;
		bool run = d && (d->action == Action::Start ||
				 d->action == Action::Keep ||
				 d->action == Action::Resize);
		if (run) {
			if (j.state != JobState::Running)
				m->resumes++;
			if (j.start < 0)
				j.start = now;
			j.state = JobState::Running;
			j.alloc = d->gpus;
			j.placement = d->placement;
		} else {
			if (j.state == JobState::Running)
				j.preemptions++;
			j.state = JobState::Pending;
			j.alloc = 0;
			j.placement.clear();
		}
		m->itertime_cur = j.iter_time;
		m->overhead = restart_overhead(j.gpus, j.model);
	}
}

namespace {

class Loop {
public:
	Loop(const SimInput &in, MuriScheduler &sched, const Progress &progress)
		: sched_(sched), rules_(sched.rules()), progress_(progress)
	{
		for (const Job &src : in.trace.jobs) {
			MJob m;
			m.job = src;
			m.job.state = JobState::Future;
			m.job.remaining = src.iterations;
			m.job.iter_time = solo_iteration_time(src.iter_time);
			m.itertime_cur = m.job.iter_time;
			m.overhead = restart_overhead(src.gpus, src.model);
			jobs_.push_back(std::move(m));
		}
		bins_ = bin_arrivals(jobs_);
		result_.policy = sched.name();
		result_.total_gpus = in.cluster.total_gpus();
	}
	RunResult run();

private:
	void finish(MJob &m, Time now);
	void advance(Time now);
	void record_util(Time now);
	Time pick(ArrivalBin **bin, const std::vector<MJob *> **ends);
	bool coincide(Time end, Time start) const
	{
		return rules_.merge_abs < 0
			       ? end == start
			       : isclose(end, start, 1e-9, rules_.merge_abs);
	}

	MuriScheduler &sched_;
	LoopRules rules_;
	const Progress &progress_;
	std::vector<MJob> jobs_;
	std::vector<ArrivalBin> bins_;
	std::vector<MJob *> runnable_;
	size_t next_bin_ = 0;
	std::vector<MJob *> ending_; /* the next end event's jobs */
	Time end_time_ = kNever;     /* ... and its time */
	Time jump_ = kNever;         /* the scheduler's next queue jump */
	RunResult result_;
	long done_ = 0;
};

void Loop::finish(MJob &m, Time now)
{
	Job &j = m.job;
	j.state = JobState::Done;
	j.end = now;
	JobResult r = completed_result(j, now);
	r.queue = m.pending;
	result_.jobs.push_back(r);
	sched_.leave(m);
	done_++;
}

/* Step 4 of MODEL.md §3: progress with the per-interval overhead. */
void Loop::advance(Time now)
{
	for (MJob *m : runnable_) {
		Job &j = m->job;
		if (j.state == JobState::Running) {
			double run = std::max(now - m->last_check - m->overhead,
					      0.0);
			j.remaining -= run / m->itertime_cur;
			m->total_executed = m->total_executed + now -
					    m->last_check;
			sched_.advance(*m, now);
			m->last_check = now;
			j.executed = m->total_executed;
		} else if (j.state == JobState::Pending) {
			m->pending = m->pending + (now - m->last_check);
			m->last_check = now;
			j.queued = m->pending;
		}
	}
}

void Loop::record_util(Time now)
{
	int busy = sched_.busy_gpus(runnable_);
	if (!result_.util.empty() && result_.util.back().busy == busy)
		return;
	if (!result_.util.empty() && result_.util.back().t == now)
		result_.util.back().busy = busy;
	else
		result_.util.push_back({now, busy});
}

/* Step 1 of MODEL.md §3: the next event.  Sets *BIN to the arrival bin
 * it takes (or nullptr) and returns the jobs it ends (or nullptr). */
Time Loop::pick(ArrivalBin **bin, const std::vector<MJob *> **ends)
{
	*bin = next_bin_ < bins_.size() ? &bins_[next_bin_] : nullptr;
	*ends = nullptr;
	Time start = *bin ? (*bin)->time : kNever, now;
	bool take_bin = true;
	if (*bin && end_time_ != kNever && coincide(end_time_, start)) {
		/* The anchor stores the end jobs on the arrival event itself:
		 * if a queue jump comes first, they stay there and end with
		 * the arrival. */
		(*bin)->ends = ending_;
		now = start;
	} else if (end_time_ < start) {
		now = end_time_;
		*ends = &ending_;
		take_bin = false;
	} else {
		now = start;
	}
	if (now > jump_) {
		now = jump_;
		take_bin = false;
		*ends = nullptr;
	}
	if (take_bin) {
		*ends = &(*bin)->ends;
		next_bin_++;
	} else {
		*bin = nullptr;
	}
	return now;
}

RunResult Loop::run()
{
	long total = (long)jobs_.size();
	record_util(0);
	while (next_bin_ < bins_.size() || !runnable_.empty()) {
		if (next_bin_ == bins_.size() && end_time_ == kNever)
			break; /* the anchor: "cluster not large enough" */
		ArrivalBin *bin;
		const std::vector<MJob *> *ends;
		Time now = pick(&bin, &ends);
		if (ends && !ends->empty()) {
			for (MJob *m : *ends)
				if (m->job.state != JobState::Done)
					finish(*m, now);
			std::erase_if(runnable_, [](MJob *m) {
				return m->job.state == JobState::Done;
			});
		}
		if (bin)
			for (MJob *m : bin->jobs) {
				m->job.state = JobState::Pending;
				m->last_check = m->job.submit;
				runnable_.push_back(m);
				sched_.arrive(*m);
			}
		advance(now);
		sched_.schedule(runnable_, now);
		end_time_ = next_end(runnable_, now, rules_, &ending_);
		jump_ = sched_.next_jump(runnable_, now);
		result_.events++;
		record_util(now);
		if (progress_)
			progress_(done_, total);
	}
	for (MJob *m : runnable_)
		result_.jobs.push_back(rejected_result(m->job));
	result_.decisions = sched_.decisions;
	return std::move(result_);
}

} /* namespace */

RunResult run_muri(const SimInput &in, MuriScheduler &sched,
		   const Progress &progress)
{
	Loop loop(in, sched, progress);
	return loop.run();
}

} /* namespace tidal::sim::muri */
