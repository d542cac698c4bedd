/*
 * estimator_ebm.cc - binning, cyclic boosting and explanation for the
 * additive duration model (see estimator_ebm.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/profiles/estimator_ebm.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

namespace tidal {

namespace {

/* Feature table: name, categorical?, index into EbmRow::cat or ::num. */
struct Spec {
	const char *name;
	bool categorical;
	int index;
};
constexpr Spec kSpecs[] = {
	{"user", true, 0},     {"gpus", false, 0},      {"cpus", false, 1},
	{"hour", false, 2},    {"weekday", true, 1},    {"name_head", true, 2},
	{"name_tail", true, 3},
};

const char *kDays[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};

/* splitmix64: a fixed, portable hash for the held-back choice. */
std::uint64_t mix(std::uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

bool held_back(std::uint64_t seed, size_t i, double fraction)
{
	double u = (double)(mix(mix(seed) ^ (std::uint64_t)i) >> 11) *
		   0x1.0p-53;
	return u < fraction;
}

EbmFeature make_categorical(const Spec &s, const std::vector<EbmRow> &rows,
			    int min_count)
{
	EbmFeature f;
	f.name = s.name;
	f.categorical = true;
	std::map<std::string, long> count;
	for (const EbmRow &r : rows)
		count[r.cat[s.index]]++;
	f.labels.push_back("other");
	for (const auto &[v, n] : count)
		if (n >= min_count)
			f.labels.push_back(v);
	return f;
}

EbmFeature make_numeric(const Spec &s, const std::vector<EbmRow> &rows,
			int max_bins)
{
	EbmFeature f;
	f.name = s.name;
	f.categorical = false;
	std::vector<double> v;
	for (const EbmRow &r : rows)
		v.push_back(r.num[s.index]);
	std::sort(v.begin(), v.end());
	std::vector<double> uniq = v;
	uniq.erase(std::unique(uniq.begin(), uniq.end()), uniq.end());
	if ((int)uniq.size() <= max_bins) {
		f.edges = uniq;
	} else {
		for (int b = 1; b <= max_bins; b++)
			f.edges.push_back(
				v[std::min(v.size() - 1,
					   v.size() * (size_t)b / (size_t)max_bins)]);
		f.edges.erase(std::unique(f.edges.begin(), f.edges.end()),
			      f.edges.end());
	}
	if (f.edges.empty())
		f.edges.push_back(0);
	return f;
}

int bin_of(const EbmFeature &f, const Spec &s, const EbmRow &r)
{
	if (f.categorical) {
		const std::string &v = r.cat[s.index];
		auto it = std::lower_bound(f.labels.begin() + 1, f.labels.end(),
					   v);
		return it != f.labels.end() && *it == v
			       ? (int)(it - f.labels.begin())
			       : 0;
	}
	auto it = std::lower_bound(f.edges.begin(), f.edges.end(),
				   r.num[s.index]);
	return std::min((int)(it - f.edges.begin()), (int)f.edges.size() - 1);
}

std::string bin_label(const EbmFeature &f, int b)
{
	if (f.categorical)
		return f.labels[b];
	char buf[64];
	std::snprintf(buf, sizeof buf, "<=%g", f.edges[b]);
	return buf;
}

/* Cyclic boosting: every round, each feature in turn moves each of its
 * bins by the learning rate times the bin's mean residual.  RET: the
 * intercept (the mean target); SHAPEs are updated in place. */
double boost(std::vector<EbmFeature> &features,
	     const std::vector<std::vector<int>> &bins,
	     const std::vector<double> &y, const EbmOptions &opt)
{
	size_t nf = features.size(), n = y.size();
	double intercept = 0;
	for (double v : y)
		intercept += v;
	intercept /= (double)n;
	std::vector<double> pred(n, intercept), step;
	for (int round = 0; round < opt.rounds; round++)
		for (size_t f = 0; f < nf; f++) {
			EbmFeature &F = features[f];
			step.assign(F.shape.size(), 0);
			for (size_t i = 0; i < n; i++)
				step[bins[f][i]] += y[i] - pred[i];
			for (size_t b = 0; b < step.size(); b++) {
				step[b] = F.counts[b] ? opt.learning_rate * step[b] /
								(double)F.counts[b]
						      : 0;
				F.shape[b] += step[b];
			}
			for (size_t i = 0; i < n; i++)
				pred[i] += step[bins[f][i]];
		}
	return intercept;
}

} /* namespace */

std::vector<std::string> ebm_tokens(const std::string &name)
{
	std::vector<std::string> out;
	std::string cur;
	for (char c : name) {
		if (std::isalnum((unsigned char)c)) {
			cur += (char)std::tolower((unsigned char)c);
		} else if (!cur.empty()) {
			out.push_back(cur);
			cur.clear();
		}
	}
	if (!cur.empty())
		out.push_back(cur);
	return out;
}

EbmRow ebm_row(const Job &j, double epoch)
{
	EbmRow r;
	double t = j.submit + epoch;
	double day = std::floor(t / 86400);
	int weekday = (int)(((long long)day + 3) % 7 + 7) % 7; /* 1970-01-01: Thu */
	double hour = std::floor((t - day * 86400) / 3600);
	std::vector<std::string> tok = ebm_tokens(j.job_name);
	r.cat = {j.user, kDays[weekday], tok.empty() ? "" : tok.front(),
		 tok.size() > 1 ? tok.back() : ""};
	r.num = {(double)j.gpus, (double)j.cpus, hour};
	return r;
}

bool EbmEstimator::fit(std::span<const Job> jobs, double epoch,
		       const EbmOptions &opt)
{
	std::vector<EbmRow> train, test;
	std::vector<double> y, test_dur;
	for (size_t i = 0; i < jobs.size(); i++) {
		const Job &j = jobs[i];
		if (!(j.duration > 0))
			continue;
		if (held_back(opt.seed, i, opt.holdout)) {
			test.push_back(ebm_row(j, epoch));
			test_dur.push_back(j.duration);
		} else {
			train.push_back(ebm_row(j, epoch));
			y.push_back(std::log1p(j.duration));
		}
	}
	train_jobs_ = (long)train.size();
	holdout_jobs_ = (long)test.size();
	if (train.size() < 2)
		return false;

	features_.clear();
	for (const Spec &s : kSpecs)
		features_.push_back(s.categorical
					    ? make_categorical(s, train, opt.min_count)
					    : make_numeric(s, train, opt.max_bins));
	size_t nf = features_.size(), n = train.size();
	std::vector<std::vector<int>> bins(nf, std::vector<int>(n));
	for (size_t f = 0; f < nf; f++) {
		EbmFeature &F = features_[f];
		F.shape.assign(F.categorical ? F.labels.size() : F.edges.size(), 0);
		F.counts.assign(F.shape.size(), 0);
		for (size_t i = 0; i < n; i++) {
			bins[f][i] = bin_of(F, kSpecs[f], train[i]);
			F.counts[bins[f][i]]++;
		}
	}
	intercept_ = boost(features_, bins, y, opt);
	/* Centre each shape on its training mean. */
	for (EbmFeature &F : features_) {
		double mean = 0;
		for (size_t b = 0; b < F.shape.size(); b++)
			mean += F.shape[b] * (double)F.counts[b];
		mean /= (double)n;
		for (size_t b = 0; b < F.shape.size(); b++)
			F.shape[b] = F.counts[b] ? F.shape[b] - mean : 0;
		intercept_ += mean; /* an unseen value adds nothing */
	}
	holdout_mae_ = -1;
	if (!test.empty()) {
		double err = 0;
		for (size_t i = 0; i < test.size(); i++) {
			double s = intercept_;
			for (size_t f = 0; f < nf; f++)
				s += features_[f].shape[bin_of(features_[f],
							       kSpecs[f], test[i])];
			err += std::fabs(std::max(0.0, std::expm1(s)) - test_dur[i]);
		}
		holdout_mae_ = err / (double)test.size();
	}
	return true;
}

std::vector<EbmTerm> EbmEstimator::explain(const Job &job, double epoch) const
{
	std::vector<EbmTerm> terms;
	terms.push_back({"intercept", "", intercept_});
	EbmRow r = ebm_row(job, epoch);
	for (size_t f = 0; f < features_.size(); f++) {
		int b = bin_of(features_[f], kSpecs[f], r);
		terms.push_back({features_[f].name, bin_label(features_[f], b),
				 features_[f].shape[b]});
	}
	return terms;
}

double EbmEstimator::predict(const Job &job, double epoch) const
{
	if (features_.empty())
		return 0;
	EbmRow r = ebm_row(job, epoch);
	double s = intercept_;
	for (size_t f = 0; f < features_.size(); f++)
		s += features_[f].shape[bin_of(features_[f], kSpecs[f], r)];
	return std::max(0.0, std::expm1(s));
}

} /* namespace tidal */
