/*
 * delaunay.h - piecewise-linear interpolation over a 3-D Delaunay
 * tetrahedralisation (what scipy's LinearNDInterpolator does in 3-D).
 *
 * The Pollux artifact falls back to LinearNDInterpolator over (num_nodes,
 * num_replicas, local_bsz) for placements it never measured; this is that
 * fallback.  Inside a tetrahedron the value is the barycentric mix of its
 * four vertices' values; outside the convex hull there is no value.
 *
 * Points must have integer coordinates of magnitude <= 2^20, so that every
 * predicate is evaluated exactly in 128-bit integers.  The profile points
 * (node and replica counts, batch sizes) are integers, and they are full of
 * degenerate (co-spherical, co-planar) sets: exact predicates and a
 * symbolic perturbation of the lifted coordinate (earlier points weigh more)
 * make the triangulation unique and valid.  Where the Delaunay
 * tetrahedralisation itself is not unique (e.g. a box of 8 co-spherical
 * corners), the split chosen may differ from Qhull's; the interpolated
 * values then differ inside such a cell, never on its faces' edges or at
 * its vertices.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <array>
#include <optional>
#include <stdexcept>
#include <vector>

namespace tidal {

using Point3 = std::array<double, 3>;

class LinearInterp3 {
public:
	/* IN: points (integer coordinates, |c| <= 2^20; duplicates after the
	 *     first are ignored), values[i] = the values at points[i], all of
	 *     the same length.
	 * EXACT_ONLY: every in-sphere test in exact arithmetic, without the
	 *     filter in doubles (the same triangulation, slower: what the
	 *     unit test holds the filter to).
	 * Throws std::invalid_argument if the points are not integers, are
	 * fewer than 4 or all lie in one plane. */
	LinearInterp3(const std::vector<Point3> &points,
		      const std::vector<std::vector<double>> &values,
		      bool exact_only = false);

	/* Values at Q, or nullopt outside the convex hull. */
	std::optional<std::vector<double>> at(const Point3 &q) const;

	/* Finite tetrahedra (indices into the points), for tests. */
	const std::vector<std::array<int, 4>> &tetrahedra() const
	{
		return finite_;
	}

private:
	using P = std::array<long long, 3>;
	struct Cell {
		std::array<int, 4> v; /* v[3] == -1: infinite (hull face) */
		/* Finite: the circumcentre in doubles and a bound on each
		 * coordinate's error, for the filter in conflict(). */
		std::array<double, 3> centre{};
		double centre_err = 0;
	};

	void insert(int p);
	Cell make_cell(const std::array<int, 4> &v) const;
	bool conflict(const Cell &c, int p) const;
	bool in_circumsphere(const std::array<int, 4> &t, int p) const;
	bool in_circumcircle(const std::array<int, 3> &f, int p) const;

	std::vector<P> pts_;
	std::vector<std::vector<double>> vals_;
	std::vector<Cell> cells_, spare_;
	bool exact_only_ = false;
	std::vector<std::array<int, 4>> finite_;
};

} /* namespace tidal */
