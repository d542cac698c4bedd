/*
 * number_text.h - how Tidal prints a measured number for people: three
 * decimals with trailing zeros dropped, and three significant digits for a
 * value too small for that; sizes as "12.3G".  tidalctl's records and the
 * plugin's JSON replies print the same text.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdio>
#include <string>

namespace tidal {

/* V (finite, not whole) as "0.053", "12.5", "1.23e-05". */
inline std::string decimal_text(double v)
{
	char buf[64];
	std::snprintf(buf, sizeof(buf), "%.3f", v);
	std::string s = buf;
	s.erase(s.find_last_not_of('0') + 1);
	if (s.back() == '.')
		s.pop_back();
	if (s == "0" || s == "-0") {
		std::snprintf(buf, sizeof(buf), "%.3g", v);
		s = buf;
	}
	return s;
}

/* B bytes as "512.0K", "12.3G" (powers of 1024, one decimal, K to P). */
inline std::string bytes_text(double b)
{
	const char *unit = "KMGTP";
	double v = b / 1024.0;
	int u = 0;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	char s[32];
	std::snprintf(s, sizeof(s), "%.1f%c", v, unit[u]);
	return s;
}

} /* namespace tidal */
