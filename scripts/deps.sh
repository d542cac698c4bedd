#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# scripts/deps.sh - install every Debian 12 package Tidal needs to build and
# test, and enable deb-src so scripts/slurm-src.sh can fetch Slurm's source.
#
# Run as root on Debian 12 (bookworm). Non-interactive; reads no stdin, so it
# behaves the same under CI=true. When everything is already installed and
# deb-src is already enabled it only runs dpkg-query and returns.
#
# Usage: scripts/deps.sh

set -euo pipefail

readonly PROG=deps.sh

# Build and test packages. Keep one concern per line.
readonly PACKAGES=(
	build-essential autoconf automake pkg-config dpkg-dev
	clang libclang-rt-14-dev               # libFuzzer and sanitizers
	libhwloc-dev hwloc                     # node topology
	libjson-c-dev                          # wire format
	libmunge-dev munge                     # wire authentication
	libcmocka-dev                          # unit tests
	libmicrohttpd-dev                      # Prometheus metrics over HTTP
	prometheus curl                        # the metrics test scrapes the test cluster
	libglpk-dev                            # LP/MILP policies (GPL)
	liblemon-dev                           # max-weight matching (Muri)
	libgloo-dev                            # CPU trainer collectives
	libibverbs-dev libibnetdisc-dev        # InfiniBand HCAs and fabric
	libibmad-dev libibumad-dev             # ibnetdisc.h includes mad.h, umad.h;
	                                       # libibnetdisc-dev lacks the Depends
	ibsim-utils libumad2sim0               # InfiniBand fabric simulator
	slurmctld slurmd slurm-client libslurm-dev
	slurmdbd mariadb-server                # QOS and association limits (test_qos:
	                                       # slurmdbd on a private database server)
	jq                                     # golden tests read tidal-sim --json
	time                                   # /usr/bin/time for make bench
	python3                                # tests' wire clients (JSON over sockets)
	groff-base                             # man pages checked for warnings
	expect                                 # Slurm's own regression suite (make check-slurm)
	debhelper lintian fakeroot             # make deb: the packages, checked
)

# What Slurm's own ./configure needs with Debian's flags (see debian/rules of
# slurm-wlm): --with-pmix=DIR fails without libpmix-dev; --enable-pam only
# warns, but Debian's build had PAM, so install it to get the same config.h.
# munge and hwloc are listed above. The rest of Slurm's Build-Depends (debhelper,
# gtk, mysql, hdf5, ...) only enable optional plugins and change no header the
# sched plugin includes; the installed 22.05 is configured, never built.
readonly SLURM_CONFIGURE_PACKAGES=(
	libpmix-dev
	libpam0g-dev
	# Slurm 24.11, which scripts/slurm-build.sh builds (it also uses munge,
	# hwloc and json-c, above): slurmdbd's accounting_storage/mysql, and
	# the YAML serializer its configure is given.  Its configure runs
	# mysql_config, which Debian 12 ships in libmariadb-dev-compat only
	# (libmariadb-dev has mariadb_config).
	libmariadb-dev libmariadb-dev-compat libyaml-dev
)

die() {
	printf '%s: error: %s\n' "$PROG" "$*" >&2
	exit 1
}

say() {
	printf '%s: %s\n' "$PROG" "$*"
}

# IN: package names. OUT: prints those not installed, one per line.
missing_packages() {
	local pkg status
	for pkg in "$@"; do
		status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)
		if [[ "$status" != ii* ]]; then
			printf '%s\n' "$pkg"
		fi
	done
}

# Turn on deb-src in the existing apt sources without adding any new host.
# deb822 files: "Types: deb" becomes "Types: deb deb-src".
# One-line sources.list: each "deb " line gets a "deb-src " twin.
# RET: 0 if a file changed, 1 if nothing needed changing.
enable_deb_src() {
	local changed=1 file tmp line src
	local -a deb_lines

	for file in /etc/apt/sources.list.d/*.sources; do
		[[ -f "$file" ]] || continue
		if grep -Eq '^Types:[[:space:]]*deb[[:space:]]*$' "$file"; then
			sed -i -E 's/^Types:[[:space:]]*deb[[:space:]]*$/Types: deb deb-src/' "$file"
			say "enabled deb-src in $file"
			changed=0
		fi
	done

	file=/etc/apt/sources.list
	if [[ -f "$file" ]]; then
		mapfile -t deb_lines < <(grep -E '^deb[[:space:]]' "$file" || true)
		tmp=""
		for line in "${deb_lines[@]}"; do
			src="deb-src${line#deb}"
			if ! grep -Fxq -- "$src" "$file"; then
				if [[ -z "$tmp" ]]; then
					tmp=$(mktemp "$file.XXXXXX")
					cat "$file" >"$tmp"
				fi
				printf '%s\n' "$src" >>"$tmp"
			fi
		done
		if [[ -n "$tmp" ]]; then
			chmod 0644 "$tmp"
			mv -f "$tmp" "$file"
			say "enabled deb-src in $file"
			changed=0
		fi
	fi
	return "$changed"
}

# True if apt already has source indexes (deb-src lists were fetched).
have_source_indexes() {
	compgen -G '/var/lib/apt/lists/*_Sources*' >/dev/null
}

main() {
	if [[ $# -gt 0 ]]; then
		die "takes no arguments (usage: scripts/deps.sh)"
	fi
	if [[ "$(id -u)" -ne 0 ]]; then
		die "must run as root: it installs Debian packages and edits /etc/apt (try: sudo $0)"
	fi
	if ! command -v apt-get >/dev/null || ! command -v dpkg-query >/dev/null; then
		die "apt-get/dpkg-query not found: this script is for Debian 12"
	fi

	export DEBIAN_FRONTEND=noninteractive
	exec </dev/null

	local need_update=1
	if enable_deb_src; then
		need_update=0
	elif ! have_source_indexes; then
		need_update=0
	fi

	local -a missing
	mapfile -t missing < <(missing_packages "${PACKAGES[@]}" "${SLURM_CONFIGURE_PACKAGES[@]}")
	if [[ ${#missing[@]} -gt 0 ]]; then
		need_update=0
	fi

	if [[ $need_update -eq 0 ]]; then
		say "running apt-get update"
		apt-get update -q -o DPkg::Lock::Timeout=600
	fi

	if [[ ${#missing[@]} -eq 0 ]]; then
		say "all ${#PACKAGES[@]} build/test and ${#SLURM_CONFIGURE_PACKAGES[@]} Slurm-configure packages already installed"
		return 0
	fi

	say "installing: ${missing[*]}"
	# Wait for another apt/dpkg run (unattended-upgrades, a colleague) to end.
	apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 \
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
		"${missing[@]}"

	mapfile -t missing < <(missing_packages "${missing[@]}")
	if [[ ${#missing[@]} -gt 0 ]]; then
		die "still not installed after apt-get install: ${missing[*]}"
	fi
	say "done"
}

main "$@"
