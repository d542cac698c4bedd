/*
 * metrics.cc - see metrics.h.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/obs/metrics.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace tidal::obs {

namespace {

bool name_ok(const std::string &n, bool metric)
{
	if (n.empty())
		return false;
	for (size_t i = 0; i < n.size(); i++) {
		char c = n[i];
		bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     c == '_' || (metric && c == ':');
		if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
			return false;
	}
	/* Names starting "__" are reserved for Prometheus' own labels. */
	return metric || n.rfind("__", 0) != 0;
}

bool ends_with(const std::string &s, const std::string &tail)
{
	return s.size() >= tail.size() &&
	       s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

const char *type_name(Metric t)
{
	switch (t) {
	case Metric::Counter:
		return "counter";
	case Metric::Gauge:
		return "gauge";
	case Metric::Histogram:
		return "histogram";
	}
	return "untyped";
}

/* HELP text: backslash and newline escaped. */
std::string help_text(const std::string &s)
{
	std::string o;
	for (char c : s)
		if (c == '\\')
			o += "\\\\";
		else if (c == '\n')
			o += "\\n";
		else
			o += c;
	return o;
}

} /* namespace */

std::string metric_number(double v)
{
	if (std::isnan(v))
		return "NaN";
	if (std::isinf(v))
		return v > 0 ? "+Inf" : "-Inf";
	char buf[64];
	auto r = std::to_chars(buf, buf + sizeof(buf), v);
	return std::string(buf, r.ptr);
}

std::vector<double> Registry::default_buckets()
{
	return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
		1,     2.5,  5,     10,   30,  60};
}

void Registry::declare(const std::string &name, Metric type,
		       const std::string &help,
		       const std::vector<std::string> &labels,
		       const std::vector<double> &buckets)
{
	if (!name_ok(name, true))
		throw std::logic_error("metric name '" + name +
				       "' breaks [a-zA-Z_:][a-zA-Z0-9_:]*");
	if (type == Metric::Counter && !ends_with(name, "_total"))
		throw std::logic_error("counter '" + name +
				       "' must end in _total");
	for (const std::string &l : labels)
		if (!name_ok(l, false) || (type == Metric::Histogram && l == "le"))
			throw std::logic_error("metric " + name +
					       ": bad label name '" + l + "'");
	std::vector<double> b = buckets;
	if (type == Metric::Histogram && b.empty())
		b = default_buckets();
	for (size_t i = 1; i < b.size(); i++)
		if (!(b[i] > b[i - 1]))
			throw std::logic_error("histogram " + name +
					       ": buckets must increase");
	std::lock_guard<std::mutex> g(mu_);
	auto it = index_.find(name);
	if (it != index_.end()) {
		const Family &f = families_[it->second];
		if (f.type != type || f.labels != labels)
			throw std::logic_error("metric " + name +
					       " declared twice, differently");
		return;
	}
	Family f;
	f.name = name;
	f.help = help;
	f.type = type;
	f.labels = labels;
	if (type == Metric::Histogram)
		f.buckets = b;
	index_[name] = families_.size();
	families_.push_back(std::move(f));
}

/* Label values escaped as the format asks: backslash, quote, newline. */
std::string Registry::label_text(const Family &f,
				 const std::vector<std::string> &values)
{
	std::string o;
	for (size_t i = 0; i < values.size(); i++) {
		o += (i ? "," : "") + f.labels[i] + "=\"";
		for (char c : values[i])
			if (c == '\\')
				o += "\\\\";
			else if (c == '"')
				o += "\\\"";
			else if (c == '\n')
				o += "\\n";
			else
				o += c;
		o += '"';
	}
	return o;
}

Registry::Family &Registry::family(const std::string &name, Metric type,
				   size_t nvalues, bool or_gauge)
{
	auto it = index_.find(name);
	if (it == index_.end())
		throw std::logic_error("metric " + name + " not declared");
	Family &f = families_[it->second];
	if (f.type != type && !(or_gauge && f.type == Metric::Gauge))
		throw std::logic_error("metric " + name + " is a " +
				       type_name(f.type));
	if (nvalues != f.labels.size())
		throw std::logic_error("metric " + name + " takes " +
				       std::to_string(f.labels.size()) +
				       " label values, not " +
				       std::to_string(nvalues));
	return f;
}

void Registry::add(const std::string &name,
		   const std::vector<std::string> &values, double by)
{
	std::lock_guard<std::mutex> g(mu_);
	Family &f = family(name, Metric::Counter, values.size(), true);
	if (f.type == Metric::Counter && !(by >= 0))
		throw std::logic_error("counter " + name +
				       " cannot go down");
	f.series[label_text(f, values)].value += by;
}

void Registry::set(const std::string &name,
		   const std::vector<std::string> &values, double v)
{
	std::lock_guard<std::mutex> g(mu_);
	Family &f = family(name, Metric::Gauge, values.size());
	f.series[label_text(f, values)].value = v;
}

void Registry::observe(const std::string &name,
		       const std::vector<std::string> &values, double v)
{
	std::lock_guard<std::mutex> g(mu_);
	Family &f = family(name, Metric::Histogram, values.size());
	Series &s = f.series[label_text(f, values)];
	if (s.counts.empty())
		s.counts.assign(f.buckets.size() + 1, 0);
	size_t b = 0;
	while (b < f.buckets.size() && v > f.buckets[b])
		b++;
	s.counts[b]++;
	s.value += v;
	s.count++;
}

void Registry::clear(const std::string &name)
{
	std::lock_guard<std::mutex> g(mu_);
	auto it = index_.find(name);
	if (it == index_.end())
		throw std::logic_error("metric " + name + " not declared");
	families_[it->second].series.clear();
}

void Registry::on_collect(std::function<void(Registry &)> f)
{
	std::lock_guard<std::mutex> g(mu_);
	collectors_.push_back(std::move(f));
}

double Registry::value(const std::string &name,
		       const std::vector<std::string> &values)
{
	std::lock_guard<std::mutex> g(mu_);
	auto it = index_.find(name);
	if (it == index_.end())
		throw std::logic_error("metric " + name + " not declared");
	const Family &f = families_[it->second];
	auto s = f.series.find(label_text(f, values));
	if (s == f.series.end())
		return 0;
	return f.type == Metric::Histogram ? s->second.count : s->second.value;
}

std::string Registry::render()
{
	std::vector<std::function<void(Registry &)>> run;
	{
		std::lock_guard<std::mutex> g(mu_);
		run = collectors_;
	}
	for (auto &c : run)
		c(*this);
	std::lock_guard<std::mutex> g(mu_);
	std::string o;
	for (const Family &f : families_) {
		o += "# HELP " + f.name + " " + help_text(f.help) + "\n";
		o += "# TYPE " + f.name + " " + type_name(f.type) + "\n";
		/* A family without labels shows 0 before its first update,
		 * so that a scrape sees it exists. */
		std::map<std::string, Series> zero;
		if (f.series.empty() && f.labels.empty())
			zero[""].counts.assign(f.buckets.size() + 1, 0);
		for (const auto &[labels, s] :
		     f.series.empty() && f.labels.empty() ? zero : f.series) {
			if (f.type != Metric::Histogram) {
				o += f.name + (labels.empty() ? "" : "{" + labels + "}") +
				     " " + metric_number(s.value) + "\n";
				continue;
			}
			std::string sep = labels.empty() ? "" : labels + ",";
			double cum = 0;
			for (size_t b = 0; b <= f.buckets.size(); b++) {
				cum += s.counts[b];
				std::string le = b < f.buckets.size()
							 ? metric_number(f.buckets[b])
							 : "+Inf";
				o += f.name + "_bucket{" + sep + "le=\"" + le +
				     "\"} " + metric_number(cum) + "\n";
			}
			std::string l = labels.empty() ? "" : "{" + labels + "}";
			o += f.name + "_sum" + l + " " + metric_number(s.value) +
			     "\n";
			o += f.name + "_count" + l + " " +
			     metric_number(s.count) + "\n";
		}
	}
	return o;
}

} /* namespace tidal::obs */
