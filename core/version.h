/*
 * version.h - Tidal's version, the one every program prints for
 * --version and tidald reports when it registers.  configure.ac's
 * AC_INIT reads it from here; debian/changelog's top entry must name
 * the same (tests/pkg/test_deb.sh checks that the packaged programs say
 * it).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#define TIDAL_VERSION "0.1.0"
