/*
 * c_api.h - the contract of the plugin's C++ side with its C side, kept in
 * one place: every extern "C" entry point of engine.cc, ctl_engine.cc and
 * agents/ runs its body through guarded(), so that nothing thrown ever
 * unwinds into slurmctld; strings handed to C are c_string() copies that
 * the C side free()s; and the codes C reads are core's, checked by the
 * compiler here.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "core/model/plan.h"
#include "plugin/sched/bridge.h"
#include "proto/json.h"

namespace tidal::plugin
{

/* S as a malloc()ed C string; NULL if memory is short. */
inline char *c_string(const std::string &s) noexcept
{
	char *p = (char *)std::malloc(s.size() + 1);
	if (p)
		std::memcpy(p, s.c_str(), s.size() + 1);
	return p;
}

/* F()'s result, or FALLBACK if F throws. */
template <class R, class F> R guarded(R fallback, F &&f) noexcept
{
	try {
		return std::forward<F>(f)();
	} catch (...) {
		return fallback;
	}
}

/* F(), with whatever it throws dropped. */
template <class F> void guarded(F &&f) noexcept
{
	try {
		std::forward<F>(f)();
	} catch (...) {
	}
}

/* {"v":1,"ok":false,"error":"internal error"} and its newline, for a
 * request whose handler threw; NULL if even that cannot be made. */
inline char *internal_error_reply() noexcept
{
	return guarded((char *)nullptr, [] {
		return c_string(wire::error_reply("internal error") + "\n");
	});
}

/* bridge.h's TIDAL_* decision codes are core's tidal::Action values. */
static_assert(TIDAL_START == (int)Action::Start);
static_assert(TIDAL_KEEP == (int)Action::Keep);
static_assert(TIDAL_RESIZE == (int)Action::Resize);
static_assert(TIDAL_PREEMPT == (int)Action::Preempt);
static_assert(TIDAL_HOLD == (int)Action::Hold);
static_assert(TIDAL_REJECT == (int)Action::Reject);

} /* namespace tidal::plugin */
