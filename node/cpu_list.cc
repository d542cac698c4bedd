/*
 * cpu_list.cc - Linux CPU lists ("0-3,8,10-11", as in cpuset files and
 * hwloc's output), for topo.cc and tidal-launch's binding; apart from
 * topo.cc so that what links it needs no hwloc.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cstdlib>

#include "node/topo.h"

namespace tidal::topo {

bool parse_cpu_list(const std::string &list, std::vector<int> *out)
{
	out->clear();
	size_t i = 0;
	while (i < list.size()) {
		char *end;
		long a = std::strtol(list.c_str() + i, &end, 10), b = a;
		if (end == list.c_str() + i || a < 0)
			return false;
		i = end - list.c_str();
		if (i < list.size() && list[i] == '-') {
			b = std::strtol(list.c_str() + i + 1, &end, 10);
			if (end == list.c_str() + i + 1 || b < a)
				return false;
			i = end - list.c_str();
		}
		if (b > kMaxCpu)
			return false;
		for (long c = a; c <= b; c++)
			out->push_back((int)c);
		if (i < list.size() && list[i++] != ',')
			return false;
	}
	return true;
}

} /* namespace tidal::topo */
