/*
 * wire_c.cc - the C entry points of the wire (see wire_c.h), over
 * wire.h's C++ code.  Every entry point catches: an exception must not
 * cross into C, least of all inside slurmctld.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "proto/wire_c.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "proto/wire.h"

using namespace tidal;

static char *dup_or_null(const std::string &s)
{
	return strdup(s.c_str());
}

extern "C" int tidal_wire_read_request(int fd, const char *munge_socket,
				       int timeout_ms, char **request,
				       uid_t *uid, char **error)
{
	*request = nullptr;
	*error = nullptr;
	try {
		wire::Reader r(fd);
		std::string cred, req, err;
		if (!r.line(&cred, timeout_ms, TIDAL_WIRE_MAX_REQUEST) ||
		    !r.line(&req, timeout_ms, TIDAL_WIRE_MAX_REQUEST)) {
			*error = dup_or_null("expected a MUNGE credential line "
					     "and a request line");
			return -1;
		}
		if (!wire::munge_check(munge_socket ? munge_socket : "", cred,
				       uid, &err)) {
			*error = dup_or_null(err);
			return -1;
		}
		*request = dup_or_null(req);
		return *request ? 0 : -1;
	} catch (...) {
		*error = dup_or_null("out of memory reading the request");
		return -1;
	}
}

extern "C" void tidal_wire_peer_host(int fd, char *buf, size_t len)
{
	if (!len)
		return;
	buf[0] = '\0';
	try {
		std::string h = wire::peer_host(fd);
		if (h.size() < len)
			std::memcpy(buf, h.c_str(), h.size() + 1);
	} catch (...) {
	}
}

extern "C" char *tidal_wire_error_reply(const char *msg)
{
	try {
		return dup_or_null(wire::error_reply(msg ? msg : "") + "\n");
	} catch (...) {
		return nullptr;
	}
}

extern "C" char *tidal_wire_authinfo_socket(const char *authinfo)
{
	try {
		std::string s = wire::authinfo_socket(authinfo ? authinfo : "");
		return s.empty() ? nullptr : dup_or_null(s);
	} catch (...) {
		return nullptr;
	}
}

extern "C" int tidal_wire_write(int fd, const char *s)
{
	return wire::write_all(fd, s, std::strlen(s)) ? 0 : -1;
}
