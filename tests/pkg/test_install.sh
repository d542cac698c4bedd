#!/usr/bin/env bash
# tests/pkg/test_install.sh - `make install` puts everything under one
# prefix, whichever way it is spelt (PREFIX= or prefix=), with the tidald
# unit beside the packages' units rather than in /etc/systemd/system, the
# GPU module of tidal-train where it looks (lib/tidal), and the conf/
# examples and README among the docs; only the Slurm plugins go elsewhere,
# into Slurm's PluginDir.
#
# GPL-2.0-or-later.
set -uo pipefail
NAME=test_install
. "$(dirname "$0")/lib.sh"
plugindir=$(sed -n 's/^SLURM_PLUGIN_DIR = //p' "$here/config.mk")
W=$(mktemp -d /tmp/tidal-test-install.XXXXXX)
trap 'rm -rf "$W"' EXIT

# What must be under the prefix P (relative), given what was built.
want() {
	local p=$1
	for f in tidal-sim tidal-launch tidal-train tidalctl; do
		[ ! -x "$here/$BUILD/$f" ] || echo "$p/bin/$f"
	done
	for f in tidald tidal-topo; do
		[ ! -x "$here/$BUILD/$f" ] || echo "$p/sbin/$f"
	done
	[ ! -x "$here/$BUILD/tidald" ] || echo "$p/lib/systemd/system/tidald.service"
	[ ! -f "$here/$BUILD/tidal-train-cuda.so" ] || echo "$p/lib/tidal/tidal-train-cuda.so"
	for m in "$here"/man/man*/*.[1-8]; do
		echo "$p/share/man/man${m##*.}/$(basename "$m")"
	done
	echo "$p/share/doc/tidal/README.md"
	echo "$p/share/bash-completion/completions/tidal-sim"
	[ ! -x "$here/$BUILD/tidalctl" ] || echo "$p/share/bash-completion/completions/tidalctl"
	for f in tidal.conf plugstack.conf gres.conf slurm.conf topology.conf \
		tidald.default; do
		echo "$p/share/doc/tidal/examples/$f"
	done
	for f in sched_tidal.so spank_tidal.so; do
		[ ! -f "$here/$BUILD/$f" ] || echo "$plugindir/$f"
	done
}

for spelling in PREFIX=/usr prefix=/opt/tidal; do
	p=${spelling#*=}
	d=$W/${spelling%%=*}
	if ! make -s --no-print-directory -C "$here" BUILD="$BUILD" install \
		DESTDIR="$d" "$spelling" >"$W/log" 2>&1; then
		bad "make install $spelling failed: $(tail -3 "$W/log")"
		continue
	fi
	want "$p" | sort >"$W/want"
	(cd "$d" && find . -type f -o -type l) | sed 's|^\.||' | sort >"$W/have"
	if cmp -s "$W/want" "$W/have"; then
		ok "make install $spelling: all $(wc -l <"$W/want") files under $p (plugins in $plugindir)"
	else
		bad "make install $spelling: files differ (< missing, > extra):"
		diff "$W/want" "$W/have" | grep '^[<>]'
	fi
	if [ -f "$d$p/lib/tidal/tidal-train-cuda.so" ]; then
		# From bindir it finds ../lib/tidal (gpu_module.h).
		"$d$p/bin/tidal-train" --backend cuda --iters 0 --log-every 0 \
			>/dev/null 2>"$W/gpu.err"
		if grep -q "cannot load the GPU backend" "$W/gpu.err"; then
			bad "make install $spelling: tidal-train does not find its GPU module: $(cat "$W/gpu.err")"
		else
			ok "make install $spelling: tidal-train loads its GPU module from $p/lib/tidal"
		fi
	fi
	unit=$d$p/lib/systemd/system/tidald.service
	if [ -f "$unit" ]; then
		if grep -qx "ExecStart=$p/sbin/tidald -D \$TIDALD_OPTIONS" "$unit"; then
			ok "make install $spelling: the unit starts $p/sbin/tidald"
		else
			bad "make install $spelling: the unit says $(grep '^ExecStart=' "$unit")"
		fi
	fi
done
finish
