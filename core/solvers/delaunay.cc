/*
 * delaunay.cc - Bowyer-Watson insertion with an infinite vertex, exact
 * integer predicates and a symbolic perturbation of the lifted coordinate.
 *
 * Lifting point p to (p, w_p), w_p = |p|^2, a point lies inside a
 * tetrahedron's circumsphere iff its lift lies below the hyperplane through
 * the four lifted vertices.  With barycentric coordinates l_i = O_i / O
 * (O = orient(a,b,c,d), O_i = the same with vertex i replaced by p), the
 * height of p's lift over that hyperplane times O is
 *
 *     H = w_p O - sum_i w_i O_i,    inside iff H < 0.
 *
 * When H == 0 (co-spherical), each w_k is read as w_k + eps_k with
 * eps_0 >> eps_1 >> ...: the sign of the first non-zero coefficient among
 * the five points in index order (O for p, -O_i for vertex i) decides.
 * That is a regular triangulation with infinitesimal weights: unique, and
 * a Delaunay triangulation of the unperturbed points.  A hull face (a,b,c)
 * with the infinite vertex conflicts with p if p is beyond it, or in its
 * plane and inside its (perturbed) circumcircle; the 2-D test is the
 * restriction of the 3-D one to the plane, so the two agree.
 *
 * Most of the exact tests are far from the sphere they ask about: a
 * filter in doubles answers those first.  Each finite cell keeps its
 * circumcentre c and a bound on its error; p is inside the sphere iff
 * f = |p - c|^2 - |a - c|^2 = (p - a).(p + a - 2c) < 0, and where |f|
 * exceeds what the errors of c and of the sum can make of it, its sign is
 * the exact test's (H != 0 there, so no perturbation is involved).  Every
 * other case goes to the exact test.  The answers are the same, and so is
 * the triangulation, cell for cell and in the same order.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/solvers/delaunay.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace tidal {

using i128 = __int128;
using P = std::array<long long, 3>;

static i128 orient(const P &a, const P &b, const P &c, const P &d)
{
	i128 bx = b[0] - a[0], by = b[1] - a[1], bz = b[2] - a[2];
	i128 cx = c[0] - a[0], cy = c[1] - a[1], cz = c[2] - a[2];
	i128 dx = d[0] - a[0], dy = d[1] - a[1], dz = d[2] - a[2];
	return bx * (cy * dz - cz * dy) - by * (cx * dz - cz * dx) +
	       bz * (cx * dy - cy * dx);
}

/* Signed area of triangle abc projected by dropping coordinate DROP. */
static i128 area(const P &a, const P &b, const P &c, int drop)
{
	int u = drop == 0 ? 1 : 0, v = drop == 2 ? 1 : 2;
	i128 bu = b[u] - a[u], bv = b[v] - a[v];
	i128 cu = c[u] - a[u], cv = c[v] - a[v];
	return bu * cv - bv * cu;
}

static i128 lift(const P &p)
{
	return (i128)p[0] * p[0] + (i128)p[1] * p[1] + (i128)p[2] * p[2];
}

static int sgn(i128 v)
{
	return v > 0 ? 1 : v < 0 ? -1 : 0;
}

/*
 * IDX[k], COEF[k]: the points and their coefficients in H.  RET: the sign
 * of H, perturbed when zero.
 */
template <size_t N>
static int perturbed_sign(const std::array<int, N> &idx,
			  const std::array<i128, N> &coef,
			  const std::vector<P> &pts)
{
	i128 h = 0;
	for (size_t k = 0; k < N; k++)
		h += lift(pts[idx[k]]) * coef[k];
	if (h != 0)
		return sgn(h);
	std::array<size_t, N> order;
	for (size_t k = 0; k < N; k++)
		order[k] = k;
	std::sort(order.begin(), order.end(),
		  [&](size_t a, size_t b) { return idx[a] < idx[b]; });
	for (size_t k : order)
		if (coef[k] != 0)
			return sgn(coef[k]);
	return 0;
}

bool LinearInterp3::in_circumsphere(const std::array<int, 4> &t, int p) const
{
	const P &q = pts_[p];
	i128 o = orient(pts_[t[0]], pts_[t[1]], pts_[t[2]], pts_[t[3]]);
	std::array<int, 5> idx = {p, t[0], t[1], t[2], t[3]};
	std::array<i128, 5> coef;
	coef[0] = o;
	for (int i = 0; i < 4; i++) {
		std::array<P, 4> r = {pts_[t[0]], pts_[t[1]], pts_[t[2]],
				      pts_[t[3]]};
		r[i] = q;
		coef[i + 1] = -orient(r[0], r[1], r[2], r[3]);
	}
	/* o > 0 for every stored tetrahedron. */
	return perturbed_sign(idx, coef, pts_) < 0;
}

bool LinearInterp3::in_circumcircle(const std::array<int, 3> &f, int p) const
{
	const P &a = pts_[f[0]], &b = pts_[f[1]], &c = pts_[f[2]];
	/* Project along the normal's largest component. */
	int drop = 0;
	i128 best = -1;
	for (int d = 0; d < 3; d++) {
		i128 ar = area(a, b, c, d);
		ar = ar < 0 ? -ar : ar;
		if (ar > best) {
			best = ar;
			drop = d;
		}
	}
	const P &q = pts_[p];
	i128 whole = area(a, b, c, drop);
	std::array<int, 4> idx = {p, f[0], f[1], f[2]};
	std::array<i128, 4> coef = {whole, -area(q, b, c, drop),
				    -area(a, q, c, drop), -area(a, b, q, drop)};
	return perturbed_sign(idx, coef, pts_) * sgn(whole) < 0;
}

/* Unit round-off, with a margin: every bound below is a multiple of it. */
static const double kRound = 4e-15;

LinearInterp3::Cell LinearInterp3::make_cell(const std::array<int, 4> &v) const
{
	Cell c{v};
	if (v[3] < 0)
		return c;
	const P &a = pts_[v[0]];
	/* Edges from a (exact: |coordinate| <= 2^21), their squared lengths
	 * and cross products (exact: <= 2^44). */
	double e[3][3], l[3];
	for (int i = 0; i < 3; i++) {
		const P &b = pts_[v[i + 1]];
		for (int k = 0; k < 3; k++)
			e[i][k] = (double)(b[k] - a[k]);
		l[i] = e[i][0] * e[i][0] + e[i][1] * e[i][1] + e[i][2] * e[i][2];
	}
	auto cross = [](const double *x, const double *y, double *out) {
		out[0] = x[1] * y[2] - x[2] * y[1];
		out[1] = x[2] * y[0] - x[0] * y[2];
		out[2] = x[0] * y[1] - x[1] * y[0];
	};
	double cd[3], db[3], bc[3];
	cross(e[1], e[2], cd);
	cross(e[2], e[0], db);
	cross(e[0], e[1], bc);
	/* 2 orient(a, b, c, d), positive for a stored cell. */
	double o2 = 2 * (double)orient(a, pts_[v[1]], pts_[v[2]], pts_[v[3]]);
	double err = 0;
	for (int k = 0; k < 3; k++) {
		double t0 = l[0] * cd[k], t1 = l[1] * db[k], t2 = l[2] * bc[k];
		double off = (t0 + t1 + t2) / o2;
		c.centre[k] = (double)a[k] + off;
		double size = (std::fabs(t0) + std::fabs(t1) + std::fabs(t2)) /
				      o2 +
			      std::fabs(off) + std::fabs((double)a[k]);
		err = std::max(err, kRound * size);
	}
	c.centre_err = err;
	return c;
}

/* An infinite cell {a, b, c, -1} has the infinite vertex (the outside of
 * the hull) on the positive side of orient(a, b, c, x), as a finite cell
 * has its fourth vertex. */
bool LinearInterp3::conflict(const Cell &c, int p) const
{
	if (c.v[3] >= 0 && exact_only_)
		return in_circumsphere(c.v, p);
	if (c.v[3] >= 0) {
		const P &a = pts_[c.v[0]], &q = pts_[p];
		double f = 0, qsum = 0, fsum = 0;
		for (int k = 0; k < 3; k++) {
			double d = (double)(q[k] - a[k]);
			double s = (double)(q[k] + a[k]) - 2 * c.centre[k];
			f += d * s;
			qsum += std::fabs(d);
			fsum += std::fabs(d * s);
		}
		double bound = 2 * c.centre_err * qsum + kRound * fsum;
		if (f > 2 * bound)
			return false;
		if (f < -2 * bound)
			return true;
		return in_circumsphere(c.v, p);
	}
	i128 o = orient(pts_[c.v[0]], pts_[c.v[1]], pts_[c.v[2]], pts_[p]);
	if (o != 0)
		return o > 0;
	return in_circumcircle({c.v[0], c.v[1], c.v[2]}, p);
}

/* The faces of cell (v0,v1,v2,v3), each ordered so that the opposite
 * vertex lies on its positive side. */
static const int kFaces[4][3] = {{2, 1, 3}, {0, 2, 3}, {1, 0, 3}, {0, 1, 2}};

/* A cell (f0, f1, f2, P) with the infinite vertex moved last by an even
 * permutation. */
static std::array<int, 4> cone(const std::array<int, 3> &f, int p)
{
	std::array<int, 4> v = {f[0], f[1], f[2], p};
	for (int k = 0; k < 3; k++)
		if (v[k] < 0) {
			std::swap(v[k], v[3]);
			std::swap(v[k == 0 ? 1 : 0], v[k == 2 ? 1 : 2]);
			break;
		}
	return v;
}

/* Remove the cells in conflict with P and cone P over the cavity's
 * boundary faces, each kept in the orientation it had in its removed cell
 * (the cavity, and so P, on its positive side). */
void LinearInterp3::insert(int p)
{
	std::map<std::array<int, 3>, std::pair<int, std::array<int, 3>>> faces;
	/* The cells kept go to the spare buffer, which then swaps with
	 * cells_: both keep their memory from one insertion to the next. */
	std::vector<Cell> &kept = spare_;
	kept.clear();
	kept.reserve(cells_.size() + 16);
	for (const Cell &c : cells_) {
		if (!conflict(c, p)) {
			kept.push_back(c);
			continue;
		}
		for (const auto &fi : kFaces) {
			std::array<int, 3> of = {c.v[fi[0]], c.v[fi[1]],
						 c.v[fi[2]]};
			std::array<int, 3> key = of;
			std::sort(key.begin(), key.end());
			auto &e = faces[key];
			e.first++;
			e.second = of;
		}
	}
	for (const auto &[key, e] : faces)
		if (e.first == 1)
			kept.push_back(make_cell(cone(e.second, p)));
	cells_.swap(kept);
}

LinearInterp3::LinearInterp3(const std::vector<Point3> &points,
			     const std::vector<std::vector<double>> &values,
			     bool exact_only)
	: exact_only_(exact_only)
{
	std::map<P, int> seen;
	for (size_t i = 0; i < points.size(); i++) {
		P q;
		for (int k = 0; k < 3; k++) {
			double c = points[i][k];
			if (c != std::floor(c) || std::fabs(c) > (1 << 20))
				throw std::invalid_argument(
					"LinearInterp3: coordinates must be "
					"integers of magnitude <= 2^20");
			q[k] = (long long)c;
		}
		if (!seen.emplace(q, (int)pts_.size()).second)
			continue;
		pts_.push_back(q);
		vals_.push_back(values.at(i));
	}
	/* A first tetrahedron: 0, then the first points that are not
	 * collinear / coplanar with the ones chosen. */
	int n = (int)pts_.size(), b = 1, c = -1, d = -1;
	for (int i = 2; i < n && c < 0; i++) {
		P u = pts_[1], w = pts_[i];
		for (int k = 0; k < 3; k++) {
			u[k] -= pts_[0][k];
			w[k] -= pts_[0][k];
		}
		if (u[1] * w[2] != u[2] * w[1] || u[0] * w[2] != u[2] * w[0] ||
		    u[0] * w[1] != u[1] * w[0])
			c = i;
	}
	for (int i = c + 1; c > 0 && i < n && d < 0; i++)
		if (orient(pts_[0], pts_[b], pts_[c], pts_[i]) != 0)
			d = i;
	if (n < 4 || d < 0)
		throw std::invalid_argument(
			"LinearInterp3: the points span no volume");
	std::array<int, 4> t = {0, b, c, d};
	if (orient(pts_[0], pts_[b], pts_[c], pts_[d]) < 0)
		std::swap(t[1], t[2]);
	cells_.push_back(make_cell(t));
	for (const auto &fi : kFaces)
		cells_.push_back(make_cell({t[fi[0]], t[fi[2]], t[fi[1]], -1}));
	for (int i = 1; i < n; i++)
		if (i != b && i != c && i != d)
			insert(i);
	for (const Cell &cl : cells_)
		if (cl.v[3] >= 0)
			finite_.push_back(cl.v);
	spare_ = std::vector<Cell>();
}

std::optional<std::vector<double>> LinearInterp3::at(const Point3 &q) const
{
	const double eps = 100 * 2.220446049250313e-16;
	for (const auto &t : finite_) {
		std::array<std::array<long double, 3>, 4> r;
		for (int i = 0; i < 4; i++)
			for (int k = 0; k < 3; k++)
				r[i][k] = (long double)pts_[t[i]][k];
		auto det = [](const auto &a, const auto &b, const auto &c,
			      const auto &d) {
			long double bx = b[0] - a[0], by = b[1] - a[1],
				    bz = b[2] - a[2];
			long double cx = c[0] - a[0], cy = c[1] - a[1],
				    cz = c[2] - a[2];
			long double dx = d[0] - a[0], dy = d[1] - a[1],
				    dz = d[2] - a[2];
			return bx * (cy * dz - cz * dy) -
			       by * (cx * dz - cz * dx) +
			       bz * (cx * dy - cy * dx);
		};
		std::array<long double, 3> x = {q[0], q[1], q[2]};
		long double o = det(r[0], r[1], r[2], r[3]);
		double l[4];
		bool inside = true;
		for (int i = 0; i < 3 && inside; i++) {
			auto s = r;
			s[i] = x;
			l[i] = (double)(det(s[0], s[1], s[2], s[3]) / o);
			inside = l[i] >= -eps;
		}
		if (!inside)
			continue;
		l[3] = 1.0 - l[0] - l[1] - l[2];
		if (l[3] < -eps)
			continue;
		std::vector<double> v(vals_[t[0]].size(), 0.0);
		for (size_t k = 0; k < v.size(); k++)
			for (int i = 0; i < 4; i++)
				v[k] += l[i] * vals_[t[i]][k];
		return v;
	}
	return std::nullopt;
}

} /* namespace tidal */
