/*
 * checkpoint.h - the trainer's checkpoint file: one self-checking file per
 * step plus a completion marker, written so that a crash at any moment
 * leaves either the previous complete checkpoint or the new one.
 *
 * On disk, in a job's directory (CKPT_ROOT/<jobid>):
 *
 *   ckpt-000000001200.tck    the data (written as a temp file, fsynced,
 *                            renamed)
 *   ckpt-000000001200.done   the completion marker, written LAST; a .tck
 *                            without it is incomplete and never loaded
 *   keep-000000001000        a pin (empty file, written by tidald): the
 *                            checkpoint sched/tidal has recorded as this
 *                            node's, or a resize waits for; rotation
 *                            never deletes a pinned step
 *
 * File layout (little-endian):
 *
 *   "TIDALCK1" | u32 version | u32 header bytes (32) | u64 payload bytes
 *              | u64 reserved
 *   payload:   u64 step, samples, global_batch | u32 world | f64 lr
 *              | str model | u32 n, u64 rng[n] | str meta_json
 *              | u32 tensors, then per tensor: str name, u64 n, f32[n]
 *              (str = u32 length + bytes)
 *   trailer:   "TIDALEND" | u64 CRC32C of header and payload
 *
 * The format carries no rank-dependent data, so a checkpoint loads at any
 * world size.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tidal::ckpt {

inline constexpr uint32_t kVersion = 1;
inline constexpr int kKeep = 3; /* complete checkpoints kept per job */

struct State {
	uint64_t step = 0;         /* optimizer steps done */
	uint64_t samples = 0;      /* global data position (samples consumed) */
	uint64_t global_batch = 0;
	uint32_t world = 0;        /* world size that wrote it (informational) */
	std::string model;         /* model name/shape; loading checks it */
	std::vector<uint64_t> rng; /* RNG state (global, rank independent) */
	double lr = 0;
	/* Parameters and optimizer state, by name. */
	std::vector<std::pair<std::string, std::vector<float>>> tensors;
	std::string meta_json;     /* free-form (loss history tail etc.) */
};

/* "DIR/ckpt-<step, 12 digits>" + SUFFIX (".tck" or ".done"). */
std::string file_name(const std::string &dir, uint64_t step,
		      const char *suffix);

/* Atomic write into DIR (created if missing): temp file, fsync, rename,
 * .done marker last, directory fsync; then older complete checkpoints
 * beyond the newest kKeep are deleted, except pinned ones (pin()).
 * RET the .tck path; throws std::runtime_error naming the path and the
 * errno text. */
std::string write(const std::string &dir, const State &s);

/* Read and verify everything (magic, version, sizes, checksum).
 * RET false with ERR = "<path>: <what is wrong>". */
bool read(const std::string &path, State &out, std::string &err);

/* The same checks as read() without building the state (streams the file).
 * OUT *STEP (may be null). */
bool verify(const std::string &path, uint64_t *step, std::string &err);

struct Found {
	std::string path;
	uint64_t step;
};

/* Newest complete checkpoint in DIR that verifies.  Corrupt or incomplete
 * newer ones are skipped, each skip appended to WARNINGS as
 * "<path>: <why>; using the previous one".  A missing DIR is no error. */
std::optional<Found> newest(const std::string &dir,
			    std::vector<std::string> &warnings);

/* Pins (keep-<step> in DIR): rotation keeps a pinned step however many
 * newer checkpoints follow.  tidald pins what it reports to sched/tidal
 * before the report leaves the node, and unpins once the plugin's record
 * has moved past it (nodeagent/plugin_link.cc).
 * pin: a missing DIR is left alone (RET true); RET false with ERR naming
 * the file and the errno text.  unpin: the step, and any other that only
 * its pin kept, goes at once if rotation has passed it (the trainer that
 * would rotate it at its next write may have ended). */
bool pin(const std::string &dir, uint64_t step, std::string &err);
void unpin(const std::string &dir, uint64_t step);
/* The pinned steps in DIR, newest first. */
std::vector<uint64_t> pins(const std::string &dir);

/* Newest checkpoint in DIR with its .done marker, unverified (cheap: no
 * read); nullopt if none. */
std::optional<Found> newest_marked(const std::string &dir);

/* CRC32C (Castagnoli), hardware-accelerated where the CPU has SSE4.2.
 * Continue a running CRC by passing the previous result as CRC. */
uint32_t crc32c(uint32_t crc, const void *data, size_t len);

} /* namespace tidal::ckpt */
