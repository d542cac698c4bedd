/*
 * csv.cc - CSV/TSV parsing with line numbers.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "sim/csv.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tidal::sim {

void input_error(const std::string &file, long line, const std::string &msg)
{
	std::string where = file;
	if (line > 0)
		where += ":" + std::to_string(line);
	throw InputError(where + ": " + msg);
}

std::string read_file(const std::string &path)
{
	std::ifstream in(path, std::ios::binary);
	if (!in)
		input_error(path, 0, "cannot open: " + std::string(strerror(errno)));
	std::ostringstream s;
	s << in.rdbuf();
	if (in.bad())
		input_error(path, 0, "read error");
	return s.str();
}

/* LINE's cells into OUT (cleared first; its strings' memory is reused
 * from row to row). */
static void split_line(const char *line, size_t n, char sep,
		       std::vector<std::string> &out)
{
	out.clear();
	std::string cur;
	bool quoted = false;
	for (size_t i = 0; i < n; i++) {
		char c = line[i];
		if (sep == ',' && c == '"') {
			if (quoted && i + 1 < n && line[i + 1] == '"') {
				cur += '"';
				i++;
			} else {
				quoted = !quoted;
			}
		} else if (c == sep && !quoted) {
			out.push_back(std::move(cur));
			cur.clear();
		} else if (c != '\r') {
			cur += c;
		}
	}
	out.push_back(std::move(cur));
}

Csv::Csv(const std::string &file, const std::string &text, char sep,
	 bool header)
	: file_(file)
{
	long lineno = 0;
	bool need_header = header;
	std::vector<std::string> cells;
	const size_t lines = (size_t)std::count(text.begin(), text.end(), '\n');
	rows_.reserve(lines + 1);
	lines_.reserve(lines + 1);
	for (size_t at = 0; at < text.size();) {
		size_t end = text.find('\n', at);
		if (end == std::string::npos)
			end = text.size();
		const char *line = text.data() + at;
		size_t n = end - at;
		at = end + 1;
		lineno++;
		if (n == 0 || (n == 1 && line[0] == '\r'))
			continue;
		split_line(line, n, sep, cells);
		if (need_header) {
			header_ = cells;
			header_line_ = lineno;
			need_header = false;
			continue;
		}
		if (header && cells.size() < header_.size())
			input_error(file_, lineno,
				    "expected " + std::to_string(header_.size()) +
					    " columns, found " +
					    std::to_string(cells.size()));
		rows_.push_back(cells);
		lines_.push_back(lineno);
	}
	if (header && header_.empty())
		input_error(file_, 0, "empty file (no header line)");
}

Csv Csv::load(const std::string &path, char sep, bool header)
{
	return Csv(path, read_file(path), sep, header);
}

int Csv::col(const std::string &name) const
{
	for (size_t i = 0; i < header_.size(); i++)
		if (header_[i] == name)
			return (int)i;
	return -1;
}

int Csv::need(const std::string &name) const
{
	int c = col(name);
	if (c < 0)
		input_error(file_, header_line_, "missing column '" + name + "'");
	return c;
}

const std::string &Csv::str(size_t r, int c) const
{
	static const std::string empty;
	const auto &row = rows_[r];
	return c >= 0 && c < (int)row.size() ? row[c] : empty;
}

void Csv::fail(size_t r, const std::string &msg) const
{
	input_error(file_, lines_[r], msg);
}

std::string Csv::col_name(int c) const
{
	return c >= 0 && c < (int)header_.size() ? header_[c]
						 : std::to_string(c + 1);
}

double Csv::num(size_t r, int c) const
{
	const std::string &s = str(r, c);
	char *end = nullptr;
	errno = 0;
	double v = std::strtod(s.c_str(), &end);
	if (s.empty() || errno || *end || !std::isfinite(v)) {
		std::string name = col_name(c);
		fail(r, "column '" + name + "': '" + s + "' is not a number");
	}
	return v;
}

/* Past 2^53 a double no longer holds every integer, and converting one
 * beyond LONG_MAX is undefined: refuse both. */
long Csv::integer(size_t r, int c) const
{
	double v = num(r, c);
	if (v != std::floor(v) || std::fabs(v) > 9007199254740992.0) {
		std::string name = col_name(c);
		fail(r, "column '" + name + "': '" + str(r, c) +
				"' is not an integer");
	}
	return (long)v;
}

int Csv::small_integer(size_t r, int c) const
{
	long v = integer(r, c);
	if (v < INT_MIN || v > INT_MAX) {
		std::string name = col_name(c);
		fail(r, "column '" + name + "': " + str(r, c) +
				" is out of range");
	}
	return (int)v;
}

} /* namespace tidal::sim */
