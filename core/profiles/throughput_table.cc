/*
 * throughput_table.cc - parse and query per-model throughput tables.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/profiles/throughput_table.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tidal {

static int column_of(const ThroughputRow &r, int gpus)
{
	for (size_t i = 0; i < r.gpus.size(); i++)
		if (r.gpus[i] == gpus)
			return (int)i;
	return -1;
}

double ThroughputRow::at(int gpus) const
{
	int c = column_of(*this, gpus);
	return c < 0 ? NAN : tput[c];
}

double ThroughputRow::paced(int world) const
{
	double exact = at(world);
	if (std::isfinite(exact))
		return exact;
	int lo = 0, hi = 0;
	for (int g : gpus) {
		if (!std::isfinite(at(g)))
			continue;
		if (g < world)
			lo = g;
		else if (g > world && !hi)
			hi = g;
	}
	if (!lo || !hi)
		return NAN;
	double a = at(lo), b = at(hi);
	return a + (b - a) * (world - lo) / (hi - lo);
}

bool ThroughputRow::is_level(int gpus) const
{
	return column_of(*this, gpus) >= 0;
}

int ThroughputRow::next_level(int g, int max_gpu) const
{
	bool found = g == 0;
	for (int n : gpus) {
		if (n > max_gpu)
			break;
		if (n == g) {
			found = true;
			continue;
		}
		if (found)
			return n;
	}
	return g;
}

int ThroughputRow::last_level(int g, int max_gpu) const
{
	int best = 0;
	for (int n : gpus) {
		if (n > max_gpu || n >= g)
			break;
		best = n;
	}
	return best;
}

int ThroughputRow::max_listed() const
{
	int best = 0;
	for (size_t i = 0; i < gpus.size(); i++)
		if (!nan[i])
			best = std::max(best, gpus[i]);
	return best;
}

static std::vector<std::string> split_csv_line(std::string line)
{
	if (!line.empty() && line.back() == '\r')
		line.pop_back();
	std::vector<std::string> out;
	std::string cell;
	std::stringstream in(line);
	while (std::getline(in, cell, ','))
		out.push_back(cell);
	if (!line.empty() && line.back() == ',')
		out.push_back("");
	return out;
}

static bool parse_long(const std::string &s, long *out)
{
	if (s.empty())
		return false;
	char *end;
	errno = 0;
	long v = std::strtol(s.c_str(), &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

static std::string where(const std::string &file, long line)
{
	return file + ":" + std::to_string(line) + ": ";
}

/* Header: global_batch_size,<gpus>... with ascending positive counts. */
static bool parse_header(const std::vector<std::string> &h,
			 const std::string &file, std::vector<int> *gpus,
			 std::string *err)
{
	if (h.size() < 2 || h[0] != "global_batch_size") {
		*err = where(file, 1) +
		       "header must be global_batch_size,<GPU counts>";
		return false;
	}
	for (size_t i = 1; i < h.size(); i++) {
		long g;
		if (!parse_long(h[i], &g) || g <= 0 ||
		    (!gpus->empty() && g <= gpus->back())) {
			*err = where(file, 1) + "column '" + h[i] +
			       "' must be a GPU count above the previous one";
			return false;
		}
		gpus->push_back((int)g);
	}
	return true;
}

bool ThroughputTable::parse_csv(const std::string &model,
				const std::string &file,
				const std::string &text, std::string *err)
{
	std::stringstream in(text);
	std::string line;
	long lineno = 0;
	std::vector<int> gpus;
	std::map<int, ThroughputRow> rows;
	while (std::getline(in, line)) {
		lineno++;
		std::vector<std::string> cells = split_csv_line(line);
		if (cells.empty())
			continue;
		if (lineno == 1) {
			if (!parse_header(cells, file, &gpus, err))
				return false;
			continue;
		}
		long bs;
		if (cells.size() != gpus.size() + 1 || !parse_long(cells[0], &bs) ||
		    bs <= 0) {
			*err = where(file, lineno) + "expected a batch size and " +
			       std::to_string(gpus.size()) + " throughputs";
			return false;
		}
		ThroughputRow r;
		r.gpus = gpus;
		for (size_t i = 1; i < cells.size(); i++) {
			const std::string &c = cells[i];
			char *end = nullptr;
			double v = c.empty() || c == "nan" ? NAN
				   : std::strtod(c.c_str(), &end);
			if (end && (*end || v < 0)) {
				*err = where(file, lineno) + "throughput '" + c +
				       "' is not a non-negative number";
				return false;
			}
			r.tput.push_back(v);
			r.nan.push_back(c == "nan");
		}
		rows[(int)bs] = std::move(r);
	}
	if (gpus.empty()) {
		*err = where(file, 1) + "empty throughput table";
		return false;
	}
	rows_[model] = std::move(rows);
	return true;
}

bool ThroughputTable::load_dir(const std::string &dir, std::string *err)
{
	namespace fs = std::filesystem;
	std::error_code ec;
	std::vector<fs::path> files;
	for (const auto &e : fs::directory_iterator(dir, ec))
		if (e.path().extension() == ".csv")
			files.push_back(e.path());
	if (ec) {
		*err = dir + ": cannot read throughput tables: " + ec.message();
		return false;
	}
	if (files.empty()) {
		*err = dir + ": no <model>.csv throughput tables";
		return false;
	}
	std::sort(files.begin(), files.end());
	for (const fs::path &p : files) {
		std::ifstream f(p);
		std::stringstream buf;
		if (f.is_open())
			buf << f.rdbuf();
		if (!f.is_open() || f.bad()) {
			*err = p.string() + ": cannot read";
			return false;
		}
		if (!parse_csv(p.stem().string(), p.string(), buf.str(), err))
			return false;
	}
	return true;
}

const ThroughputRow *ThroughputTable::row(const std::string &model,
					  int batch) const
{
	auto m = rows_.find(model);
	if (m == rows_.end())
		return nullptr;
	auto r = m->second.find(batch);
	return r == m->second.end() ? nullptr : &r->second;
}

bool ThroughputTable::has_model(const std::string &model) const
{
	return rows_.count(model) > 0;
}

std::vector<std::string> ThroughputTable::models() const
{
	std::vector<std::string> out;
	for (const auto &[m, rows] : rows_)
		out.push_back(m);
	return out;
}

std::vector<int> ThroughputTable::batches(const std::string &model) const
{
	std::vector<int> out;
	auto m = rows_.find(model);
	if (m != rows_.end())
		for (const auto &[b, row] : m->second)
			out.push_back(b);
	return out;
}

double ThroughputTable::lookup(const std::string &model, int batch,
			       int gpus) const
{
	const ThroughputRow *r = row(model, batch);
	return r ? r->at(gpus) : NAN;
}

} /* namespace tidal */
