/*
 * control.cc - control socket plumbing (see control.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "launcher/control.h"

#include "launcher/log.h"

#include <fcntl.h>
#include <json.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tidal::launch {

namespace {

constexpr size_t kMaxLine = 64 * 1024;

/* mkdir -p DIR (mode 0755). */
bool make_dirs(const std::string &dir, std::string &err)
{
	for (size_t i = 1; i <= dir.size(); i++) {
		if (i < dir.size() && dir[i] != '/')
			continue;
		std::string d = dir.substr(0, i);
		if (mkdir(d.c_str(), 0755) < 0 && errno != EEXIST) {
			err = d + ": " + std::strerror(errno);
			return false;
		}
	}
	return true;
}

} /* namespace */

void ControlServer::close()
{
	for (auto &c : clients_)
		::close(c.first);
	clients_.clear();
	if (listen_fd_ >= 0) {
		::close(listen_fd_);
		unlink(path_.c_str());
		listen_fd_ = -1;
	}
}

bool ControlServer::open(const std::string &path, std::string &err)
{
	sockaddr_un a;
	if (!wire::unix_addr(path, &a, &err) ||
	    !make_dirs(path.substr(0, path.rfind('/')), err))
		return false;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		err = std::string("socket: ") + std::strerror(errno);
		return false;
	}
	/* A socket left by a launcher that died (same job, same node): no
	 * two launchers of one job run on one node. */
	unlink(path.c_str());
	if (bind(fd, (sockaddr *)&a, sizeof a) < 0 || listen(fd, 16) < 0) {
		err = path + ": " + std::strerror(errno);
		::close(fd);
		return false;
	}
	/* Anyone may connect; SO_PEERCRED decides who is answered. */
	chmod(path.c_str(), 0666);
	listen_fd_ = fd;
	path_ = path;
	return true;
}

void ControlServer::poll_fds(std::vector<pollfd> &fds) const
{
	if (listen_fd_ >= 0)
		fds.push_back({ listen_fd_, POLLIN, 0 });
	for (auto &c : clients_)
		fds.push_back({ c.first, POLLIN, 0 });
}

void ControlServer::service(const std::vector<pollfd> &fds,
			    std::vector<Request> &out)
{
	for (const pollfd &p : fds) {
		if (!p.revents)
			continue;
		if (p.fd == listen_fd_)
			accept_one();
		else if (clients_.count(p.fd))
			read_client(p.fd, out);
	}
}

void ControlServer::accept_one()
{
	int fd = accept4(listen_fd_, nullptr, nullptr,
			 SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	struct ucred cr;
	socklen_t len = sizeof cr;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 ||
	    (cr.uid != 0 && cr.uid != getuid())) {
		std::string m = wire::error_reply(
			"permission denied: uid " + std::to_string(cr.uid) +
			" is neither root nor the job's uid " +
			std::to_string(getuid()));
		m += '\n';
		ssize_t w = send(fd, m.data(), m.size(), MSG_NOSIGNAL);
		(void)w;
		note("control: refused a connection from uid %u", cr.uid);
		::close(fd);
		return;
	}
	/* Replies are short; a peer that does not read them must not
	 * stall the launcher for long. */
	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	struct timeval tv = { 2, 0 };
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	fcntl(fd, F_SETFL, fl);
	clients_[fd] = Client();
}

void ControlServer::read_client(int fd, std::vector<Request> &out)
{
	int rc = wire::read_lines(fd, &clients_[fd].in, kMaxLine,
				  [&](const std::string &line) {
					  Request r;
					  r.client = fd;
					  wire::ControlRequest q;
					  if (wire::decode(line, &q, &r.error))
						  r.op = q.op;
					  out.push_back(r);
				  });
	if (rc <= 0)
		drop(fd);
}

void ControlServer::drop(int fd)
{
	::close(fd);
	clients_.erase(fd);
}

void ControlServer::reply(int client, const std::string &line)
{
	if (!clients_.count(client))
		return;
	std::string m = line;
	if (m.empty() || m.back() != '\n')
		m += '\n';
	if (send(client, m.data(), m.size(), MSG_NOSIGNAL) !=
	    (ssize_t)m.size())
		drop(client);
}

} /* namespace tidal::launch */
