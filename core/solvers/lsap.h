/*
 * lsap.h - the rectangular linear sum assignment problem: give each row
 * of a cost matrix its own column so that the total cost is least.
 *
 * Shortest augmenting paths (Crouse, IEEE TAES 2016), with the same
 * tie-breaking as SciPy's linear_sum_assignment (columns scanned from
 * the last, a free column preferred among equal costs), since policies
 * such as AlloX give many equal costs and their results follow the ties.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <vector>

namespace tidal {

/* COST is ROWS x COLS, row-major, ROWS <= COLS.
 * RET: the column of each row, or empty if infeasible (infinite costs). */
std::vector<int> linear_sum_assignment(const std::vector<double> &cost,
				       int rows, int cols);

} /* namespace tidal */
