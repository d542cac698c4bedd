/*
 * wire.h - Tidal's wire, used by every component that talks: sched/tidal
 * (through wire_c.h, its listener being C), tidalctl, tidald and
 * tidal-launch.  Newline-delimited JSON over TCP (MUNGE credential line
 * first) or over a unix socket (peer checked with SO_PEERCRED by the
 * server).  The constants (version, its key, the default port) are in
 * defaults.h.
 *
 *   TCP:   client -> "<MUNGE credential>\n" "<request JSON>\n"
 *          server <- "<reply JSON>\n" [raw bytes for ckpt_get]
 *   unix:  client -> "<request JSON>\n"; server <- "<reply JSON>\n"
 *
 * Every message is one JSON object with "v":1; every reply has "ok", and
 * "error" when "ok" is false:
 *
 *   {"v":1,"op":"..." ...}  ->  {"v":1,"ok":true ...}
 *                               {"v":1,"ok":false,"error":"what, why"}
 *
 * Each server's banner lists its ops: plugin/sched/ctl_engine.cc
 * (tidalctl), plugin/sched/agents/node_ops.cc (tidald's ops to the plugin),
 * nodeagent/serve.cc (tidald's peers and launchers), launcher/control.h
 * (tidal-launch's control socket).
 *
 * Nothing here throws: every call returns false (or -1) and says why in
 * *ERR, naming the address and the system's error text.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cerrno>

#include <cstdint>
#include <string>

#include "proto/defaults.h"
#include "proto/json.h"

struct sockaddr_un;

namespace tidal::wire
{

/* host:port; an empty host means "the peer's own address" in replies. */
struct Endpoint {
	std::string host;
	std::string port;
	std::string str() const { return host + ":" + port; }
};

/* Parse "HOST:PORT" (or "[v6]:PORT"); RET false with *ERR naming S. */
bool parse_endpoint(const std::string &s, Endpoint *out, std::string *err);

/* What the node side needs from slurm.conf ($SLURM_CONF, else
 * /etc/slurm/slurm.conf) and the tidal.conf beside it. */
struct SlurmSide {
	/* SlurmctldHost, or tidal.conf's CtlHost; CtlPort */
	Endpoint plugin{ "localhost", TIDAL_CTL_PORT_STR };
	std::string munge_socket; /* AuthInfo=socket=, or "" */
	uid_t slurm_user = 0;	  /* SlurmUser's uid */
	std::string slurm_conf;	  /* the file read */
};
SlurmSide read_slurm_side();
/* The MUNGE socket named in slurm.conf's AuthInfo value ("socket=PATH",
 * the key case-insensitive, among other comma-separated options), or "". */
std::string authinfo_socket(const std::string &authinfo);
/* KEY= in FILE (case-insensitive; the last wins unless FIRST), or "". */
std::string conf_value(const std::string &file, const std::string &key,
		       bool first = false);

/* MUNGE credential with an empty payload, from the munged at SOCKET
 * ("" = default). */
bool munge_credential(const std::string &socket, std::string *cred,
		      std::string *err);
/* Decode CRED; RET false with *ERR ("MUNGE credential rejected: ..."). */
bool munge_check(const std::string &socket, const std::string &cred, uid_t *uid,
		 std::string *err);

/* Connected sockets (close-on-exec), or -1 with *ERR. */
int tcp_connect(const Endpoint &ep, int timeout_ms, std::string *err);
int unix_connect(const std::string &path, std::string *err);
/* *A = PATH as a unix socket address; false with *ERR if it is too long. */
bool unix_addr(const std::string &path, sockaddr_un *a, std::string *err);
/* Listening sockets; TCP port "0" = ephemeral (see bound_port). */
int tcp_listen(const Endpoint &ep, std::string *err);
int unix_listen(const std::string &path, std::string *err);
int bound_port(int fd);
/* The numeric address of FD's peer ("" if unknown). */
std::string peer_host(int fd);

bool write_all(int fd, const void *buf, size_t n);
bool write_all(int fd, const std::string &s);

/* What nonblocking FD has now, read into *BUF: each complete line (its
 * newline dropped) goes to F as it comes; what follows the last newline
 * stays in *BUF for the next call.  RET 1 when FD has nothing more for
 * now, 0 at its end or on an error (the caller closes FD), -1 when *BUF
 * holds more than MAX bytes without a newline. */
template <typename F>
int read_lines(int fd, std::string *buf, size_t max, F &&f)
{
	char chunk[4096];
	for (;;) {
		ssize_t n = ::read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 1;
		if (n <= 0)
			return 0;
		buf->append(chunk, (size_t)n);
		size_t nl;
		while ((nl = buf->find('\n')) != std::string::npos) {
			std::string line = buf->substr(0, nl);
			buf->erase(0, nl + 1);
			f(line);
		}
		if (buf->size() > max)
			return -1;
	}
}

/* Buffered reader: lines, then raw bytes (ckpt_get's body follows its
 * header line on the same connection). */
class Reader
{
public:
	explicit Reader(int fd) : fd_(fd) {}
	/* One line without its '\n'; false on EOF, timeout (TIMEOUT_MS per
	 * wait) or a line over MAX bytes. */
	bool line(std::string *out, int timeout_ms, size_t max = 1 << 20);
	/* One line without its '\n': RET 1 with it, 0 when none came in
	 * TIMEOUT_MS, -1 on EOF, error or a line over MAX bytes. */
	int next(std::string *out, int timeout_ms, size_t max = 1 << 20);
	/* Up to N bytes into BUF; RET bytes read, 0 on EOF, -1 on error. */
	ssize_t some(char *buf, size_t n, int timeout_ms);

private:
	bool fill(int timeout_ms);
	int fd_;
	std::string buf_;
};

/* MUNGE credential + REQUEST to EP, one reply line back.  OUT *SENT (if
 * not null): whether the request left (so the peer may have acted on it
 * even when no reply came). */
bool munge_request(const Endpoint &ep, const std::string &munge_socket,
		   const std::string &request, std::string *reply,
		   int timeout_ms, std::string *err, bool *sent = nullptr);
/* REQUEST to the unix socket PATH, one reply line back.  A reply that
 * the server sent before it closed (a refusal) is read even when the
 * request could not be sent whole. */
bool unix_request(const std::string &path, const std::string &request,
		  std::string *reply, int timeout_ms, std::string *err);

} /* namespace tidal::wire */
