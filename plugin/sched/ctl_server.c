/*
 * ctl_server.c - the TCP listener tidalctl talks to (CtlPort in tidal.conf).
 *
 * One connection = one request, framed as everywhere else (proto/wire.h,
 * whose C entry points in proto/wire_c.h read and authenticate it):
 *
 *   client -> line 1: a MUNGE credential (empty payload)
 *             line 2: the request, one JSON object (ctl_engine.cc)
 *   server <- one JSON line, then close
 *
 * Node agents (tidald) use the same listener for their ops (node_register,
 * node_heartbeat, node_ack, ckpt_where, job_plan: agents/node_ops.cc);
 * everything else goes to the engine (ctl_engine.cc).
 *
 * One listener thread accepts; CTL_WORKERS worker threads serve the
 * accepted connections from a queue, so that a slow client (one that
 * connects and sends nothing holds its worker for the 2 s read timeout)
 * or a burst of heartbeats does not make everyone else wait.  A
 * connection that finds the queue full is answered "busy" at once.
 *
 * The credential is decoded through the same munged slurmctld uses
 * (AuthInfo=socket=... is honoured); its uid decides what the peer may do:
 * root and SlurmUser are admins, others see only their own jobs when
 * PrivateData=jobs.  No slurmctld lock is taken here: answers come from the
 * engine's copy of the last cycle.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "src/common/log.h"
#include "src/common/macros.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "plugin/sched/bridge.h"
#include "plugin/sched/slurm_side.h"
#include "proto/wire_c.h"

#define CTL_READ_TIMEOUT_MS 2000 /* per wait, for each line */
#define CTL_WORKERS 8	/* connections served at once */
#define CTL_QUEUE 256	/* accepted connections waiting for a worker */

static pthread_t ctl_thread;
static int listen_fd = -1;
static volatile bool ctl_stop;
static char *munge_socket; /* from AuthInfo (malloc), or NULL: the default */

/* The accepted connections, oldest first; q_lock guards them and
 * ctl_stop as the workers read it. */
static pthread_t workers[CTL_WORKERS];
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cond = PTHREAD_COND_INITIALIZER;
static int q_fd[CTL_QUEUE], q_head, q_len;

/* Answer FD {"v":1,"ok":false,"error":MSG}. */
static void _reply_error(int fd, const char *msg)
{
	char *r = tidal_wire_error_reply(msg);

	if (r)
		tidal_wire_write(fd, r);
	free(r);
}

static void _serve(int fd)
{
	char *req = NULL, *reply, *log_lines, *why = NULL;
	char peer[64];
	struct timeval tv = { .tv_sec = 2 };
	uid_t uid;
	const char *refused = NULL;
	int admin;

	/* A peer that stops reading cannot hold a worker on our reply. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	tidal_wire_peer_host(fd, peer, sizeof(peer));
	/* Refusals are logged, one line each, naming the peer (and the uid
	 * once MUNGE has said who it is); nothing else changes. */
	if (tidal_wire_read_request(fd, munge_socket, CTL_READ_TIMEOUT_MS, &req,
				    &uid, &why)) {
		info("sched/tidal: tidalctl port: refused a request from %s: %s",
		     peer, why ? why : "out of memory");
		_reply_error(fd, why ? why : "out of memory");
		free(why);
		return;
	}
	admin = uid == 0 || uid == slurm_conf.slurm_user_id;
	reply = tidal_agent_request(req, uid, admin, peer, &refused);
	if (!reply)
		reply = tidal_engine_request(
			req, uid, admin,
			(slurm_conf.private_data & PRIVATE_DATA_JOBS) != 0,
			&refused);
	free(req);
	if (refused)
		info("sched/tidal: tidalctl port: refused uid %u from %s: %s",
		     (unsigned)uid, peer, refused);
	if (reply)
		tidal_wire_write(fd, reply);
	free(reply);
	log_lines = tidal_agent_log_drain();
	tidal_log_lines(log_lines, false);
	free(log_lines);
}

static void *_worker(void *arg)
{
	for (;;) {
		int fd;

		slurm_mutex_lock(&q_lock);
		while (!q_len && !ctl_stop)
			slurm_cond_wait(&q_cond, &q_lock);
		if (ctl_stop) { /* tidal_ctl_stop closes what is queued */
			slurm_mutex_unlock(&q_lock);
			return NULL;
		}
		fd = q_fd[q_head];
		q_head = (q_head + 1) % CTL_QUEUE;
		q_len--;
		slurm_mutex_unlock(&q_lock);
		_serve(fd);
		close(fd);
	}
}

/* Hand FD to a worker; RET false if the queue is full. */
static bool _enqueue(int fd)
{
	bool ok;

	slurm_mutex_lock(&q_lock);
	ok = q_len < CTL_QUEUE;
	if (ok) {
		q_fd[(q_head + q_len++) % CTL_QUEUE] = fd;
		slurm_cond_signal(&q_cond);
	}
	slurm_mutex_unlock(&q_lock);
	return ok;
}

/* Bind and listen on LISTEN_FD's port.  RET 0, or -1 with errno set. */
static int _bind(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_ANY),
				 .sin_port = htons(port) };

	if (bind(listen_fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(listen_fd, 128))
		return -1;
	return 0;
}

/* How long a CtlPort still held by the slurmctld this one replaces is
 * tried again (Slurm 24.11's reconfigure: the old process lets go of it
 * when the new one has started, after init()). */
#define CTL_BIND_WAIT_S 60

static int bind_port; /* the port the listener still has to bind; 0: none */

static void *_listener(void *arg)
{
	struct pollfd p = { .fd = listen_fd, .events = POLLIN };

	for (int waited = 0; bind_port && !ctl_stop; waited++) {
		if (!_bind(bind_port)) {
			info("sched/tidal: tidalctl listens on port %d (after "
			     "%.1f s: the slurmctld before this one held it)",
			     bind_port, waited * 0.1);
			bind_port = 0;
			break;
		}
		if (waited >= CTL_BIND_WAIT_S * 10) {
			error("sched/tidal: tidalctl port %d: %m, still after "
			      "%d s; tidalctl and tidald cannot reach this "
			      "slurmctld (set another CtlPort and reconfigure)",
			      bind_port, CTL_BIND_WAIT_S);
			return NULL;
		}
		usleep(100000);
	}
	while (!ctl_stop) {
		if (poll(&p, 1, 500) <= 0)
			continue;
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		if (_enqueue(fd))
			continue;
		char peer[64];
		tidal_wire_peer_host(fd, peer, sizeof(peer));
		info("sched/tidal: tidalctl port: refused a connection from %s: busy (%d connections queued)",
		     peer, CTL_QUEUE);
		_reply_error(fd, "busy: too many requests queued; try again");
		close(fd);
	}
	return NULL;
}

/* WAIT: if the port is in use, go on and keep trying in the listener
 * thread (init(): the slurmctld being replaced may still hold it). */
static int _start(int port, bool wait)
{
	int one = 1;

	if (port == 0)
		return 0;
	free(munge_socket); /* a start after a failed one */
	munge_socket = tidal_wire_authinfo_socket(slurm_conf.authinfo);
	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		return -1;
	setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	bind_port = 0;
	if (_bind(port)) {
		if (!wait || errno != EADDRINUSE) {
			error("sched/tidal: tidalctl port %d: %m", port);
			close(listen_fd);
			listen_fd = -1;
			return -1;
		}
		info("sched/tidal: tidalctl port %d: %m; trying again for up "
		     "to %d s",
		     port, CTL_BIND_WAIT_S);
		bind_port = port;
	}
	ctl_stop = false;
	q_head = q_len = 0;
	for (int i = 0; i < CTL_WORKERS; i++)
		slurm_thread_create(&workers[i], _worker, NULL);
	slurm_thread_create(&ctl_thread, _listener, NULL);
	if (!bind_port)
		info("sched/tidal: tidalctl listens on port %d", port);
	return 0;
}

extern int tidal_ctl_start(int port)
{
	return _start(port, false);
}

extern int tidal_ctl_start_waiting(int port)
{
	return _start(port, true);
}

extern void tidal_ctl_stop(void)
{
	if (listen_fd < 0)
		return;
	ctl_stop = true;
	pthread_join(ctl_thread, NULL);
	slurm_mutex_lock(&q_lock);
	slurm_cond_broadcast(&q_cond);
	slurm_mutex_unlock(&q_lock);
	for (int i = 0; i < CTL_WORKERS; i++)
		pthread_join(workers[i], NULL);
	for (; q_len > 0; q_len--, q_head = (q_head + 1) % CTL_QUEUE)
		close(q_fd[q_head]);
	close(listen_fd);
	listen_fd = -1;
	free(munge_socket);
	munge_socket = NULL;
}
