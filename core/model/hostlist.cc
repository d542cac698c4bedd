/*
 * hostlist.cc - Slurm hostlists (hostlist.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/model/hostlist.h"

#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace tidal
{

namespace
{

constexpr int kMaxDims = 8;

struct Malformed : std::runtime_error {
	using std::runtime_error::runtime_error;
};

long parse_index(const std::string &s)
{
	if (s.empty() || s.size() > 9 ||
	    s.find_first_not_of("0123456789") != std::string::npos)
		throw Malformed("bad hostlist number '" + s + "'");
	return std::strtol(s.c_str(), nullptr, 10);
}

void push_host(std::vector<std::string> &out, std::string name)
{
	if ((long)out.size() >= kMaxHostlistNames)
		throw Malformed("hostlist expands to more than " +
				std::to_string(kMaxHostlistNames) + " names");
	out.push_back(std::move(name));
}

/* One "prefix[ranges]suffix" item; the suffix may hold more brackets
 * (several dimensions), up to kMaxDims of them. */
void expand_item(const std::string &item, int dims,
		 std::vector<std::string> &out)
{
	size_t lb = item.find('[');
	size_t stray = item.find(']');
	if (lb == std::string::npos) {
		if (stray != std::string::npos)
			throw Malformed("unbalanced ']' in hostlist '" + item +
					"'");
		push_host(out, item);
		return;
	}
	size_t rb = item.find(']', lb);
	if (rb == std::string::npos || stray < lb ||
	    item.find('[', lb + 1) < rb)
		throw Malformed("unbalanced '[' in hostlist '" + item + "'");
	if (dims >= kMaxDims)
		throw Malformed("too many [] groups in hostlist '" + item +
				"'");
	std::string prefix = item.substr(0, lb);
	std::string ranges = item.substr(lb + 1, rb - lb - 1);
	std::vector<std::string> rest;
	if (rb + 1 < item.size())
		expand_item(item.substr(rb + 1), dims + 1, rest);
	else
		rest.push_back("");
	if (ranges.empty())
		throw Malformed("empty [] in hostlist '" + item + "'");
	std::stringstream in(ranges);
	std::string r;
	while (std::getline(in, r, ',')) {
		size_t dash = r.find('-');
		std::string a = r.substr(0, dash);
		std::string b =
			dash == std::string::npos ? a : r.substr(dash + 1);
		long lo = parse_index(a);
		long hi = parse_index(b);
		if (hi < lo)
			throw Malformed("bad hostlist range '" + r + "'");
		for (long i = lo; i <= hi; i++) {
			/* "n[08-10]": zero padding to the width of the low end
			 */
			std::string num = std::to_string(i);
			if (num.size() < a.size())
				num.insert(0, a.size() - num.size(), '0');
			for (const std::string &tail : rest)
				push_host(out, prefix + num + tail);
		}
	}
}

} /* namespace */

std::vector<std::string> split_top_level(const std::string &s)
{
	std::vector<std::string> out;
	std::string cur;
	int depth = 0;
	for (char c : s) {
		if (c == '[' || c == '(')
			depth++;
		if (c == ']' || c == ')')
			depth--;
		if (c == ',' && depth == 0) {
			out.push_back(cur);
			cur.clear();
		} else {
			cur += c;
		}
	}
	if (!cur.empty())
		out.push_back(cur);
	return out;
}

bool expand_hostlist(const std::string &list, std::vector<std::string> *out,
		     std::string *err)
{
	try {
		for (const std::string &item : split_top_level(list))
			if (!item.empty())
				expand_item(item, 0, *out);
	} catch (const Malformed &e) {
		*err = e.what();
		return false;
	}
	return true;
}

} /* namespace tidal */
