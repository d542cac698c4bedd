#!/bin/bash
# test_agent.sh - two real tidalds ("n1", "n2") on loopback with a private
# munged, no Slurm (the plugin address points nowhere, so fetch falls back
# to what the node has or to the peer the request names):
#
#   hello                        node name and checkpoint root
#   fetch (local)                n1's newest checkpoint, written by a real
#                                tidal-train
#   fetch from the peer          n2 copies it from n1 over ckpt_get (MUNGE),
#                                verifies it, writes it with its .done marker;
#                                bytes identical to n1's
#   corrupt transfer             a byte flipped in n1's file: n2 refuses it,
#                                leaves no file behind
#   peer port authentication     a forged credential and a non-root one are
#                                refused
#   a restarted tidald           comes back on the same socket
#
# GPL-2.0-or-later.
BUILD=${BUILD:-build}
BUILD_ABS=$(cd "$BUILD" 2>/dev/null && pwd)
NAME=test_agent
PASSED=0
FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "ok   - $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $*"; }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
skip() { echo "$NAME: skipped: $*"; echo "$NAME: 0 passed, 0 failed"; exit 0; }

[ -x "$BUILD_ABS/tidald" ] || skip "$BUILD/tidald not built"
[ -x "$BUILD_ABS/tidal-train" ] || skip "$BUILD/tidal-train not built (needs Gloo)"
command -v munged >/dev/null && command -v munge >/dev/null || skip "munge not installed"
command -v python3 >/dev/null || skip "python3 (the test's socket client) not installed"
[ "$(id -u)" -eq 0 ] || skip "not root (tidald's peer port serves root/SlurmUser only)"

T=$(mktemp -d /tmp/tidal-agent.XXXXXX)
chmod 755 "$T"
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	[ -f "$T/munged.pid" ] && kill "$(cat "$T/munged.pid")" 2>/dev/null
	[ "$FAILED" -gt 0 ] && tail -n 20 "$T"/*.log
	rm -rf "$T"
}
trap cleanup EXIT

. "$(dirname "$0")/munge.sh"
start_munged "$T" || skip "munged did not start"

# ask SOCKET JSON: one request line, print the reply line.
ask() {
	python3 - "$1" "$2" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(60)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
print(s.makefile().readline().strip())
EOF
}
# peer HOST PORT CRED JSON: a raw peer-port exchange, first line of the reply.
peer() {
	python3 - "$@" <<'EOF'
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), 10)
s.sendall((sys.argv[3] + "\n" + sys.argv[4] + "\n").encode())
print(s.makefile("rb").readline().decode().strip())
EOF
}
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1]).get('$2'))" "$1"; }

start_agent() { # start_agent NODE: tidald in the foreground, its log in $T
	local before
	before=$(cat "$T/$1.log" 2>/dev/null | grep -c "(peers)")
	"$BUILD_ABS/tidald" -D -N "$1" --plugin 127.0.0.1:1 --listen 127.0.0.1:0 \
		--run-dir "$T/run" --ckpt-dir "$T/ckpt/$1" --heartbeat 1 \
		--munge-socket "$SOCK" >>"$T/$1.log" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 40); do
		[ "$(grep -c "(peers)" "$T/$1.log")" -gt "$before" ] && return 0
		sleep 0.25
	done
	return 1
}
peer_port() { grep -o '127.0.0.1:[0-9]* (peers)' "$T/$1.log" | tail -1 | cut -d: -f2 | cut -d' ' -f1; }
train() { # train NODE JOB ITERS [ARGS]: a real checkpoint on NODE
	local n=$1 j=$2 it=$3; shift 3
	TIDAL_RANK=0 TIDAL_WORLD=1 TIDAL_LOCAL_RANK=0 TIDAL_CKPT_DIR=$T/ckpt/$n/$j \
		"$BUILD_ABS/tidal-train" --iters "$it" --ckpt-every 10 "$@" >"$T/train-$j.log" 2>&1
}

check "tidald n1 starts" start_agent n1
check "tidald n2 starts" start_agent n2
P1=$(peer_port n1)

r=$(ask "$T/run/n1/tidald.sock" '{"v":1,"op":"hello"}')
check "hello: node n1, its checkpoint root" \
	test "$(field "$r" node) $(field "$r" ckpt_dir)" = "n1 $T/ckpt/n1"
r=$(ask "$T/run/n1/tidald.sock" '{"v":2,"op":"hello"}')
check "a wrong wire version is refused" grep -q "wire version 2 not supported" <<<"$r"

# A 4x1024 MLP: its checkpoint (parameters and Adam state) is ~50 MB.
train n1 42 20 --hidden 1024 --layers 4
r=$(ask "$T/run/n1/tidald.sock" '{"v":1,"op":"fetch","job":42}')
check "fetch on n1: its own newest checkpoint (step 20)" \
	test "$(field "$r" ok) $(field "$r" step) $(field "$r" from)" = "True 20 n1"

r=$(ask "$T/run/n2/tidald.sock" "{\"v\":1,\"op\":\"fetch\",\"job\":42,\"peer\":\"127.0.0.1:$P1\"}")
echo "   $r"
check "fetch on n2: copied from n1's tidald" \
	test "$(field "$r" ok) $(field "$r" step) $(field "$r" from)" = "True 20 127.0.0.1:$P1"
f=$T/ckpt/n2/42/ckpt-000000000020
check "the copy has its .done marker" test -f "$f.done"
check "the copy is byte for byte n1's" cmp -s "$f.tck" "$T/ckpt/n1/42/ckpt-000000000020.tck"
check "n2 logs the transfer rate and the verification" \
	grep -q "fetch job 42: step 20 from .* MB/s), verified" "$T/n2.log"
grep "fetch job 42" "$T/n2.log" | sed 's/^/   /'
r=$(ask "$T/run/n2/tidald.sock" "{\"v\":1,\"op\":\"fetch\",\"job\":42,\"peer\":\"127.0.0.1:$P1\"}")
check "a second fetch uses the local copy" test "$(field "$r" from)" = n2

train n1 43 10
python3 - "$T/ckpt/n1/43/ckpt-000000000010.tck" <<'EOF'
import sys
p = sys.argv[1]
with open(p, "r+b") as f:
    f.seek(4096); b = f.read(1); f.seek(4096); f.write(bytes([b[0] ^ 0x40]))
EOF
r=$(ask "$T/run/n2/tidald.sock" "{\"v\":1,\"op\":\"fetch\",\"job\":43,\"step\":10,\"peer\":\"127.0.0.1:$P1\"}")
echo "   $r"
check "a corrupted checkpoint is refused by the receiver" \
	test "$(field "$r" ok)" = False -a -n "$(grep -o corrupt <<<"$r")"
check "... and nothing of it is left on n2" \
	test -z "$(ls -A "$T/ckpt/n2/43" 2>/dev/null)"

r=$(ask "$T/run/n2/tidald.sock" "{\"v\":1,\"op\":\"fetch\",\"job\":44,\"peer\":\"127.0.0.1:$P1\"}")
check "fetch of a job with no checkpoint: a clear error" \
	grep -q "no complete checkpoint of job 44 on n1" <<<"$r"

if [ -x /usr/bin/python3 ]; then
	r=$(runuser -u nobody -- /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n"); print(s.makefile().readline().strip())' \
		"$T/run/n2/tidald.sock" "{\"v\":1,\"op\":\"fetch\",\"job\":42,\"peer\":\"127.0.0.1:$P1\"}")
	check "a non-root caller may not name the peer to copy from" \
		grep -q "fetch from a named peer is for root" <<<"$r"
fi
r=$(peer 127.0.0.1 "$P1" forged '{"v":1,"op":"ckpt_get","job":42,"step":20}')
check "peer port: a forged credential is rejected" grep -q "MUNGE credential rejected" <<<"$r"
cred=$(runuser -u nobody -- munge -S "$SOCK" -n)
r=$(peer 127.0.0.1 "$P1" "$cred" '{"v":1,"op":"ckpt_get","job":42,"step":20}')
check "peer port: a non-root user is refused" grep -q "need root or SlurmUser" <<<"$r"

# A recorded step that rotation took: the peer serves the newest one after
# it, never an error while a newer complete checkpoint sits beside it.
cred=$(munge -S "$SOCK" -n)
r=$(peer 127.0.0.1 "$P1" "$cred" '{"v":1,"op":"ckpt_stat","job":42}')
check "ckpt_stat: n1's newest complete checkpoint of job 42 is step 20" \
	test "$(field "$r" ok) $(field "$r" step)" = "True 20"
cred=$(munge -S "$SOCK" -n)
r=$(peer 127.0.0.1 "$P1" "$cred" '{"v":1,"op":"ckpt_get","job":42,"step":15}')
check "ckpt_get of a step that is gone sends the newer step 20" \
	test "$(field "$r" ok) $(field "$r" step)" = "True 20"
cred=$(munge -S "$SOCK" -n)
r=$(peer 127.0.0.1 "$P1" "$cred" '{"v":1,"op":"ckpt_get","job":42,"step":30}')
check "... and of a step newer than any there, an error naming the newest" \
	grep -q "no complete checkpoint of job 42 at or after step 30 on n1 (its newest is step 20)" <<<"$r"

kill -9 "${PIDS[0]}"
wait "${PIDS[0]}" 2>/dev/null # its listening socket closed before the new one probes it
check "tidald n1 killed -9 and restarted: socket back" start_agent n1
r=$(ask "$T/run/n1/tidald.sock" '{"v":1,"op":"hello"}')
check "... and it answers" test "$(field "$r" node)" = n1

echo "$NAME: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
