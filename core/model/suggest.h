/*
 * suggest.h - "did you mean ...?" for names a user typed: parameter keys,
 * policy and preset names, command-line options.
 *
 * A typo is a few edits away from what was meant, so the nearest known
 * name by edit distance is a good guess when it is close enough, and no
 * guess is better than a far one.  Case is ignored (keys and policy names
 * are case-insensitive everywhere in Tidal).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tidal {

/* Edits (insert, delete, substitute, swap two neighbours) turning A into
 * B, ignoring case; AT_MOST + 1 as soon as it is sure to be more than
 * AT_MOST (a bound makes far pairs cheap). */
size_t edit_distance(const std::string &a, const std::string &b,
		     size_t at_most = SIZE_MAX - 1);

/* The candidate nearest to WORD.
 * IN:  word       - what the user typed
 *      candidates - the known names, in the order ties go to
 * RET: the nearest candidate, spelled as in CANDIDATES, if it is at most
 *      max(1, length of WORD / 3) edits away; else "".
 * A dotted candidate also matches by its last part, so "Thresholds"
 * finds "Tiresias.Thresholds". */
std::string nearest(const std::string &word,
		    const std::vector<std::string> &candidates);

/* " (did you mean X?)" for the nearest candidate, or "" if none is near:
 * ready to append to a message. */
std::string did_you_mean(const std::string &word,
			 const std::vector<std::string> &candidates);

} /* namespace tidal */
