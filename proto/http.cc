/*
 * http.cc - see http.h.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "proto/http.h"

#include <unistd.h>

#include <cstring>

#include "proto/wire.h"

#ifdef TIDAL_HAVE_MHD
#include <microhttpd.h>
#endif

namespace tidal::wire
{

std::string MetricsServer::render()
{
	std::lock_guard<std::mutex> g(render_mu_);
	try {
		return render_ ? render_() : std::string();
	} catch (...) {
		return "# metrics could not be rendered\n";
	}
}

#ifdef TIDAL_HAVE_MHD

bool metrics_http_built() { return true; }

namespace
{

MHD_Result reply(MHD_Connection *c, unsigned status, const std::string &body,
		 const char *type)
{
	MHD_Response *r = MHD_create_response_from_buffer(
		body.size(), (void *)body.data(), MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	MHD_Result rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

MHD_Result handle(void *cls, MHD_Connection *c, const char *url,
		  const char *method, const char *, const char *, size_t *,
		  void **)
{
	auto *s = static_cast<MetricsServer *>(cls);
	const char *text = "text/plain; charset=utf-8";
	if (std::strcmp(method, MHD_HTTP_METHOD_GET) &&
	    std::strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED,
			     std::string(method) + " is not served here\n",
			     text);
	if (!std::strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_OK, s->render(),
			     "text/plain; version=0.0.4; charset=utf-8");
	if (!std::strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK,
			     "Tidal: Prometheus metrics at /metrics\n", text);
	return reply(c, MHD_HTTP_NOT_FOUND,
		     std::string(url) + ": not here; the metrics are at /metrics\n",
		     text);
}

} /* namespace */

bool MetricsServer::start(const std::string &addr, int port,
			  std::function<std::string()> render, std::string *err)
{
	stop();
	int fd = tcp_listen(Endpoint{ addr, std::to_string(port) }, err);
	if (fd < 0)
		return false;
	return serve(fd, addr, std::move(render), err);
}

bool MetricsServer::serve(int fd, const std::string &addr,
			  std::function<std::string()> render, std::string *err)
{
	stop();
	{
		std::lock_guard<std::mutex> g(render_mu_);
		render_ = std::move(render);
	}
	int port = bound_port(fd);
	std::string at = (addr.empty() ? std::string("0.0.0.0") : addr) + ":" +
			 std::to_string(port);
	/* The socket is ours (its errors named by tcp_listen, port 0
	 * resolved); libmicrohttpd serves it from its own thread, through
	 * epoll, so that slurmctld's many descriptors do not matter. */
	MHD_Daemon *d = MHD_start_daemon(
		MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ITC, 0, nullptr, nullptr,
		&handle, this, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)16,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
	if (!d) {
		*err = "cannot serve metrics on " + at +
		       ": libmicrohttpd did not start";
		close(fd);
		return false;
	}
	daemon_ = d;
	fd_ = fd;
	port_ = port;
	where_ = at;
	return true;
}

void MetricsServer::stop()
{
	if (daemon_) {
		/* Quiesced first, the listening socket is given back (and
		 * closed below, once): MHD_stop_daemon would otherwise close
		 * it too. */
		auto *d = static_cast<MHD_Daemon *>(daemon_);
		bool given_back = MHD_quiesce_daemon(d) != MHD_INVALID_SOCKET;
		MHD_stop_daemon(d);
		daemon_ = nullptr;
		if (!given_back)
			fd_ = -1; /* MHD_stop_daemon closed it */
	}
	if (fd_ >= 0) {
		close(fd_);
		fd_ = -1;
	}
	port_ = 0;
	where_.clear();
}

#else /* !TIDAL_HAVE_MHD */

bool metrics_http_built() { return false; }

bool MetricsServer::start(const std::string &addr, int port,
			  std::function<std::string()>, std::string *err)
{
	*err = "cannot serve metrics on " +
	       (addr.empty() ? std::string("0.0.0.0") : addr) + ":" +
	       std::to_string(port) +
	       ": this build has no libmicrohttpd (libmicrohttpd-dev)";
	return false;
}

bool MetricsServer::serve(int fd, const std::string &addr,
			  std::function<std::string()> render, std::string *err)
{
	int port = bound_port(fd);
	close(fd);
	return start(addr, port, std::move(render), err);
}

void MetricsServer::stop() {}

#endif

} /* namespace tidal::wire */
