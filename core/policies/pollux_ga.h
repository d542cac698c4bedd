/*
 * pollux_ga.h - the Pollux artifact's optimiser: NSGA-II (pymoo 0.4.2) over
 * allocation matrices, with Pollux's own crossover, mutation and repair.
 * Seeded here (the artifact's is not), so a run is repeatable.
 *
 *   init: the given states (last round's front, adapted), repaired,
 *         duplicates dropped, ranked
 *   each generation (99 after the initial one, as pymoo counts 100):
 *     binary tournaments (domination, then crowding, then a coin)
 *     -> single-point crossover over the job axis (probability 0.9)
 *     -> mutation: reset rows to the current allocation (p 0.1/row),
 *        zero elements (p 0.1 in 10% of rows), raise elements to a
 *        uniform value up to the node size (p1 + p2 - p1 p2)
 *     -> repair -> drop duplicates -> 100 offspring
 *     -> rank and crowding survival to 100
 *   result: the final non-dominated front; the applied state is its
 *   argmin of F1.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <vector>

#include "core/policies/pollux_problem.h"

namespace tidal
{

struct GaOptions {
	int pop_size = 100;
	int generations = 100; /* pymoo's n_gen, the initial one included */
	double crossover_prob = 0.9;
};

struct GaResult {
	std::vector<std::vector<int>> front; /* non-dominated states */
	std::vector<double> f1, f2;
	int best = 0; /* argmin F1 on the front */
	long evaluations = 0;
};

/* IN: problem, init (at least one state, jobs x nodes), rng.
 * RET: the final front and its best state. */
GaResult pollux_nsga2(const PolluxProblem &problem,
		      std::vector<std::vector<int>> init, Rng &rng,
		      const GaOptions &opt = {});

} /* namespace tidal */
