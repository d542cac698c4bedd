/*
 * metrics.h - counters, gauges and histograms in Prometheus' text
 * exposition format (version 0.0.4), for sched/tidal and tidald.
 *
 * A Registry holds metric families, each declared once with its type,
 * help text and label names, then updated from any thread:
 *
 *   Registry r;
 *   r.declare("tidal_resizes_total", Metric::Counter,
 *             "Resizes Tidal requeued a job for.", {"kind"});
 *   r.add("tidal_resizes_total", {"resize"});
 *   r.observe("tidal_cycle_seconds", {}, 0.0123);
 *   std::string text = r.render();
 *
 * Label values are given in the order of the family's label names.  A
 * collector (on_collect) runs at the start of each render(), to set gauges
 * read from elsewhere (jobs by state, agents up).  Names follow the
 * exposition format's rules; a counter's name ends in _total.  Misuse (an
 * undeclared name, the wrong type or label count, a bad name) throws
 * std::logic_error: it is a programming error, caught by the callers'
 * boundaries (the plugin never lets one reach slurmctld).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace tidal::obs {

enum class Metric { Counter, Gauge, Histogram };

class Registry {
public:
	/* Declare family NAME; BUCKETS (upper bounds, increasing; +Inf is
	 * added) only for a histogram, where an empty list takes
	 * default_buckets().  Declaring a family again with the same type
	 * and labels is a no-op. */
	void declare(const std::string &name, Metric type,
		     const std::string &help,
		     const std::vector<std::string> &labels = {},
		     const std::vector<double> &buckets = {});
	void add(const std::string &name,
		 const std::vector<std::string> &values = {}, double by = 1);
	void set(const std::string &name,
		 const std::vector<std::string> &values, double v);
	void observe(const std::string &name,
		     const std::vector<std::string> &values, double v);
	/* Drop every series of family NAME (a gauge set afresh by a
	 * collector, so that a label set no longer seen disappears). */
	void clear(const std::string &name);
	/* F runs at the start of every render(), without the registry's
	 * lock held (it calls set()). */
	void on_collect(std::function<void(Registry &)> f);
	/* The exposition text: families in declaration order, each with
	 * # HELP and # TYPE, series in label order. */
	std::string render();
	/* The value of one series (a histogram's: its count); 0 if it has
	 * none yet.  For tests. */
	double value(const std::string &name,
		     const std::vector<std::string> &values = {});

	/* 5 ms to 60 s, roughly doubling: cycle and phase durations. */
	static std::vector<double> default_buckets();

private:
	struct Series {
		double value = 0; /* counter, gauge; histogram's sum */
		std::vector<double> counts; /* histogram: per bucket, +Inf last */
		double count = 0;
	};
	struct Family {
		std::string name, help;
		Metric type;
		std::vector<std::string> labels;
		std::vector<double> buckets;
		std::map<std::string, Series> series; /* by rendered labels */
	};
	/* Family NAME, of TYPE (or a gauge, OR_GAUGE) and NVALUES labels. */
	Family &family(const std::string &name, Metric type, size_t nvalues,
		       bool or_gauge = false);
	static std::string label_text(const Family &f,
				      const std::vector<std::string> &values);

	std::mutex mu_;
	std::vector<Family> families_;
	std::map<std::string, size_t> index_;
	std::vector<std::function<void(Registry &)>> collectors_;
};

/* A number as the exposition format writes it: the shortest text that
 * reads back as V, "+Inf", "-Inf" or "NaN". */
std::string metric_number(double v);

} /* namespace tidal::obs */
