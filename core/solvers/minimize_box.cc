/*
 * minimize_box.cc - projected L-BFGS under box bounds.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/solvers/minimize_box.h"

#include <algorithm>
#include <cmath>
#include <deque>

namespace tidal
{

namespace
{

using Vec = std::vector<double>;

double dot(const Vec &a, const Vec &b)
{
	double s = 0;
	for (size_t i = 0; i < a.size(); i++)
		s += a[i] * b[i];
	return s;
}

struct Box {
	const Vec &lo, &hi;

	double clip(size_t i, double v) const
	{
		return std::min(std::max(v, lo[i]), hi[i]);
	}
	/* Variable I is held: pinned, or on a bound with the gradient
	 * pointing out of the box. */
	bool held(size_t i, double x, double g) const
	{
		if (lo[i] >= hi[i])
			return true;
		return (x <= lo[i] && g > 0) || (x >= hi[i] && g < 0);
	}
	/* max |P(x - g) - x|, L-BFGS-B's projected gradient norm. */
	double pg_norm(const Vec &x, const Vec &g) const
	{
		double m = 0;
		for (size_t i = 0; i < x.size(); i++)
			m = std::max(m, std::fabs(clip(i, x[i] - g[i]) - x[i]));
		return m;
	}
};

struct Pair {
	Vec s, y;
	double rho;
};

/* Two-loop recursion restricted to the free variables. */
Vec lbfgs_direction(const Vec &g, const std::deque<Pair> &mem,
		    const std::vector<bool> &free)
{
	size_t n = g.size();
	Vec q(n, 0.0);
	for (size_t i = 0; i < n; i++)
		q[i] = free[i] ? -g[i] : 0.0;
	auto fdot = [&](const Vec &a, const Vec &b) {
		double s = 0;
		for (size_t i = 0; i < n; i++)
			if (free[i])
				s += a[i] * b[i];
		return s;
	};
	std::vector<double> alpha(mem.size());
	for (size_t k = mem.size(); k-- > 0;) {
		alpha[k] = mem[k].rho * fdot(mem[k].s, q);
		for (size_t i = 0; i < n; i++)
			if (free[i])
				q[i] -= alpha[k] * mem[k].y[i];
	}
	if (!mem.empty()) {
		const Pair &p = mem.back();
		double yy = fdot(p.y, p.y), sy = fdot(p.s, p.y);
		double gamma = (yy > 0 && sy > 0) ? sy / yy : 1.0;
		for (double &v : q)
			v *= gamma;
	}
	for (size_t k = 0; k < mem.size(); k++) {
		double beta = mem[k].rho * fdot(mem[k].y, q);
		for (size_t i = 0; i < n; i++)
			if (free[i])
				q[i] += (alpha[k] - beta) * mem[k].s[i];
	}
	return q;
}

} /* namespace */

MinimizeResult minimize_box(const Objective &f, Vec &x, const Vec &lo,
			    const Vec &hi, const MinimizeOptions &opt)
{
	size_t n = x.size();
	Box box{ lo, hi };
	for (size_t i = 0; i < n; i++)
		x[i] = box.clip(i, x[i]);
	MinimizeResult res;
	Vec g(n), gn(n), xn(n);
	double fx = f(x, &g);
	res.evaluations = 1;
	std::deque<Pair> mem;
	int restarts = 0;
	std::vector<bool> free(n);
	for (res.iterations = 0; res.iterations < opt.maxiter;
	     res.iterations++) {
		if (box.pg_norm(x, g) <= opt.pgtol) {
			res.converged = true;
			break;
		}
		for (size_t i = 0; i < n; i++)
			free[i] = !box.held(i, x[i], g[i]);
		Vec d = lbfgs_direction(g, mem, free);
		double gd = dot(g, d);
		if (!(gd < 0)) { /* not a descent direction: restart */
			mem.clear();
			d = lbfgs_direction(g, mem, free);
			gd = dot(g, d);
		}
		/* The first step is scaled to a unit move, as L-BFGS-B does. */
		double t = mem.empty()
				   ? std::min(1.0, 1.0 / std::sqrt(dot(d, d)))
				   : 1.0;
		double fn = fx;
		bool ok = false;
		for (int k = 0; k < 60; k++, t *= 0.5) {
			for (size_t i = 0; i < n; i++)
				xn[i] = box.clip(i, x[i] + t * d[i]);
			double decr = 0;
			for (size_t i = 0; i < n; i++)
				decr += g[i] * (xn[i] - x[i]);
			fn = f(xn, &gn);
			res.evaluations++;
			if (std::isfinite(fn) && fn <= fx + 1e-4 * decr) {
				ok = true;
				break;
			}
		}
		if (!ok && mem.empty())
			break; /* no progress possible along d */
		if (!ok) {     /* curvature pairs mislead (a kink): restart */
			mem.clear();
			continue;
		}
		Pair p;
		p.s.resize(n);
		p.y.resize(n);
		for (size_t i = 0; i < n; i++) {
			p.s[i] = xn[i] - x[i];
			p.y[i] = gn[i] - g[i];
		}
		double sy = dot(p.s, p.y);
		if (sy > 1e-12 * dot(p.y, p.y) && sy > 0) {
			p.rho = 1.0 / sy;
			mem.push_back(std::move(p));
			if ((int)mem.size() > opt.memory)
				mem.pop_front();
		}
		double rel = (fx - fn) /
			     std::max({ std::fabs(fx), std::fabs(fn), 1.0 });
		x = xn;
		g = gn;
		fx = fn;
		if (rel <= opt.ftol && restarts < opt.restarts) {
			restarts++;
			mem.clear();
		} else if (rel <= opt.ftol) {
			res.converged = true;
			res.iterations++;
			break;
		}
	}
	res.value = fx;
	return res;
}

} /* namespace tidal */
