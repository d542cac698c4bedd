/*
 * lsap.cc - shortest augmenting path assignment (see lsap.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/solvers/lsap.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace tidal {

namespace {

struct Lsap {
	const std::vector<double> &c;
	int nr, nc;
	std::vector<double> u, v, spc;
	std::vector<int> path, col4row, row4col, remaining;
	std::vector<char> sr, sc;

	Lsap(const std::vector<double> &cost, int rows, int cols)
		: c(cost), nr(rows), nc(cols), u(rows, 0), v(cols, 0),
		  spc(cols), path(cols, -1), col4row(rows, -1),
		  row4col(cols, -1), remaining(cols), sr(rows), sc(cols)
	{
	}

	/* Dijkstra from free row I over reduced costs; RET: the sink column
	 * (a free one), or -1; *MIN_VAL = its path cost. */
	int augmenting_path(int i, double *min_val)
	{
		const double inf = std::numeric_limits<double>::infinity();
		double mv = 0;
		int left = nc;
		/* Reverse order: a constant matrix gives the identity. */
		for (int it = 0; it < nc; it++)
			remaining[it] = nc - it - 1;
		std::fill(sr.begin(), sr.end(), 0);
		std::fill(sc.begin(), sc.end(), 0);
		std::fill(spc.begin(), spc.end(), inf);
		int sink = -1;
		while (sink == -1) {
			int index = -1;
			double lowest = inf;
			sr[i] = 1;
			for (int it = 0; it < left; it++) {
				int j = remaining[it];
				double r = mv + c[(size_t)i * nc + j] - u[i] - v[j];
				if (r < spc[j]) {
					path[j] = i;
					spc[j] = r;
				}
				if (spc[j] < lowest ||
				    (spc[j] == lowest && row4col[j] == -1)) {
					lowest = spc[j];
					index = it;
				}
			}
			mv = lowest;
			if (mv == inf)
				return -1;
			int j = remaining[index];
			if (row4col[j] == -1)
				sink = j;
			else
				i = row4col[j];
			sc[j] = 1;
			remaining[index] = remaining[--left];
		}
		*min_val = mv;
		return sink;
	}

	bool run()
	{
		for (int cur = 0; cur < nr; cur++) {
			double mv = 0;
			int sink = augmenting_path(cur, &mv);
			if (sink < 0)
				return false;
			u[cur] += mv;
			for (int i = 0; i < nr; i++)
				if (sr[i] && i != cur)
					u[i] += mv - spc[col4row[i]];
			for (int j = 0; j < nc; j++)
				if (sc[j])
					v[j] -= mv - spc[j];
			int j = sink;
			while (true) {
				int i = path[j];
				row4col[j] = i;
				std::swap(col4row[i], j);
				if (i == cur)
					break;
			}
		}
		return true;
	}
};

} /* namespace */

std::vector<int> linear_sum_assignment(const std::vector<double> &cost,
				       int rows, int cols)
{
	if (rows <= 0)
		return {};
	if (rows > cols || (size_t)rows * cols != cost.size())
		return {};
	Lsap s(cost, rows, cols);
	if (!s.run())
		return {};
	return s.col4row;
}

} /* namespace tidal */
