/*
 * csv.h - a small CSV/TSV reader that knows its file and line numbers.
 *
 * Errors read "file:line: what is wrong" and are thrown as InputError, which
 * tidal-sim's main turns into a message and exit status 1.  (Exceptions stay
 * inside sim/: nothing here is ever called from the plugin.)
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace tidal::sim {

struct InputError : std::runtime_error {
	using std::runtime_error::runtime_error;
};

/* Throw "FILE:LINE: MSG" (line 0 = the file as a whole). */
[[noreturn]] void input_error(const std::string &file, long line,
			      const std::string &msg);

/* Read a whole file; throws InputError naming it if it cannot be read. */
std::string read_file(const std::string &path);

class Csv {
public:
	/* Parse TEXT (from FILE, for messages).  SEP is ',' or '\t' or '|';
	 * double quotes are honoured for ','. */
	Csv(const std::string &file, const std::string &text, char sep = ',',
	    bool header = true);
	static Csv load(const std::string &path, char sep = ',',
			bool header = true);

	const std::string &file() const { return file_; }
	const std::vector<std::string> &header() const { return header_; }
	size_t rows() const { return rows_.size(); }
	long line(size_t row) const { return lines_[row]; }
	const std::vector<std::string> &row(size_t r) const { return rows_[r]; }

	/* Column index of NAME (exact), or -1. */
	int col(const std::string &name) const;
	/* Column index of NAME; throws "file:1: missing column NAME". */
	int need(const std::string &name) const;

	const std::string &str(size_t r, int c) const;
	/* Numeric cells; throw "file:line: column C: 'x' is not a number". */
	double num(size_t r, int c) const;
	long integer(size_t r, int c) const;
	/* An integer that fits an int (GPU counts, batch sizes). */
	int small_integer(size_t r, int c) const;
	[[noreturn]] void fail(size_t r, const std::string &msg) const;

private:
	/* For messages: the header's name, or the 1-based column number. */
	std::string col_name(int c) const;

	std::string file_;
	std::vector<std::string> header_;
	long header_line_ = 1;
	std::vector<std::vector<std::string>> rows_;
	std::vector<long> lines_;
};

} /* namespace tidal::sim */
