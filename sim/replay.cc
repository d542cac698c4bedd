/*
 * replay.cc - the event loop behind tidal-sim's native model.
 *
 * Built to scale to a million jobs with thousands running at once, so no
 * step costs O(active jobs) per event except asking the policy:
 *
 *   - progress is kept lazily: each job remembers its counters at its last
 *     change (start, preemption, resize) and the time of it; they are
 *     brought to the present only when the policy is asked or the job
 *     ends.  A job's counters thus depend on its own history only, not on
 *     how many other events happened meanwhile;
 *   - predicted completions sit in a min-heap (stale entries are skipped);
 *   - the snapshot and the free map live from event to event, and the
 *     policy answers with changes only (model.h, plan.h);
 *   - a policy that is idle while nothing is pending is not asked at
 *     events that leave nothing pending (Policy::idle_without_pending);
 *   - a policy that keeps indexes (Policy::incremental) is told what
 *     changed since it was last asked (Snapshot::delta), and brings the
 *     counters it reads up to date itself (Snapshot::sync).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "sim/replay.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <queue>
#include <unordered_map>

#include "core/placement/placement.h"
#include "sim/csv.h"

namespace tidal::sim {

static constexpr Time kNever = std::numeric_limits<Time>::infinity();

double linear_speed(const Job &job, int gpus)
{
	if (job.iter_time <= 0 || job.gpus <= 0)
		return 0;
	return (double)gpus / job.gpus / job.iter_time;
}

namespace {

/* A job's progress since its last change at `since`: the Job's counters
 * then, and the rates since. */
struct Live {
	std::size_t order = 0; /* position in arrival order */
	Time since = 0;
	double owed = 0;       /* restart overhead still to pay at `since`, s */
	double remaining = 0, attained = 0, executed = 0, queued = 0;
	double speed = 0;      /* iterations per second while running */
	Time finish = kNever;  /* predicted completion */
};

/* An active job: the policy sees the Job, the replay also the Live.
 * Active jobs live in a pool of reused slots, so the few thousand the
 * policy walks at each event sit close together in memory rather than
 * spread over the whole trace. */
struct Active : Job {
	Live live;
	std::uint64_t gen = 0; /* arrivals into this slot, for stale entries */
	bool listed = false;   /* in the policy's view (snap_.jobs) */
	bool noted = false;    /* in Replayer::noted_ */
};

struct Due {
	Time t;
	Active *job;
	std::uint64_t gen;
	bool operator>(const Due &o) const { return t > o.t; }
};

/* A preempted job out of the policy's view until T (hooks.requeue_delay). */
struct Held {
	Time t;
	Active *job;
	bool operator>(const Held &o) const { return t > o.t; }
};

class Pool {
public:
	Active *get()
	{
		if (free_.empty()) {
			if (used_ % kChunk == 0)
				chunks_.push_back(std::make_unique<Active[]>(kChunk));
			free_.push_back(&chunks_.back()[used_++ % kChunk]);
		}
		Active *a = free_.back();
		free_.pop_back();
		return a;
	}
	void put(Active *a) { free_.push_back(a); }

private:
	static constexpr std::size_t kChunk = 256;
	std::vector<std::unique_ptr<Active[]>> chunks_;
	std::vector<Active *> free_;
	std::size_t used_ = 0;
};

class Replayer {
public:
	Replayer(const SimInput &in, Policy &policy, const ReplayHooks &hooks,
		 const Progress &progress)
		: in_(in), policy_(policy), hooks_(hooks), progress_(progress),
		  jobs_(in.trace.jobs), free_(in.cluster),
		  completing_(in.cluster.nodes.size(), -kNever)
	{
		arrival_order_.resize(jobs_.size());
		std::iota(arrival_order_.begin(), arrival_order_.end(), 0);
		std::stable_sort(arrival_order_.begin(), arrival_order_.end(),
				 [&](size_t a, size_t b) {
					 return jobs_[a].submit < jobs_[b].submit;
				 });
		result_.policy = policy.name();
		result_.total_gpus = in.cluster.total_gpus();
		snap_.cluster = &in_.cluster;
		snap_.want_reasons = false;
		snap_.changes_only = true;
		snap_.free = &free_;
		if (incremental_) {
			static std::atomic<std::uint64_t> streams{0};
			delta_.stream = ++streams;
			snap_.delta = &delta_;
			snap_.sync = [this](const Job &j) {
				sync(active(j), now_);
			};
		}
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
	static Active &active(const Job &j)
	{
		return static_cast<Active &>(const_cast<Job &>(j));
	}
	static Live &live(const Job &j) { return active(j).live; }
	void sync(Job &j, Time now);
	void rebase(Job &j, Time now);
	void start(Job &j, const Decision &d, Time now);
	void preempt(Job &j, Time now);
	void arrive(Time now);
	void readmit(Time now);
	bool waits_for_completing(const Job &j, const Decision &d,
				  Time now) const;
	void complete(Time now);
	void decide(Time now);
	void apply(const Plan &plan, Time now);
	void release(Job &j);
	/* For Snapshot::delta: J changed, or left the policy's view. */
	void note(Job &j)
	{
		Active &a = active(j);
		if (incremental_ && !a.noted) {
			a.noted = true;
			noted_.push_back(&a);
		}
	}
	void note_left(const Job &j)
	{
		if (incremental_)
			delta_.left.push_back(j.id);
	}
	Time next_event();
	/* The first cycle after now_, and the first at or after T
	 * (hooks_.cycle): the last decision + k cycles, k >= 1. */
	Time next_tick() const
	{
		double k = std::floor((now_ - last_decision_) / hooks_.cycle) + 1;
		return last_decision_ + k * hooks_.cycle;
	}
	Time tick_at_or_after(Time t) const
	{
		double k = std::ceil((t - last_decision_) / hooks_.cycle - 1e-9);
		return last_decision_ + std::max(1.0, k) * hooks_.cycle;
	}
	bool is_tick(Time t) const
	{
		double r = (t - last_decision_) / hooks_.cycle;
		return r >= 1 - 1e-9 && std::fabs(r - std::round(r)) <= 1e-9;
	}
	void record_util(Time now);
	void finish(Job &j, Time now);
	void reject(Job &j);
	void drop(const Job &j);
	void unlist(const Job &j);
	std::vector<const Job *>::iterator place_of(const Job &j);
	static bool current(const Due &d)
	{
		return d.job->gen == d.gen && d.job->state == JobState::Running &&
		       d.job->live.finish == d.t;
	}

	const SimInput &in_;
	Policy &policy_;
	const ReplayHooks &hooks_;
	const Progress &progress_;

	const std::vector<Job> &jobs_; /* the trace */
	Pool pool_;
	std::vector<size_t> arrival_order_;
	size_t next_arrival_ = 0;
	/* The policy's view, kept from event to event: the active jobs in
	 * arrival order (preempted ones stay in place), and the GPUs the
	 * running ones leave free. */
	Snapshot snap_;
	FreeMap free_;
	std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
	/* Snapshot::delta for a policy that keeps indexes: the jobs noted
	 * since it was last asked, and the active jobs by id (for decisions
	 * without a slot). */
	const bool incremental_ = policy_.incremental();
	SnapshotDelta delta_;
	std::vector<Active *> noted_;
	std::unordered_map<JobId, Active *> by_id_;
	/* hooks_.requeue_delay: preempted jobs out of snap_ until due. */
	std::priority_queue<Held, std::vector<Held>, std::greater<Held>> held_;
	/* hooks_.preempt_release: each node takes no start before this;
	 * those times, for next_event(). */
	std::vector<Time> completing_;
	std::priority_queue<Time, std::vector<Time>, std::greater<Time>> released_;
	std::vector<Job *> preempted_; /* scratch for apply() */
	/* Scratch for apply(): decisions that change a job, by slot. */
	std::vector<std::size_t> changed_, slot_;
	std::vector<Job *> ending_; /* scratch for complete() */
	long pending_ = 0;          /* jobs waiting in snap_ */
	std::uint64_t seq_ = 0;
	Time now_ = 0;
	Time wake_ = kNever;
	Time last_decision_ = 0; /* for hooks_.cycle */
	bool last_changed_nothing_ = false; /* the last decide() */
	int busy_ = 0;
	long done_ = 0;
	RunResult result_;
};

/* Bring J's counters to NOW from its last change. */
void Replayer::sync(Job &j, Time now)
{
	Live &l = live(j);
	double dt = now - l.since;
	if (j.state == JobState::Pending) {
		j.queued = l.queued + dt;
		return;
	}
	if (j.state != JobState::Running)
		return;
	double pay = std::min(l.owed, dt);
	j.remaining = l.remaining - (dt - pay) * l.speed;
	j.attained = l.attained + dt * j.alloc;
	j.executed = l.executed + dt;
}

/* J has just changed at NOW (its counters synced): count from here, and
 * predict when it ends. */
void Replayer::rebase(Job &j, Time now)
{
	Live &l = live(j);
	l.since = now;
	l.remaining = j.remaining;
	l.attained = j.attained;
	l.executed = j.executed;
	l.queued = j.queued;
	if (j.state != JobState::Running || l.speed <= 0) {
		l.finish = kNever;
		return;
	}
	l.finish = now + l.owed + j.remaining / l.speed;
	due_.push({l.finish, &active(j), active(j).gen});
}

/* Where J is, or goes, in the policy's view (snap_.jobs is in arrival
 * order). */
std::vector<const Job *>::iterator Replayer::place_of(const Job &j)
{
	return std::lower_bound(snap_.jobs.begin(), snap_.jobs.end(),
				live(j).order, [](const Job *a, std::size_t o) {
					return live(*a).order < o;
				});
}

/* Take J out of the policy's view. */
void Replayer::unlist(const Job &j)
{
	snap_.jobs.erase(place_of(j));
	active(j).listed = false;
	note_left(j);
}

void Replayer::drop(const Job &j)
{
	unlist(j);
	auto it = by_id_.find(j.id);
	if (it != by_id_.end() && it->second == &active(j))
		by_id_.erase(it);
	pool_.put(&active(j));
}

/* Give back J's GPUs. */
void Replayer::release(Job &j)
{
	free_.release(j.placement);
	busy_ -= j.alloc;
	j.alloc = 0;
	j.placement.clear();
}

void Replayer::finish(Job &j, Time now)
{
	sync(j, now);
	j.state = JobState::Done;
	j.end = now;
	j.remaining = 0;
	JobResult r = completed_result(j, now);
	r.queue = j.queued;
	result_.jobs.push_back(r);
	release(j);
	drop(j);
	done_++;
}

void Replayer::reject(Job &j)
{
	if (j.state == JobState::Pending)
		pending_--;
	if (j.state == JobState::Running)
		release(j);
	j.state = JobState::Rejected;
	result_.jobs.push_back(rejected_result(j));
	done_++;
}

/* End the jobs predicted to end at NOW (within rounding), in arrival
 * order. */
void Replayer::complete(Time now)
{
	ending_.clear();
	double tol = 1e-9 * std::max(1.0, std::fabs(now));
	while (!due_.empty() &&
	       (due_.top().t <= now || due_.top().t - now <= tol)) {
		Due d = due_.top();
		due_.pop();
		if (current(d))
			ending_.push_back(d.job);
	}
	std::sort(ending_.begin(), ending_.end(), [&](Job *a, Job *b) {
		return live(*a).order < live(*b).order;
	});
	ending_.erase(std::unique(ending_.begin(), ending_.end()),
		      ending_.end());
	for (Job *j : ending_)
		finish(*j, now);
}

void Replayer::arrive(Time now)
{
	while (next_arrival_ < arrival_order_.size() &&
	       jobs_[arrival_order_[next_arrival_]].submit <= now) {
		Active *a = pool_.get();
		Job &j = *a;
		j = jobs_[arrival_order_[next_arrival_]];
		j.state = JobState::Pending;
		j.remaining = j.iterations;
		j.seq = seq_++;
		a->live = Live();
		a->live.order = next_arrival_++;
		a->gen++;
		rebase(j, now);
		snap_.jobs.push_back(&j);
		a->listed = true;
		by_id_.emplace(j.id, a);
		note(j);
		pending_++;
	}
}

/* Preempted jobs whose requeue delay has passed are pending again, in
 * their place in arrival order; the next decision sees them. */
void Replayer::readmit(Time now)
{
	double tol = 1e-9 * std::max(1.0, std::fabs(now));
	while (!held_.empty() && held_.top().t - now <= tol) {
		Job &j = *held_.top().job;
		held_.pop();
		snap_.jobs.insert(place_of(j), &j);
		active(j).listed = true;
		note(j);
		pending_++;
	}
}

/* A start of pending J planned on a node still completing a preempted
 * job waits, as sched/tidal's does ("still completing a job: start tried
 * again next cycle"); the policy decides again later. */
bool Replayer::waits_for_completing(const Job &j, const Decision &d,
				    Time now) const
{
	if (hooks_.preempt_release <= 0 || j.state != JobState::Pending)
		return false;
	for (const NodeShare &s : d.placement)
		if (s.node >= 0 && (std::size_t)s.node < completing_.size() &&
		    completing_[s.node] > now)
			return true;
	return false;
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
	if (policy_.reads_progress() && !incremental_)
		for (const Job *j : snap_.jobs)
			sync(active(*j), now);
	snap_.now = now;
	snap_.pending = pending_;
	for (Active *a : noted_) {
		a->noted = false;
		if (a->listed)
			delta_.changed.emplace_back(a, a->live.order);
	}
	noted_.clear();
	Plan plan = policy_.decide(snap_);
	delta_.changed.clear();
	delta_.left.clear();
	result_.decisions++;
	wake_ = plan.wake_at > now ? plan.wake_at : kNever;
	for (const std::string &l : plan.log)
		std::fprintf(stderr, "tidal-sim: t=%.0f s: %s: %s\n", now,
			     policy_.name().c_str(), l.c_str());
	apply(plan, now);
	last_changed_nothing_ = changed_.empty();
	record_util(now);
}

/* Apply PLAN in arrival order (the order of snap_.jobs): releases first,
 * so starts see the freed GPUs.  A job without a decision is unchanged. */
void Replayer::apply(const Plan &plan, Time now)
{
	const std::vector<Decision> &ds = plan.decisions;
	changed_.clear();
	slot_.resize(ds.size());
	for (std::size_t k = 0; k < ds.size(); k++) {
		std::ptrdiff_t s = ds[k].slot;
		if (s < 0 || s >= (std::ptrdiff_t)snap_.jobs.size() ||
		    snap_.jobs[s]->id != ds[k].job) {
			/* A policy without slots: find the job by id. */
			auto it = by_id_.find(ds[k].job);
			if (it == by_id_.end() || !it->second->listed)
				continue;
			s = place_of(*it->second) - snap_.jobs.begin();
		}
		changed_.push_back(k);
		slot_[k] = (std::size_t)s;
	}
	/* By slot; the first decision for a job wins. */
	std::stable_sort(changed_.begin(), changed_.end(),
			 [&](std::size_t a, std::size_t b) {
				 return slot_[a] < slot_[b];
			 });
	changed_.erase(std::unique(changed_.begin(), changed_.end(),
				   [&](std::size_t a, std::size_t b) {
					   return slot_[a] == slot_[b];
				   }),
		       changed_.end());

	std::vector<Job *> rejected;
	preempted_.clear();
	for (std::size_t k : changed_) {
		const Decision &d = ds[k];
		Job &j = active(*snap_.jobs[slot_[k]]);
		if (d.action == Action::Preempt && j.state == JobState::Running)
			preempt(j, now), preempted_.push_back(&j);
		else if (d.action == Action::Reject)
			reject(j), rejected.push_back(&j);
		else if ((d.action == Action::Start ||
			  d.action == Action::Resize) &&
			 j.state == JobState::Running)
			free_.release(j.placement);
	}
	for (std::size_t k : changed_) {
		const Decision &d = ds[k];
		Job &j = active(*snap_.jobs[slot_[k]]);
		if (j.state != JobState::Rejected &&
		    (d.action == Action::Start || d.action == Action::Resize) &&
		    !waits_for_completing(j, d, now))
			start(j, d, now);
	}
	for (Job *j : rejected)
		drop(*j);
	/* Out of the policy's view for the requeue delay (after the loops
	 * above, which index snap_.jobs). */
	if (hooks_.requeue_delay > 0)
		for (Job *j : preempted_) {
			unlist(*j);
			pending_--;
			held_.push({now + hooks_.requeue_delay, &active(*j)});
		}
}

void Replayer::preempt(Job &j, Time now)
{
	Live &l = live(j);
	sync(j, now);
	if (hooks_.preempt_release > 0) {
		Time until = now + hooks_.preempt_release;
		for (const NodeShare &s : j.placement)
			if (s.node >= 0 && (std::size_t)s.node < completing_.size())
				completing_[s.node] =
					std::max(completing_[s.node], until);
		released_.push(until);
	}
	release(j);
	note(j);
	j.state = JobState::Pending;
	j.preemptions++;
	j.seq = seq_++;
	l.owed = 0;
	l.speed = 0;
	if (hooks_.on_preempt)
		hooks_.on_preempt(j);
	rebase(j, now);
	pending_++;
}

/* Start, resume or resize J as D says (its old GPUs already released). */
void Replayer::start(Job &j, const Decision &d, Time now)
{
	Live &l = live(j);
	if (!free_.take(d.placement))
		throw InputError("policy " + policy_.name() + ": job " +
				 std::to_string(j.id) +
				 " placed on GPUs that are not free");
	sync(j, now);
	l.owed -= std::min(l.owed, now - l.since);
	busy_ += d.gpus - j.alloc;
	bool changed = j.alloc != d.gpus || j.state != JobState::Running;
	if (j.state != JobState::Running)
		pending_--;
	j.alloc = d.gpus;
	j.placement = d.placement;
	note(j);
	if (j.state != JobState::Running && j.start < 0)
		j.start = now;
	j.state = JobState::Running;
	l.speed = speed(j, j.alloc);
	if (changed)
		l.owed = overhead(j, j.alloc);
	rebase(j, now);
}

/* The next arrival, completion, wake-up or period boundary. */
Time Replayer::next_event()
{
	Time t = kNever;
	if (next_arrival_ < arrival_order_.size())
		t = jobs_[arrival_order_[next_arrival_]].submit;
	while (!due_.empty() && !current(due_.top()))
		due_.pop(); /* stale */
	if (!due_.empty())
		t = std::min(t, due_.top().t);
	if (!held_.empty())
		t = std::min(t, held_.top().t);
	/* A node done completing may take a start that waited for it. */
	while (!released_.empty() && released_.top() <= now_)
		released_.pop();
	if (!released_.empty() && pending_ > 0)
		t = std::min(t, released_.top());
	/* sched/tidal asks its policy once a cycle, whatever wake-up the
	 * plan asked for: one is taken at the cycle it falls in. */
	if (hooks_.cycle > 0 && wake_ != kNever)
		t = std::min(t, tick_at_or_after(wake_));
	else
		t = std::min(t, wake_);
	/* Nothing else to come, and the last decision changed nothing: a
	 * cycle or period boundary would decide the same again, forever
	 * (jobs that can never start: the caller rejects them). */
	if (t == kNever && last_changed_nothing_)
		return kNever;
	if (hooks_.cycle > 0 && pending_ > 0)
		t = std::min(t, next_tick());
	if (hooks_.period > 0 && t > now_ && pending_ > 0) {
		/* Pending work waits for the next boundary. */
		Time b = (std::floor(now_ / hooks_.period) + 1) * hooks_.period;
		t = std::min(t, b);
	}
	return t;
}

RunResult Replayer::run()
{
	long total = (long)jobs_.size();
	record_util(0);
	while (next_arrival_ < arrival_order_.size() || !snap_.jobs.empty() ||
	       !held_.empty()) {
		Time t = next_event();
		if (t == kNever) {
			/* Nothing can ever run: jobs too large for the
			 * cluster.  Reject them so the run ends. */
			for (const Job *j : snap_.jobs) {
				result_.jobs.push_back(rejected_result(*j));
				done_++;
			}
			snap_.jobs.clear();
			break;
		}
		bool tick = hooks_.cycle > 0 && is_tick(t);
		now_ = t;
		complete(t);
		size_t arrived = next_arrival_;
		arrive(t);
		readmit(t);
		result_.events++;
		bool boundary = hooks_.period <= 0 ||
				std::fmod(t, hooks_.period) == 0;
		if (hooks_.cycle > 0)
			boundary = tick || next_arrival_ != arrived;
		if (boundary && pending_ == 0 && policy_.idle_without_pending()) {
			/* Nothing to ask: the wake-up, if due, is moot. */
			if (wake_ <= t)
				wake_ = kNever;
			last_changed_nothing_ = false;
			record_util(t);
		} else if (boundary) {
			decide(t);
			last_decision_ = t;
		} else {
			/* Between boundaries jobs still end and free GPUs:
			 * the next boundary has something new to decide. */
			last_changed_nothing_ = false;
			record_util(t);
		}
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
