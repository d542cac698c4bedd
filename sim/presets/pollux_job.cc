/*
 * pollux_job.cc - job dynamics and the profile loader of the Pollux
 * preset (simulator.py Job, applications.py APPLICATIONS).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "sim/presets/pollux_job.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "sim/csv.h"

namespace tidal::sim {

double round_half_even(double x)
{
	double r = std::round(x); /* halves away from zero */
	if (std::fabs(x - std::trunc(x)) == 0.5)
		r = 2.0 * std::round(x / 2.0);
	return r;
}

int PolluxJob::replicas() const
{
	int r = 0;
	for (int g : placement)
		r += g;
	return r;
}

static int ceil_eps(double v)
{
	return (int)std::ceil(v - 1e-8);
}

/* A fixed target batch B: local = ceil(B / r), split into accumulation
 * steps no larger than max_local_bsz; a single replica above the initial
 * batch always accumulates.  Finally the batch never exceeds the largest
 * validated one. */
void PolluxJob::update_local_bsz()
{
	int nodes = 0, reps = 0;
	for (int g : placement)
		if (g) {
			nodes++;
			reps += g;
		}
	long batch = target_batch;
	if (batch <= 0 && perf) {
		GoodputChoice c = goodput_fn().optimize(
			nodes, reps, app->max_batch_size, app->min_local_bsz,
			app->max_local_bsz, true);
		atomic_bsz = c.atomic_bsz;
		accum_steps = c.accum_steps;
	} else {
		if (batch <= 0)
			batch = std::max<long>(app->init_batch_size,
					       (long)app->min_local_bsz * reps);
		int local = ceil_eps((double)batch / reps);
		accum_steps = ceil_eps((double)local / app->max_local_bsz) - 1;
		if (reps == 1 && batch > app->init_batch_size)
			accum_steps = std::max(1, accum_steps);
		atomic_bsz = ceil_eps((double)local / (accum_steps + 1));
	}
	int count = reps * (accum_steps + 1);
	atomic_bsz = std::min(atomic_bsz,
			      (int)((double)app->max_batch_size / count));
}

int PolluxJob::max_profiled_replicas() const
{
	int m = 0;
	for (const PerfSample &s : samples)
		m = std::max(m, s.replicas);
	return m;
}

GoodputFunction PolluxJob::goodput_fn() const
{
	return GoodputFunction(*perf, grad, app->init_batch_size);
}

std::optional<SpeedupFunction> PolluxJob::speedup_fn() const
{
	if (!perf)
		return std::nullopt;
	return SpeedupFunction(goodput_fn(), app->max_batch_size,
			       app->min_local_bsz, app->max_local_bsz, true);
}

/* update_params: keep the latest gradient statistics; refit the
 * throughput model whenever a new configuration is seen. */
void PolluxJob::observe(int nodes, int reps, StepTime st, GradStats g)
{
	grad = {g.sqr, g.var};
	if (!seen_.insert({nodes, reps, atomic_bsz}).second)
		return;
	samples.push_back({nodes, reps, atomic_bsz, st.step - st.sync, st.step});
	perf = fit_perf_params(samples);
	fits++;
}

void PolluxJob::reallocate(const std::vector<int> &p)
{
	if (p.empty()) {
		placement.clear();
		atomic_bsz = 0;
		return;
	}
	placement = p;
	update_local_bsz();
	rescale_time = 30;
	restarts++;
}

/* One pass per epoch crossing: the goodput is constant inside an epoch
 * for a given configuration, so the crossing second is computed, never
 * stepped to. */
void PolluxJob::step(double now, double seconds, double interference)
{
	if (placement.empty())
		return;
	int gpus = replicas();
	double t = now;
	double delay = std::min(rescale_time, seconds);
	t += delay;
	attained += delay * gpus;
	rescale_time -= delay;
	seconds -= delay;
	while (seconds > 0 && !done()) {
		long batch = (long)gpus * atomic_bsz * (accum_steps + 1);
		double scale = (double)batch / app->init_batch_size;
		StepTime st = app->throughput(placement, atomic_bsz);
		double accum_time = st.step - st.sync;
		GradStats g = app->grad_stats(batch, epoch);
		double gain = (g.var + g.sqr) / (g.var / scale + g.sqr);
		if (learn) {
			int nodes = 0;
			for (int v : placement)
				nodes += v > 0;
			observe(nodes, gpus, st, g);
		}
		double total_time = st.step + accum_time * accum_steps;
		double goodput = gain / total_time * (1.0 - interference);
		double next = app->progress(epoch + 1);
		if (progress + goodput * seconds < next) {
			progress += goodput * seconds;
			t += seconds;
			attained += seconds * gpus;
			seconds = 0;
		} else {
			epoch++;
			double delta =
				round_half_even((next - progress) / goodput);
			if (epoch > app->completion_epoch())
				completion = t + delta;
			progress = next;
			t += delta;
			attained += delta * gpus;
			seconds -= delta;
		}
		update_local_bsz();
	}
}

/* --- loading ------------------------------------------------------- */

/* applications.APPLICATIONS: max_epochs per application, yolov3's
 * max_local_bsz; everything else comes from the tables. */
static void apply_constants(PolluxApp &a)
{
	static const std::map<std::string, int> epochs = {
		{"bert", 2},	     {"cifar10", 100},	{"ncf", 10},
		{"imagenet", 90},    {"deepspeech2", 80}, {"yolov3", 50},
	};
	auto it = epochs.find(a.name);
	if (it != epochs.end())
		a.max_epochs = it->second;
	if (a.name == "yolov3")
		a.max_local_bsz = 8;
}

static StepTime step_time(const Csv &c, size_t r, int cs, int cy)
{
	return {c.num(r, cs), c.num(r, cy)};
}

static void load_app(const std::filesystem::path &dir, PolluxApp &a)
{
	Csv pl = Csv::load((dir / "placements.csv").string());
	int p = pl.need("placement"), lb = pl.need("local_bsz"),
	    st = pl.need("step_time"), sy = pl.need("sync_time");
	for (size_t r = 0; r < pl.rows(); r++) {
		PolluxApp::PlacementRow row;
		row.placement = pl.integer(r, p);
		std::string digits = std::to_string(row.placement);
		if (row.placement <= 0 ||
		    digits.find_first_of("05-9") != std::string::npos)
			pl.fail(r, "placement '" + pl.str(r, p) +
					   "' is not digits 1-4 (GPUs per node)");
		row.local_bsz = (int)pl.integer(r, lb);
		row.t = step_time(pl, r, st, sy);
		a.placements.push_back(row);
	}
	Csv sc = Csv::load((dir / "scalability.csv").string());
	int n = sc.need("num_nodes"), rp = sc.need("num_replicas"),
	    slb = sc.need("local_bsz"), sst = sc.need("step_time"),
	    ssy = sc.need("sync_time");
	for (size_t r = 0; r < sc.rows(); r++)
		a.scalability.push_back({(int)sc.integer(r, n),
					 (int)sc.integer(r, rp),
					 (int)sc.integer(r, slb),
					 step_time(sc, r, sst, ssy)});
	for (const auto &e : std::filesystem::directory_iterator(dir)) {
		std::string f = e.path().filename().string();
		if (f.rfind("validation-", 0) != 0 || e.path().extension() != ".csv")
			continue;
		std::string b = f.substr(11, f.size() - 15);
		if (b.empty() || b.find_first_not_of("0123456789") != b.npos)
			input_error(e.path().string(), 0,
				    "expected validation-<batch size>.csv");
		Csv v = Csv::load(e.path().string());
		int pr = v.need("progress"), it = v.need("iteration"),
		    m = v.need("metric"), gs = v.need("grad_sqr"),
		    gv = v.need("grad_var");
		auto &rows = a.validation[std::stoi(b)];
		for (size_t r = 0; r < v.rows(); r++)
			rows.push_back({v.num(r, pr), v.num(r, it), v.num(r, m),
					{v.num(r, gs), v.num(r, gv)}});
	}
	apply_constants(a);
	try {
		a.finish();
	} catch (const ProfileError &e) {
		input_error(dir.string(), 0, e.what());
	}
}

std::map<std::string, PolluxApp> load_pollux_apps(const std::string &dir)
{
	namespace fs = std::filesystem;
	std::map<std::string, PolluxApp> apps;
	std::error_code ec;
	if (!fs::is_directory(dir, ec))
		input_error(dir, 0,
			    "--profiles must be the Pollux traces directory "
			    "(one folder per application)");
	std::vector<fs::path> dirs;
	for (const auto &e : fs::directory_iterator(dir))
		if (e.is_directory() && fs::exists(e.path() / "placements.csv"))
			dirs.push_back(e.path());
	std::sort(dirs.begin(), dirs.end());
	for (const fs::path &d : dirs) {
		PolluxApp &a = apps[d.filename().string()];
		a.name = d.filename().string();
		load_app(d, a);
	}
	if (apps.empty())
		input_error(dir, 0, "no application folder with placements.csv");
	return apps;
}

} /* namespace tidal::sim */
