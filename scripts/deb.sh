#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# scripts/deb.sh - build Tidal's Debian packages for the installed Slurm
# (make deb): tidal-slurmctld, tidal-spank, tidal-node, tidal-tools
# (debian/control).
#
# The tree as it is now (tracked files and untracked ones git does not
# ignore) is copied to OUT/tidal-VERSION and built there with
# `dpkg-buildpackage -us -uc -b`, so the packages, their .changes and
# .buildinfo land in OUT, never beside the checkout.  lintian then checks
# them; its tags go to OUT/lintian.txt (tests/pkg/test_deb.sh judges them).
#
# Needs: scripts/deps.sh (debhelper, lintian, the Build-Depends) and the
# configured Slurm source tree of scripts/slurm-src.sh.
#
# Usage: scripts/deb.sh [OUT]      (default OUT: build/deb)
# Output: progress lines; the full build log in OUT/build.log.

set -euo pipefail

readonly PROG=deb.sh

die() {
	printf '%s: error: %s\n' "$PROG" "$*" >&2
	exit 1
}

say() {
	printf '%s: %s\n' "$PROG" "$*"
}

main() {
	local top out version src dir rc
	[[ $# -le 1 ]] || die "takes at most one argument, the output directory (usage: scripts/deb.sh [OUT])"
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	out=${1:-$top/build/deb}
	mkdir -p "$out"
	out=$(cd "$out" && pwd)
	version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
	git -C "$top" rev-parse --git-dir >/dev/null 2>&1 ||
		die "$top is not a git checkout: the package is built from the files git tracks"

	say "Slurm source tree (scripts/slurm-src.sh)"
	src=$("$top/scripts/slurm-src.sh") ||
		die "no configured Slurm source tree: sched_tidal.so cannot be built (see scripts/slurm-src.sh's message)"

	dir=$out/tidal-$version
	rm -rf "$dir" "$out"/*.deb "$out"/*.ddeb "$out"/*.changes \
		"$out"/*.buildinfo "$out/lintian.txt"
	mkdir -p "$dir"
	say "copying the tree to $dir"
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [[ -e "$f" ]] && printf '%s\0' "$f"; done |
		tar --null -T - -cf -) | tar -xf - -C "$dir"

	say "dpkg-buildpackage -us -uc -b (log: $out/build.log)"
	# Its make takes dpkg-buildpackage's -j, not a jobserver of ours.
	unset MAKEFLAGS MFLAGS MAKELEVEL
	rc=0
	(cd "$dir" && TIDAL_SLURM_SRC=$src dpkg-buildpackage -us -uc -b \
		-j"$(nproc)" </dev/null) >"$out/build.log" 2>&1 &
	local pid=$! last=
	# Progress: the debhelper step the build is at, each time it moves.
	while kill -0 "$pid" 2>/dev/null; do
		sleep 5
		local now
		now=$(grep -E '^ *dh_[a-z_]+|dpkg-deb: building' "$out/build.log" | tail -1 | sed 's/^ *//' | cut -c1-100 || true)
		if [[ -n "$now" && "$now" != "$last" ]]; then
			say "  $now"
			last=$now
		fi
	done
	wait "$pid" || rc=$?
	if [[ $rc -ne 0 ]]; then
		tail -30 "$out/build.log" >&2
		die "dpkg-buildpackage failed (exit $rc); the whole log is $out/build.log"
	fi
	rm -rf "$dir"
	ls "$out"/*.deb >/dev/null 2>&1 || die "dpkg-buildpackage made no .deb in $out"

	say "lintian (tags: $out/lintian.txt)"
	lintian --info --pedantic --display-experimental "$out"/tidal_"${version}"_*.changes \
		>"$out/lintian.txt" 2>&1 || true
	for deb in "$out"/*.deb; do
		say "  $(basename "$deb"): $(dpkg-deb -f "$deb" Depends)"
	done
	say "done: $(cd "$out" && ls ./*.deb | tr '\n' ' ')"
}

main "$@"
