#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/node/test_fabric.sh - tidal-topo end to end: its options, the hwloc
# summary of the generated DGX-like XML, and InfiniBand fabric discovery
# (libibnetdisc) under ibsim on tests/node/data/fabric-2leaf.net: every node
# must hang off the right leaf, and the derived topology.conf must be the
# one the fabric file draws.  The ibsim part is skipped with a clear line
# when ibsim or libumad2sim.so is missing or ibsim cannot start.

set -uo pipefail
BUILD=${BUILD:-build}
TOPO=$BUILD/tidal-topo
NET=tests/node/data/fabric-2leaf.net
pass=0 fail=0

ok() { echo "ok   - $*"; pass=$((pass + 1)); }
no() { echo "FAIL - $*"; fail=$((fail + 1)); }
check() { # NAME COMMAND...
	local name=$1; shift
	if "$@"; then ok "$name"; else no "$name"; fi
}
finish() {
	echo "test_fabric: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit
}

if [ ! -x "$TOPO" ]; then
	echo "SKIP test_fabric: $TOPO is not built (make $TOPO)"
	finish
fi

# ---- options and the XML summary
check "tidal-topo --help exits 0" "$TOPO" --help >/dev/null
check "tidal-topo --version" bash -c "'$TOPO' --version | grep -q '^tidal-topo '"
"$TOPO" --bogus >/dev/null 2>&1
check "a bad option exits 2" test $? -eq 2
out=$("$TOPO" --port x --fabric 2>&1)
check "--port x names the option and rule" \
	grep -q -- '--port x: not an integer in 1..254' <<<"$out"
out=$("$TOPO" --xml tests/node/data/dgx-8gpu.xml)
check "DGX XML: NVSwitch present" grep -q '"nvswitch":true,"nvswitches":6' <<<"$out"
check "DGX XML: GPU 0 pairs with mlx5_1 under one PCIe switch" \
	grep -q '"index":0,[^}]*"hca":"mlx5_1","hca_path":"pci-switch"' <<<"$out"
out=$("$TOPO" --xml /nonexistent.xml 2>&1)
check "a missing XML exits 1 naming the file" \
	bash -c "'$TOPO' --xml /nonexistent.xml >/dev/null 2>&1; [ \$? -eq 1 ]"
check "... and the message names it" grep -q '/nonexistent.xml' <<<"$out"

# ---- fabric discovery under ibsim
umad2sim=$(dpkg -L libumad2sim0 2>/dev/null | grep '/libumad2sim\.so$' | head -n 1)
if ! command -v ibsim >/dev/null || [ -z "$umad2sim" ] || [ ! -f "$umad2sim" ]; then
	echo "SKIP test_fabric ibsim part: ibsim (ibsim-utils) or libumad2sim.so (libumad2sim0) not installed"
	finish
fi
if ! grep -q 'HAVE_IBNETDISC = 1' config.mk 2>/dev/null; then
	echo "SKIP test_fabric ibsim part: built without libibnetdisc (HAVE_IBNETDISC=0)"
	finish
fi

# A socket name of our own, so parallel runs do not meet.
export IBSIM_SOCKNAME=tidal-fabric-$$
tmp=$(mktemp -d)
ibsim -s -n "$NET" </dev/null >"$tmp/ibsim.log" 2>&1 &
sim=$!
trap 'kill $sim 2>/dev/null; wait $sim 2>/dev/null; rm -rf "$tmp"' EXIT

# An ASan build (make SAN=1) needs its runtime first in the preload list,
# and a suppression for libumad2sim's own overread (tests/asan.supp).
preload=$umad2sim
asan=$(ldd "$TOPO" 2>/dev/null | awk '/libasan\.so/ {print $3; exit}')
if [ -n "$asan" ]; then
	preload="$asan $umad2sim"
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}suppressions=$PWD/tests/asan.supp"
fi
discover() {
	LD_PRELOAD=$preload timeout 20 "$TOPO" --fabric --timeout-ms 200 "$@"
}
json=
for _ in 1 2 3 4 5 6 7 8 9 10; do
	if ! kill -0 $sim 2>/dev/null; then break; fi
	if json=$(discover 2>"$tmp/err"); then break; fi
	json=
	sleep 0.5
done
if [ -z "$json" ]; then
	echo "SKIP test_fabric ibsim part: ibsim could not start or be reached: $(tail -n 2 "$tmp/ibsim.log" "$tmp/err" | tr '\n' ' ')"
	finish
fi

count() { grep -o "$1" <<<"$json" | wc -l; }
check "3 switches discovered" test "$(grep -o '"switches":\[[^]]*\]' <<<"$json" | head -n 1 | grep -o '"guid"' | wc -l)" -eq 3
check "4 CAs, named by node" test "$(count '"node":"n[1-4]"')" -eq 4
check "6 cables, each once" test "$(grep -o '"links":\[[^]]*\]' <<<"$json" | grep -o '"a":' | wc -l)" -eq 6
for n in 1 2 3 4; do
	leaf=leaf$(((n + 1) / 2))
	check "n$n hangs off $leaf" grep -q "\"node_leaf\":{[^}]*\"n$n\":\"$leaf\"" <<<"$json"
done
check "the leaves are level 0 under spine0" \
	grep -q '"name":"leaf1","guid":"[^"]*","level":0,"parent":"spine0"' <<<"$json"
check "spine0 is level 1, the root" \
	grep -q '"name":"spine0","guid":"[^"]*","level":1,"parent":null' <<<"$json"
conf=$(discover --topology-conf 2>/dev/null)
want=$'SwitchName=leaf1 Nodes=n1,n2\nSwitchName=leaf2 Nodes=n3,n4\nSwitchName=spine0 Switches=leaf1,leaf2'
check "--topology-conf prints the fabric's tree" test "$conf" = "$want"
finish
