/*
 * gemm.h - the CPU trainer's single-precision matrix products, row-major,
 * accumulating into C.
 *
 * Every product sums over K in the same order whatever the blocking and the
 * vector width (vectors run along N, never along K), so results are
 * bit-identical run to run and between the AVX2 and the baseline clone;
 * that is what makes a resumed run reproduce an uninterrupted one.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstddef>

namespace tidal::train {

/* C[M,N] += A[M,K] * B[K,N] */
void gemm_nn(size_t m, size_t n, size_t k, const float *a, const float *b,
	     float *c);
/* C[M,N] += A[M,K] * B[N,K]^T  (B transposed into SCRATCH, K*N floats) */
void gemm_nt(size_t m, size_t n, size_t k, const float *a, const float *b,
	     float *c, float *scratch);
/* C[M,N] += A[K,M]^T * B[K,N] */
void gemm_tn(size_t m, size_t n, size_t k, const float *a, const float *b,
	     float *c);

} /* namespace tidal::train */
