#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# scripts/hwloc-src.sh - fetch hwloc's own test topologies (tests/hwloc/xml of
# the Debian source package of the installed libhwloc-dev) for
# tests/node/test_topo, which checks Tidal's node summary against what
# hwloc's tools report on the same files.
#
# Output: progress on stderr; the directory holding the XML files as the last
# line of stdout.
#
# Cache: ${TIDAL_CACHE:-/var/cache/tidal}/hwloc-src-<version>/tests/hwloc/xml,
# outside the repository, reused when present.  Filled in a temporary
# directory beside it and renamed into place, so an interrupted run leaves no
# half tree.  Needs deb-src (scripts/deps.sh enables it), apt-get and write
# access to the cache directory.  Only the source archive is downloaded
# (apt-get source --download-only): nothing is built.

set -euo pipefail

readonly PROG=hwloc-src.sh

log() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
	cat <<USAGE
Usage: scripts/hwloc-src.sh
Fetch tests/hwloc/xml from the hwloc source package of the installed
libhwloc-dev under \${TIDAL_CACHE:-/var/cache/tidal}; print its directory.
USAGE
	exit 0
fi

version=$(dpkg-query -W -f='${Version}' libhwloc-dev 2>/dev/null) ||
	die "libhwloc-dev is not installed (scripts/deps.sh installs it)"
[[ -n "$version" ]] || die "libhwloc-dev has no version in dpkg's database"
cache=${TIDAL_CACHE:-/var/cache/tidal}
dest=$cache/hwloc-src-$version
xml=$dest/tests/hwloc/xml

if compgen -G "$xml/*.xml" >/dev/null; then
	printf '%s\n' "$xml"
	exit 0
fi

command -v apt-get >/dev/null || die "apt-get not found"
mkdir -p "$cache" || die "cannot create $cache; set TIDAL_CACHE to a writable directory"
tmp=$(mktemp -d "$cache/.hwloc-src.XXXXXX") || die "$cache is not writable; set TIDAL_CACHE"
trap 'rm -rf "$tmp"' EXIT

log "downloading the hwloc=$version source package into $tmp"
(cd "$tmp" && apt-get source --download-only "hwloc=$version" >&2) ||
	die "apt-get source hwloc=$version failed (is deb-src enabled and the mirror reachable?)"
orig=$(compgen -G "$tmp/hwloc_*.orig.tar.*" | head -n 1) ||
	die "no hwloc_*.orig.tar.* in the downloaded source package"
mkdir -p "$tmp/tree"
tar -xf "$orig" -C "$tmp/tree" --strip-components=1 --wildcards '*/tests/hwloc/xml' ||
	die "$orig: cannot extract tests/hwloc/xml"
compgen -G "$tmp/tree/tests/hwloc/xml/*.xml" >/dev/null ||
	die "$orig has no tests/hwloc/xml/*.xml"
rm -rf "$dest"
mv "$tmp/tree" "$dest"
log "hwloc $version test topologies in $xml"
printf '%s\n' "$xml"
