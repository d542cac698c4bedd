/*
 * resume.h - where a generation resumes from.
 *
 * Node 0 picks the checkpoint: when the local tidald runs, whatever it
 * gives for the job (it compares this node's newest with the newest the
 * plugin knows of, anywhere, and copies that one here if it is newer; it
 * falls back to this node's newest when the other node is unreachable,
 * with a warning), else, with no tidald or none from it, the newest
 * complete one that verifies in CKPT_ROOT/<job> (ckpt::newest; corrupt
 * or incomplete newer ones are skipped with a warning), else none: the
 * job starts from scratch, with a line saying where it looked.  The other nodes are told the step and must
 * find that very step (locally, else through their tidald).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tidal::launch {

struct Resume {
	std::string path; /* the .tck */
	uint64_t step = 0;
	std::string from; /* "local" or the node tidald fetched it from */
};

/* RUN_DIR/<node>/tidald.sock */
std::string tidald_socket(const std::string &run_dir, const std::string &node);

/* The checkpoint root: FLAG if set, else tidald's "hello" ckpt_dir when
 * its socket exists, else $TIDAL_CKPT_DIR, else /var/lib/tidal/ckpt. */
std::string resolve_ckpt_root(const std::string &flag,
			      const std::string &tidald_sock);

/* Node 0's choice (see above); warnings are logged with note().
 * RET nullopt: start fresh, with NONE_WHY saying where it looked. */
std::optional<Resume> find_newest(const std::string &job_dir,
				  const std::string &job,
				  const std::string &tidald_sock,
				  std::string &none_why);

/* The global batch the scheduler chose for JOB (tidald's job_plan, which
 * asks sched/tidal): > 0 a batch, 0 none chosen (or no tidald socket),
 * -1 with ERR when tidald or the plugin did not answer.  OUT *GROUP_SIZE
 * (if given): the jobs sharing its GPU as the plugin saw them, 0 none;
 * *SHARE (if given): how its policy shares a GPU, "interleave" or "pack"
 * ("interleave" when the plugin did not say, as before packs). */
int64_t plan_batch(const std::string &job, const std::string &tidald_sock,
		   std::string &err, int *group_size = nullptr,
		   std::string *share = nullptr);

/* The shared GPU of local rank LOCAL on NODE: "NODE-gpuG" when the job
 * holds GPU shards here ($SLURM_SHARDS_ON_NODE > 0; G the LOCAL-th entry
 * of VISIBLE, the job's $CUDA_VISIBLE_DEVICES), else "".  It names the
 * pack a packed trainer joins (TIDAL_PACK). */
std::string shared_gpu(const std::string &node, int local,
		       const char *shards_on_node, const char *visible);
/* Its interleaving group, for TIDAL_GROUP: "NODE-gpuG/SIZE", or "".
 * SIZE: GROUP_SIZE, at least 1. */
std::string interleave_group(const std::string &node, int local,
			     const char *shards_on_node, const char *visible,
			     int group_size);

/* Another node's lookup of STEP.  RET false with ERR saying where it
 * looked. */
bool find_step(const std::string &job_dir, const std::string &job,
	       const std::string &tidald_sock, uint64_t step, Resume &out,
	       std::string &err);

} /* namespace tidal::launch */
