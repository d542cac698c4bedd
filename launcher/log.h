/*
 * log.h - tidal-launch's story on stderr: one line per notable event,
 * "tidal-launch[NODE] HH:MM:SS.mmm what happened", so that a job's output
 * file reads as the job's history.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

namespace tidal::launch {

/* The node name printed on every line (set once, early). */
void log_set_node(const char *node);

/* One line on stderr, printf-style; no trailing newline needed. */
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Seconds on a monotonic clock, for deadlines and durations. */
double now_s();

} /* namespace tidal::launch */
