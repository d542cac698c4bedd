/*
 * gemm.cc - cache-blocked CPU GEMM (see gemm.h for the determinism rule).
 *
 * Blocks: a KB x NB panel of B (128 x 512 floats = 256 KiB) stays in L2
 * while every row of A streams past it; the innermost loop is an axpy along
 * N that the compiler vectorizes.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "trainer/gemm.h"

#include <algorithm>

namespace tidal::train {

namespace {

constexpr size_t KB = 128, NB = 512;

#if defined(__x86_64__) && !defined(__clang__)
#define TIDAL_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TIDAL_CLONES
#endif

/* c[0..n) += a * b[0..n) ; no FMA contraction so every clone rounds the
 * same way (see gemm.h). */
TIDAL_CLONES __attribute__((optimize("O3", "fp-contract=off"))) void
axpy_rows(size_t rows, size_t n, size_t kb, const float *a, size_t lda,
	  const float *b, size_t ldb, float *c, size_t ldc)
{
	for (size_t i = 0; i < rows; i++) {
		float *__restrict ci = c + i * ldc;
		for (size_t p = 0; p < kb; p++) {
			const float ap = a[i * lda + p];
			const float *__restrict bp = b + p * ldb;
			for (size_t j = 0; j < n; j++)
				ci[j] += ap * bp[j];
		}
	}
}

} /* namespace */

void gemm_nn(size_t m, size_t n, size_t k, const float *a, const float *b,
	     float *c)
{
	for (size_t j0 = 0; j0 < n; j0 += NB) {
		size_t nb = std::min(NB, n - j0);
		for (size_t p0 = 0; p0 < k; p0 += KB)
			axpy_rows(m, nb, std::min(KB, k - p0), a + p0, k,
				  b + p0 * n + j0, n, c + j0, n);
	}
}

void gemm_nt(size_t m, size_t n, size_t k, const float *a, const float *b,
	     float *c, float *scratch)
{
	for (size_t j = 0; j < n; j++)
		for (size_t p = 0; p < k; p++)
			scratch[p * n + j] = b[j * k + p];
	gemm_nn(m, n, k, a, scratch, c);
}

/* C[i,j] += sum_p A[p,i] B[p,j]: for each row block of C, stream the rows
 * of A and B (p ascending: the summation order). */
TIDAL_CLONES __attribute__((optimize("O3", "fp-contract=off"))) void
gemm_tn(size_t m, size_t n, size_t k, const float *a, const float *b, float *c)
{
	constexpr size_t MB = 16;
	for (size_t j0 = 0; j0 < n; j0 += NB) {
		size_t nb = std::min(NB, n - j0);
		for (size_t i0 = 0; i0 < m; i0 += MB) {
			size_t mb = std::min(MB, m - i0);
			for (size_t p = 0; p < k; p++) {
				const float *__restrict bp = b + p * n + j0;
				for (size_t i = i0; i < i0 + mb; i++) {
					const float ap = a[p * m + i];
					float *__restrict ci = c + i * n + j0;
					for (size_t j = 0; j < nb; j++)
						ci[j] += ap * bp[j];
				}
			}
		}
	}
}

} /* namespace tidal::train */
