/*
 * estimator_mae.cc - how well do job-duration estimates predict? Trains
 * Tidal's additive estimator (core/profiles/estimator_ebm.h) on a trace's jobs
 * before a date and prints the mean absolute error on the jobs from that
 * date on, beside a plain per-user mean, the global median, and any
 * estimate files given (job_id,priority CSVs such as Lucid's EBM/LGB).
 *
 *   estimator-mae --trace FILE --split "YYYY-MM-DD HH:MM:SS"
 *                 [--estimates NAME=FILE]... [--negative S] [--seed N]
 *                 [--out FILE]   (our estimates for the test jobs)
 *                 [--explain JOBID]
 *
 * --negative S replaces estimates < 0 in the files (Lucid's EBM rule: 1000).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/profiles/estimator_ebm.h"
#include "sim/csv.h"
#include "sim/trace.h"

using namespace tidal;
using namespace tidal::sim;

namespace {

struct Args {
	std::string trace, split, out;
	std::vector<std::pair<std::string, std::string>> files;
	double negative = NAN;
	std::uint64_t seed = 1;
	JobId explain = -1;
};

[[noreturn]] void usage()
{
	std::fprintf(stderr,
		     "usage: estimator-mae --trace FILE --split DATETIME "
		     "[--estimates NAME=FILE]... [--negative S] [--seed N] "
		     "[--out FILE] [--explain JOBID]\n");
	std::exit(2);
}

Args parse(int argc, char **argv)
{
	Args a;
	for (int i = 1; i < argc; i++) {
		std::string k = argv[i];
		if (i + 1 >= argc)
			usage();
		std::string v = argv[++i];
		if (k == "--trace")
			a.trace = v;
		else if (k == "--split")
			a.split = v;
		else if (k == "--out")
			a.out = v;
		else if (k == "--negative")
			a.negative = std::atof(v.c_str());
		else if (k == "--seed")
			a.seed = std::strtoull(v.c_str(), nullptr, 10);
		else if (k == "--explain")
			a.explain = std::atoll(v.c_str());
		else if (k == "--estimates" && v.find('=') != std::string::npos)
			a.files.emplace_back(v.substr(0, v.find('=')),
					     v.substr(v.find('=') + 1));
		else
			usage();
	}
	if (a.trace.empty() || a.split.empty())
		usage();
	return a;
}

double mae(const std::vector<Job> &test, const std::vector<double> &pred)
{
	double e = 0;
	for (size_t i = 0; i < test.size(); i++)
		e += std::fabs(pred[i] - test[i].duration);
	return e / (double)test.size();
}

void row(const char *name, double v, const char *note)
{
	std::printf("%-34s %12.1f  %s\n", name, v, note);
}

/* Mean duration per user in HISTORY; unknown users get the overall mean. */
std::vector<double> per_user_mean(const std::vector<Job> &history,
				  const std::vector<Job> &test)
{
	std::map<std::string, std::pair<double, long>> by;
	double all = 0;
	for (const Job &j : history) {
		by[j.user].first += j.duration;
		by[j.user].second++;
		all += j.duration;
	}
	all /= (double)std::max<size_t>(1, history.size());
	std::vector<double> p;
	for (const Job &j : test) {
		auto it = by.find(j.user);
		p.push_back(it == by.end() ? all
					   : it->second.first / it->second.second);
	}
	return p;
}

/* MAE of an estimates file (job_id,priority) over the test jobs it has. */
void file_row(const std::string &name, const std::string &path,
	      double negative, const std::vector<Job> &test)
{
	Csv csv = Csv::load(path);
	int c_id = csv.need("job_id"), c_p = csv.need("priority");
	std::unordered_map<JobId, double> est;
	for (size_t r = 0; r < csv.rows(); r++) {
		double v = csv.num(r, c_p);
		est[csv.integer(r, c_id)] =
			v < 0 && !std::isnan(negative) ? negative : v;
	}
	std::vector<double> p;
	std::vector<Job> covered;
	for (const Job &j : test)
		if (est.count(j.id)) {
			covered.push_back(j);
			p.push_back(est[j.id]);
		}
	char note[96];
	std::snprintf(note, sizeof note, "(%zu of %zu test jobs)",
		      covered.size(), test.size());
	row(name.c_str(), covered.empty() ? NAN : mae(covered, p), note);
}

void run(const Args &a)
{
	Trace t = load_trace(a.trace);
	double split = 0;
	if (!parse_datetime(a.split, &split))
		throw InputError("--split '" + a.split +
				 "' is not YYYY-MM-DD HH:MM:SS");
	split -= t.epoch;
	std::vector<Job> history, test;
	for (const Job &j : t.jobs)
		(j.submit < split ? history : test).push_back(j);
	if (history.empty() || test.empty())
		throw InputError("--split leaves no history or no test job");
	std::printf("trace %s: %zu history jobs, %zu test jobs\n\n",
		    a.trace.c_str(), history.size(), test.size());
	std::printf("%-34s %12s\n", "estimator", "MAE (s)");

	EbmOptions opt;
	opt.seed = a.seed;
	EbmEstimator held;
	held.fit(history, t.epoch, opt);
	char note[96];
	std::snprintf(note, sizeof note, "(%ld history jobs held back)",
		      held.holdout_jobs());
	row("tidal ebm, history held-back", held.holdout_mae(), note);

	opt.holdout = 0;
	EbmEstimator ebm;
	ebm.fit(history, t.epoch, opt);
	std::vector<double> ours;
	for (const Job &j : test)
		ours.push_back(ebm.predict(j, t.epoch));
	row("tidal ebm (trained on history)", mae(test, ours), "");
	row("per-user mean", mae(test, per_user_mean(history, test)), "");
	std::vector<double> d;
	for (const Job &j : history)
		d.push_back(j.duration);
	std::sort(d.begin(), d.end());
	row("global median", mae(test, std::vector<double>(test.size(),
							   d[d.size() / 2])),
	    "");
	for (const auto &[name, path] : a.files)
		file_row(name, path, a.negative, test);
	if (!a.out.empty()) {
		FILE *f = std::fopen(a.out.c_str(), "w");
		if (!f)
			throw InputError(a.out + ": cannot write");
		std::fprintf(f, "job_id,priority\n");
		for (size_t i = 0; i < test.size(); i++)
			std::fprintf(f, "%lld,%.0f\n", (long long)test[i].id,
				     ours[i]);
		std::fclose(f);
	}
	for (const Job &j : test)
		if (j.id == a.explain) {
			std::printf("\njob %lld (%s): predicted %.0f s, ran %.0f s\n",
				    (long long)j.id, j.job_name.c_str(),
				    ebm.predict(j, t.epoch), j.duration);
			for (const EbmTerm &term : ebm.explain(j, t.epoch))
				std::printf("  %-10s %-16s %+8.3f  x%.3f\n",
					    term.feature.c_str(), term.bin.c_str(),
					    term.value, std::exp(term.value));
		}
}

} /* namespace */

int main(int argc, char **argv)
{
	try {
		run(parse(argc, argv));
	} catch (const InputError &e) {
		std::fprintf(stderr, "estimator-mae: %s\n", e.what());
		return 1;
	}
	return 0;
}
