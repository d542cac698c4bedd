/*
 * pollux_problem.cc - Pollux's allocation problem: objective and repair.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "core/policies/pollux_problem.h"

#include <algorithm>
#include <numeric>

namespace tidal
{

static std::uint64_t splitmix(std::uint64_t &x)
{
	std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

Rng::Rng(std::uint64_t seed)
{
	for (auto &s : s_)
		s = splitmix(seed);
}

static std::uint64_t rotl(std::uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

std::uint64_t Rng::next()
{
	std::uint64_t r = rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
	s_[2] ^= s_[0];
	s_[3] ^= s_[1];
	s_[1] ^= s_[2];
	s_[0] ^= s_[3];
	s_[2] ^= t;
	s_[3] = rotl(s_[3], 45);
	return r;
}

double Rng::uniform()
{
	return (double)(next() >> 11) * 0x1.0p-53;
}

int Rng::below(int n)
{
	return (int)(((unsigned __int128)next() * (unsigned)n) >> 64);
}

PolluxProblem::PolluxProblem(std::vector<PolluxJobInput> jobs,
			     std::vector<int> node_gpus, std::vector<int> base)
    : jobs_(std::move(jobs)), caps_(std::move(node_gpus)),
      base_(std::move(base))
{
	int total = std::accumulate(caps_.begin(), caps_.end(), 0);
	/* dominant share (1 GPU of TOTAL) x number of nodes */
	scale_ = total ? (double)caps_.size() / total : 0.0;
	memo_.assign(jobs_.size(), {});
}

bool PolluxProblem::row_is_base(const int *row, int j) const
{
	return std::equal(row, row + nodes(),
			  base_.data() + (size_t)j * nodes());
}

double PolluxProblem::speedup(int j, int nodes, int replicas) const
{
	if (replicas == 0)
		return 0.0;
	int multi = nodes > 1;
	auto &m = memo_[j];
	size_t k = 2 * (size_t)replicas + multi;
	if (m.size() <= k)
		m.resize(k + 1, -1.0);
	if (m[k] < 0)
		m[k] = jobs_[j].speedup(multi ? 2 : 1, replicas);
	return m[k];
}

double PolluxProblem::scaled(int j, int nodes, int replicas, bool kept) const
{
	double s = speedup(j, nodes, replicas) * scale_;
	return kept ? s : s * jobs_[j].restart_factor;
}

static void row_shape(const int *row, int n, int *nodes, int *replicas)
{
	*nodes = *replicas = 0;
	for (int i = 0; i < n; i++)
		if (row[i]) {
			++*nodes;
			*replicas += row[i];
		}
}

double PolluxProblem::inverse_sum(const int *state) const
{
	double inv = 0;
	for (int j = 0; j < jobs(); j++) {
		const int *row = state + (size_t)j * nodes();
		int k, r;
		row_shape(row, nodes(), &k, &r);
		inv += 1.0 / (scaled(j, k, r, row_is_base(row, j)) + 1e-3);
	}
	return inv;
}

void PolluxProblem::evaluate(const int *state, double *f1, double *f2) const
{
	*f1 = f1_from_inverse_sum(inverse_sum(state), jobs());
	double sum = 0;
	int active = 0;
	for (int n = 0; n < nodes(); n++) {
		bool any = false;
		for (int j = 0; j < jobs() && !any; j++)
			any = state[(size_t)j * nodes() + n] > 0;
		if (any)
			active += caps_[n];
	}
	for (int j = 0; j < jobs(); j++) {
		int k, r;
		row_shape(state + (size_t)j * nodes(), nodes(), &k, &r);
		sum += speedup(j, k, r);
	}
	*f2 = active ? -sum / active : 0.0;
}

void PolluxProblem::repair(int *state, Rng &rng) const
{
	int J = jobs(), N = nodes();
	/* 1. one distributed job per node: the running count of distributed
	 * entries on a node zeroes every entry after the first. */
	std::vector<char> dist(J);
	for (int j = 0; j < J; j++) {
		int k, r;
		row_shape(state + (size_t)j * N, N, &k, &r);
		dist[j] = k > 1;
	}
	for (int n = 0; n < N; n++) {
		int seen = 0;
		for (int j = 0; j < J; j++) {
			int &v = state[(size_t)j * N + n];
			if (dist[j] && v > 0)
				seen++;
			if (seen > 1)
				v = 0;
		}
	}
	/* 2, 3. max_replicas and 16 nodes, over a random node order */
	std::vector<int> order(N);
	for (int j = 0; j < J; j++) {
		int *row = state + (size_t)j * N;
		std::iota(order.begin(), order.end(), 0);
		for (int i = N - 1; i > 0; i--)
			std::swap(order[i], order[rng.below(i + 1)]);
		int left = jobs_[j].max_replicas, used_nodes = 0;
		for (int n : order) {
			int v = std::min(row[n], left);
			if (v > 0 && used_nodes >= 16)
				v = 0;
			row[n] = v;
			left -= v;
			used_nodes += v > 0;
		}
	}
	/* 4. node capacity, earlier jobs first */
	for (int n = 0; n < N; n++) {
		int left = caps_[n];
		for (int j = 0; j < J; j++) {
			int &v = state[(size_t)j * N + n];
			v = std::min(v, left);
			left -= v;
		}
	}
}

bool PolluxProblem::feasible(const int *state) const
{
	int J = jobs(), N = nodes();
	std::vector<int> used(N, 0), owners(N, 0);
	for (int j = 0; j < J; j++) {
		const int *row = state + (size_t)j * N;
		int k, r;
		row_shape(row, N, &k, &r);
		if (r > jobs_[j].max_replicas || k > 16)
			return false;
		for (int n = 0; n < N; n++) {
			if (row[n] < 0)
				return false;
			used[n] += row[n];
			if (k > 1 && row[n] > 0 && ++owners[n] > 1)
				return false;
		}
	}
	for (int n = 0; n < N; n++)
		if (used[n] > caps_[n])
			return false;
	return true;
}

} /* namespace tidal */
