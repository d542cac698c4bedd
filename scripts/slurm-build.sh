#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# scripts/slurm-build.sh - fetch, build and install a Slurm that Debian 12
# does not ship (today 24.11.5, from Debian 13's source package), into a
# prefix cached outside the tree, for building sched/tidal and spank_tidal
# against it and running the cluster tier on its daemons.
#
# The upstream tarball comes from Debian's archive through a private apt
# configuration (deb-src of Debian 13 in a sources file, lists and cache of
# its own under the cache directory): the system's apt sources and state are
# neither read nor changed. Debian 13's binary packages do not install on
# Debian 12, so Slurm is built from the tarball: munge, hwloc, json-c, yaml,
# MariaDB (slurmdbd's accounting_storage/mysql), PAM; every core.
#
# Output: progress on stderr; on stdout, as the last two lines,
#     prefix=DIR     the installed Slurm (bin/, sbin/, lib/slurm/, include/)
#     src=DIR        its configured source tree (config.h, src/)
#
# Cache: ${TIDAL_CACHE:-/var/cache/tidal}/slurm-VERSION/, with prefix/ and
# src/ inside. The install prefix is compiled into Slurm, so it is built in
# place; a build that did not finish leaves no .complete stamp and is
# removed by the next run. One run at a time (flock).
#
# Usage: scripts/slurm-build.sh [--version V] [--print-dir]
#   --version V   the Slurm version to build; only 24.11.5 is known
#   --print-dir   print the cache directory it would use and exit

set -euo pipefail

readonly PROG=slurm-build.sh

# Version -> the Debian source package version and suite that carry it.
declare -A DEB_VERSION=([24.11.5]=24.11.5-4+deb13u1)
declare -A DEB_SUITE=([24.11.5]=trixie)
readonly DEFAULT_VERSION=24.11.5

# shellcheck source=cache.sh
. "$(dirname "${BASH_SOURCE[0]}")/cache.sh"

usage() {
	cat <<USAGE
Usage: scripts/slurm-build.sh [--version V] [--print-dir]
Build Slurm V (default $DEFAULT_VERSION) from Debian's source archive into
\${TIDAL_CACHE:-/var/cache/tidal}/slurm-V and print prefix=DIR and src=DIR.
USAGE
}

# IN: cache dir, suite. Writes the private apt configuration; OUT: APT_OPTS.
apt_private() {
	local dir=$1 suite=$2
	mkdir -p "$dir/sources" "$dir/lists/partial" "$dir/cache/archives/partial"
	cat >"$dir/sources/$suite.sources" <<SOURCES
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
	APT_OPTS=(
		-o "Dir::Etc::SourceList=/dev/null"
		-o "Dir::Etc::SourceParts=$dir/sources"
		-o "Dir::State::Lists=$dir/lists"
		-o "Dir::Cache=$dir/cache"
		-o "APT::Sandbox::User=root"
		-q
	)
}

# IN: work dir, version, log. OUT: the unpacked tree's path on stdout.
fetch_source() {
	local work=$1 version=$2 logfile=$3 deb=${DEB_VERSION[$2]} suite=${DEB_SUITE[$2]}
	apt_private "$work/apt" "$suite"
	log "fetching slurm-wlm $deb (tarball only) from Debian $suite's deb-src"
	if ! apt-get "${APT_OPTS[@]}" update >>"$logfile" 2>&1 </dev/null; then
		tail -n 10 "$logfile" >&2
		die "apt-get update of Debian $suite's deb-src failed (log: $logfile); is deb.debian.org reachable?"
	fi
	mkdir -p "$work/download"
	if ! (cd "$work/download" &&
		apt-get "${APT_OPTS[@]}" source --tar-only "slurm-wlm=$deb") >>"$logfile" 2>&1 </dev/null; then
		tail -n 10 "$logfile" >&2
		die "apt-get source --tar-only slurm-wlm=$deb failed (log: $logfile); the archive may no longer carry it: look for the current version with apt-cache showsrc and update DEB_VERSION in $PROG"
	fi
	local -a tars=("$work"/download/slurm-wlm_*.orig.tar.*)
	[[ -f "${tars[0]}" ]] || die "no slurm-wlm_*.orig.tar.* in $work/download"
	mkdir -p "$work/unpack"
	tar -C "$work/unpack" -xf "${tars[0]}" || die "cannot unpack ${tars[0]}"
	local -a trees=("$work"/unpack/*/configure)
	[[ ${#trees[@]} -eq 1 && -f "${trees[0]}" ]] ||
		die "expected one Slurm tree with a configure script in ${tars[0]}"
	printf '%s\n' "${trees[0]%/configure}"
}

# IN: version number from a slurm_version.h, e.g. 0x180b05. OUT: 24.11.5.
version_string() {
	printf '%d.%02d.%d' $(($1 >> 16 & 255)) $(($1 >> 8 & 255)) $(($1 & 255))
}

main() {
	local version=$DEFAULT_VERSION print_dir=0
	while (($#)); do
		case "$1" in
		--version) (($# >= 2)) || die "--version needs a value"; version=$2; shift ;;
		--print-dir) print_dir=1 ;;
		-h | --help) usage; return 0 ;;
		*) usage >&2; die "unknown argument '$1'" ;;
		esac
		shift
	done
	[[ -n "${DEB_VERSION[$version]:-}" ]] ||
		die "--version $version: no Debian source known for it; known: ${!DEB_VERSION[*]}"

	local dest
	cache_dir
	dest="$CACHE/slurm-$version"
	if ((print_dir)); then
		printf '%s\n' "$dest"
		return 0
	fi
	if [[ -f "$dest/.complete" ]]; then
		log "using cached $dest"
		printf 'prefix=%s\nsrc=%s\n' "$dest/prefix" "$dest/src"
		return 0
	fi

	local tool
	for tool in apt-get make gcc mysql_config pkg-config; do
		command -v "$tool" >/dev/null || die "$tool not found; run scripts/deps.sh as root"
	done
	cache_lock slurm-build
	if [[ -f "$dest/.complete" ]]; then
		log "using $dest, built meanwhile"
		printf 'prefix=%s\nsrc=%s\n' "$dest/prefix" "$dest/src"
		return 0
	fi
	if [[ -e "$dest" ]]; then
		log "removing $dest left unfinished by an earlier run"
		rm -rf -- "$dest"
	fi
	mkdir -p "$dest"
	local logfile="$dest/build.log" started=$SECONDS
	: >"$logfile"

	local tree
	tree=$(fetch_source "$dest/fetch" "$version" "$logfile")
	mv -T -- "$tree" "$dest/src"
	rm -rf -- "$dest/fetch" # apt lists, the tarball: unpacked now

	# Multiple slurmd per host (slurmd -N) is what the cluster tier runs on.
	# Optional GPU and network libraries are off, so that what a machine
	# happens to have installed cannot change the build.
	local -a args=(
		"--prefix=$dest/prefix"
		"--sysconfdir=$dest/prefix/etc"
		--enable-multiple-slurmd
		--disable-static
		--with-munge --with-hwloc --with-json --with-yaml
		--with-mysql_config=/usr/bin
		--without-nvml --without-rsmi --without-oneapi --without-ucx
		--without-pmix --without-hdf5 --without-rdkafka --without-freeipmi
		--without-jwt --without-lua
	)
	local jobs
	jobs=$(nproc)
	log "configuring: ./configure ${args[*]} (log: $logfile)"
	if ! (cd "$dest/src" && ./configure "${args[@]}") >>"$logfile" 2>&1; then
		tail -n 25 "$logfile" >&2
		die "Slurm's configure failed (log: $logfile); scripts/deps.sh installs what it needs"
	fi
	log "building with make -j$jobs (about 2 minutes on 2 cores)"
	local step
	for step in "make -j$jobs" "make -j$jobs install"; do
		if ! (cd "$dest/src" && $step) >>"$logfile" 2>&1; then
			tail -n 25 "$logfile" >&2
			die "'$step' failed in $dest/src (log: $logfile)"
		fi
		log "$step: done after $((SECONDS - started)) s"
	done

	local have want
	have=$(awk '$2 == "SLURM_VERSION_NUMBER" { print $3; exit }' \
		"$dest/prefix/include/slurm/slurm_version.h")
	[[ -n "$have" ]] || die "no SLURM_VERSION_NUMBER in $dest/prefix/include/slurm/slurm_version.h"
	want=$version
	[[ "$(version_string "$have")" == "$want" ]] ||
		die "built Slurm says $(version_string "$have") ($have), not $want"
	[[ -x "$dest/prefix/sbin/slurmctld" && -f "$dest/prefix/lib/slurm/sched_backfill.so" ]] ||
		die "$dest/prefix lacks sbin/slurmctld or lib/slurm/sched_backfill.so after make install"
	chmod -R a+rX "$dest"
	touch "$dest/.complete"
	log "built Slurm $version in $((SECONDS - started)) s: $dest"
	printf 'prefix=%s\nsrc=%s\n' "$dest/prefix" "$dest/src"
}

main "$@"
