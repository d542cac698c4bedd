/*
 * wire_c.h - proto/wire.h for C callers: sched/tidal's listener
 * (plugin/sched/ctl_server.c) reads, authenticates and answers requests
 * with the same code as every other component.
 *
 * Strings returned are malloc()ed: free() them.  Nothing here throws or
 * calls exit().
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#ifndef TIDAL_PROTO_WIRE_C_H
#define TIDAL_PROTO_WIRE_C_H

#include <stddef.h>
#include <sys/types.h>

#include "proto/defaults.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Read a request from FD, TCP framing: a MUNGE credential line, then one
 * request line (each at most TIDAL_WIRE_MAX_REQUEST bytes, TIMEOUT_MS per
 * wait), and decode the credential through the munged at MUNGE_SOCKET
 * (NULL or "" = the default).
 * RET 0 with *REQUEST (the line, no newline) and *UID; -1 with *ERROR,
 * what the peer got wrong, to log and to answer.
 */
int tidal_wire_read_request(int fd, const char *munge_socket, int timeout_ms,
			    char **request, uid_t *uid, char **error);

/* The numeric address FD's peer connected from ("" if unknown). */
void tidal_wire_peer_host(int fd, char *buf, size_t len);

/* {"v":1,"ok":false,"error":MSG} with its newline. */
char *tidal_wire_error_reply(const char *msg);

/* The MUNGE socket in an AuthInfo value (socket=PATH), or NULL. */
char *tidal_wire_authinfo_socket(const char *authinfo);

/* Write all of S to FD; RET 0, or -1 when the peer is gone. */
int tidal_wire_write(int fd, const char *s);

#ifdef __cplusplus
}
#endif

#endif
