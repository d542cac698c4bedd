/*
 * estimator_ebm.h - an interpretable job-duration estimator: an additive
 * model over a few job features, each with its own shape function, learned
 * by cyclic gradient boosting as in Explainable Boosting Machines.
 *
 *   log(1 + duration) ~ intercept + f_user(user) + f_gpus(gpus)
 *                       + f_cpus(cpus) + f_hour(hour) + f_weekday(day)
 *                       + f_name_head(first name token)
 *                       + f_name_tail(last name token)
 *
 * Every feature is binned (categories seen at least min_count times get
 * their own bin, the rest share "other"; numbers get one bin per distinct
 * value, or quantile bins beyond max_bins).  Training repeats `rounds`
 * times: for each feature in turn, every bin moves by learning_rate times
 * the mean residual of its training jobs (a one-feature, one-leaf-per-bin
 * tree), so no feature takes credit for another's effect.  Afterwards each
 * shape is centred on its training mean, which goes into the intercept;
 * a prediction's per-feature terms are then what `tidalctl explain` prints.
 *
 * Deterministic: a job is held back for scoring when a hash of (seed, its
 * position in the input) falls below `holdout`; nothing else is random.
 * Times of day come from Job::submit + EPOCH (the Unix time of submit 0),
 * read as UTC.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/model/model.h"

namespace tidal {

struct EbmOptions {
	int rounds = 300;
	double learning_rate = 0.05;
	int max_bins = 32;      /* numeric features */
	int min_count = 3;      /* a category's own bin needs this many jobs */
	double holdout = 0.2;   /* fraction held back for the reported MAE */
	std::uint64_t seed = 1;
};

/* One feature's shape function. */
struct EbmFeature {
	std::string name;
	bool categorical = true;
	std::vector<std::string> labels; /* categorical: bin 0 = "other" */
	std::vector<double> edges;       /* numeric: bin i = values <= edges[i] */
	std::vector<double> shape;       /* contribution per bin, log-seconds */
	std::vector<long> counts;        /* training jobs per bin */
};

/* One term of a prediction: FEATURE's bin for this job and its value. */
struct EbmTerm {
	std::string feature; /* "intercept" for the constant */
	std::string bin;     /* the job's value as binned */
	double value = 0;    /* log-seconds; exp(value) is the factor */
};

class EbmEstimator {
public:
	/* Learn from JOBS (target: Job::duration > 0; others are ignored).
	 * RET: false if fewer than 2 usable training jobs. */
	bool fit(std::span<const Job> jobs, double epoch,
		 const EbmOptions &opt = {});
	/* Predicted duration in seconds (>= 0). */
	double predict(const Job &job, double epoch) const;
	/* The intercept, then one term per feature, in feature order. */
	std::vector<EbmTerm> explain(const Job &job, double epoch) const;

	const std::vector<EbmFeature> &features() const { return features_; }
	double intercept() const { return intercept_; }
	/* Mean absolute error (seconds) on the held-back jobs; -1 if none. */
	double holdout_mae() const { return holdout_mae_; }
	long holdout_jobs() const { return holdout_jobs_; }
	long train_jobs() const { return train_jobs_; }

private:
	std::vector<EbmFeature> features_;
	double intercept_ = 0;
	double holdout_mae_ = -1;
	long holdout_jobs_ = 0, train_jobs_ = 0;
};

/* The raw feature values EbmEstimator reads, by feature name: categorical
 * ones as strings, numeric ones as numbers (exposed for tests and explain). */
struct EbmRow {
	std::vector<std::string> cat; /* user, weekday, name_head, name_tail */
	std::vector<double> num;      /* gpus, cpus, hour */
};
EbmRow ebm_row(const Job &job, double epoch);

/* Split a job name into tokens at every character that is not a letter
 * or digit: "resnet50_u003-lr.1" -> resnet50, u003, lr, 1. */
std::vector<std::string> ebm_tokens(const std::string &name);

} /* namespace tidal */
