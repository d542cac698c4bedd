/*
 * sched_tidal.c - the sched/tidal plugin shim: Slurm's entry points and the
 * one scheduling thread, in the manner of sched/backfill's wrapper.
 *
 * Each cycle:
 *
 *   lock (job W, node W, part R)  tidal_requeue_delays_give_back() resize.c
 *                                 tidal_snapshot_take()   snapshot.c
 *   unlock                        tidal_snapshot_finish()
 *                                 tidal_engine_decide()   engine.cc (C++)
 *                                 tidal_plan_prepare()    apply.c
 *   lock (job W, node W, part R)  tidal_plan_apply()
 *   unlock, lock ...              tidal_plan_apply_reasons(), while
 *                                 Reasons are left to write
 *   unlock                        tidal_state_save()      state.c
 *   sleep CycleInterval, or until the time the policy asked to be asked
 *   again (Plan::wake_at: a Gavel round's end, a Tiresias queue
 *   boundary) or a start waits for nodes still completing a job, at
 *   least WAKE_MIN s later (_sleep_for); or until scontrol
 *   reconfigure, or an ack from tidald that a resize waits for:
 *   agents/node_ops.cc calls tidal_cycle_wake, registered with
 *   tidal_agent_on_awaited_ack at init; or until a job is submitted, no
 *   more often than keeps the cycle to a tenth of the time: _sleep)
 *
 * The sections under the lock copy and change only what changed since the
 * last cycle (see snapshot.c and apply.c): what slurmctld's other threads
 * wait for grows with the changes, not with the number of jobs.
 *
 * With SchedulerParameters=defer,sched_interval=-1 slurmctld's own
 * scheduler starts nothing, so every start comes from here.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "slurm/slurm_errno.h"

#include "src/common/log.h"
#include "src/common/macros.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"
#include "src/slurmctld/state_save.h"

#include "plugin/sched/bridge.h"
#include "plugin/sched/slurm_side.h"

const char plugin_name[] = "Tidal scheduler for deep-learning training";
const char plugin_type[] = "sched/tidal";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

static pthread_t tidal_thread;
static pthread_mutex_t thread_flag_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t term_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t term_cond = PTHREAD_COND_INITIALIZER;
static bool stop_agent;
static bool wake_agent;

/* See slurm_side.h. */
extern void tidal_log_lines(char *text, bool errors)
{
	for (char *save = NULL, *l = text ? strtok_r(text, "\n", &save) : NULL;
	     l; l = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(l, "note: ", 6))
			info("sched/tidal: %s", l + 6);
		else if (errors)
			error("sched/tidal: %s", l);
		else
			info("sched/tidal: %s", l);
	}
}

/*
 * The configuration in force, kept for this slurmctld process in
 * StateSaveLocation/tidal_conf_in_force: "pid N start T" (_self_id) on its
 * first line, then the tidal.conf text the engine took.  Slurm 24.11's scontrol
 * reconfigure starts a new slurmctld; when that one fails (its init() refused a
 * tidal.conf with errors), the old process goes on, reading its
 * configuration again and calling init() anew: it then finds its own pid
 * here and keeps the configuration it had, as 22.05's reconfigure does.
 */
static char *_in_force_path(void)
{
	char *p = NULL;

	xstrfmtcat(p, "%s/tidal_conf_in_force", slurm_conf.state_save_location);
	return p;
}

/* This process, as no other: "pid N start T", T its start time in clock
 * ticks since boot (/proc/self/stat), for a pid can come again (a
 * container's slurmctld has the same one at every start). */
static char *_self_id(void)
{
	char buf[1024], *p = NULL, *id = NULL;
	unsigned long long start = 0;
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	/* After the command's closing parenthesis: field 3 on; start time
	 * is field 22. */
	if ((p = strrchr(buf, ')'))) {
		p++;
		for (int field = 3; field < 22 && p; field++)
			p = strchr(p + 1, ' ');
		if (p)
			start = strtoull(p + 1, NULL, 10);
	}
	xstrfmtcat(id, "pid %ld start %llu", (long)getpid(), start);
	return id;
}

static void _in_force_save(const char *text)
{
	char *path = _in_force_path(), *tmp = NULL, *id = _self_id();
	FILE *f;
	int bad;

	xstrfmtcat(tmp, "%s.new", path);
	if ((f = fopen(tmp, "w"))) {
		bad = fprintf(f, "%s\n%s", id, text) < 0;
		bad |= fclose(f) != 0;
		bad = bad || rename(tmp, path);
	} else {
		bad = 1;
	}
	if (bad)
		error("sched/tidal: %s: %m (the configuration in force is not "
		      "kept for a failed reconfigure)",
		      path);
	xfree(id);
	xfree(tmp);
	xfree(path);
}

/* The text saved by this very process, or NULL (xfree it). */
static char *_in_force_load(void)
{
	char *path = _in_force_path(), *text = NULL, *id = _self_id();
	char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	xfree(path);
	if (!f || !fgets(buf, sizeof(buf), f) ||
	    strcspn(buf, "\n") != strlen(id) || strncmp(buf, id, strlen(id))) {
		if (f)
			fclose(f);
		xfree(id);
		return NULL;
	}
	xfree(id);
	xstrcat(text, "");
	while ((n = fread(buf, 1, sizeof(buf) - 1, f)) > 0) {
		buf[n] = '\0';
		xstrcat(text, buf);
	}
	fclose(f);
	return text;
}

/* Read tidal.conf (beside slurm.conf) into the engine.  A missing file
 * means the defaults (Policy=fifo).  RET -1 if the file names an unknown
 * policy or key or has a line that is not Key=Value: then nothing of it is
 * used (the previous configuration stays, if any).  A bad value is only
 * logged, and its default used (Slurm's rule). */
static int _load_config(void)
{
	int rc = 0;
	char *path = get_extra_conf_path("tidal.conf");
	char *text = NULL, *msg = NULL;
	FILE *f = fopen(path, "r");

	if (f) {
		char buf[4096];
		size_t n;
		while ((n = fread(buf, 1, sizeof(buf) - 1, f)) > 0) {
			buf[n] = '\0';
			xstrcat(text, buf);
		}
		fclose(f);
	} else {
		info("sched/tidal: %s: not readable (%m); using the defaults",
		     path);
	}
	rc = tidal_engine_configure(text ? text : "", path, &msg);
	/* "note: " lines (a key only another policy reads) are no error. */
	tidal_log_lines(msg, true);
	free(msg);
	if (rc) {
		error("sched/tidal: %s is not used: fix the lines above", path);
		xfree(text);
		xfree(path);
		return -1;
	}
	_in_force_save(text ? text : "");
	xfree(text);
	xfree(path);
	info("sched/tidal: policy %s, cycle every %.1f s",
	     tidal_engine_policy(), tidal_engine_interval());
	if (!xstrcasestr(slurm_conf.sched_params, "sched_interval=-1"))
		info("sched/tidal: SchedulerParameters lacks sched_interval=-1: "
		     "slurmctld's own scheduler will start jobs too");
	return rc;
}

/* init() after tidal.conf was refused: this process's configuration in
 * force before a failed reconfigure, if it had one.  RET 0 if taken. */
static int _keep_in_force(void)
{
	char *text = _in_force_load(), *msg = NULL;
	int rc;

	if (!text)
		return -1;
	rc = tidal_engine_configure(text, "the configuration in force", &msg);
	tidal_log_lines(msg, true);
	free(msg);
	xfree(text);
	if (rc)
		return -1;
	error("sched/tidal: the reconfigure failed on tidal.conf's errors; "
	      "this slurmctld goes on, keeping the configuration in force "
	      "(Policy=%s)",
	      tidal_engine_policy());
	return 0;
}

static double _ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 +
	       (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* lock_slurmctld() timed: WAIT and HOLD add up the ms spent waiting for
 * the locks and holding them, for the cycle's debug line. */
static void _lock(slurmctld_lock_t locks, struct timespec *got, double *wait)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	lock_slurmctld(locks);
	clock_gettime(CLOCK_MONOTONIC, got);
	*wait += (got->tv_sec - t0.tv_sec) * 1e3 +
		 (got->tv_nsec - t0.tv_nsec) / 1e6;
}

static void _unlock(slurmctld_lock_t locks, const struct timespec *got,
		    double *hold)
{
	*hold += _ms_since(got);
	unlock_slurmctld(locks);
}

static double _now(void)
{
	struct timeval now;

	gettimeofday(&now, NULL);
	return now.tv_sec + now.tv_usec / 1e6;
}

/* One cycle.  RET: when the policy wants the next one (epoch s), 0 for
 * no wish. */
static double _cycle(void)
{
	slurmctld_lock_t locks = {
		.conf = READ_LOCK, .job = WRITE_LOCK, .node = WRITE_LOCK,
		.part = READ_LOCK, .fed = READ_LOCK,
	};
	tidal_snap_t snap;
	tidal_plan_t plan;
	tidal_apply_conf_t conf;
	char *msg = NULL;
	struct timespec t0, got, start;
	double snap_ms, apply_ms, wait_ms = 0, hold_ms = 0;
	time_t before;
	bool changed;
	int started, left, sections = 1;
	double wake_at;

	tidal_log_lines((msg = tidal_metrics_log_drain()), true);
	free(msg);
	msg = NULL;
	tidal_snapshot_deadlines(tidal_engine_admits_by_deadline());
	clock_gettime(CLOCK_MONOTONIC, &start);
	t0 = start;
	_lock(locks, &got, &wait_ms);
	tidal_requeue_delays_give_back(time(NULL));
	tidal_snapshot_take(&snap);
	_unlock(locks, &got, &hold_ms);
	snap_ms = _ms_since(&t0);
	tidal_snapshot_finish(&snap);

	if (tidal_engine_decide(&snap, &plan, &msg)) {
		error("sched/tidal: %s", msg ? msg : "decide failed");
		free(msg);
		tidal_snapshot_free(&snap);
		return 0;
	}
	tidal_log_lines(plan.log, false);
	tidal_engine_apply_conf(&conf);
	tidal_plan_prepare(&snap, &plan);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	_lock(locks, &got, &wait_ms);
	before = last_job_update;
	started = tidal_plan_apply(&snap, &plan, &conf);
	changed = last_job_update != before;
	_unlock(locks, &got, &hold_ms);
	apply_ms = _ms_since(&t0);
	/* Reasons beyond the first chunk: other threads get the lock in
	 * between. */
	for (left = tidal_plan_reasons_left(&plan); left > 0; sections++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		_lock(locks, &got, &wait_ms);
		before = last_job_update;
		left = tidal_plan_apply_reasons(&snap, &plan);
		changed |= last_job_update != before;
		_unlock(locks, &got, &hold_ms);
		apply_ms += _ms_since(&t0);
	}
	if (started || changed) {
		/* Saved now, not within the 5 s the state-save thread may
		 * wait: a kill -9 of slurmctld must not forget a start (its
		 * recovered job would be PENDING, its running batch step
		 * aborted and the job started again) nor a requeue (the
		 * recovered job would hold GPUs that the next cycle gives
		 * to another job).  The next cycle starts nothing on a
		 * requeued job's GPUs before this. */
		(void)dump_all_job_state();
		schedule_node_save();
	}
	tidal_state_save();

	/* snapshot and apply are wall times, waits for the locks included;
	 * held and waited split the lock sections' share (bench/load.sh). */
	debug("sched/tidal: %d jobs, %d started; snapshot %.3f ms, decide %.3f ms, apply %.3f ms in %d lock sections (held %.3f ms, waited %.3f ms)",
	      snap.n_jobs, started, snap_ms, plan.decide_ms, apply_ms,
	      sections, hold_ms, wait_ms);
	tidal_metrics_cycle(_ms_since(&start) / 1e3, plan.decide_ms / 1e3,
			    hold_ms / 1e3, wait_ms / 1e3);
	wake_at = plan.wake_at;
	/* A start waits for nodes still completing a leaver: try again
	 * soon, not a CycleInterval later. */
	if (tidal_plan_retry_soon())
		wake_at = _now();
	tidal_plan_free(&plan);
	tidal_snapshot_free(&snap);
	return wake_at;
}

/* slurmctld's count of submitted jobs (sdiag's "Jobs submitted"): read
 * without a lock, only to see that it moved. */
static uint32_t _submitted(void)
{
	return __atomic_load_n(&slurmctld_diag_stats.jobs_submitted,
			       __ATOMIC_RELAXED);
}

/* Sleep SECS, or less: until tidal_cycle_wake(), fini(), or a job is
 * submitted.  A submission is looked for every SUBMIT_POLL s and wakes
 * the cycle, so that srun and salloc start within a fraction of a second
 * when their GPUs are free.  Cycles woken so are at least SUBMIT_SHARE
 * times the last cycle's length apart: a burst of submissions keeps the
 * cycle from holding slurmctld's locks more than a tenth of the time. */
#define SUBMIT_POLL 0.05
#define SUBMIT_SHARE 10
static void _sleep(double secs, uint32_t submitted_before, double cycle_s)
{
	static double last_submit_wake;
	double until = _now() + secs;
	double gap = MAX(SUBMIT_POLL, SUBMIT_SHARE * cycle_s);

	slurm_mutex_lock(&term_lock);
	while (!stop_agent && !wake_agent) {
		double now = _now(), t = MIN(until, now + SUBMIT_POLL);
		struct timespec ts;

		if (now >= until)
			break;
		if (_submitted() != submitted_before &&
		    now >= last_submit_wake + gap) {
			last_submit_wake = now;
			break;
		}
		ts.tv_sec = (time_t)t;
		ts.tv_nsec = (long)((t - ts.tv_sec) * 1e9);
		slurm_cond_timedwait(&term_cond, &term_lock, &ts);
	}
	wake_agent = false;
	slurm_mutex_unlock(&term_lock);
}

/* How long to sleep after a cycle: CycleInterval, or until WAKE_AT (the
 * policy's wish, epoch s; 0 none) if that comes sooner, but not less than
 * WAKE_MIN s: a policy that asks again at once (a round whose leavers are
 * on their way) is asked once a second, as CycleInterval=1 would. */
#define WAKE_MIN 1.0
static double _sleep_for(double interval, double wake_at)
{
	if (wake_at <= 0)
		return interval;
	return MIN(interval, MAX(WAKE_MIN, wake_at - _now()));
}

static void *_agent(void *arg)
{
	while (true) {
		slurm_mutex_lock(&term_lock);
		bool stop = stop_agent;
		slurm_mutex_unlock(&term_lock);
		if (stop)
			break;
		/* Read before the cycle: a job submitted while it runs
		 * wakes the next one. */
		uint32_t submitted = _submitted();
		double t0 = _now();
		double wake_at = _cycle();
		_sleep(_sleep_for(tidal_engine_interval(), wake_at), submitted,
		       _now() - t0);
	}
	return NULL;
}

extern int init(void)
{
	slurm_mutex_lock(&thread_flag_mutex);
	if (tidal_thread) {
		slurm_mutex_unlock(&thread_flag_mutex);
		return SLURM_ERROR;
	}
	/* As for a bad slurm.conf: slurmctld does not start, rather than
	 * schedule with something else than the administrator wrote; but a
	 * slurmctld that goes on after a failed reconfigure (Slurm 24.11)
	 * keeps what it had. */
	if (_load_config() && _keep_in_force()) {
		slurm_mutex_unlock(&thread_flag_mutex);
		error("sched/tidal: not started: tidal.conf has errors");
		return SLURM_ERROR;
	}
	tidal_engine_set_slurm_version(SLURM_VERSION_STRING);
	tidal_state_load();
	tidal_agent_on_awaited_ack(tidal_cycle_wake);
	stop_agent = false;
	slurm_thread_create(&tidal_thread, _agent, NULL);
	tidal_ctl_start_waiting(tidal_engine_ctl_port());
	tidal_metrics_serve();
	slurm_mutex_unlock(&thread_flag_mutex);
	verbose("sched/tidal: loaded");
	return SLURM_SUCCESS;
}

extern void fini(void)
{
	slurm_mutex_lock(&thread_flag_mutex);
	if (tidal_thread) {
		slurm_mutex_lock(&term_lock);
		stop_agent = true;
		slurm_cond_signal(&term_cond);
		slurm_mutex_unlock(&term_lock);
		pthread_join(tidal_thread, NULL);
		tidal_thread = 0;
		tidal_ctl_stop();
		tidal_metrics_stop();
		tidal_agent_on_awaited_ack(NULL);
		tidal_engine_shutdown();
	}
	slurm_mutex_unlock(&thread_flag_mutex);
}

/* Run the next cycle now (bridge.h). */
extern void tidal_cycle_wake(void)
{
	slurm_mutex_lock(&term_lock);
	wake_agent = true;
	slurm_cond_signal(&term_cond);
	slurm_mutex_unlock(&term_lock);
}

extern int sched_p_reconfig(void)
{
	int old_port = tidal_engine_ctl_port(), port;

	if (_load_config())
		error("sched/tidal: keeping the configuration in force (Policy=%s)",
		      tidal_engine_policy());
	/* A new CtlPort takes effect now; if it cannot be opened, the old
	 * one is kept, and said so. */
	port = tidal_engine_ctl_port();
	if (port != old_port) {
		slurm_mutex_lock(&thread_flag_mutex);
		tidal_ctl_stop();
		if (tidal_ctl_start(port)) {
			error("sched/tidal: CtlPort=%d cannot be opened; tidalctl stays on port %d",
			      port, old_port);
			tidal_ctl_start(old_port);
		} else {
			info("sched/tidal: CtlPort changed from %d to %d",
			     old_port, port);
		}
		slurm_mutex_unlock(&thread_flag_mutex);
	}
	/* MetricsPort and MetricsAddress too (the server says so in the
	 * log, drained by the next cycle). */
	slurm_mutex_lock(&thread_flag_mutex);
	if (tidal_thread)
		tidal_metrics_serve();
	slurm_mutex_unlock(&thread_flag_mutex);
	tidal_cycle_wake();
	return SLURM_SUCCESS;
}
