/*
 * store.cc - the rendezvous store's server and client (protocol in store.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "node/store.h"

#include "proto/wire.h"

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <cstdlib>
#include <stdexcept>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace tidal::store {

using wire::munge_check;
using wire::munge_credential;

namespace {

enum Status : uint8_t { kOk = 0, kTimeout = 1, kBad = 2 };

constexpr uint32_t kMaxArgs = 1u << 16;
constexpr uint32_t kMaxLen = 1u << 30;

bool read_full(int fd, void *p, size_t n)
{
	char *c = (char *)p;
	while (n > 0) {
		ssize_t r = ::recv(fd, c, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		c += r;
		n -= (size_t)r;
	}
	return true;
}

bool write_full(int fd, const void *p, size_t n)
{
	const char *c = (const char *)p;
	while (n > 0) {
		ssize_t w = ::send(fd, c, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		c += w;
		n -= (size_t)w;
	}
	return true;
}

/* One frame: a leading byte (op or status) and string arguments. */
bool send_frame(int fd, uint8_t lead, const std::vector<std::string> &args)
{
	std::string f(1, (char)lead);
	uint32_t n = (uint32_t)args.size();
	f.append((const char *)&n, 4);
	for (const std::string &a : args) {
		uint32_t len = (uint32_t)a.size();
		f.append((const char *)&len, 4);
		f.append(a);
	}
	return write_full(fd, f.data(), f.size());
}

/* A frame of at most MAX_ARGS arguments of at most MAX_LEN bytes each. */
bool recv_frame(int fd, uint8_t &lead, std::vector<std::string> &args,
		uint32_t max_args = kMaxArgs, uint32_t max_len = kMaxLen)
{
	uint32_t n;
	if (!read_full(fd, &lead, 1) || !read_full(fd, &n, 4) || n > max_args)
		return false;
	args.assign(n, {});
	for (std::string &a : args) {
		uint32_t len;
		if (!read_full(fd, &len, 4) || len > max_len)
			return false;
		a.resize(len);
		if (!read_full(fd, a.data(), len))
			return false;
	}
	return true;
}

bool to_int(const std::string &s, int64_t &v)
{
	if (s.empty())
		return false;
	char *end = nullptr;
	errno = 0;
	v = strtoll(s.c_str(), &end, 10);
	return errno == 0 && *end == '\0';
}

std::string to_str(const Bytes &b) { return std::string(b.begin(), b.end()); }
Bytes to_bytes(const std::string &s) { return Bytes(s.begin(), s.end()); }

/* A MUNGE credential (the hello's) is a few hundred bytes. */
constexpr uint32_t kMaxCred = 4096;

void recv_timeout(int fd, int seconds)
{
	struct timeval tv = { seconds, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

/* Whether UID may use (or serve) this process's store. */
bool same_user(uid_t uid) { return uid == geteuid() || uid == 0; }

std::string peer_of(int fd)
{
	struct sockaddr_in sin = {};
	socklen_t len = sizeof sin;
	char buf[INET_ADDRSTRLEN] = "?";
	if (getpeername(fd, (struct sockaddr *)&sin, &len) == 0)
		inet_ntop(AF_INET, &sin.sin_addr, buf, sizeof buf);
	return buf;
}

} /* namespace */

Auth Auth::from_env()
{
	Auth a;
	const char *m = std::getenv("TIDAL_STORE_AUTH");
	const char *s = std::getenv("TIDAL_MUNGE_SOCKET");
	a.munge = m && std::strcmp(m, "munge") == 0;
	a.socket = s ? s : "";
	return a;
}

bool split_hostport(const std::string &text, std::string &host, int &port,
		    std::string &err)
{
	size_t colon = text.rfind(':');
	int64_t p = -1;
	if (colon == std::string::npos || colon == 0 ||
	    !to_int(text.substr(colon + 1), p) || p < 0 || p > 65535) {
		err = "store address '" + text +
		      "': expected HOST:PORT with PORT in 0..65535";
		return false;
	}
	host = text.substr(0, colon);
	port = (int)p;
	return true;
}

/* ---------------------------------------------------------------- server */

Server::~Server() { stop(); }

bool Server::start(const std::string &addr, int port, std::string &err)
{
	std::string where = (addr.empty() ? "*" : addr) + ":" +
			    std::to_string(port);
	struct addrinfo hints = {}, *res = nullptr;
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	int rc = getaddrinfo(addr.empty() ? nullptr : addr.c_str(),
			     std::to_string(port).c_str(), &hints, &res);
	if (rc != 0) {
		err = "store " + where + ": " + gai_strerror(rc);
		return false;
	}
	int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (fd < 0 || ::bind(fd, res->ai_addr, res->ai_addrlen) < 0 ||
	    ::listen(fd, 128) < 0 || ::pipe2(wake_, O_CLOEXEC) < 0) {
		err = "store " + where + ": " + std::strerror(errno);
		freeaddrinfo(res);
		if (fd >= 0)
			::close(fd);
		return false;
	}
	freeaddrinfo(res);
	struct sockaddr_in sin = {};
	socklen_t len = sizeof sin;
	getsockname(fd, (struct sockaddr *)&sin, &len);
	port_ = ntohs(sin.sin_port);
	listen_fd_ = fd;
	acceptor_ = std::thread([this] { accept_loop(); });
	return true;
}

void Server::accept_loop()
{
	for (;;) {
		struct pollfd p[2] = {{listen_fd_, POLLIN, 0},
				      {wake_[0], POLLIN, 0}};
		if (::poll(p, 2, -1) < 0 && errno != EINTR)
			return;
		if (p[1].revents)
			return;
		if (!(p[0].revents & POLLIN))
			continue;
		int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		int one = 1;
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		std::lock_guard<std::mutex> g(mu_);
		if (stopping_) {
			::close(c);
			return;
		}
		conns_.push_back(c);
		workers_.emplace_back([this, c] { serve(c); });
	}
}

void Server::stop()
{
	{
		std::lock_guard<std::mutex> g(mu_);
		if (stopping_ || listen_fd_ < 0)
			return;
		stopping_ = true;
		for (int c : conns_)
			::shutdown(c, SHUT_RDWR);
	}
	cv_.notify_all();
	char b = 1;
	(void)!::write(wake_[1], &b, 1);
	acceptor_.join();
	for (std::thread &t : workers_)
		t.join();
	for (int c : conns_)
		::close(c);
	conns_.clear();
	::close(listen_fd_);
	::close(wake_[0]);
	::close(wake_[1]);
	listen_fd_ = -1;
}

/* The hello on C, if the Auth asks for one: RET false (reported, and
 * answered when the peer sent a frame) if C may not use the store. */
bool Server::hello(int c)
{
	if (!auth_.munge)
		return true;
	uint8_t op = 0;
	std::vector<std::string> a;
	std::string why, cred, err;
	uid_t uid = 0;
	recv_timeout(c, 10);
	bool got = recv_frame(c, op, a, 1, kMaxCred);
	if (!got && !op)
		why = "no hello within 10 s";
	else if (!got || op != 'H' || a.size() != 1)
		why = "the first request is not a hello with a MUNGE credential";
	else if (!munge_check(auth_.socket, a[0], &uid, &err))
		why = err;
	else if (!same_user(uid))
		why = "uid " + std::to_string(uid) + " is not this job's (" +
		      std::to_string(geteuid()) + ")";
	else if (!munge_credential(auth_.socket, &cred, &err))
		why = "cannot answer with a credential: " + err;
	recv_timeout(c, 0);
	if (why.empty())
		return send_frame(c, kOk, {cred});
	if (log_)
		log_("store: refused a connection from " + peer_of(c) + ": " +
		     why);
	if (op)
		send_frame(c, kBad, {why});
	return false;
}

/* Handle requests on C until it closes or the server stops.  Blocking ops
 * wait on the condition variable every set/add notifies. */
void Server::serve(int c)
{
	uint8_t op;
	std::vector<std::string> a;
	bool in = hello(c);
	while (in && recv_frame(c, op, a)) {
		std::unique_lock<std::mutex> lk(mu_);
		bool ok = true;
		auto present = [&](size_t from) {
			return std::all_of(a.begin() + (long)from, a.end(),
					   [&](const std::string &k) {
						   return kv_.count(k) > 0;
					   });
		};
		uint8_t st = kOk;
		std::vector<std::string> out;
		if (op == 'S' && a.size() == 2) {
			kv_[a[0]] = Bytes(a[1].begin(), a[1].end());
			cv_.notify_all();
		} else if ((op == 'G' && a.size() == 2) ||
			   (op == 'W' && !a.empty())) {
			size_t first = op == 'G' ? 0 : 1;
			int64_t ms = 0;
			ok = to_int(op == 'G' ? a[1] : a[0], ms);
			if (op == 'G')
				a.resize(1);
			bool got = ok && cv_.wait_for(
				lk, std::chrono::milliseconds(ms), [&] {
					return stopping_ || present(first);
				});
			if (stopping_) {
				lk.unlock();
				break;
			}
			st = !ok ? kBad : got ? kOk : kTimeout;
			if (op == 'G' && got) {
				const Bytes &v = kv_[a[0]];
				out.emplace_back(v.begin(), v.end());
			}
		} else if (op == 'A' && a.size() == 2) {
			int64_t d = 0, cur = 0;
			auto it = kv_.find(a[0]);
			ok = to_int(a[1], d) &&
			     (it == kv_.end() || to_int(to_str(it->second), cur));
			std::string v = std::to_string(cur + d);
			if (ok) {
				kv_[a[0]] = Bytes(v.begin(), v.end());
				cv_.notify_all();
			}
			st = ok ? kOk : kBad;
			out.push_back(v);
		} else if (op == 'C') {
			out.push_back(present(0) ? "1" : "0");
		} else if (op == 'D' && a.size() == 1) {
			out.push_back(kv_.erase(a[0]) ? "1" : "0");
		} else {
			st = kBad;
		}
		lk.unlock();
		if (!send_frame(c, st, out))
			break;
	}
	std::lock_guard<std::mutex> g(mu_);
	if (stopping_)
		return; /* stop() closes it */
	conns_.erase(std::find(conns_.begin(), conns_.end(), c));
	::close(c);
}


/* ---------------------------------------------------------------- client */

Client::~Client()
{
	if (fd_ >= 0)
		::close(fd_);
}

bool Client::connect(const std::string &hostport, Millis timeout,
		     std::string &err)
{
	std::string host;
	int port = 0;
	if (!split_hostport(hostport, host, port, err))
		return false;
	addr_ = hostport;
	auto deadline = std::chrono::steady_clock::now() + timeout;
	for (;;) {
		struct addrinfo hints = {}, *res = nullptr;
		hints.ai_family = AF_INET;
		hints.ai_socktype = SOCK_STREAM;
		int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(),
				     &hints, &res);
		if (rc != 0) {
			err = "store " + hostport + ": " + gai_strerror(rc);
			return false;
		}
		int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		rc = fd < 0 ? -1 : ::connect(fd, res->ai_addr, res->ai_addrlen);
		int e = errno;
		freeaddrinfo(res);
		if (rc == 0) {
			int one = 1;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
			fd_ = fd;
			return hello(err);
		}
		if (fd >= 0)
			::close(fd);
		if (std::chrono::steady_clock::now() >= deadline) {
			err = "store " + hostport + ": connect: " +
			      std::strerror(e) + " (gave up after " +
			      std::to_string(timeout.count()) + " ms)";
			return false;
		}
		std::this_thread::sleep_for(Millis(50));
	}
}

/* Say hello if the Auth asks; RET false (closed) with ERR if the server
 * refuses us or is not of our uid. */
bool Client::hello(std::string &err)
{
	if (!auth_.munge)
		return true;
	std::string cred, e;
	uint8_t st = kBad;
	std::vector<std::string> out;
	uid_t uid = 0;
	if (!munge_credential(auth_.socket, &cred, &e))
		err = "store " + addr_ + ": " + e;
	else if (!send_frame(fd_, 'H', {cred}) ||
		 !recv_frame(fd_, st, out, 1, kMaxCred) || out.size() != 1)
		err = "store " + addr_ + ": no answer to the hello";
	else if (st != kOk)
		err = "store " + addr_ + ": refused: " + out[0];
	else if (!munge_check(auth_.socket, out[0], &uid, &e))
		err = "store " + addr_ + ": the server's " + e;
	else if (!same_user(uid))
		err = "store " + addr_ + ": the server is uid " +
		      std::to_string(uid) + ", not this job's (" +
		      std::to_string(geteuid()) + ")";
	else
		return true;
	::close(fd_);
	fd_ = -1;
	return false;
}

std::vector<std::string> Client::call(char op,
				      const std::vector<std::string> &args,
				      const std::string &what)
{
	std::lock_guard<std::mutex> g(mu_);
	uint8_t st = kBad;
	std::vector<std::string> out;
	if (fd_ < 0)
		throw std::runtime_error("store: " + what + ": not connected");
	if (!send_frame(fd_, (uint8_t)op, args) || !recv_frame(fd_, st, out))
		throw std::runtime_error("store " + addr_ + ": " + what +
					 ": connection lost");
	if (st == kTimeout)
		throw std::runtime_error("store " + addr_ + ": " + what +
					 ": timed out");
	if (st != kOk)
		throw std::runtime_error("store " + addr_ + ": " + what +
					 ": rejected by the server");
	return out;
}

void Client::set(const std::string &key, const Bytes &value)
{
	call('S', {key, to_str(value)}, "set '" + key + "'");
}

void Client::set(const std::string &key, const std::string &value)
{
	call('S', {key, value}, "set '" + key + "'");
}

Bytes Client::get(const std::string &key) { return get(key, timeout_); }

Bytes Client::get(const std::string &key, Millis timeout)
{
	auto out = call('G', {key, std::to_string(timeout.count())},
			"get '" + key + "' (timeout " +
				std::to_string(timeout.count()) + " ms)");
	if (out.size() != 1)
		throw std::runtime_error("store " + addr_ + ": get '" + key +
					 "': malformed reply");
	return to_bytes(out[0]);
}

void Client::wait(const std::vector<std::string> &keys) { wait(keys, timeout_); }

void Client::wait(const std::vector<std::string> &keys, Millis timeout)
{
	std::vector<std::string> args{std::to_string(timeout.count())};
	args.insert(args.end(), keys.begin(), keys.end());
	std::string names;
	for (const std::string &k : keys)
		names += (names.empty() ? "'" : ", '") + k + "'";
	call('W', args, "wait for " + names + " (timeout " +
				std::to_string(timeout.count()) + " ms)");
}

int64_t Client::add(const std::string &key, int64_t delta)
{
	auto out = call('A', {key, std::to_string(delta)}, "add '" + key + "'");
	int64_t v = 0;
	if (out.size() != 1 || !to_int(out[0], v))
		throw std::runtime_error("store " + addr_ + ": add '" + key +
					 "': malformed reply");
	return v;
}

bool Client::check(const std::vector<std::string> &keys)
{
	auto out = call('C', keys, "check");
	return out.size() == 1 && out[0] == "1";
}

std::string Client::local_ip() const
{
	struct sockaddr_in sin = {};
	socklen_t len = sizeof sin;
	char buf[INET_ADDRSTRLEN] = "127.0.0.1";
	if (fd_ >= 0 && getsockname(fd_, (struct sockaddr *)&sin, &len) == 0)
		inet_ntop(AF_INET, &sin.sin_addr, buf, sizeof buf);
	return buf;
}

bool Client::remove(const std::string &key)
{
	auto out = call('D', {key}, "delete '" + key + "'");
	return out.size() == 1 && out[0] == "1";
}

} /* namespace tidal::store */
