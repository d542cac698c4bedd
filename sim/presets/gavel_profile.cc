/*
 * gavel_profile.cc - Shockwave's batch-size schedules (utils.py's
 * get_accordion_bs_pattern / get_gns_bs_pattern, transcribed from
 * MODEL.md as data) and the run-time batch-size changes.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "sim/presets/gavel_profile.h"

#include <cmath>
#include <map>

namespace tidal::sim {

double gavel_dataset_size(const std::string &model)
{
	static const std::map<std::string, double> d = {
		{"ResNet-18", 50000}, {"ResNet-50", 100000},
		{"Transformer", 10000}, {"LM", 59675},
		{"Recommendation", 117907}, {"A3C", 4}, {"CycleGAN", 6287},
	};
	auto it = d.find(model);
	return it == d.end() ? 0 : it->second;
}

int gavel_bs_cap(const std::string &model)
{
	static const std::map<std::string, int> cap = {
		{"ResNet-18", 256}, {"ResNet-50", 128}, {"Transformer", 128},
		{"LM", 80}, {"Recommendation", 8192},
	};
	auto it = cap.find(model);
	return it == cap.end() ? 0 : it->second;
}

/* Accordion's target when leaving the critical regime (no Transformer). */
static int accordion_max(const std::string &model)
{
	return model == "Transformer" ? 0 : gavel_bs_cap(model);
}

static int bs_min(const std::string &model)
{
	static const std::map<std::string, int> m = {
		{"ResNet-18", 16}, {"ResNet-50", 16}, {"Transformer", 16},
		{"LM", 5}, {"Recommendation", 512},
	};
	auto it = m.find(model);
	return it == m.end() ? 0 : it->second;
}

/* --- GNS: rows tested in order, first match wins (MODEL.md 1.5) --- */

struct GnsSeg {
	int a, b; /* [a, b); b = -1 means E */
	int mult;
	bool star; /* multiply, then stop at the last epoch */
};
struct GnsRow {
	const char *model;
	int bs0, sf, threshold;
	std::vector<GnsSeg> segs;
};

static const std::vector<GnsRow> &gns_rows()
{
	static const std::vector<GnsRow> rows = {
		{"ResNet-18", 16, 1, 31, {{31, 41, 2, true}, {41, 51, 4, false}, {51, 71, 8, false}, {71, -1, 16, false}}},
		{"ResNet-18", 32, 1, 21, {{21, 31, 2, true}, {31, 51, 4, false}, {51, -1, 8, false}}},
		{"ResNet-18", 64, 1, 11, {{11, 31, 2, true}, {31, -1, 4, false}}},
		{"ResNet-18", 128, 1, 11, {{11, -1, 2, true}}},
		{"ResNet-18", 16, 2, 21, {{21, 31, 2, true}, {31, 91, 4, false}, {91, 111, 8, false}, {111, -1, 16, false}}},
		{"ResNet-18", 32, 2, 11, {{11, 21, 2, true}, {21, 41, 4, false}, {41, -1, 8, false}}},
		{"ResNet-18", 64, 2, 21, {{21, 41, 2, true}, {41, -1, 4, false}}},
		{"ResNet-18", 128, 2, 41, {{41, -1, 2, true}}},
		{"ResNet-18", 16, 4, 11, {{11, 21, 2, true}, {21, 81, 4, false}, {81, 91, 8, false}, {91, -1, 16, false}}},
		{"ResNet-18", 32, 4, 21, {{21, 31, 2, true}, {31, 61, 4, false}, {61, -1, 8, false}}},
		{"ResNet-18", 64, 4, 11, {{11, 61, 2, true}, {61, -1, 4, false}}},
		{"ResNet-18", 128, 4, 11, {{11, -1, 2, true}}},
		{"ResNet-50", 64, 1, 101, {{101, -1, 2, true}}},
		{"ResNet-50", 32, 2, 101, {{101, 111, 2, true}, {111, -1, 4, false}}},
		{"ResNet-50", 64, 2, 81, {{81, -1, 2, true}}},
		{"ResNet-50", 32, 4, 131, {{131, 221, 2, true}, {221, -1, 4, false}}},
		{"ResNet-50", 64, 4, 191, {{191, -1, 2, true}}},
		{"LM", 5, 1, 31, {{31, 41, 2, true}, {41, 61, 4, false}, {61, 71, 8, false}, {71, -1, 16, false}}},
		{"LM", 10, 1, 11, {{11, 21, 2, true}, {21, 41, 4, false}, {41, -1, 8, false}}},
		{"LM", 20, 1, 11, {{11, 41, 2, true}, {41, -1, 4, false}}},
		{"LM", 40, 1, 11, {{11, -1, 2, true}}},
		{"LM", 5, 2, 31, {{31, 51, 2, true}, {51, 61, 4, false}, {61, 71, 8, false}, {71, -1, 16, false}}},
		{"LM", 10, 2, 11, {{11, 31, 2, true}, {31, 41, 4, false}, {41, -1, 8, false}}},
		{"LM", 20, 2, 31, {{31, 41, 2, true}, {41, -1, 4, false}}},
		{"LM", 40, 2, 11, {{11, -1, 2, true}}},
		{"LM", 5, 4, 11, {{11, 31, 2, true}, {31, 71, 4, false}, {71, 91, 8, false}, {91, -1, 16, false}}},
		{"LM", 10, 4, 11, {{11, 31, 2, true}, {31, 61, 4, false}, {61, -1, 8, false}}},
		{"LM", 20, 4, 11, {{11, 61, 2, true}, {61, -1, 4, false}}},
		{"LM", 40, 4, 61, {{61, -1, 2, true}}},
		{"Recommendation", 512, 1, 21, {{21, 41, 2, true}, {41, 71, 4, false}, {71, 91, 8, false}, {91, -1, 16, false}}},
		{"Recommendation", 1024, 1, 21, {{21, 51, 2, true}, {51, 91, 4, false}, {91, -1, 8, false}}},
		{"Recommendation", 2048, 1, 21, {{21, 41, 2, true}, {41, -1, 4, false}}},
		{"Recommendation", 4096, 1, 41, {{41, -1, 2, true}}},
	};
	return rows;
}

std::vector<int> gavel_gns_pattern(const std::string &model, int bs0, int E,
				   int sf)
{
	std::vector<int> bs(E > 0 ? E : 0, bs0);
	if (model == "Transformer" || model == "CycleGAN" || model == "A3C")
		return bs;
	const GnsRow *row = nullptr;
	for (const GnsRow &r : gns_rows())
		if (model == r.model && bs0 == r.bs0 && sf == r.sf) {
			row = &r;
			break;
		}
	if (row && E > row->threshold) {
		for (const GnsSeg &s : row->segs) {
			int b = s.b < 0 ? E : s.b;
			bool stop = false;
			for (int e = s.a; e < b && !stop; e++) {
				if (s.star) {
					bs[e] = bs0 * s.mult;
					stop = e + 1 >= E;
				} else {
					stop = e + 1 >= E;
					if (!stop)
						bs[e] = bs0 * s.mult;
				}
			}
			if (stop)
				break;
		}
	}
	int cap = gavel_bs_cap(model);
	for (int &v : bs)
		if (cap > 0 && v > cap)
			v = cap;
	return bs;
}

/* The critical regime of Accordion, per model (MODEL.md 1.4 and 3.5):
 * the profile generator and the run-time trigger differ for
 * Recommendation (the trigger knows only the first range) and
 * ResNet-50 (the generator stops at epoch 600). */
static bool accordion_critical(const std::string &model, int bs0, int e,
			       bool profile)
{
	if (model == "ResNet-18")
		return e < (bs0 == 256 ? 20 : 10) || (e >= 150 && e < 160) ||
		       (e >= 250 && e < 260);
	if (model == "ResNet-50")
		return e % 30 < 10;
	if (model == "LM")
		return e < 10;
	if (model == "Recommendation") {
		int r = bs0 <= 1024 ? 30 : bs0 == 2048 ? 40 : 10;
		return e < r ||
		       (profile && ((e >= 60 && e < 70) || (e >= 80 && e < 90)));
	}
	return true;
}

std::vector<int> gavel_accordion_pattern(const std::string &model, int bs0,
					 int E)
{
	std::vector<int> bs(E > 0 ? E : 0, bs0);
	int mx = accordion_max(model);
	if (mx == 0)
		return bs;
	for (int e = 0; e < E; e++) {
		bool critical = accordion_critical(model, bs0, e, true);
		if (model == "ResNet-50" && e >= 600)
			critical = false;
		if (!critical && e > 0.3 * E)
			bs[e] = mx;
	}
	return bs;
}

static double ceil_div(double a, double b) { return std::ceil(a / b); }

bool gavel_make_profile(const GavelThroughputs &tp, const std::string &model,
			int bs0, int sf, BsMode mode, double total_steps,
			GavelProfile *out, std::string *err)
{
	double D = gavel_dataset_size(model);
	if (D <= 0) {
		*err = "unknown model '" + model + "' (no dataset size)";
		return false;
	}
	int E = (int)ceil_div(total_steps, std::ceil(D / bs0));
	out->epochs = E;
	if (mode == BsMode::Gns)
		out->bs_every_epoch = gavel_gns_pattern(model, bs0, E, sf);
	else if (mode == BsMode::Accordion)
		out->bs_every_epoch = gavel_accordion_pattern(model, bs0, E);
	else
		out->bs_every_epoch.assign(E, bs0);
	out->duration_every_epoch.clear();
	out->duration = 0;
	for (int b : out->bs_every_epoch) {
		auto t = tp.isolated("v100", gavel_job_type(model, b), sf);
		if (!t || *t <= 0) {
			*err = "no v100 throughput for ('" +
			       gavel_job_type(model, b) + "', " +
			       std::to_string(sf) + ")";
			return false;
		}
		double d = (D / b) / *t;
		out->duration_every_epoch.push_back(d);
		out->duration += d;
	}
	return true;
}

void gavel_bs_trigger(GavelBsJob &j)
{
	double D = gavel_dataset_size(j.model);
	int cap = gavel_bs_cap(j.model);
	int e = (int)ceil_div(j.steps_run, std::ceil(D / j.bs));
	if (j.mode == BsMode::Gns) {
		int E = std::max(760, e + 2);
		std::vector<int> p = gavel_gns_pattern(j.model, j.bs0, E, j.sf);
		if ((p[e + 1] > j.bs || p[e] > j.bs) && j.bs != cap)
			j.big = true;
	} else if (j.mode == BsMode::Accordion && j.model != "Transformer") {
		bool crit = accordion_critical(j.model, j.bs0, e, false);
		if (j.bs == j.bs0 && !crit && j.bs != cap)
			j.big = true;
		if (j.bs != j.bs0 && crit && j.bs != bs_min(j.model))
			j.small = true;
	}
}

bool gavel_bs_apply(GavelBsJob &j, const GavelThroughputs &tp)
{
	if (!j.big && !j.small)
		return false;
	bool big = j.big;
	j.big = j.small = false;
	if (j.bs0 == gavel_bs_cap(j.model))
		return false;
	int nb = j.mode == BsMode::Gns ? 2 * j.bs
				       : (big ? accordion_max(j.model) : j.bs0);
	auto t = tp.isolated("v100", gavel_job_type(j.model, nb), j.sf);
	if (!t)
		return false; /* the anchor reverts an unmeasured size */
	double D = gavel_dataset_size(j.model);
	double spe_old = std::ceil(D / j.bs), spe_new = std::ceil(D / nb);
	double old_epochs = ceil_div(j.total_steps, spe_old);
	double total = std::ceil(j.total_steps * j.bs / nb);
	if (ceil_div(total, spe_new) != old_epochs)
		total = spe_new * old_epochs;
	j.steps_run = ceil_div(j.steps_run, spe_old) * spe_new;
	j.total_steps = total;
	j.bs = nb;
	j.tput = *t;
	return true;
}

} /* namespace tidal::sim */
