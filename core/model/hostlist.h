/*
 * hostlist.h - Slurm hostlists ("n[01-03,7],gpu5"), for slurm.conf
 * (sim/cluster_io.cc) and for node lists in tidal.conf (Lucid.ProfilerNodes).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <string>
#include <vector>

namespace tidal
{

/* A typo such as n[0-99999999] must not eat the machine. */
inline constexpr long kMaxHostlistNames = 100000;

/* Split "a,b[1-2,4],c" at top-level commas (none inside [] or ()). */
std::vector<std::string> split_top_level(const std::string &s);

/* Expand LIST into *OUT (appended).  RET false with *ERR saying what is
 * malformed ("unbalanced '[' in hostlist 'n[1'"). */
bool expand_hostlist(const std::string &list, std::vector<std::string> *out,
		     std::string *err);

} /* namespace tidal */
