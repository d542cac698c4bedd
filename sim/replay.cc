/*
 * replay.cc - the event loop behind tidal-sim's native model.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "sim/replay.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

namespace tidal::sim {

static constexpr Time kNever = std::numeric_limits<Time>::infinity();

double linear_speed(const Job &job, int gpus)
{
	if (job.iter_time <= 0 || job.gpus <= 0)
		return 0;
	return (double)gpus / job.gpus / job.iter_time;
}

namespace {

struct Live {
	Job *job;
	double owed = 0;       /* restart overhead still to pay, s */
	double speed = 0;      /* iterations per second while running */
	Time finish = kNever;  /* predicted completion */
};

class Replayer {
public:
	Replayer(const SimInput &in, Policy &policy, const ReplayHooks &hooks,
		 const Progress &progress)
		: in_(in), policy_(policy), hooks_(hooks), progress_(progress)
	{
		jobs_ = in.trace.jobs;
		for (Job &j : jobs_) {
			j.state = JobState::Future;
			j.remaining = j.iterations;
		}
		arrival_order_.resize(jobs_.size());
		std::iota(arrival_order_.begin(), arrival_order_.end(), 0);
		std::stable_sort(arrival_order_.begin(), arrival_order_.end(),
				 [&](size_t a, size_t b) {
					 return jobs_[a].submit < jobs_[b].submit;
				 });
		result_.policy = policy.name();
		result_.total_gpus = in.cluster.total_gpus();
	}

	RunResult run();

private:
	double speed(const Job &j, int gpus) const
	{
		return hooks_.speed ? hooks_.speed(j, gpus)
				    : linear_speed(j, gpus);
	}
	double overhead(const Job &j, int gpus) const
	{
		return hooks_.restart_overhead ? hooks_.restart_overhead(j, gpus)
					       : 0;
	}
	void advance(Time to);
	void complete(Time now);
	void decide(Time now);
	void predict(Live &l, Time now);
	Time next_event() const;
	void record_util(Time now);
	void finish(Job &j, Time now);

	const SimInput &in_;
	Policy &policy_;
	const ReplayHooks &hooks_;
	const Progress &progress_;

	std::vector<Job> jobs_;
	std::vector<size_t> arrival_order_;
	size_t next_arrival_ = 0;
	std::vector<Live> active_; /* arrival order; preempted stay in place */
	std::uint64_t seq_ = 0;
	Time now_ = 0;
	Time wake_ = kNever;
	int busy_ = 0;
	long done_ = 0;
	RunResult result_;
};

void Replayer::predict(Live &l, Time now)
{
	Job &j = *l.job;
	if (j.state != JobState::Running || l.speed <= 0) {
		l.finish = kNever;
		return;
	}
	l.finish = now + l.owed + j.remaining / l.speed;
}

void Replayer::advance(Time to)
{
	double dt = to - now_;
	if (dt <= 0)
		return;
	for (Live &l : active_) {
		Job &j = *l.job;
		if (j.state == JobState::Pending) {
			j.queued += dt;
			continue;
		}
		double pay = std::min(l.owed, dt);
		l.owed -= pay;
		j.remaining -= (dt - pay) * l.speed;
		j.attained += dt * j.alloc;
		j.executed += dt;
	}
	now_ = to;
}

void Replayer::finish(Job &j, Time now)
{
	j.state = JobState::Done;
	j.end = now;
	j.remaining = 0;
	busy_ -= j.alloc;
	JobResult r;
	r.id = j.id;
	r.name = j.name;
	r.gpus = j.gpus;
	r.submit = j.submit;
	r.start = j.start;
	r.end = now;
	r.jct = now - j.submit;
	r.queue = j.queued;
	r.preemptions = j.preemptions;
	r.deadline = j.deadline;
	result_.jobs.push_back(r);
	j.alloc = 0;
	j.placement.clear();
	done_++;
}

void Replayer::complete(Time now)
{
	bool any = false;
	for (Live &l : active_)
		if (l.job->state == JobState::Running &&
		    (l.finish <= now ||
		     l.finish - now <= 1e-9 * std::max(1.0, std::fabs(now)))) {
			finish(*l.job, now);
			any = true;
		}
	if (any)
		std::erase_if(active_, [](const Live &l) {
			return l.job->state == JobState::Done;
		});
}

void Replayer::record_util(Time now)
{
	if (!result_.util.empty() && result_.util.back().busy == busy_)
		return;
	if (!result_.util.empty() && result_.util.back().t == now)
		result_.util.back().busy = busy_;
	else
		result_.util.push_back({now, busy_});
}

void Replayer::decide(Time now)
{
	Snapshot snap;
	snap.cluster = &in_.cluster;
	snap.now = now;
	snap.want_reasons = false;
	snap.jobs.reserve(active_.size());
	for (const Live &l : active_)
		snap.jobs.push_back(l.job);
	Plan plan = policy_.decide(snap);
	result_.decisions++;
	std::unordered_map<JobId, const Decision *> by_job;
	by_job.reserve(plan.decisions.size());
	for (const Decision &d : plan.decisions)
		by_job.emplace(d.job, &d);
	auto find = [&](JobId id) -> const Decision * {
		auto it = by_job.find(id);
		return it == by_job.end() ? nullptr : it->second;
	};
	wake_ = plan.wake_at > now ? plan.wake_at : kNever;

	/* Apply: releases first so starts see the freed GPUs. */
	for (Live &l : active_) {
		Job &j = *l.job;
		const Decision *d = find(j.id);
		if (!d)
			continue;
		if (d->action == Action::Preempt && j.state == JobState::Running) {
			busy_ -= j.alloc;
			j.alloc = 0;
			j.placement.clear();
			j.state = JobState::Pending;
			j.preemptions++;
			j.seq = seq_++;
			l.owed = 0;
			l.speed = 0;
			if (hooks_.on_preempt)
				hooks_.on_preempt(j);
		} else if (d->action == Action::Reject) {
			/* A running job may be rejected too: free its GPUs. */
			busy_ -= j.alloc;
			j.alloc = 0;
			j.placement.clear();
			j.state = JobState::Rejected;
			JobResult r;
			r.id = j.id;
			r.name = j.name;
			r.gpus = j.gpus;
			r.submit = j.submit;
			r.deadline = j.deadline;
			r.rejected = true;
			result_.jobs.push_back(r);
			done_++;
		}
	}
	for (Live &l : active_) {
		Job &j = *l.job;
		const Decision *d = find(j.id);
		if (!d || j.state == JobState::Rejected)
			continue;
		if (d->action == Action::Start || d->action == Action::Resize) {
			busy_ += d->gpus - j.alloc;
			bool changed = j.alloc != d->gpus ||
				       j.state != JobState::Running;
			j.alloc = d->gpus;
			j.placement = d->placement;
			if (j.state != JobState::Running && j.start < 0)
				j.start = now;
			j.state = JobState::Running;
			l.speed = speed(j, j.alloc);
			if (changed)
				l.owed = overhead(j, j.alloc);
		}
		predict(l, now);
	}
	std::erase_if(active_, [](const Live &l) {
		return l.job->state == JobState::Rejected;
	});
	record_util(now);
}

Time Replayer::next_event() const
{
	Time t = kNever;
	if (next_arrival_ < arrival_order_.size())
		t = jobs_[arrival_order_[next_arrival_]].submit;
	for (const Live &l : active_)
		t = std::min(t, l.finish);
	t = std::min(t, wake_);
	if (hooks_.period > 0 && t > now_) {
		/* Pending work waits for the next boundary. */
		bool pending = std::any_of(active_.begin(), active_.end(),
					   [](const Live &l) {
						   return l.job->state ==
							  JobState::Pending;
					   });
		if (pending) {
			Time b = (std::floor(now_ / hooks_.period) + 1) *
				 hooks_.period;
			t = std::min(t, b);
		}
	}
	return t;
}

RunResult Replayer::run()
{
	long total = (long)jobs_.size();
	record_util(0);
	while (next_arrival_ < arrival_order_.size() || !active_.empty()) {
		Time t = next_event();
		if (t == kNever) {
			/* Nothing can ever run: jobs too large for the
			 * cluster.  Reject them so the run ends. */
			for (Live &l : active_) {
				busy_ -= l.job->alloc;
				l.job->alloc = 0;
				l.job->state = JobState::Rejected;
				JobResult r;
				r.id = l.job->id;
				r.name = l.job->name;
				r.gpus = l.job->gpus;
				r.submit = l.job->submit;
				r.deadline = l.job->deadline;
				r.rejected = true;
				result_.jobs.push_back(r);
				done_++;
			}
			active_.clear();
			break;
		}
		advance(t);
		complete(t);
		while (next_arrival_ < arrival_order_.size() &&
		       jobs_[arrival_order_[next_arrival_]].submit <= t) {
			Job &j = jobs_[arrival_order_[next_arrival_++]];
			j.state = JobState::Pending;
			j.seq = seq_++;
			active_.push_back({&j});
		}
		result_.events++;
		bool boundary = hooks_.period <= 0 ||
				std::fmod(t, hooks_.period) == 0;
		if (boundary)
			decide(t);
		else
			for (Live &l : active_)
				predict(l, t);
		if (progress_)
			progress_(done_, total);
	}
	record_util(now_);
	return std::move(result_);
}

} /* namespace */

RunResult replay(const SimInput &in, Policy &policy, const ReplayHooks &hooks,
		 const Progress &progress)
{
	Replayer r(in, policy, hooks, progress);
	return r.run();
}

} /* namespace tidal::sim */
