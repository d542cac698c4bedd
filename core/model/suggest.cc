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

namespace tidal {

static char fold(char c)
{
	return (char)std::tolower((unsigned char)c);
}

size_t edit_distance(const std::string &a, const std::string &b,
		     size_t at_most)
{
	size_t n = a.size(), m = b.size();
	/* Three rows: the swap looks two rows back.  A row's cells are at
	 * least the smallest of the two rows before it, so once two rows
	 * in a row exceed AT_MOST, so does the distance. */
	std::vector<size_t> back(m + 1), prev(m + 1), cur(m + 1);
	size_t back_min = SIZE_MAX, prev_min = 0;
	for (size_t j = 0; j <= m; j++)
		prev[j] = j;
	for (size_t i = 1; i <= n; i++) {
		if (back_min > at_most && prev_min > at_most)
			return at_most + 1;
		cur[0] = i;
		size_t cur_min = i;
		for (size_t j = 1; j <= m; j++) {
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
	auto distance = [&](const std::string &c) {
		size_t gap = c.size() > word.size() ? c.size() - word.size()
						    : word.size() - c.size();
		return gap >= best ? gap : edit_distance(word, c, best - 1);
	};
	for (const std::string &c : candidates) {
		size_t d = distance(c);
		size_t dot = c.rfind('.');
		if (dot != std::string::npos && !dotted)
			d = std::min(d, distance(c.substr(dot + 1)));
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
