/*
 * comm.h - the trainer's collectives: a sum all-reduce over one fixed
 * buffer (gradients plus a few control slots), over Gloo's TCP ring on
 * CPUs.  World size 1 needs no peers and no store.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace tidal::train {

class Comm {
public:
	virtual ~Comm() = default;
	/* Sum BUF[0..N) over all ranks, in place; every rank gets the same
	 * bits, and a fixed world size always sums in the same order.
	 * Throws std::runtime_error on a lost peer. */
	virtual void allreduce(float *buf, size_t n) = 0;
};

/* Rendezvous through the store at STORE ("host:port") under PREFIX and
 * connect a full mesh of RANK in WORLD.  RET nullptr with ERR. */
std::unique_ptr<Comm> make_gloo_comm(int rank, int world,
				     const std::string &store,
				     const std::string &prefix, int timeout_s,
				     std::string &err);

/* World size 1: a no-op. */
std::unique_ptr<Comm> make_local_comm();

} /* namespace tidal::train */
