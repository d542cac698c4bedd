/*
 * store.h - the rendezvous store: a small TCP key/value server that the
 * launcher on node 0 runs, and the client every trainer rank uses to find
 * its peers (Gloo's rendezvous, NCCL's unique id) and to count arrivals.
 *
 * Wire (one TCP connection per client, requests answered in order):
 *
 *   request  = u8 op | u32 nargs | nargs x (u32 len | bytes)
 *   reply    = u8 status (0 ok, 1 timeout, 2 bad request)
 *              | u32 nargs | nargs x (u32 len | bytes)
 *
 *   'S' key value          set                      -> ()
 *   'G' key timeout_ms     get, blocks until set    -> (value)
 *   'W' timeout_ms keys... wait until all are set   -> ()
 *   'A' key delta          atomic add (decimal)     -> (new value)
 *   'C' keys...            all set now?             -> ("0" | "1")
 *   'D' key                delete                   -> ("0" | "1")
 *   'H' credential         hello (Auth below)       -> (credential)
 *
 * Numbers travel as decimal text so counters read back with get().  The
 * server keeps one thread per connection: a job has a handful of ranks.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tidal::store {

using Bytes = std::vector<uint8_t>;
using Millis = std::chrono::milliseconds;

/*
 * Who may use a store.  With MUNGE, a connection's first request is a
 * hello carrying a MUNGE credential, which the server accepts only from
 * its own uid (or root) and answers with its own credential, which the
 * client checks the same way: another user, on this host or another, can
 * neither use a job's store nor stand in for it.  Before the hello the
 * server reads one small frame, for 10 s at most.  Without, anyone who
 * can connect may use it.
 */
struct Auth {
	bool munge = false;
	std::string socket; /* munged's; "" = MUNGE's default */
	/* TIDAL_STORE_AUTH (munge or none; unset = none) and
	 * TIDAL_MUNGE_SOCKET, as tidal-launch sets them for its ranks. */
	static Auth from_env();
};

class Server {
public:
	Server() = default;
	~Server();
	Server(const Server &) = delete;
	Server &operator=(const Server &) = delete;

	/* Bind ADDR (IPv4 dotted or a host name; "" = any) and PORT (0 =
	 * ephemeral) and serve from an own thread.
	 * RET false with ERR naming the address and the errno text. */
	bool start(const std::string &addr, int port, std::string &err);
	/* The bound port (after start()). */
	int port() const { return port_; }
	/* Before start(): who may connect (default Auth::from_env()), and
	 * where a refused connection is reported (default: nowhere). */
	void set_auth(const Auth &a) { auth_ = a; }
	void set_log(std::function<void(const std::string &)> f)
	{
		log_ = std::move(f);
	}
	/* Close every connection and join the threads; idempotent. */
	void stop();

private:
	void accept_loop();
	void serve(int fd);
	bool hello(int fd);

	int listen_fd_ = -1;
	int wake_[2] = {-1, -1};
	int port_ = 0;
	bool stopping_ = false;
	std::thread acceptor_;
	std::mutex mu_;
	std::condition_variable cv_;
	std::map<std::string, Bytes> kv_;
	std::vector<int> conns_;
	std::vector<std::thread> workers_;
	Auth auth_ = Auth::from_env();
	std::function<void(const std::string &)> log_;
};

/* One connection to a Server.  Calls are serialized (a mutex): share one
 * client between threads only for non-blocking use.  Errors (lost
 * connection, timeout) throw std::runtime_error naming the store address,
 * the key and the timeout. */
class Client {
public:
	Client() = default;
	~Client();
	Client(const Client &) = delete;
	Client &operator=(const Client &) = delete;

	/* Before connect(): the server's Auth (default Auth::from_env()). */
	void set_auth(const Auth &a) { auth_ = a; }
	/* Connect to "HOST:PORT", retrying until TIMEOUT (the server may not
	 * be up yet), and say hello if the Auth asks.  RET false with ERR. */
	bool connect(const std::string &hostport, Millis timeout,
		     std::string &err);
	/* Default timeout of get() and wait() without one (30 s). */
	void set_timeout(Millis t) { timeout_ = t; }
	Millis timeout() const { return timeout_; }

	void set(const std::string &key, const Bytes &value);
	void set(const std::string &key, const std::string &value);
	Bytes get(const std::string &key);
	Bytes get(const std::string &key, Millis timeout);
	void wait(const std::vector<std::string> &keys);
	void wait(const std::vector<std::string> &keys, Millis timeout);
	int64_t add(const std::string &key, int64_t delta);
	bool check(const std::vector<std::string> &keys);
	bool remove(const std::string &key);
	/* This end's IPv4 address of the connection: an address the store's
	 * host (and, in practice, the peers) can reach us at. */
	std::string local_ip() const;

private:
	std::vector<std::string> call(char op,
				      const std::vector<std::string> &args,
				      const std::string &what);

	bool hello(std::string &err);

	int fd_ = -1;
	std::string addr_;
	Millis timeout_{30000};
	Auth auth_ = Auth::from_env();
	std::mutex mu_;
};

/* "HOST:PORT" -> parts; RET false with ERR naming the text and the rule. */
bool split_hostport(const std::string &text, std::string &host, int &port,
		    std::string &err);

} /* namespace tidal::store */
