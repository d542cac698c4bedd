/*
 * ranks.h - the trainer processes of one node: spawning them with their
 * TIDAL_* environment and an event pipe, reading the JSON event lines
 * they write to it, and describing how they ended.
 *
 * Each trainer gets the write end of a pipe as fd 3 (TIDAL_EVENT_FD=3);
 * the launcher polls the read ends.  Trainers stay in the launcher's
 * process group so that Slurm's proctrack/pgid still reaches them, and
 * die with the launcher (PR_SET_PDEATHSIG).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proto/messages.h"

namespace tidal::launch {

/* One line of a trainer's event stream (tidal-train(1), EVENTS). */
struct Event {
	std::string ev;             /* start, step, ckpt, ckpt_error,
				     * stopped, done */
	int rank = -1;
	uint64_t step = 0;
	double loss = 0;
	bool has_loss = false;
	double it_s = 0, samples_s = 0;
	wire::Stages stages; /* ms per step in each stage */
	wire::GpuUse gpu;    /* step: the GPU's use */
	std::optional<double> gns;
	int64_t batch = 0;          /* step, start */
	std::optional<double> progress, grad_sqr, grad_var;
	std::string path;           /* ckpt: the .tck; start: resumed */
	uint64_t bytes = 0;
	double ms = 0, mb_s = 0;
	std::string backend;
	std::string error;          /* ckpt_error: what failed */
};

/* Parse one JSON line.  RET false with ERR saying what is wrong. */
bool parse_event(const std::string &line, Event &out, std::string &err);

struct Rank {
	int local = 0;
	int global = 0;
	pid_t pid = -1;
	int event_fd = -1;          /* read end; -1 once closed */
	std::string partial;        /* an unfinished line */
	bool started = false;       /* sent "start": signal handlers set */
	bool exited = false;
	int status = 0;             /* waitpid status */
	bool stopped = false;       /* sent "stopped" */
	bool done = false;          /* sent "done" */
};

struct SpawnSpec {
	std::vector<std::string> argv;
	std::vector<std::string> env; /* NAME=VALUE added to ours */
	std::vector<std::string> unset; /* NAMEs removed from ours */
	std::string cpus;             /* "0-15,32-47" to bind to, or "" */
};

/* Fork and exec SPEC for R, filling R.pid and R.event_fd.
 * RET false with ERR (the fork or pipe failure); an exec failure shows as
 * the child exiting 127 with a message on stderr. */
bool spawn_rank(Rank &r, const SpawnSpec &spec, std::string &err);

/* Read what R's pipe holds (non-blocking) and append its complete lines,
 * parsed, to OUT; bad lines are reported on stderr and skipped.  Closes
 * the pipe at end of file. */
void read_events(Rank &r, std::vector<Event> &out);

/* "exit status 1", "killed by signal 9 (Killed)". */
std::string describe_status(int status);

} /* namespace tidal::launch */
