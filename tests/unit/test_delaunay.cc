/*
 * test_delaunay.cc - LinearInterp3 on hand-made point sets whose
 * interpolated values are worked out here.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cmath>
#include <random>

#include "core/solvers/delaunay.h"
#include "tests/unit/unit.h"

using namespace tidal;

static double volume(const std::vector<Point3> &p, const std::array<int, 4> &t)
{
	const Point3 &a = p[t[0]], &b = p[t[1]], &c = p[t[2]], &d = p[t[3]];
	double bx = b[0] - a[0], by = b[1] - a[1], bz = b[2] - a[2];
	double cx = c[0] - a[0], cy = c[1] - a[1], cz = c[2] - a[2];
	double dx = d[0] - a[0], dy = d[1] - a[1], dz = d[2] - a[2];
	return (bx * (cy * dz - cz * dy) - by * (cx * dz - cz * dx) +
		bz * (cx * dy - cy * dx)) / 6;
}

/* One tetrahedron with f = 1 + x + 2y + 3z at its corners: the centre of
 * mass-ish point (0.5, 0.5, 0.5) gives 1 + 0.5 + 1 + 1.5 = 4; (2, 2, 2)
 * is outside. */
static void test_single_tetrahedron(void **)
{
	std::vector<Point3> p = {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}, {0, 0, 2}};
	std::vector<std::vector<double>> v = {{1, 10}, {3, 10}, {5, 10}, {7, 10}};
	LinearInterp3 it(p, v);
	assert_int_equal(it.tetrahedra().size(), 1);
	auto r = it.at({0.5, 0.5, 0.5});
	assert_true(r.has_value());
	assert_true(std::fabs((*r)[0] - 4.0) < 1e-12);
	assert_true(std::fabs((*r)[1] - 10.0) < 1e-12);
	assert_false(it.at({2, 2, 2}).has_value());
	/* A vertex gives its own value. */
	assert_true(std::fabs((*it.at({2, 0, 0}))[0] - 3.0) < 1e-12);
}

/* A 3x3x3 grid (full of co-spherical sets): the tetrahedra must tile the
 * 2x2x2 box (volumes add up to 8), none may be flat, and no grid point may
 * lie strictly inside any tetrahedron's circumsphere. */
static void test_grid_is_delaunay(void **)
{
	std::vector<Point3> p;
	std::vector<std::vector<double>> v;
	for (int x = 0; x < 3; x++)
		for (int y = 0; y < 3; y++)
			for (int z = 0; z < 3; z++) {
				p.push_back({(double)x, (double)y, (double)z});
				v.push_back({(double)(x * y * z)});
			}
	LinearInterp3 it(p, v);
	double vol = 0;
	for (const auto &t : it.tetrahedra()) {
		double tv = volume(p, t);
		assert_true(tv > 0);
		vol += tv;
		/* Circumcentre by solving |c - a|^2 = |c - b|^2 ... */
		const Point3 &a = p[t[0]];
		double m[3][4];
		for (int i = 0; i < 3; i++) {
			const Point3 &b = p[t[i + 1]];
			for (int k = 0; k < 3; k++)
				m[i][k] = 2 * (b[k] - a[k]);
			m[i][3] = b[0] * b[0] + b[1] * b[1] + b[2] * b[2] -
				  a[0] * a[0] - a[1] * a[1] - a[2] * a[2];
		}
		for (int c = 0; c < 3; c++) {
			int piv = c;
			for (int r = c + 1; r < 3; r++)
				if (std::fabs(m[r][c]) > std::fabs(m[piv][c]))
					piv = r;
			for (int k = 0; k < 4; k++)
				std::swap(m[c][k], m[piv][k]);
			for (int r = 0; r < 3; r++) {
				if (r == c)
					continue;
				double f = m[r][c] / m[c][c];
				for (int k = 0; k < 4; k++)
					m[r][k] -= f * m[c][k];
			}
		}
		double cc[3] = {m[0][3] / m[0][0], m[1][3] / m[1][1],
				m[2][3] / m[2][2]};
		auto d2 = [&](const Point3 &q) {
			return (q[0] - cc[0]) * (q[0] - cc[0]) +
			       (q[1] - cc[1]) * (q[1] - cc[1]) +
			       (q[2] - cc[2]) * (q[2] - cc[2]);
		};
		double r2 = d2(a);
		for (const Point3 &q : p)
			assert_true(d2(q) >= r2 - 1e-9);
	}
	assert_true(std::fabs(vol - 8.0) < 1e-9);
	/* On a grid edge the value is unique whatever the split: f = xyz is
	 * 4 at (2,2,1) and 8 at (2,2,2), so 6 half-way. */
	auto r = it.at({2, 2, 1.5});
	assert_true(r.has_value());
	assert_true(std::fabs((*r)[0] - 6.0) < 1e-12);
}

/* A linear function is reproduced exactly whatever the split:
 * f = 1 + 2x + 3y + 5z on the unit cube at (0.3, 0.6, 0.2) is
 * 1 + 0.6 + 1.8 + 1.0 = 4.4. */
static void test_linear_function_exact(void **)
{
	std::vector<Point3> p;
	std::vector<std::vector<double>> v;
	for (int i = 0; i < 8; i++) {
		double x = i & 1, y = (i >> 1) & 1, z = (i >> 2) & 1;
		p.push_back({x, y, z});
		v.push_back({1 + 2 * x + 3 * y + 5 * z});
	}
	/* A duplicate is ignored. */
	p.push_back({1, 1, 1});
	v.push_back({-100});
	LinearInterp3 it(p, v);
	auto r = it.at({0.3, 0.6, 0.2});
	assert_true(r.has_value());
	assert_true(std::fabs((*r)[0] - 4.4) < 1e-12);
	assert_true(std::fabs((*it.at({1, 1, 1}))[0] - 11.0) < 1e-12);
}

static void test_bad_points(void **)
{
	bool threw = false;
	try {
		LinearInterp3({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}},
			      {{0}, {0}, {0}, {0}});
	} catch (const std::invalid_argument &) {
		threw = true;
	}
	assert_true(threw);
	threw = false;
	try {
		LinearInterp3({{0, 0, 0}, {1.5, 0, 0}, {0, 1, 0}, {0, 0, 1}},
			      {{0}, {0}, {0}, {0}});
	} catch (const std::invalid_argument &) {
		threw = true;
	}
	assert_true(threw);
}

/* The filter in doubles answers as the exact test does: random point sets
 * (small grids full of co-spherical sets, wide ones, coordinates up to
 * 2^20, near-flat slabs) give the same tetrahedra, in the same order, with
 * and without it. */
static void test_filter_is_exact(void **)
{
	std::mt19937_64 g(7);
	int compared = 0;
	for (int round = 0; round < 60; round++) {
		std::vector<Point3> p;
		std::vector<std::vector<double>> v;
		int n = 20 + 7 * round;
		long span = round % 3 == 0 ? 3 : round % 3 == 1 ? 1000 : 1 << 20;
		std::uniform_int_distribution<long> d(-span, span);
		for (int i = 0; i < n; i++) {
			double z = (double)d(g);
			if (round % 5 == 0 && i % 3 == 0)
				z = (double)(d(g) % 2);
			p.push_back({(double)d(g), (double)d(g), z});
			v.push_back({(double)i});
		}
		LinearInterp3 fast(p, v), exact(p, v, true);
		assert_true(fast.tetrahedra() == exact.tetrahedra());
		compared += (int)exact.tetrahedra().size();
	}
	assert_true(compared > 10000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_tetrahedron),
		cmocka_unit_test(test_grid_is_delaunay),
		cmocka_unit_test(test_linear_function_exact),
		cmocka_unit_test(test_bad_points),
		cmocka_unit_test(test_filter_is_exact),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
