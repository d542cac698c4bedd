/*
 * ckpt_local.h - tidald's view of a node's checkpoint directory
 * (CKPT_ROOT/<jobid>/ckpt-<step>.tck + .done, see node/checkpoint.h):
 * the newest complete checkpoint of a job, checks, free space, and
 * receiving a checkpoint from a peer so that it appears atomically.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proto/wire.h"

namespace tidal::agent
{

struct LocalCkpt {
	std::string path; /* the .tck */
	uint64_t step = 0;
};

std::string job_dir(const std::string &root, uint64_t job);
/* CKPT_ROOT/<job>/ckpt-<step 12 digits>SUFFIX */
std::string ckpt_file(const std::string &root, uint64_t job, uint64_t step,
		      const char *suffix);
/* Newest complete checkpoint of JOB that verifies; skipped ones are
 * appended to WARNINGS. */
std::optional<LocalCkpt> newest_local(const std::string &root, uint64_t job,
				      std::vector<std::string> &warnings);
/* Full integrity check (ckpt::verify); OUT *STEP. */
bool verify_ckpt(const std::string &path, uint64_t *step, std::string *err);
/* Bytes free for unprivileged writers under ROOT (0 if unknown). */
uint64_t free_bytes(const std::string &root);

/* Receive BYTES bytes of JOB's checkpoint STEP from R (a peer's ckpt_get
 * body) into ROOT: temp file, fsync, verify, rename, .done marker, dir
 * fsync; files are given to OWNER (uid, (uid_t)-1 = keep).  A checkpoint
 * that does not verify is deleted and reported in *ERR.  OUT *PATH. */
bool receive_ckpt(const std::string &root, uint64_t job, uint64_t step,
		  uint64_t bytes, wire::Reader &r, uid_t owner,
		  const std::string &from, std::string *path, std::string *err);

} /* namespace tidal::agent */
