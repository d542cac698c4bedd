/*
 * suggest.cc - nearest known name by edit distance (optimal string
 * alignment: Levenshtein plus swaps of neighbours, the commonest typo).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/suggest.h"

#include <algorithm>
#include <cctype>

namespace tidal {

static char fold(char c)
{
	return (char)std::tolower((unsigned char)c);
}

size_t edit_distance(const std::string &a, const std::string &b)
{
	size_t n = a.size(), m = b.size();
	/* Three rows: the swap looks two rows back. */
	std::vector<size_t> back(m + 1), prev(m + 1), cur(m + 1);
	for (size_t j = 0; j <= m; j++)
		prev[j] = j;
	for (size_t i = 1; i <= n; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= m; j++) {
			bool same = fold(a[i - 1]) == fold(b[j - 1]);
			cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1,
					   prev[j - 1] + (same ? 0 : 1)});
			if (i > 1 && j > 1 &&
			    fold(a[i - 1]) == fold(b[j - 2]) &&
			    fold(a[i - 2]) == fold(b[j - 1]))
				cur[j] = std::min(cur[j], back[j - 2] + 1);
		}
		std::swap(back, prev);
		std::swap(prev, cur);
	}
	return prev[m];
}

std::string nearest(const std::string &word,
		    const std::vector<std::string> &candidates)
{
	size_t limit = std::max<size_t>(1, word.size() / 3);
	size_t best = limit + 1;
	std::string pick;
	for (const std::string &c : candidates) {
		size_t d = edit_distance(word, c);
		size_t dot = c.rfind('.');
		bool dotted = word.find('.') != std::string::npos;
		if (dot != std::string::npos && !dotted)
			d = std::min(d, edit_distance(word, c.substr(dot + 1)));
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
