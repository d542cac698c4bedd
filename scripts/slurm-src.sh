#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# scripts/slurm-src.sh - fetch and configure the Slurm source that matches the
# installed libslurm-dev, for building the sched/tidal plugin against
# slurmctld's internal headers.
#
# The tree is Debian's own source package (apt-get source, Debian patches
# applied), configured with the flags Debian's debian/rules and debhelper use,
# so its config.h and slurm/slurm_version.h match the installed Slurm. Slurm
# itself is never built.
#
# Output: progress on stderr; the configured directory as the last line of
# stdout, e.g.  ./configure --with-slurm-src="$(scripts/slurm-src.sh)"
#
# Cache: ${TIDAL_CACHE:-/var/cache/tidal}/slurm-src-<version>, outside the
# repository. A configured tree there is reused. The tree is built in a
# temporary directory beside it and renamed into place, so an interrupted run
# leaves no half tree. Needs: scripts/deps.sh (deb-src enabled, libpmix-dev,
# dpkg-dev) and write access to the cache directory; root is not required.

set -euo pipefail

readonly PROG=slurm-src.sh
readonly INSTALLED_VERSION_H=/usr/include/slurm/slurm_version.h

# shellcheck source=cache.sh
. "$(dirname "${BASH_SOURCE[0]}")/cache.sh"

usage() {
	cat <<EOF
Usage: scripts/slurm-src.sh
Fetch and configure the Slurm source of the installed libslurm-dev version
under \${TIDAL_CACHE:-/var/cache/tidal}; print the configured directory.
EOF
}

# IN: path to a slurm_version.h. OUT: its SLURM_VERSION_NUMBER, e.g. 0x160508.
version_number() {
	local value
	value=$(awk '$1 == "#define" && $2 == "SLURM_VERSION_NUMBER" { print $3; exit }' "$1")
	[[ -n "$value" ]] || die "no SLURM_VERSION_NUMBER in $1"
	printf '%s\n' "$value"
}

# IN: configured tree. Fails unless its Slurm version is the installed one.
check_tree() {
	local tree=$1 want have
	[[ -f "$tree/config.h" ]] || die "$tree has no config.h: not a configured Slurm tree"
	want=$(version_number "$INSTALLED_VERSION_H")
	have=$(version_number "$tree/slurm/slurm_version.h")
	if [[ "$want" != "$have" ]]; then
		die "SLURM_VERSION_NUMBER is $have in $tree/slurm/slurm_version.h but $want in $INSTALLED_VERSION_H; remove $tree and run again"
	fi
	# Debian installs the tree's slurm/*.h; any difference means the wrong tree.
	local hdr
	for hdr in /usr/include/slurm/*.h; do
		if [[ -f "$tree/slurm/${hdr##*/}" ]] && ! cmp -s "$hdr" "$tree/slurm/${hdr##*/}"; then
			log "warning: $tree/slurm/${hdr##*/} differs from $hdr"
		fi
	done
}

# debhelper's dh_auto_configure defaults for autoconf (Buildsystem/autoconf.pm
# of debhelper 13, compat levels 10-13). IN: compat level, multiarch triplet.
debhelper_configure_defaults() {
	local compat=$1 multiarch=$2
	DH_CONFIGURE_ARGS=(
		"--build=$(dpkg-architecture -qDEB_BUILD_GNU_TYPE)"
		--prefix=/usr
		"--includedir=\${prefix}/include"
		"--mandir=\${prefix}/share/man"
		"--infodir=\${prefix}/share/info"
		--sysconfdir=/etc
		--localstatedir=/var
		--disable-option-checking
		--disable-silent-rules
		"--libdir=\${prefix}/lib/$multiarch"
	)
	if ((compat <= 11)); then
		DH_CONFIGURE_ARGS+=("--libexecdir=\${prefix}/lib/$multiarch")
	fi
	if ((compat >= 11)); then
		DH_CONFIGURE_ARGS+=(--runstatedir=/run)
	fi
	DH_CONFIGURE_ARGS+=(--disable-maintainer-mode --disable-dependency-tracking)
}

# IN: unpacked source tree. OUT: debhelper compat level.
debhelper_compat() {
	local tree=$1 level=""
	if [[ -f "$tree/debian/compat" ]]; then
		level=$(tr -dc '0-9' <"$tree/debian/compat")
	else
		level=$(grep -o 'debhelper-compat (= [0-9]*)' "$tree/debian/control" |
			tr -dc '0-9' || true)
	fi
	[[ "$level" =~ ^[0-9]+$ ]] || die "cannot read the debhelper compat level of $tree"
	((level >= 10 && level <= 13)) ||
		die "debhelper compat $level in $tree: only 10-13 are known here; update debhelper_configure_defaults"
	printf '%s\n' "$level"
}

# The arguments debian/rules passes after "dh_auto_configure --" for the main
# (non-emulator) build, expanded by make itself. IN: unpacked tree.
# OUT: RULES_CONFIGURE_ARGS.
rules_configure_args() {
	local tree=$1 recipe line
	recipe=$(cd "$tree" && make -s -n -f debian/rules override_dh_auto_configure 2>/dev/null) ||
		die "make -n -f debian/rules override_dh_auto_configure failed in $tree"
	line=$(grep -E '^dh_auto_configure -- ' <<<"$recipe" | head -n 1 || true)
	[[ -n "$line" ]] ||
		die "no 'dh_auto_configure -- ...' line in $tree/debian/rules; read it and update $PROG"
	line=${line#dh_auto_configure -- }
	case "$line" in
	*[\'\"\\\$\`]*) die "configure arguments in debian/rules need shell quoting ($line); update $PROG" ;;
	esac
	read -r -a RULES_CONFIGURE_ARGS <<<"$line"
}

# Configure an unpacked tree the way Debian's build does. IN: tree, log file.
configure_tree() {
	local tree=$1 logfile=$2 compat multiarch
	compat=$(debhelper_compat "$tree")
	multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
	debhelper_configure_defaults "$compat" "$multiarch"
	rules_configure_args "$tree"
	local -a args=("${DH_CONFIGURE_ARGS[@]}" "${RULES_CONFIGURE_ARGS[@]}")

	# dh exports dpkg-buildflags under the DEB_BUILD_MAINT_OPTIONS that
	# debian/rules sets; ask make for them the same way.
	local flags
	flags=$(cd "$tree" && printf 'include debian/rules\n.PHONY: tidal-buildflags\ntidal-buildflags:\n\t@dpkg-buildflags --export=sh\n' |
		make -s -f - tidal-buildflags) || die "dpkg-buildflags through debian/rules failed"

	log "configuring (debhelper compat $compat): ./configure ${args[*]}"
	printf '%s\n' "$flags" "./configure ${args[*]}" >"$tree/tidal-configure-flags"
	if ! (cd "$tree" && eval "$flags" && ./configure "${args[@]}") >>"$logfile" 2>&1; then
		tail -n 25 "$logfile" >&2
		die "Slurm's configure failed (log: $logfile); scripts/deps.sh installs what it needs"
	fi
	[[ -f "$tree/config.h" && -f "$tree/slurm/slurm_version.h" ]] ||
		die "configure left no config.h or slurm/slurm_version.h in $tree"
}

main() {
	case "${1:-}" in
	"") ;;
	-h | --help) usage; return 0 ;;
	*) usage >&2; exit 2 ;;
	esac

	command -v dpkg-query >/dev/null || die "dpkg-query not found: this script is for Debian 12"
	local version source_pkg source_version
	version=$(dpkg-query -W -f='${db:Status-Abbrev}|${Version}|${source:Package}|${source:Version}' libslurm-dev 2>/dev/null || true)
	[[ "$version" == ii* ]] || die "libslurm-dev is not installed; run scripts/deps.sh as root"
	IFS='|' read -r _ version source_pkg source_version <<<"$version"
	[[ -f "$INSTALLED_VERSION_H" ]] || die "$INSTALLED_VERSION_H missing; reinstall libslurm-dev"

	local cache dest
	cache_dir
	cache=$CACHE
	# An epoch's ':' would break make rules that name the path.
	dest="$cache/slurm-src-${version//:/_}"

	if [[ -f "$dest/config.h" ]]; then
		check_tree "$dest"
		log "using cached $dest"
		printf '%s\n' "$dest"
		return 0
	fi

	command -v apt-get >/dev/null || die "apt-get not found"
	command -v dpkg-architecture >/dev/null || die "dpkg-architecture not found; run scripts/deps.sh as root"

	cache_lock slurm-src
	if [[ -f "$dest/config.h" ]]; then
		check_tree "$dest"
		log "using $dest, configured meanwhile"
		printf '%s\n' "$dest"
		return 0
	fi
	local stale
	for stale in "$cache/.slurm-src-"*.tmp.*; do
		[[ -e "$stale" ]] || continue
		log "removing $stale left by an interrupted run"
		rm -rf -- "$stale"
	done
	[[ ! -e "$dest" ]] || {
		log "removing unconfigured $dest"
		rm -rf -- "$dest"
	}

	TMP_DIR=$(mktemp -d "$cache/.slurm-src-${version//:/_}.tmp.XXXXXX")
	trap 'rm -rf -- "$TMP_DIR"' EXIT
	local logfile="$TMP_DIR/slurm-src.log"
	mkdir "$TMP_DIR/download"
	# As root, apt downloads as user _apt; let it write here so its sandbox
	# works (otherwise apt warns and downloads as root, which also works).
	if [[ "$(id -u)" -eq 0 ]] && id -u _apt >/dev/null 2>&1; then
		chown _apt "$TMP_DIR/download"
	fi

	log "fetching $source_pkg $source_version (libslurm-dev $version) with apt-get source"
	if ! (cd "$TMP_DIR/download" && apt-get source -q "$source_pkg=$source_version") \
		>>"$logfile" 2>&1 </dev/null; then
		tail -n 15 "$logfile" >&2
		die "apt-get source $source_pkg=$source_version failed; run scripts/deps.sh as root (it enables deb-src), or if the archive no longer carries $source_version, upgrade libslurm-dev, slurmctld and slurmd together"
	fi

	local -a trees=("$TMP_DIR"/download/*/debian/rules)
	[[ ${#trees[@]} -eq 1 && -f "${trees[0]}" ]] ||
		die "expected one unpacked source tree under $TMP_DIR/download"
	local tree=${trees[0]%/debian/rules}
	cp "$logfile" "$tree/tidal-slurm-src.log"
	logfile="$tree/tidal-slurm-src.log"

	configure_tree "$tree" "$logfile"
	check_tree "$tree"

	chmod -R a+rX "$tree"
	mv -T -- "$tree" "$dest"
	rm -rf -- "$TMP_DIR"
	trap - EXIT
	log "configured $dest (SLURM_VERSION_NUMBER $(version_number "$dest/slurm/slurm_version.h"))"
	printf '%s\n' "$dest"
}

main "$@"
