/*
 * account.c - Tidal's decision for each job, where sacct shows it.
 *
 * With AccountingComment=admin (the default), a job's AdminComment holds
 * one line that says what Tidal did with it:
 *
 *   Tidal policy=elasticflow gpus=4 resizes=2 preempts=0
 *   Tidal policy=elasticflow gpus=0 resizes=0 preempts=0 rejected=WHY
 *
 * gpus is what its latest run started with (0: it never ran), resizes and
 * preempts count the times Tidal requeued it to resize or preempt it, and
 * rejected the policy's reason for rejecting it.  slurmctld sends the
 * AdminComment to slurmdbd when the job ends (and when it is requeued),
 * so that `sacct -o JobID,AdminComment` shows it; the job's saved state
 * carries it across a slurmctld restart, and the counts are read back
 * from it, so this file keeps nothing of its own.
 *
 * A job whose AdminComment is the administrator's (set with scontrol, not
 * starting "Tidal ") is left alone.  Characters that would break sacct's
 * --parsable2 output or its database query ('|', quotes, backslashes,
 * control characters) are written as '/' or ' '.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/xstring.h"

#include "plugin/sched/slurm_side.h"

#define MARK "Tidal "

static int mode = TIDAL_ACCT_ADMIN;
static char policy[64] = "?";

extern void tidal_account_configure(const tidal_apply_conf_t *conf)
{
	mode = conf->acct_comment;
	snprintf(policy, sizeof(policy), "%s",
		 conf->policy[0] ? conf->policy : "?");
}

/* What the comment holds now: the counts, or zeros. */
typedef struct {
	int gpus, resizes, preempts;
} record_t;

static void _read(const char *text, record_t *r)
{
	const char *at;

	memset(r, 0, sizeof(*r));
	if (!text)
		return;
	if ((at = strstr(text, " gpus=")))
		r->gpus = atoi(at + 6);
	if ((at = strstr(text, " resizes=")))
		r->resizes = atoi(at + 9);
	if ((at = strstr(text, " preempts=")))
		r->preempts = atoi(at + 10);
}

/* Whether Tidal may write JOB_PTR's AdminComment. */
static bool _ours(job_record_t *job_ptr)
{
	if (mode != TIDAL_ACCT_ADMIN)
		return false;
	if (!job_ptr->admin_comment || !job_ptr->admin_comment[0] ||
	    !strncmp(job_ptr->admin_comment, MARK, strlen(MARK)))
		return true;
	debug("sched/tidal: %pJ: its AdminComment is the administrator's; "
	      "Tidal's decision is not written there",
	      job_ptr);
	return false;
}

static void _write(job_record_t *job_ptr, const record_t *r,
		   const char *rejected)
{
	char *text = NULL;

	xstrfmtcat(text, MARK "policy=%s gpus=%d resizes=%d preempts=%d",
		   policy, r->gpus, r->resizes, r->preempts);
	if (rejected) {
		size_t from = strlen(text);

		xstrfmtcat(text, " rejected=%s", rejected);
		for (char *c = text + from; *c; c++)
			if (*c == '|' || *c == '\'' || *c == '"' || *c == '\\')
				*c = '/';
			else if ((unsigned char)*c < ' ')
				*c = ' ';
	}
	if (job_ptr->admin_comment && !strcmp(job_ptr->admin_comment, text)) {
		xfree(text);
		return;
	}
	xfree(job_ptr->admin_comment);
	job_ptr->admin_comment = text;
	last_job_update = time(NULL);
}

extern void tidal_account_started(job_record_t *job_ptr)
{
	record_t r;
	int gpus;

	if (!_ours(job_ptr))
		return;
	_read(job_ptr->admin_comment, &r);
	gpus = tidal_alloc_gpus(job_ptr);
	r.gpus = gpus > 0 ? gpus : 0;
	_write(job_ptr, &r, NULL);
}

extern void tidal_account_requeued(job_record_t *job_ptr, bool preempted)
{
	record_t r;

	if (!_ours(job_ptr))
		return;
	_read(job_ptr->admin_comment, &r);
	if (preempted)
		r.preempts++;
	else
		r.resizes++;
	_write(job_ptr, &r, NULL);
}

extern void tidal_account_rejected(job_record_t *job_ptr, const char *why)
{
	record_t r;

	if (!_ours(job_ptr))
		return;
	_read(job_ptr->admin_comment, &r);
	_write(job_ptr, &r, why && *why ? why : "rejected");
}
