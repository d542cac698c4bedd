/*
 * suggest.cc - nearest known name by edit distance (optimal string
 * alignment: Levenshtein plus swaps of neighbours, the commonest typo).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/model/suggest.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string_view>

namespace tidal {

static char fold(char c)
{
	return (char)std::tolower((unsigned char)c);
}

/* Optimal string alignment of A and B, at most AT_MOST + 1.  Only the
 * band of cells within CAP of the diagonal is computed (a cell further
 * out is more than CAP, and so is any path through it), CAP being the
 * bound or, when that is larger, the longer length (no distance exceeds
 * it); cells just outside the band read as CAP + 1.  The rows are kept
 * from call to call: did-you-mean runs it over every known key. */
static size_t osa(std::string_view a, std::string_view b, size_t at_most)
{
	size_t n = a.size(), m = b.size();
	size_t gap = n > m ? n - m : m - n;
	if (gap > at_most)
		return at_most + 1;
	size_t cap = std::min(at_most, std::max(n, m)), out = cap + 1;
	/* Three rows: the swap looks two rows back.  A row's cells are at
	 * least the smallest of the two rows before it, so once two rows
	 * in a row exceed AT_MOST, so does the distance. */
	thread_local std::vector<size_t> back, prev, cur;
	back.assign(m + 1, out);
	prev.resize(m + 1);
	cur.assign(m + 1, out);
	size_t back_min = SIZE_MAX, prev_min = 0;
	for (size_t j = 0; j <= m; j++)
		prev[j] = std::min(j, out);
	for (size_t i = 1; i <= n; i++) {
		if (back_min > at_most && prev_min > at_most)
			return at_most + 1;
		size_t lo = i > cap ? i - cap : 1, hi = std::min(m, i + cap);
		cur[0] = std::min(i, out);
		if (lo > 1)
			cur[lo - 1] = out;
		if (hi < m)
			cur[hi + 1] = out;
		size_t cur_min = lo == 1 ? cur[0] : out;
		for (size_t j = lo; j <= hi; j++) {
			bool same = fold(a[i - 1]) == fold(b[j - 1]);
			cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1,
					   prev[j - 1] + (same ? 0 : 1)});
			if (i > 1 && j > 1 &&
			    fold(a[i - 1]) == fold(b[j - 2]) &&
			    fold(a[i - 2]) == fold(b[j - 1]))
				cur[j] = std::min(cur[j], back[j - 2] + 1);
			cur_min = std::min(cur_min, cur[j]);
		}
		std::swap(back, prev);
		std::swap(prev, cur);
		back_min = prev_min;
		prev_min = cur_min;
	}
	return std::min(prev[m], at_most + 1);
}

size_t edit_distance(const std::string &a, const std::string &b,
		     size_t at_most)
{
	return osa(a, b, at_most);
}

std::string nearest(const std::string &word,
		    const std::vector<std::string> &candidates)
{
	size_t limit = std::max<size_t>(1, word.size() / 3);
	size_t best = limit + 1;
	std::string pick;
	bool dotted = word.find('.') != std::string::npos;
	/* The distance is at least the difference in length: a candidate
	 * whose length is best or more away cannot win, so its quadratic
	 * distance is not worth computing (a long line of garbage against
	 * every known key). */
	auto distance = [&](std::string_view c) {
		size_t gap = c.size() > word.size() ? c.size() - word.size()
						    : word.size() - c.size();
		return gap >= best ? gap : osa(word, c, best - 1);
	};
	for (const std::string &c : candidates) {
		size_t d = distance(c);
		size_t dot = c.rfind('.');
		if (dot != std::string::npos && !dotted)
			d = std::min(d, distance(std::string_view(c).substr(
						dot + 1)));
		if (d < best) {
			best = d;
			pick = c;
		}
	}
	return pick;
}

std::string did_you_mean(const std::string &word,
			 const std::vector<std::string> &candidates)
{
	std::string n = nearest(word, candidates);
	return n.empty() ? "" : " (did you mean " + n + "?)";
}

} /* namespace tidal */
