/*
 * log.cc - timestamped event lines on stderr.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "launcher/log.h"

#include <sys/time.h>

#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <string>

namespace tidal::launch {

namespace {
std::string g_node = "?";
}

void log_set_node(const char *node)
{
	g_node = node;
}

void note(const char *fmt, ...)
{
	struct timeval tv;
	gettimeofday(&tv, nullptr);
	struct tm tm;
	localtime_r(&tv.tv_sec, &tm);
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	std::vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* One write per line, so lines of several launchers sharing an
	 * output file do not interleave. */
	char line[2200];
	int n = std::snprintf(line, sizeof line,
			      "tidal-launch[%s] %02d:%02d:%02d.%03d %s\n",
			      g_node.c_str(), tm.tm_hour, tm.tm_min, tm.tm_sec,
			      (int)(tv.tv_usec / 1000), msg);
	if (n > (int)sizeof line - 1)
		n = sizeof line - 1;
	std::fwrite(line, 1, n, stderr);
	std::fflush(stderr);
}

double now_s()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

} /* namespace tidal::launch */
