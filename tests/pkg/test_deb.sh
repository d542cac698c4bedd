#!/usr/bin/env bash
# tests/pkg/test_deb.sh - Tidal's Debian packages (make check-deb): built
# by scripts/deb.sh from this tree, each holds exactly the files its side of
# the cluster needs, depends on exactly the installed Slurm, is lintian
# clean but for the tags explained below, and its programs run.
#
# DEB_DIR=DIR checks packages built already (scripts/deb.sh DIR) instead
# of building them.
#
# GPL-2.0-or-later.
set -uo pipefail
NAME=test_deb
. "$(dirname "$0")/lib.sh"
version=$(dpkg-parsechangelog -l "$here/debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
slurm=$(dpkg-query -W -f='${Version}' libslurm-dev)
libslurm=$(dpkg -S "$(readlink -f "/usr/lib/$multiarch/libslurm.so")" | cut -d: -f1)

out=${DEB_DIR:-}
if [ -z "$out" ]; then
	out=$BUILD/deb
	if "$here/scripts/deb.sh" "$out"; then
		ok "scripts/deb.sh built the packages in $out"
	else
		bad "scripts/deb.sh failed (log: $out/build.log)"
		finish
	fi
fi

W=$(mktemp -d /tmp/tidal-test-deb.XXXXXX)
trap 'rm -rf "$W"' EXIT

# IN: package. OUT: the regular files and links it installs, one per line.
files_of() {
	dpkg-deb -c "$out/${1}_${version}_${arch}.deb" |
		awk '$1 !~ /^d/ {p=$6; sub(/^\./, "", p); print p}' | sort
}

# The files each package must hold, no more and no fewer (docs: what
# dh_installdocs and dh_installchangelogs add).
docs() {
	printf '%s\n' "/usr/share/doc/$1/README.md.gz" \
		"/usr/share/doc/$1/changelog.gz" "/usr/share/doc/$1/copyright"
}
expect_slurmctld() {
	docs tidal-slurmctld
	printf '%s\n' \
		"/usr/lib/$multiarch/slurm-wlm/sched_tidal.so" \
		/usr/share/man/man5/tidal.conf.5.gz /usr/share/man/man7/tidal.7.gz \
		/usr/share/man/man8/sched_tidal.8.gz
	for f in tidal.conf gres.conf slurm.conf topology.conf; do
		echo "/usr/share/doc/tidal-slurmctld/examples/$f"
	done
}
expect_spank() {
	docs tidal-spank
	printf '%s\n' "/usr/lib/$multiarch/slurm-wlm/spank_tidal.so" \
		/usr/share/doc/tidal-spank/examples/plugstack.conf
}
expect_node() {
	docs tidal-node
	printf '%s\n' /etc/default/tidald /lib/systemd/system/tidald.service \
		/usr/sbin/tidald /usr/sbin/tidal-topo /usr/bin/tidal-launch \
		/usr/bin/tidal-train /usr/share/man/man1/tidal-launch.1.gz \
		/usr/share/man/man1/tidal-train.1.gz /usr/share/man/man8/tidald.8.gz \
		/usr/share/man/man8/tidal-topo.8.gz
}
expect_tools() {
	docs tidal-tools
	printf '%s\n' /usr/bin/tidalctl /usr/bin/tidal-sim \
		/usr/share/man/man1/tidalctl.1.gz /usr/share/man/man1/tidal-sim.1.gz \
		/usr/share/bash-completion/completions/tidalctl \
		/usr/share/bash-completion/completions/tidal-sim
}

for p in slurmctld spank node tools; do
	pkg=tidal-$p
	deb=$out/${pkg}_${version}_${arch}.deb
	if [ ! -f "$deb" ]; then
		bad "$pkg: no $deb"
		continue
	fi
	"expect_$p" | sort >"$W/$p.want"
	files_of "$pkg" >"$W/$p.have"
	if cmp -s "$W/$p.want" "$W/$p.have"; then
		ok "$pkg holds its $(wc -l <"$W/$p.want") files, no others"
	else
		bad "$pkg's files differ from the list (< missing, > extra):"
		diff "$W/$p.want" "$W/$p.have" | grep '^[<>]'
	fi
	dpkg-deb -x "$deb" "$W/root"
done

# Each package names the exact Slurm it was built against.
depends() { dpkg-deb -f "$out/${1}_${version}_${arch}.deb" Depends; }
for pair in "tidal-slurmctld slurmctld" "tidal-spank $libslurm" \
	"tidal-node slurmd" "tidal-tools $libslurm"; do
	set -- $pair
	d=$(depends "$1")
	if grep -qF "$2 (= $slurm)" <<<"$d"; then
		ok "$1 depends on $2 (= $slurm)"
	else
		bad "$1 does not depend on $2 (= $slurm): Depends: $d"
	fi
done

conffiles=$(dpkg-deb --ctrl-tarfile "$out/tidal-node_${version}_${arch}.deb" |
	tar -xOf - ./conffiles 2>/dev/null)
if [ "$conffiles" = /etc/default/tidald ]; then
	ok "tidal-node's one conffile is /etc/default/tidald"
else
	bad "tidal-node's conffiles are '$conffiles', not /etc/default/tidald"
fi
unit=$W/root/lib/systemd/system/tidald.service
if grep -qx 'ExecStart=/usr/sbin/tidald -D $TIDALD_OPTIONS' "$unit" &&
	grep -qx 'EnvironmentFile=-/etc/default/tidald' "$unit"; then
	ok "tidald.service starts /usr/sbin/tidald with /etc/default/tidald's options"
else
	bad "tidald.service: $(grep -E '^(ExecStart|EnvironmentFile)=' "$unit" | tr '\n' ' ')"
fi
if command -v systemd-analyze >/dev/null; then
	# Only the unit's own syntax: its binary and man page are not installed.
	sed "s|/usr/sbin/tidald|$W/root/usr/sbin/tidald|" "$unit" >"$W/tidald.service"
	msg=$(systemd-analyze verify "$W/tidald.service" 2>&1 | grep -v "Command 'man ")
	if [ -z "$msg" ]; then
		ok "systemd-analyze verify finds nothing wrong with tidald.service"
	else
		bad "systemd-analyze verify: $msg"
	fi
fi

# The programs run from the packages' files.
for prog in usr/bin/tidal-sim usr/bin/tidalctl usr/sbin/tidald \
	usr/bin/tidal-launch usr/bin/tidal-train usr/sbin/tidal-topo; do
	if v=$("$W/root/$prog" --version 2>&1) && grep -q "$version" <<<"$v"; then
		ok "/$prog --version: $v"
	else
		bad "/$prog --version did not say $version: $v"
	fi
done
so=$W/root/usr/lib/$multiarch/slurm-wlm/sched_tidal.so
# (Whole outputs, not grep -q: under pipefail an early exit of grep
# fails the pipe.)
syms=$(nm -D --defined-only "$so" 2>&1)
text=$(strings -a "$so")
if grep -qw plugin_type <<<"$syms" && grep -qx 'sched/tidal' <<<"$text"; then
	ok "sched_tidal.so is the sched/tidal plugin"
else
	bad "sched_tidal.so does not define plugin_type sched/tidal"
fi

# lintian: no error or warning; every other tag is one of these, each
# with its reason.
explained=(
)
tags=$(grep -E '^[EWIPX]: ' "$out/lintian.txt" || true)
unexplained=
while IFS= read -r line; do
	[ -n "$line" ] || continue
	tag=$(awk '{print $3}' <<<"$line")
	known=0
	for e in "${explained[@]}"; do [ "${e%% *}" = "$tag" ] && known=1; done
	case $line in E:* | W:*) known=0 ;; esac
	[ $known = 1 ] || unexplained+="$line"$'\n'
done <<<"$tags"
if [ -z "$unexplained" ]; then
	ok "lintian --pedantic: $(grep -c . <<<"${tags:-}" || true) tags, none unexplained ($out/lintian.txt)"
else
	bad "lintian tags not explained in $NAME:"
	printf '%s' "$unexplained"
fi
finish
