/*
 * baseline.h - the baseline policies' public pieces.
 *
 * Most baselines are private to baseline.cc and made through the registry;
 * Tiresias is exposed because presets track its queue levels themselves.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <vector>

#include "core/policies/queue_policy.h"

namespace tidal {

struct TiresiasOptions {
	/* Attained GPU-seconds at which a job moves down one level. */
	std::vector<double> thresholds{3250, 7200};
	/* Order inside a level: Job::seq (kept by the caller, e.g. arrival
	 * order with preempted jobs sent to the back) or submit time. */
	enum class Within : std::uint8_t { Seq, Submit } within = Within::Seq;
	/* Take the level from Job::level (the caller demotes) rather than
	 * computing it from Job::attained. */
	bool levels_from_state = false;
	/* A job moves down once its attained service reaches the threshold
	 * (>=), or only once it exceeds it (>, Lucid's simulator). */
	enum class Demote : std::uint8_t { Reach, Exceed } demote = Demote::Reach;
};

TiresiasOptions tiresias_options(const Params &p);

/* Level for ATTAINED GPU-seconds: the number of thresholds reached (or,
 * with EXCEED, passed). */
int tiresias_level(const std::vector<double> &thresholds, double attained,
		   bool exceed = false);

class Tiresias : public QueuePolicy {
public:
	Tiresias(std::string name, QueueOptions o, TiresiasOptions t);
	const TiresiasOptions &tiresias() const { return t_; }
	int level_of(const Job &j) const;

protected:
	Rank rank(const Job &j, const Snapshot &snap) const override;
	std::string rank_reason(const Job &j, const Rank &r) const override;
	Time wake_at(const Snapshot &snap,
		     const std::vector<const Job *> &jobs) const override;
	RankChange rank_change() const override;
	Time rank_changes_at(const Job &job,
			     const Snapshot &snap) const override;

private:
	TiresiasOptions t_;
};

} /* namespace tidal */
