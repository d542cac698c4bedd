/*
 * test_estimator_ebm.cc - the additive duration estimator on hand-made
 * histories whose answer is known: a purely additive log-duration is
 * recovered feature by feature, unseen values add nothing, rare values
 * share the "other" bin, fitting is deterministic for a seed, and the
 * held-back MAE is what the predictions give.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>

#include <cstdio>
#include <unistd.h>

#include "core/profiles/estimator_ebm.h"
#include "sim/trace.h"
#include "tests/unit/unit.h"

using namespace tidal;

/* log(1 + d) = 7 + user effect + GPU effect + hour effect, every
 * combination 4 times: the additive truth the model must find. */
static const char *kUsers[] = {"alice", "bob", "carol"};
static const double kUserEff[] = {0.5, -0.25, 0.0};
static const int kGpus[] = {1, 2, 8};
static const double kGpuEff[] = {-0.5, 0.0, 1.0};
static const double kHourEff[] = {0.0, 0.3}; /* 00:xx, 01:xx */

static std::vector<Job> history()
{
	std::vector<Job> jobs;
	for (int rep = 0; rep < 4; rep++)
		for (int u = 0; u < 3; u++)
			for (int g = 0; g < 3; g++)
				for (int h = 0; h < 2; h++) {
					Job j;
					j.id = (JobId)jobs.size();
					j.user = kUsers[u];
					j.gpus = kGpus[g];
					j.cpus = 4;
					j.submit = h * 3600 + rep * 60;
					j.job_name = "train_resnet";
					j.duration = std::expm1(7 + kUserEff[u] +
								kGpuEff[g] +
								kHourEff[h]);
					jobs.push_back(j);
				}
	return jobs;
}

static const EbmFeature &feature(const EbmEstimator &e, const char *name)
{
	for (const EbmFeature &f : e.features())
		if (f.name == name)
			return f;
	fail_msg("no feature %s", name);
	return e.features().front();
}

static void test_additive_recovered(void **)
{
	std::vector<Job> jobs = history();
	EbmOptions opt;
	opt.holdout = 0;
	opt.rounds = 400;
	EbmEstimator e;
	assert_true(e.fit(jobs, 0, opt));
	/* users: labels other, alice, bob, carol (sorted) */
	const EbmFeature &u = feature(e, "user");
	assert_int_equal((int)u.labels.size(), 4);
	assert_true(std::fabs((u.shape[1] - u.shape[2]) - 0.75) < 1e-6);
	assert_true(std::fabs((u.shape[3] - u.shape[2]) - 0.25) < 1e-6);
	assert_true(u.shape[0] == 0); /* no job: nothing */
	const EbmFeature &g = feature(e, "gpus");
	assert_true(g.edges == std::vector<double>({1, 2, 8}));
	assert_true(std::fabs((g.shape[2] - g.shape[0]) - 1.5) < 1e-6);
	const EbmFeature &h = feature(e, "hour");
	assert_true(std::fabs((h.shape[1] - h.shape[0]) - 0.3) < 1e-6);
	/* centred: each shape's training mean is 0 */
	double mean = 0;
	for (size_t b = 0; b < g.shape.size(); b++)
		mean += g.shape[b] * (double)g.counts[b];
	assert_true(std::fabs(mean) < 1e-9);
	/* predictions are the truth; terms add up to the prediction */
	for (const Job &j : jobs)
		assert_true(std::fabs(std::log1p(e.predict(j, 0)) -
				      std::log1p(j.duration)) < 1e-6);
	double s = 0;
	for (const EbmTerm &t : e.explain(jobs[5], 0))
		s += t.value;
	assert_true(std::fabs(std::expm1(s) - e.predict(jobs[5], 0)) < 1e-6);
	/* an unseen user adds nothing: the average user's prediction */
	Job dave = jobs[0];
	dave.user = "dave";
	double avg_user = (u.shape[1] + u.shape[2] + u.shape[3]) / 3;
	assert_true(std::fabs(std::log1p(e.predict(dave, 0)) -
			      (std::log1p(jobs[0].duration) - u.shape[1] +
			       avg_user)) < 1e-6);
}

static void test_features(void **)
{
	assert_true(ebm_tokens("ResNet50_u003-lr.1") ==
		    std::vector<std::string>({"resnet50", "u003", "lr", "1"}));
	assert_true(ebm_tokens("__") == std::vector<std::string>{});
	Job j;
	j.submit = 4 * 86400 + 13 * 3600 + 59; /* 1970-01-05 13:00:59, Mon */
	j.job_name = "bert_squad";
	j.gpus = 2;
	j.cpus = 16;
	EbmRow r = ebm_row(j, 0);
	assert_string_equal(r.cat[1].c_str(), "Mon");
	assert_string_equal(r.cat[2].c_str(), "bert");
	assert_string_equal(r.cat[3].c_str(), "squad");
	assert_true(r.num == std::vector<double>({2, 16, 13}));
	/* EPOCH moves the clock: one day later is Tuesday */
	assert_string_equal(ebm_row(j, 86400).cat[1].c_str(), "Tue");
}

static void test_rare_values_share_other(void **)
{
	std::vector<Job> jobs = history();
	jobs[0].user = "once";
	EbmOptions opt;
	opt.holdout = 0;
	opt.min_count = 3;
	EbmEstimator e;
	e.fit(jobs, 0, opt);
	const EbmFeature &u = feature(e, "user");
	assert_int_equal((int)u.labels.size(), 4); /* other, alice, bob, carol */
	assert_int_equal((int)u.counts[0], 1);
}

static void test_deterministic_holdout(void **)
{
	std::vector<Job> jobs = history();
	EbmOptions opt;
	opt.holdout = 0.25;
	EbmEstimator a, b, c;
	a.fit(jobs, 0, opt);
	b.fit(jobs, 0, opt);
	assert_int_equal(a.holdout_jobs(), b.holdout_jobs());
	assert_true(a.holdout_mae() == b.holdout_mae());
	assert_true(a.intercept() == b.intercept());
	assert_int_equal(a.holdout_jobs() + a.train_jobs(), (long)jobs.size());
	assert_true(a.holdout_jobs() > 0 && a.holdout_mae() >= 0);
	opt.seed = 2;
	c.fit(jobs, 0, opt);
	assert_true(c.holdout_mae() != a.holdout_mae() ||
		    c.holdout_jobs() != a.holdout_jobs());
	/* with every combination seen in training, the additive truth is
	 * still found, so held-back jobs are predicted almost exactly */
	assert_true(a.holdout_mae() < 5);
	EbmEstimator none;
	assert_false(none.fit(std::vector<Job>(1, jobs[0]), 0, opt));
}

/* sacct --parsable2 history: names and CPU counts reach the features, and
 * the reader's time base puts the hour and weekday back on the clock. */
static void test_sacct_history(void **)
{
	char path[] = "/tmp/test_estimator_ebm.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *text =
		"JobID|JobName|User|Partition|Submit|Elapsed|NCPUS|AllocTRES\n"
		"7|bert_squad|ann|gpu|2026-03-02T09:15:00|01:00:00|16|"
		"cpu=16,gres/gpu=2\n"
		"7.batch|batch|||2026-03-02T09:15:00|01:00:00|16|\n"
		"8|resnet-ft|bo|gpu|2026-03-07T22:40:00|00:30:00|8|"
		"cpu=8,gres/gpu=1\n";
	assert_true(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	sim::Trace t = sim::load_trace(path);
	unlink(path);
	assert_int_equal((int)t.jobs.size(), 2);
	const Job &a = t.jobs[0], &b = t.jobs[1];
	assert_string_equal(a.job_name.c_str(), "bert_squad");
	assert_int_equal(a.cpus, 16);
	assert_int_equal(b.cpus, 8);
	assert_true(a.submit == 0 && t.epoch > 0);
	EbmRow ra = ebm_row(a, t.epoch), rb = ebm_row(b, t.epoch);
	/* 2026-03-02 is a Monday, 2026-03-07 a Saturday */
	assert_string_equal(ra.cat[1].c_str(), "Mon");
	assert_string_equal(rb.cat[1].c_str(), "Sat");
	assert_true(ra.num[2] == 9 && rb.num[2] == 22);
	assert_string_equal(rb.cat[2].c_str(), "resnet");
	assert_string_equal(rb.cat[3].c_str(), "ft");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_additive_recovered),
		cmocka_unit_test(test_features),
		cmocka_unit_test(test_rare_values_share_other),
		cmocka_unit_test(test_deterministic_holdout),
		cmocka_unit_test(test_sacct_history),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
