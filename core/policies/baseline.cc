/*
 * baseline.cc - FIFO, SJF, SRTF, SRSF, EDF, Tiresias and QSSF.
 *
 * Each is a rank over QueuePolicy (queue_policy.h).  Defaults follow the
 * usual reading of each policy; presets and tidal.conf override them.
 *
 *   fifo      submit time                      block, not preemptive
 *   sjf       duration (oracle)                block, not preemptive
 *   qssf      estimate x GPUs (Helios QSSF)    block, not preemptive
 *   srtf      remaining time                   skip, preemptive
 *   srsf      remaining time x GPUs            skip, preemptive
 *   edf       deadline, then submit            skip, preemptive
 *   tiresias  discretised 2D-LAS: level by attained GPU-seconds against
 *             Tiresias.Thresholds, then position in the level
 *                                              skip, preemptive
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <charconv>
#include <cmath>

#include "core/policies/baseline.h"

namespace tidal {

namespace {

/* printf's %.<PRECISION>g, as to_chars writes it: the same text at a
 * fraction of the cost (the plugin words a reason for every job at every
 * cycle). */
std::string general(double v, int precision)
{
	char b[48];
	char *e = std::to_chars(b, b + sizeof(b), v,
				std::chars_format::general, precision)
			  .ptr;
	return std::string(b, e);
}

/* As an ostream with precision(10) writes it (%.10g), and " s". */
std::string secs(double v) { return general(v, 10) + " s"; }

class Fifo : public QueuePolicy {
public:
	using QueuePolicy::QueuePolicy;
	bool reads_progress() const override { return false; }

protected:
	RankChange rank_change() const override { return RankChange::Never; }
	Rank rank(const Job &j, const Snapshot &) const override
	{
		return {j.submit, (double)j.index};
	}
	std::string rank_reason(const Job &j, const Rank &) const override
	{
		return "submitted at " + secs(j.submit);
	}
};

class Sjf : public QueuePolicy {
public:
	using QueuePolicy::QueuePolicy;
	bool reads_progress() const override { return false; }

protected:
	RankChange rank_change() const override { return RankChange::Never; }
	Rank rank(const Job &j, const Snapshot &) const override
	{
		return {j.duration, 0};
	}
	std::string rank_reason(const Job &j, const Rank &) const override
	{
		return "duration " + secs(j.duration);
	}
};

/*
 * Qssf.Ties=arrival|gpus     equal estimated service: arrival order, or the
 *                            smaller GPU count first (Lucid's simulator sorts
 *                            by GPUs, then stably by estimate).
 * Qssf.NewOrder=estimate|gpus
 *                            when no pending job has waited yet (all were
 *                            submitted at snap.now), rank by GPU count only:
 *                            Lucid's simulator gives estimates only once a
 *                            job from an earlier second is still queued.
 */
class Qssf : public QueuePolicy {
public:
	Qssf(std::string name, QueueOptions o, const Params &p)
		: QueuePolicy(std::move(name), o)
	{
		ties_by_gpus_ = p.get_choice("Qssf.Ties", "arrival",
					     {"arrival", "gpus"}) == "gpus";
		new_by_gpus_ = p.get_choice("Qssf.NewOrder", "estimate",
					    {"estimate", "gpus"}) == "gpus";
	}
	bool reads_progress() const override { return false; }
	Plan decide(const Snapshot &snap) override
	{
		all_new_ = new_by_gpus_;
		for (std::size_t s = 0; all_new_ && s < snap.jobs.size(); s++)
			if (snap.jobs[s]->state == JobState::Pending &&
			    snap.jobs[s]->submit < snap.now)
				all_new_ = false;
		return QueuePolicy::decide(snap);
	}

protected:
	/* NewOrder=gpus ranks by what the other pending jobs are. */
	RankChange rank_change() const override
	{
		return new_by_gpus_ ? RankChange::Anytime : RankChange::Never;
	}
	Rank rank(const Job &j, const Snapshot &) const override
	{
		if (all_new_)
			return {(double)j.gpus, 0};
		double est = j.estimate >= 0 ? j.estimate : j.duration;
		return {est * j.gpus, ties_by_gpus_ ? (double)j.gpus : 0};
	}
	std::string rank_reason(const Job &j, const Rank &r) const override
	{
		if (all_new_)
			return "no job has waited yet: " +
			       std::to_string(j.gpus) + " GPUs";
		return "estimated service " + secs(r.k1) +
		       (j.estimate >= 0 ? "" : " (no estimate: duration)");
	}

private:
	bool ties_by_gpus_ = false;
	bool new_by_gpus_ = false;
	bool all_new_ = false; /* set per decide() */
};

class Srtf : public QueuePolicy {
public:
	Srtf(std::string name, QueueOptions o, bool gpu_weighted)
		: QueuePolicy(std::move(name), o), weighted_(gpu_weighted)
	{
	}

protected:
	RankChange rank_change() const override
	{
		return RankChange::WhileRunning;
	}
	Rank rank(const Job &j, const Snapshot &) const override
	{
		double t = j.remaining_time();
		return {weighted_ ? t * j.gpus : t, 0};
	}
	std::string rank_reason(const Job &, const Rank &r) const override
	{
		return (weighted_ ? "remaining service " : "remaining time ") +
		       (weighted_ ? secs(r.k1) + "*GPU" : secs(r.k1));
	}

private:
	bool weighted_;
};

class Edf : public QueuePolicy {
public:
	using QueuePolicy::QueuePolicy;
	bool reads_progress() const override { return false; }

protected:
	RankChange rank_change() const override { return RankChange::Never; }
	Rank rank(const Job &j, const Snapshot &) const override
	{
		return {j.deadline, j.submit};
	}
	std::string rank_reason(const Job &j, const Rank &) const override
	{
		return j.has_deadline() ? "deadline " + secs(j.deadline)
					: std::string("no deadline");
	}
};

} /* namespace */

int tiresias_level(const std::vector<double> &thresholds, double attained,
		   bool exceed)
{
	int level = 0;
	while (level < (int)thresholds.size() &&
	       (exceed ? attained > thresholds[level]
		       : attained >= thresholds[level]))
		level++;
	return level;
}

Tiresias::Tiresias(std::string name, QueueOptions o, TiresiasOptions t)
	: QueuePolicy(std::move(name), o), t_(std::move(t))
{
}

int Tiresias::level_of(const Job &j) const
{
	return t_.levels_from_state
		       ? j.level
		       : tiresias_level(t_.thresholds, j.attained,
					t_.demote == TiresiasOptions::Demote::Exceed);
}

Rank Tiresias::rank(const Job &j, const Snapshot &) const
{
	double within = t_.within == TiresiasOptions::Within::Submit
				? j.submit
				: (double)j.seq;
	return {(double)level_of(j), within};
}

std::string Tiresias::rank_reason(const Job &j, const Rank &r) const
{
	return "queue " + std::to_string((int)r.k1) + " (attained " +
	       general(j.attained, 6) + " GPU*s)";
}

RankChange Tiresias::rank_change() const
{
	/* Levels the caller keeps (Job::level) may change at any call. */
	return t_.levels_from_state ? RankChange::Anytime
				    : RankChange::AtTimes;
}

/* A running job's level changes when its attained service reaches the next
 * threshold: wake_at()'s time for that job alone. */
Time Tiresias::rank_changes_at(const Job &j, const Snapshot &snap) const
{
	return wake_at(snap, {&j});
}

Time Tiresias::wake_at(const Snapshot &snap,
		       const std::vector<const Job *> &jobs) const
{
	Time t = std::numeric_limits<Time>::infinity();
	for (const Job *j : jobs) {
		if (j->state != JobState::Running || j->alloc <= 0)
			continue;
		fresh(snap, *j);
		int lvl = level_of(*j);
		if (lvl >= (int)t_.thresholds.size())
			continue;
		double left = t_.thresholds[lvl] - j->attained;
		t = std::min(t, snap.now + std::max(0.0, left) / j->alloc);
	}
	return t;
}

TiresiasOptions tiresias_options(const Params &p)
{
	TiresiasOptions t;
	t.thresholds = p.get_list("Tiresias.Thresholds", t.thresholds, 0, 1e18);
	std::string w = p.get_choice("Tiresias.Order", "arrival",
				     {"arrival", "submit"});
	t.within = w == "submit" ? TiresiasOptions::Within::Submit
				 : TiresiasOptions::Within::Seq;
	t.levels_from_state = p.get_choice("Tiresias.Levels", "attained",
					   {"attained", "state"}) == "state";
	t.demote = p.get_choice("Tiresias.Demote", "reach",
				{"reach", "exceed"}) == "exceed"
			   ? TiresiasOptions::Demote::Exceed
			   : TiresiasOptions::Demote::Reach;
	return t;
}

static QueueOptions nonpreemptive()
{
	QueueOptions o;
	o.discipline = Discipline::Block;
	return o;
}

static QueueOptions preemptive()
{
	QueueOptions o;
	o.discipline = Discipline::Skip;
	o.preemptive = true;
	return o;
}

static PolicyRegistrar reg_fifo(
	"fifo", "first come, first served; head-of-line blocking",
	[](const Params &p) {
		return std::make_unique<Fifo>("fifo",
					      queue_options(p, nonpreemptive()));
	});
static PolicyRegistrar reg_sjf(
	"sjf", "shortest job first by (oracle) duration, not preemptive",
	[](const Params &p) {
		return std::make_unique<Sjf>("sjf",
					     queue_options(p, nonpreemptive()));
	});
static PolicyRegistrar reg_qssf(
	"qssf", "quasi-shortest-service-first: estimate x GPUs (Helios)",
	[](const Params &p) {
		return std::make_unique<Qssf>(
			"qssf", queue_options(p, nonpreemptive()), p);
	});
static PolicyRegistrar reg_srtf(
	"srtf", "shortest remaining time first, preemptive",
	[](const Params &p) {
		return std::make_unique<Srtf>(
			"srtf", queue_options(p, preemptive()), false);
	});
static PolicyRegistrar reg_srsf(
	"srsf", "shortest remaining service (time x GPUs) first, preemptive",
	[](const Params &p) {
		return std::make_unique<Srtf>(
			"srsf", queue_options(p, preemptive()), true);
	});
static PolicyRegistrar reg_edf(
	"edf", "earliest deadline first, preemptive",
	[](const Params &p) {
		return std::make_unique<Edf>("edf",
					     queue_options(p, preemptive()));
	});
static PolicyRegistrar reg_tiresias(
	"tiresias", "discretised 2D-LAS over attained GPU-seconds (Tiresias)",
	[](const Params &p) {
		return std::make_unique<Tiresias>(
			"tiresias", queue_options(p, preemptive()),
			tiresias_options(p));
	});

} /* namespace tidal */
