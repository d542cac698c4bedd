/*
 * control.h - the launcher's control socket, RUN_DIR/<node>/launch-<job>.sock
 * (unix stream).  tidald (root) or the job's own user sends one JSON line
 * per request and gets one JSON line back:
 *
 *   {"v":1,"op":"status"}           answered at once
 *   {"v":1,"op":"checkpoint"}       answered when the checkpoint is durable
 *   {"v":1,"op":"checkpoint_stop"}  answered when it is durable and the
 *                                   trainers have exited
 *
 * This class only moves lines: it accepts, checks the peer (SO_PEERCRED:
 * root or our uid), splits requests and sends replies; the launcher
 * decides what each request means and when to answer it.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <poll.h>

#include <map>
#include <string>
#include <vector>

#include "proto/messages.h"
#include "proto/wire.h"

namespace tidal::launch {

struct Request {
	int client = -1; /* pass back to reply() */
	std::string op;  /* empty when the line was bad; see error */
	std::string error;
};

class ControlServer {
public:
	~ControlServer() { close(); }
	/* Stop listening, drop clients, remove the socket file. */
	void close();
	/* Create PATH's directory if needed, replace a stale socket, listen.
	 * RET false with ERR naming the path and the errno text. */
	bool open(const std::string &path, std::string &err);
	const std::string &path() const { return path_; }
	/* Append the fds to poll (listener, then clients). */
	void poll_fds(std::vector<pollfd> &fds) const;
	/* Handle whatever FDS says is ready; append complete requests. */
	void service(const std::vector<pollfd> &fds, std::vector<Request> &out);
	/* Send LINE (one JSON object, its newline optional) to CLIENT, if
	 * still there. */
	void reply(int client, const std::string &line);

private:
	struct Client {
		std::string in;
	};
	void accept_one();
	void read_client(int fd, std::vector<Request> &out);
	void drop(int fd);

	int listen_fd_ = -1;
	std::string path_;
	std::map<int, Client> clients_;
};

} /* namespace tidal::launch */
