/*
 * report.cc - tables, JSON, CSV and SVG for tidal-sim.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "sim/report.h"

#include <json-c/json.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

namespace tidal::sim {

static std::string num(double v, int prec = 3)
{
	std::ostringstream s;
	s << std::fixed << std::setprecision(prec) << v;
	return s.str();
}

static std::string opt(const std::optional<double> &v, int prec = 3)
{
	return v ? num(*v, prec) : "N/A";
}

void write_table(std::ostream &out, const std::vector<Summary> &ss)
{
	std::vector<std::pair<std::string, std::vector<std::string>>> rows = {
		{"policy", {}},		{"jobs", {}},	      {"avg JCT s", {}},
		{"median JCT s", {}},	{"p99 JCT s", {}},    {"makespan s", {}},
		{"avg queue s", {}},	{"p99.9 queue s", {}},
		{"deadline ratio", {}}, {"worst rho", {}},    {"unfair frac", {}},
		{"GPU util", {}},	{"rejected", {}},     {"cpu s", {}},
	};
	for (const Summary &s : ss) {
		std::vector<std::string> v = {
			s.policy,
			std::to_string(s.jobs),
			num(s.avg_jct),
			num(s.median_jct),
			num(s.p99_jct),
			num(s.makespan),
			num(s.avg_queue),
			num(s.p999_queue),
			opt(s.deadline_ratio, 4),
			opt(s.worst_rho),
			opt(s.unfair_fraction, 4),
			num(s.utilization, 4),
			std::to_string(s.rejected),
			num(s.cpu_seconds, 3),
		};
		for (size_t i = 0; i < rows.size(); i++)
			rows[i].second.push_back(v[i]);
	}
	size_t w0 = 0;
	for (const auto &r : rows)
		w0 = std::max(w0, r.first.size());
	std::vector<size_t> w(ss.size(), 0);
	for (const auto &r : rows)
		for (size_t c = 0; c < r.second.size(); c++)
			w[c] = std::max(w[c], r.second[c].size());
	for (size_t i = 0; i < rows.size(); i++) {
		out << std::left << std::setw((int)w0) << rows[i].first;
		for (size_t c = 0; c < rows[i].second.size(); c++)
			out << "  " << std::right << std::setw((int)w[c])
			    << rows[i].second[c];
		out << "\n";
		if (i == 0) {
			out << std::string(w0, '-');
			for (size_t c = 0; c < w.size(); c++)
				out << "  " << std::string(w[c], '-');
			out << "\n";
		}
	}
}

static std::string relative(double live, double sim)
{
	if (sim == 0)
		return live == 0 ? "+0.00%" : "N/A";
	char b[32];
	std::snprintf(b, sizeof b, "%+.2f%%", 100 * (live - sim) / sim);
	return b;
}

static std::string absolute(const std::optional<double> &live,
			    const std::optional<double> &sim)
{
	if (!live || !sim)
		return "N/A";
	char b[32];
	std::snprintf(b, sizeof b, "%+.4f", *live - *sim);
	return b;
}

void write_comparison(std::ostream &out, const Summary &live,
		      const Summary &sim)
{
	struct Row {
		std::string name, a, b, d;
	};
	std::vector<Row> rows = {
		{"metric", "live", "tidal-sim", "live - sim"},
		{"jobs", std::to_string(live.jobs), std::to_string(sim.jobs),
		 std::to_string(live.jobs - sim.jobs)},
		{"avg JCT s", num(live.avg_jct), num(sim.avg_jct),
		 relative(live.avg_jct, sim.avg_jct)},
		{"median JCT s", num(live.median_jct), num(sim.median_jct),
		 relative(live.median_jct, sim.median_jct)},
		{"p99 JCT s", num(live.p99_jct), num(sim.p99_jct),
		 relative(live.p99_jct, sim.p99_jct)},
		{"makespan s", num(live.makespan), num(sim.makespan),
		 relative(live.makespan, sim.makespan)},
		{"avg queue s", num(live.avg_queue), num(sim.avg_queue),
		 relative(live.avg_queue, sim.avg_queue)},
		{"deadline ratio", opt(live.deadline_ratio, 4),
		 opt(sim.deadline_ratio, 4),
		 absolute(live.deadline_ratio, sim.deadline_ratio)},
		{"GPU util", num(live.utilization, 4), num(sim.utilization, 4),
		 absolute(live.utilization, sim.utilization)},
		{"rejected", std::to_string(live.rejected),
		 std::to_string(sim.rejected),
		 std::to_string(live.rejected - sim.rejected)},
	};
	size_t w[4] = {0, 0, 0, 0};
	for (const Row &r : rows) {
		w[0] = std::max(w[0], r.name.size());
		w[1] = std::max(w[1], r.a.size());
		w[2] = std::max(w[2], r.b.size());
		w[3] = std::max(w[3], r.d.size());
	}
	out << "live: " << live.policy << "   tidal-sim: " << sim.policy << "\n";
	for (size_t i = 0; i < rows.size(); i++) {
		const Row &r = rows[i];
		out << std::left << std::setw((int)w[0]) << r.name << std::right
		    << "  " << std::setw((int)w[1]) << r.a << "  "
		    << std::setw((int)w[2]) << r.b << "  "
		    << std::setw((int)w[3]) << r.d << "\n";
		if (i == 0)
			out << std::string(w[0], '-') << "  "
			    << std::string(w[1], '-') << "  "
			    << std::string(w[2], '-') << "  "
			    << std::string(w[3], '-') << "\n";
	}
}

static json_object *jnum_or_null(const std::optional<double> &v)
{
	return v ? json_object_new_double(*v) : nullptr;
}

std::string summaries_json(const std::vector<Summary> &ss)
{
	json_object *root = json_object_new_object();
	json_object *pol = json_object_new_object();
	for (const Summary &s : ss) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "jobs", json_object_new_int64(s.jobs));
		json_object_object_add(o, "avg_jct", json_object_new_double(s.avg_jct));
		json_object_object_add(o, "median_jct",
				       json_object_new_double(s.median_jct));
		json_object_object_add(o, "p99_jct", json_object_new_double(s.p99_jct));
		json_object_object_add(o, "makespan",
				       json_object_new_double(s.makespan));
		json_object_object_add(o, "avg_queue",
				       json_object_new_double(s.avg_queue));
		json_object_object_add(o, "p999_queue",
				       json_object_new_double(s.p999_queue));
		json_object_object_add(o, "deadline_ratio",
				       jnum_or_null(s.deadline_ratio));
		json_object_object_add(o, "worst_rho", jnum_or_null(s.worst_rho));
		json_object_object_add(o, "unfair_fraction",
				       jnum_or_null(s.unfair_fraction));
		json_object_object_add(o, "utilization",
				       json_object_new_double(s.utilization));
		json_object_object_add(o, "cpu_seconds",
				       json_object_new_double(s.cpu_seconds));
		json_object_object_add(o, "rejected",
				       json_object_new_int64(s.rejected));
		json_object_object_add(pol, s.policy.c_str(), o);
	}
	json_object_object_add(root, "policies", pol);
	std::string out = json_object_to_json_string_ext(
		root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	json_object_put(root);
	return out + "\n";
}

static std::string csv_field(const std::string &s)
{
	if (s.find_first_of(",\"\n") == std::string::npos)
		return s;
	std::string q = "\"";
	for (char c : s)
		q += c == '"' ? std::string("\"\"") : std::string(1, c);
	return q + "\"";
}

void write_jobs_csv(std::ostream &out, const std::vector<RunResult> &runs)
{
	out << "policy,job_id,name,gpus,submit,start,end,jct,queue,"
	       "preemptions,deadline,rejected\n";
	out << std::setprecision(12);
	for (const RunResult &r : runs)
		for (const JobResult &j : r.jobs) {
			out << csv_field(r.policy) << "," << j.id << ","
			    << csv_field(j.name) << "," << j.gpus << ","
			    << j.submit << ",";
			if (j.rejected)
				out << ",,,";
			else
				out << j.start << "," << j.end << "," << j.jct
				    << ",";
			if (!j.rejected)
				out << j.queue;
			out << "," << j.preemptions << ",";
			if (j.deadline != kNoDeadline)
				out << j.deadline;
			out << "," << (j.rejected ? 1 : 0) << "\n";
		}
}

void write_timeseries_csv(std::ostream &out, const std::vector<RunResult> &runs)
{
	out << "policy,time,busy_gpus,total_gpus\n";
	out << std::setprecision(12);
	for (const RunResult &r : runs)
		for (const UtilSample &u : r.util)
			out << csv_field(r.policy) << "," << u.t << "," << u.busy
			    << "," << r.total_gpus << "\n";
}

/* --- SVG --- */

static const char *kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
				"#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
				"#bcbd22", "#17becf"};

static std::string esc(const std::string &s)
{
	std::string o;
	for (char c : s) {
		if (c == '<')
			o += "&lt;";
		else if (c == '>')
			o += "&gt;";
		else if (c == '&')
			o += "&amp;";
		else
			o += c;
	}
	return o;
}

/* "Nice" tick values covering [0, max]. */
static std::vector<double> ticks(double max)
{
	if (max <= 0)
		return {0};
	double step = std::pow(10, std::floor(std::log10(max)));
	if (max / step < 2.5)
		step /= 5;
	else if (max / step < 5)
		step /= 2;
	std::vector<double> t;
	for (double v = 0; v <= max * 1.0001; v += step)
		t.push_back(v);
	return t;
}

static std::string short_num(double v)
{
	char buf[32];
	if (v >= 1e6)
		std::snprintf(buf, sizeof buf, "%gM", v / 1e6);
	else if (v >= 1e3)
		std::snprintf(buf, sizeof buf, "%gk", v / 1e3);
	else
		std::snprintf(buf, sizeof buf, "%g", v);
	return buf;
}

struct Panel {
	double x, y, w, h;
	double xmax, ymax;
	double px(double v) const { return x + (xmax > 0 ? v / xmax : 0) * w; }
	double py(double v) const { return y + h - (ymax > 0 ? v / ymax : 0) * h; }
};

static void axes(std::ostream &o, const Panel &p, const std::string &xl,
		 const std::string &yl, const std::string &title, bool percent)
{
	o << "<rect x='" << p.x << "' y='" << p.y << "' width='" << p.w
	  << "' height='" << p.h << "' fill='none' stroke='#333'/>\n";
	for (double t : ticks(p.xmax)) {
		o << "<line x1='" << p.px(t) << "' y1='" << p.y + p.h << "' x2='"
		  << p.px(t) << "' y2='" << p.y + p.h + 5 << "' stroke='#333'/>"
		  << "<text x='" << p.px(t) << "' y='" << p.y + p.h + 18
		  << "' text-anchor='middle'>" << short_num(t) << "</text>\n";
	}
	for (double t : ticks(p.ymax)) {
		o << "<line x1='" << p.x - 5 << "' y1='" << p.py(t) << "' x2='"
		  << p.x + p.w << "' y2='" << p.py(t)
		  << "' stroke='#ddd'/><text x='" << p.x - 8 << "' y='"
		  << p.py(t) + 4 << "' text-anchor='end'>"
		  << (percent ? short_num(t * 100) + "%" : short_num(t))
		  << "</text>\n";
	}
	o << "<text x='" << p.x + p.w / 2 << "' y='" << p.y + p.h + 38
	  << "' text-anchor='middle'>" << esc(xl) << "</text>\n"
	  << "<text transform='translate(" << p.x - 48 << "," << p.y + p.h / 2
	  << ") rotate(-90)' text-anchor='middle'>" << esc(yl) << "</text>\n"
	  << "<text x='" << p.x + p.w / 2 << "' y='" << p.y - 10
	  << "' text-anchor='middle' font-weight='bold'>" << esc(title)
	  << "</text>\n";
}

void write_svg(std::ostream &o, const std::vector<RunResult> &runs,
	       const std::string &title)
{
	const double W = 1100, H = 490;
	o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W
	  << "' height='" << H << "' font-family='sans-serif' font-size='12'>\n"
	  << "<rect width='100%' height='100%' fill='white'/>\n"
	  << "<text x='" << W / 2 << "' y='22' text-anchor='middle' "
	     "font-size='15' font-weight='bold'>"
	  << esc(title) << "</text>\n";

	double jmax = 0, tmax = 0;
	for (const RunResult &r : runs) {
		for (const JobResult &j : r.jobs)
			if (!j.rejected)
				jmax = std::max(jmax, j.jct);
		if (!r.util.empty())
			tmax = std::max(tmax, r.util.back().t);
	}
	Panel cdf{80, 60, 400, 320, jmax, 1};
	Panel ut{620, 60, 400, 320, tmax, 1};
	axes(o, cdf, "job completion time (s)", "fraction of jobs",
	     "JCT CDF", true);
	axes(o, ut, "time (s)", "GPUs busy", "GPU utilisation", true);

	for (size_t k = 0; k < runs.size(); k++) {
		const RunResult &r = runs[k];
		const char *col = kColors[k % 10];
		std::vector<double> jct;
		for (const JobResult &j : r.jobs)
			if (!j.rejected)
				jct.push_back(j.jct);
		std::sort(jct.begin(), jct.end());
		/* At most ~400 points a curve keeps the file small. */
		size_t stride = std::max<size_t>(1, jct.size() / 400);
		o << "<polyline fill='none' stroke='" << col
		  << "' stroke-width='1.8' points='";
		for (size_t i = 0; i < jct.size(); i += stride)
			o << cdf.px(jct[i]) << ","
			  << cdf.py((double)(i + 1) / (double)jct.size()) << " ";
		if (!jct.empty())
			o << cdf.px(jct.back()) << "," << cdf.py(1);
		o << "'/>\n";

		size_t us = std::max<size_t>(1, r.util.size() / 800);
		o << "<polyline fill='none' stroke='" << col
		  << "' stroke-width='1.2' points='";
		double prev = 0;
		for (size_t i = 0; i < r.util.size(); i += us) {
			double f = r.total_gpus
					   ? (double)r.util[i].busy / r.total_gpus
					   : 0;
			o << ut.px(r.util[i].t) << "," << ut.py(prev) << " "
			  << ut.px(r.util[i].t) << "," << ut.py(f) << " ";
			prev = f;
		}
		o << "'/>\n";
		double ly = 448 + 18 * (double)(k / 6);
		double lx = 80 + 160 * (double)(k % 6);
		o << "<rect x='" << lx << "' y='" << ly - 10
		  << "' width='14' height='14' fill='" << col << "'/>"
		  << "<text x='" << lx + 20 << "' y='" << ly + 2 << "'>"
		  << esc(r.policy) << "</text>\n";
	}
	o << "</svg>\n";
}

} /* namespace tidal::sim */
