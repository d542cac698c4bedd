/*
 * defaults.h - the wire's constants, in one place for the C and the C++
 * side: the version every message carries and its key, and the default
 * port of the plugin's listener (CtlPort in tidal.conf(5)).
 *
 * Every message is one JSON object on one line with "v":TIDAL_WIRE_VERSION.
 * Readers also take the older key "version" (what sched/tidal and tidalctl
 * wrote before 0.9), so that a node or a tidalctl of the previous release
 * keeps working during an upgrade; writers use "v" only.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#ifndef TIDAL_PROTO_DEFAULTS_H
#define TIDAL_PROTO_DEFAULTS_H

#define TIDAL_WIRE_VERSION 1
#define TIDAL_WIRE_VERSION_KEY "v"
#define TIDAL_WIRE_VERSION_KEY_OLD "version"

/* sched/tidal's listener for tidalctl and tidald (tidal.conf CtlPort). */
#define TIDAL_CTL_PORT 6829
#define TIDAL_CTL_PORT_STR "6829"

/* The longest request line a server reads. */
#define TIDAL_WIRE_MAX_REQUEST (64 * 1024)

#endif
