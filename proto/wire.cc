/*
 * wire.cc - sockets, MUNGE and JSON lines for every component (see
 * wire.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "proto/wire.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <json.h>
#include <munge.h>
#include <netdb.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <strings.h>

namespace tidal::wire
{

bool parse_endpoint(const std::string &s, Endpoint *out, std::string *err)
{
	size_t colon = s.rfind(':');
	if (colon == std::string::npos || colon + 1 == s.size()) {
		*err = "'" + s + "' is not HOST:PORT";
		return false;
	}
	std::string host = s.substr(0, colon), port = s.substr(colon + 1);
	if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
		host = host.substr(1, host.size() - 2);
	/* Digits only: strtol alone would take " 80", "+80" or "-0". */
	char *end = nullptr;
	long p = std::strtol(port.c_str(), &end, 10);
	if (port.find_first_not_of("0123456789") != std::string::npos ||
	    port.size() > 5 || *end || p < 0 || p > 65535) {
		*err = "'" + s + "': port '" + port + "' is not 0..65535";
		return false;
	}
	out->host = host;
	out->port = port;
	return true;
}

std::string conf_value(const std::string &file, const std::string &key,
		       bool first)
{
	std::ifstream in(file);
	std::string line, word, found;
	while (std::getline(in, line)) {
		line = line.substr(0, line.find('#'));
		std::istringstream ws(line);
		while (ws >> word) {
			size_t eq = word.find('=');
			if (eq == std::string::npos ||
			    strcasecmp(word.substr(0, eq).c_str(), key.c_str()))
				continue;
			found = word.substr(eq + 1);
			if (first)
				return found;
		}
	}
	return found;
}

std::string authinfo_socket(const std::string &authinfo)
{
	const char *at = strcasestr(authinfo.c_str(), "socket=");
	if (!at)
		return "";
	std::string v = at + 7;
	return v.substr(0, v.find(','));
}

SlurmSide read_slurm_side()
{
	SlurmSide s;
	const char *env = std::getenv("SLURM_CONF");
	s.slurm_conf = env ? env : "/etc/slurm/slurm.conf";
	std::string dir = s.slurm_conf.substr(0, s.slurm_conf.rfind('/') + 1);
	std::string tidal = dir + "tidal.conf";
	/* The first SlurmctldHost is the primary controller. */
	std::string h = conf_value(s.slurm_conf, "SlurmctldHost", true);
	if (h.empty())
		h = conf_value(s.slurm_conf, "ControlMachine");
	size_t lp = h.find('(');
	if (lp != std::string::npos) /* name(addr) */
		h = h.substr(lp + 1, h.find(')') - lp - 1);
	if (!h.empty())
		s.plugin.host = h;
	std::string v;
	if (!(v = conf_value(tidal, "CtlHost")).empty())
		s.plugin.host = v;
	if (!(v = conf_value(tidal, "CtlPort")).empty())
		s.plugin.port = v;
	s.munge_socket = authinfo_socket(conf_value(s.slurm_conf, "AuthInfo"));
	std::string user = conf_value(s.slurm_conf, "SlurmUser");
	if (!user.empty()) {
		if (struct passwd *pw = getpwnam(user.c_str()))
			s.slurm_user = pw->pw_uid;
	}
	return s;
}

static munge_ctx_t make_ctx(const std::string &socket, std::string *err)
{
	munge_ctx_t ctx = munge_ctx_create();
	if (!ctx) {
		*err = "cannot create a MUNGE context (out of memory)";
		return nullptr;
	}
	if (!socket.empty())
		munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket.c_str());
	return ctx;
}

bool munge_credential(const std::string &socket, std::string *cred,
		      std::string *err)
{
	munge_ctx_t ctx = make_ctx(socket, err);
	if (!ctx)
		return false;
	char *c = nullptr;
	munge_err_t e = munge_encode(&c, ctx, nullptr, 0);
	munge_ctx_destroy(ctx);
	if (e != EMUNGE_SUCCESS) {
		*err = std::string("MUNGE: ") + munge_strerror(e) +
		       " (socket " + (socket.empty() ? "default" : socket) +
		       "; is munged running?)";
		return false;
	}
	*cred = c;
	std::free(c);
	return true;
}

bool munge_check(const std::string &socket, const std::string &cred, uid_t *uid,
		 std::string *err)
{
	munge_ctx_t ctx = make_ctx(socket, err);
	if (!ctx)
		return false;
	gid_t gid;
	munge_err_t e =
		munge_decode(cred.c_str(), ctx, nullptr, nullptr, uid, &gid);
	munge_ctx_destroy(ctx);
	if (e != EMUNGE_SUCCESS) {
		*err = std::string("MUNGE credential rejected: ") +
		       munge_strerror(e);
		return false;
	}
	return true;
}

/* connect() with a deadline: non-blocking connect, poll, then blocking. */
static int connect_timed(int fd, const sockaddr *a, socklen_t len,
			 int timeout_ms)
{
	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	int rc = connect(fd, a, len);
	if (rc && errno == EINPROGRESS) {
		struct pollfd p = { fd, POLLOUT, 0 };
		rc = poll(&p, 1, timeout_ms);
		if (rc == 0) {
			errno = ETIMEDOUT;
			rc = -1;
		} else if (rc > 0) {
			int e = 0;
			socklen_t el = sizeof(e);
			getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
			errno = e;
			rc = e ? -1 : 0;
		}
	}
	fcntl(fd, F_SETFL, fl);
	return rc;
}

int tcp_connect(const Endpoint &ep, int timeout_ms, std::string *err)
{
	addrinfo hints{}, *res = nullptr;
	hints.ai_socktype = SOCK_STREAM;
	int rc = getaddrinfo(ep.host.c_str(), ep.port.c_str(), &hints, &res);
	if (rc) {
		*err = "cannot resolve " + ep.host + ": " + gai_strerror(rc);
		return -1;
	}
	int fd = -1, e = 0;
	for (addrinfo *a = res; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC,
			    a->ai_protocol);
		if (fd >= 0 &&
		    connect_timed(fd, a->ai_addr, a->ai_addrlen, timeout_ms)) {
			e = errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		*err = "cannot connect to " + ep.str() + ": " +
		       std::strerror(e);
	return fd;
}

bool unix_addr(const std::string &path, sockaddr_un *a, std::string *err)
{
	*a = {};
	a->sun_family = AF_UNIX;
	if (path.size() >= sizeof(a->sun_path)) {
		*err = path + ": socket path longer than " +
		       std::to_string(sizeof(a->sun_path) - 1) + " bytes";
		return false;
	}
	std::memcpy(a->sun_path, path.c_str(), path.size() + 1);
	return true;
}

int unix_connect(const std::string &path, std::string *err)
{
	sockaddr_un a;
	if (!unix_addr(path, &a, err))
		return -1;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (sockaddr *)&a, sizeof(a))) {
		*err = "cannot connect to " + path + ": " +
		       std::strerror(errno);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int tcp_listen(const Endpoint &ep, std::string *err)
{
	addrinfo hints{}, *res = nullptr;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	const char *host = ep.host.empty() ? nullptr : ep.host.c_str();
	int rc = getaddrinfo(host, ep.port.c_str(), &hints, &res);
	if (rc) {
		*err = "cannot resolve " + ep.host + ": " + gai_strerror(rc);
		return -1;
	}
	int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) ||
	    listen(fd, 64)) {
		*err = "cannot listen on " + ep.str() + ": " +
		       std::strerror(errno);
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

int unix_listen(const std::string &path, std::string *err)
{
	sockaddr_un a;
	if (!unix_addr(path, &a, err))
		return -1;
	/* A socket file left by a dead tidald: nobody answers on it.  One
	 * killed a moment ago may still take connections while its last
	 * threads exit (its sockets close with the last one): asked again
	 * for up to 3 s before it counts as another live process. */
	std::string e2;
	for (int tries = 0;; tries++) {
		int probe = unix_connect(path, &e2);
		if (probe < 0)
			break;
		close(probe);
		if (tries == 30) {
			*err = path + ": another process is listening there";
			return -1;
		}
		usleep(100 * 1000);
	}
	unlink(path.c_str());
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (sockaddr *)&a, sizeof(a)) || listen(fd, 64)) {
		*err = "cannot listen on " + path + ": " + std::strerror(errno);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int bound_port(int fd)
{
	sockaddr_storage a{};
	socklen_t len = sizeof(a);
	if (getsockname(fd, (sockaddr *)&a, &len))
		return -1;
	if (a.ss_family == AF_INET)
		return ntohs(((sockaddr_in *)&a)->sin_port);
	if (a.ss_family == AF_INET6)
		return ntohs(((sockaddr_in6 *)&a)->sin6_port);
	return -1;
}

std::string peer_host(int fd)
{
	sockaddr_storage a{};
	socklen_t len = sizeof(a);
	char buf[INET6_ADDRSTRLEN] = "";
	if (getpeername(fd, (sockaddr *)&a, &len))
		return "";
	if (a.ss_family == AF_INET)
		inet_ntop(AF_INET, &((sockaddr_in *)&a)->sin_addr, buf,
			  sizeof(buf));
	else if (a.ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((sockaddr_in6 *)&a)->sin6_addr, buf,
			  sizeof(buf));
	return buf;
}

bool write_all(int fd, const void *buf, size_t n)
{
	const char *p = (const char *)buf;
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == ENOTSOCK)
			w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= w;
	}
	return true;
}

bool write_all(int fd, const std::string &s)
{
	return write_all(fd, s.data(), s.size());
}

bool Reader::fill(int timeout_ms)
{
	struct pollfd p = { fd_, POLLIN, 0 };
	int rc;
	while ((rc = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
		;
	if (rc <= 0)
		return false;
	char tmp[65536];
	ssize_t n;
	while ((n = read(fd_, tmp, sizeof(tmp))) < 0 && errno == EINTR)
		;
	if (n <= 0)
		return false;
	buf_.append(tmp, n);
	return true;
}

bool Reader::line(std::string *out, int timeout_ms, size_t max)
{
	size_t nl;
	while ((nl = buf_.find('\n')) == std::string::npos) {
		if (buf_.size() > max || !fill(timeout_ms))
			return false;
	}
	*out = buf_.substr(0, nl);
	buf_.erase(0, nl + 1);
	return true;
}

int Reader::next(std::string *out, int timeout_ms, size_t max)
{
	for (;;) {
		size_t nl = buf_.find('\n');
		if (nl != std::string::npos) {
			*out = buf_.substr(0, nl);
			buf_.erase(0, nl + 1);
			return 1;
		}
		if (buf_.size() > max)
			return -1;
		struct pollfd p = { fd_, POLLIN, 0 };
		int rc = poll(&p, 1, timeout_ms);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc == 0)
			return 0;
		char tmp[4096];
		ssize_t n;
		while ((n = read(fd_, tmp, sizeof(tmp))) < 0 && errno == EINTR)
			;
		if (rc < 0 || n <= 0)
			return -1;
		buf_.append(tmp, (size_t)n);
	}
}

ssize_t Reader::some(char *buf, size_t n, int timeout_ms)
{
	if (buf_.empty() && !fill(timeout_ms))
		return buf_.empty() ? 0 : -1;
	size_t k = std::min(n, buf_.size());
	std::memcpy(buf, buf_.data(), k);
	buf_.erase(0, k);
	return (ssize_t)k;
}

bool munge_request(const Endpoint &ep, const std::string &munge_socket,
		   const std::string &request, std::string *reply,
		   int timeout_ms, std::string *err, bool *sent)
{
	std::string cred;
	if (sent)
		*sent = false;
	if (!munge_credential(munge_socket, &cred, err))
		return false;
	int fd = tcp_connect(ep, timeout_ms, err);
	if (fd < 0)
		return false;
	std::string out = cred + "\n" + request;
	if (out.back() != '\n')
		out += '\n';
	Reader r(fd);
	bool wrote = write_all(fd, out);
	if (sent)
		*sent = wrote;
	bool ok = wrote && r.line(reply, timeout_ms);
	if (!ok)
		*err = "no reply from " + ep.str() + " (timeout or closed)";
	close(fd);
	return ok;
}

bool unix_request(const std::string &path, const std::string &request,
		  std::string *reply, int timeout_ms, std::string *err)
{
	int fd = unix_connect(path, err);
	if (fd < 0)
		return false;
	std::string out = request;
	if (out.empty() || out.back() != '\n')
		out += '\n';
	Reader r(fd);
	/* A refusal may already be waiting: read it even if the send
	 * fails. */
	bool sent = write_all(fd, out);
	int send_errno = sent ? 0 : errno;
	bool ok = r.line(reply, timeout_ms);
	if (!ok)
		*err = "no reply from " + path +
		       (sent ? " (timeout or closed)"
			     : ": " + std::string(std::strerror(send_errno)));
	close(fd);
	return ok;
}

} /* namespace tidal::wire */
