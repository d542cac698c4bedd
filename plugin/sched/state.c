/*
 * state.c - sched/tidal's own state under StateSaveLocation.
 *
 * slurmctld saves its jobs itself; what only Tidal knows would be lost on a
 * restart: each job's first submit time and arrival sequence (a requeue
 * resets Slurm's), GPU-seconds of earlier runs (Tiresias levels, fairness),
 * the jobs it requeued (whose begin-time delay it undoes) and the resizes
 * under way (resize.c).  The file is text, one record per line:
 *
 *   TIDAL-STATE 1                         magic and version
 *   requeue JOB WHEN                      resize.c
 *   resize JOB GPUS NODES PHASE SET SINCE [CMD]   resize.c
 *   agentseq N / ckpt JOB STEP WHEN NODE ADDR PATH / agentcmd ...
 *                                         agents/persist.cc: checkpoint
 *                                         locations, unanswered agent
 *                                         commands
 *   seq N / memo JOB ...                  engine.cc
 *   policy NAME ...                       engine.cc: the policy's own
 *                                         (Policy::save_state: Gavel's
 *                                         rounds)
 *   end LINES FNV1A32                     completion marker, last
 *
 * It is written after a cycle that changed it (the engine keeps a dirty
 * flag, so a quiet cycle formats nothing): to
 * tidal_state.new, fsync'd, renamed over tidal_state, and the directory
 * fsync'd, so a kill -9 at any instant leaves either the old or the new
 * file whole.  Before the rename the file in place is hard-linked as
 * tidal_state.prev.  A file missing, without its end line or with a wrong
 * checksum (truncated, corrupted on disk) is refused with a message, set
 * aside as tidal_state.bad, and tidal_state.prev is loaded instead; with no
 * good file at all Tidal starts afresh (slurmctld's jobs are unaffected:
 * they live in Slurm's own state).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#include "plugin/sched/bridge.h"
#include "plugin/sched/slurm_side.h"

#define STATE_MAGIC "TIDAL-STATE"
#define STATE_VERSION 1

static char *last_transit; /* resize.c's lines at the last write */
static char *last_engine;  /* engine.cc's lines at the last write */

static uint32_t _fnv1a(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

static char *_path(const char *suffix)
{
	char *p = NULL;
	xstrfmtcat(p, "%s/tidal_state%s", slurm_conf.state_save_location,
		   suffix);
	return p;
}

static int _write_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		n -= w;
	}
	return 0;
}

static int _write_file(const char *body, int lines)
{
	char *tmp = _path(".new"), *dst = _path(""), *prev = _path(".prev");
	char head[64], tail[64];
	size_t n = strlen(body);
	int fd, rc = -1;

	/* The body as it is (a megabyte at 10,000 jobs), between a header
	 * and an end line: not copied into one formatted string. */
	snprintf(head, sizeof(head), "%s %d\n", STATE_MAGIC, STATE_VERSION);
	snprintf(tail, sizeof(tail), "end %d %08x\n", lines, _fnv1a(body, n));
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		error("sched/tidal: cannot write %s: %m", tmp);
		goto out;
	}
	if (_write_all(fd, head, strlen(head)) || _write_all(fd, body, n) ||
	    _write_all(fd, tail, strlen(tail)) || fsync(fd)) {
		error("sched/tidal: writing %s failed: %m", tmp);
		close(fd);
		goto out;
	}
	close(fd);
	/* The file in place becomes the previous good one: a hard link, so
	 * that tidal_state itself is never missing. */
	if ((unlink(prev) && errno != ENOENT) ||
	    (link(dst, prev) && errno != ENOENT))
		error("sched/tidal: cannot keep the previous state as %s: %m",
		      prev);
	if (rename(tmp, dst)) {
		error("sched/tidal: rename %s to %s failed: %m", tmp, dst);
		goto out;
	}
	if ((fd = open(slurm_conf.state_save_location,
		       O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	rc = 0;
out:
	xfree(tmp);
	xfree(dst);
	xfree(prev);
	return rc;
}

extern void tidal_state_save(void)
{
	char *transit = NULL, *engine_lines = tidal_engine_state_dump(0);
	char *body;
	int lines = 0;

	char *agent_lines = tidal_agent_state_dump();

	tidal_transit_dump(&transit);
	if (agent_lines) /* compared and written with resize.c's lines */
		xstrcat(transit, agent_lines);
	free(agent_lines);
	if (!transit)
		transit = xstrdup("");
	if (!engine_lines && last_engine && !xstrcmp(transit, last_transit)) {
		xfree(transit); /* nothing happened: the file is current */
		tidal_agent_state_saved();
		return;
	}
	if (engine_lines || !last_engine) {
		if (!engine_lines)
			engine_lines = tidal_engine_state_dump(1);
		xfree(last_engine);
		last_engine = xstrdup(engine_lines ? engine_lines : "");
		free(engine_lines);
	}
	body = xstrdup(transit);
	xstrcat(body, last_engine);
	for (const char *p = body; *p; p++)
		lines += *p == '\n';
	if (_write_file(body, lines) == 0) {
		tidal_agent_state_saved();
		xfree(last_transit);
		last_transit = transit;
	} else {
		xfree(transit);
		xfree(last_engine); /* force a full write next time */
	}
	xfree(body);
}

static char *_read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char buf[8192], *text = NULL;
	size_t n;

	if (!f)
		return NULL;
	while ((n = fread(buf, 1, sizeof(buf) - 1, f)) > 0) {
		buf[n] = '\0';
		xstrcat(text, buf);
	}
	fclose(f);
	return text ? text : xstrdup("");
}

/* Check TEXT's header and end line; RET the body (inside TEXT) or NULL. */
static char *_verify(char *text, const char *path)
{
	int version = 0, lines = -1, seen = 0;
	unsigned sum = 0;
	char *body, *end;

	if (sscanf(text, STATE_MAGIC " %d", &version) != 1) {
		error("sched/tidal: %s: not a Tidal state file (no %s header); "
		      "ignoring it",
		      path, STATE_MAGIC);
		return NULL;
	}
	if (version != STATE_VERSION) {
		error("sched/tidal: %s: state version %d, this plugin reads "
		      "%d; ignoring it",
		      path, version, STATE_VERSION);
		return NULL;
	}
	body = strchr(text, '\n');
	end = body ? strstr(body, "\nend ") : NULL;
	if (!end || sscanf(end + 1, "end %d %x", &lines, &sum) != 2) {
		error("sched/tidal: %s: no completion marker (truncated?); "
		      "ignoring it",
		      path);
		return NULL;
	}
	body++;
	end[1] = '\0';
	for (const char *p = body; *p; p++)
		seen += *p == '\n';
	if (body > end) /* empty body */
		body = end + 1, seen = 0;
	if (seen != lines || _fnv1a(body, strlen(body)) != sum) {
		error("sched/tidal: %s: checksum or line count wrong; ignoring "
		      "it",
		      path);
		return NULL;
	}
	return body;
}

/* Read and verify PATH; RET its text (the body at *BODY) or NULL. */
static char *_load_verified(const char *path, char **body)
{
	char *text = _read_file(path);

	if (!text) {
		*body = NULL;
		return NULL;
	}
	if (!(*body = _verify(text, path)))
		xfree(text);
	return text;
}

extern void tidal_state_load(void)
{
	char *path = _path(""), *prev = _path(".prev"), *body = NULL;
	const char *from = path;
	char *text;
	int n = 0, unknown = 0;

	/* What the last save wrote is not what is on disk now, nor what
	 * this load leaves in memory: the next save writes everything. */
	xfree(last_transit);
	xfree(last_engine);
	tidal_transit_clear();
	text = _load_verified(path, &body);
	if (!text && access(path, F_OK) && access(prev, F_OK)) {
		info("sched/tidal: no state in %s: starting afresh", path);
		goto out;
	}
	if (!text) { /* missing, truncated or corrupt: the one before it */
		struct stat st;

		if (!(text = _load_verified(prev, &body))) {
			error("sched/tidal: no good state in %s or %s: starting "
			      "afresh (Slurm's own job state is unaffected)",
			      path, prev);
			goto out;
		}
		from = prev;
		if (stat(prev, &st) == 0)
			error("sched/tidal: using the previous good state %s, "
			      "written %ld s ago",
			      prev, (long)(time(NULL) - st.st_mtime));
		/* Set the bad file aside, or the next save would keep it as
		 * the previous one in place of the good one. */
		if (!access(path, F_OK)) {
			char *bad = _path(".bad");

			if (rename(path, bad))
				error("sched/tidal: cannot move %s aside: %m",
				      path);
			else
				info("sched/tidal: the bad state is kept as %s",
				     bad);
			xfree(bad);
		}
	}
	for (char *save = NULL, *l = strtok_r(body, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		if (tidal_transit_load_line(l) || tidal_agent_state_line(l) ||
		    tidal_engine_state_line(l))
			n++;
		else
			unknown++;
	}
	info("sched/tidal: state restored from %s: %d records%s", from, n,
	     unknown ? " (some unknown lines skipped)" : "");
out:
	xfree(text);
	xfree(path);
	xfree(prev);
}
