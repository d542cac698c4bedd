#!/bin/bash
# test_interleave.sh - interleaving groups on one real tidald (no Slurm):
# real tidal-train processes, paced by a stage profile, join the group of
# the GPU they share and take their stages in the turns tidald's clock
# hands out (nodeagent/interleave.cc, trainer/stages.h):
#
#   solo                   a trainer alone runs at its stage sum x 1.015
#   a pair                 a data-heavy and a compute-heavy job: each one's
#                          iteration time is within 10% of Muri's model for
#                          the pair (tidald logs it), and well under the two
#                          run one after the other
#   three members        the same, staggered over Muri's four slots
#   a member finishing     the other goes on alone, at its solo time
#   kill -9 of a member    the same: the group dissolves, nothing hangs
#   no tidald              a grouped trainer says so and trains alone
#   bad joins              a size over 4, a fifth member: refused, named
#
# GPL-2.0-or-later.
BUILD=${BUILD:-build}
BUILD_ABS=$(cd "$BUILD" 2>/dev/null && pwd)
NAME=test_interleave
PASSED=0
FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "ok   - $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $*"; }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
skip() { echo "$NAME: skipped: $*"; echo "$NAME: 0 passed, 0 failed"; exit 0; }

[ -x "$BUILD_ABS/tidald" ] || skip "$BUILD/tidald not built"
[ -x "$BUILD_ABS/tidal-train" ] || skip "$BUILD/tidal-train not built (needs Gloo)"
command -v munged >/dev/null || skip "munge not installed"
command -v python3 >/dev/null || skip "python3 (the test's socket client) not installed"

T=$(mktemp -d /tmp/tidal-interleave.XXXXXX)
chmod 755 "$T"
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	[ -f "$T/munged.pid" ] && kill "$(cat "$T/munged.pid")" 2>/dev/null
	[ "$FAILED" -gt 0 ] && tail -n 30 "$T"/*.log
	rm -rf "$T"
}
trap cleanup EXIT

. "$(dirname "$0")/munge.sh"
start_munged "$T" || skip "munged did not start"

"$BUILD_ABS/tidald" -D -N n1 --plugin 127.0.0.1:1 --listen 127.0.0.1:0 \
	--run-dir "$T/run" --ckpt-dir "$T/ckpt/n1" --heartbeat 1 \
	--munge-socket "$SOCK" >>"$T/n1.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 40); do [ -S "$T/run/n1/tidald.sock" ] && break; sleep 0.25; done
AGENT=$T/run/n1/tidald.sock
check "tidald n1 starts" test -S "$AGENT"

# Solo stage seconds: io loads data, gpu computes (Muri's stage order:
# data, compute, sync).
cat >"$T/stages.csv" <<'CSV'
model,data,compute,comm
io,0.300,0.040,0.030
gpu,0.040,0.300,0.030
net,0.040,0.040,0.250
CSV

# train JOB MODEL ITERS [GROUP]: a paced trainer in the background; its
# step events in $T/train-JOB.log.
train() {
	local j=$1 m=$2 it=$3 g=$4
	env TIDAL_RANK=0 TIDAL_WORLD=1 TIDAL_LOCAL_RANK=0 TIDAL_JOB="$j" \
		${g:+TIDAL_GROUP=$g TIDAL_AGENT_SOCK=$AGENT} \
		"$BUILD_ABS/tidal-train" --in 8 --out 2 --hidden 16 --layers 1 \
		--iters "$it" --log-every 5 --stage-profile "$T/stages.csv" \
		--profile-model "$m" >"$T/train-$j.log" 2>&1 &
	PIDS+=($!)
	LAST=$!
}
# period JOB FROM TO: mean seconds per step over the step events FROM..TO
period() {
	python3 - "$T/train-$1.log" "$2" "$3" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"ev":"step"')]
w = [e for e in ev if int(sys.argv[2]) < e["step"] <= int(sys.argv[3])]
print("%.4f" % (sum(1 / e["it_s"] for e in w) / len(w)) if w else "nan")
PY
}
within() { # within GOT WANT PCT
	python3 -c "import sys; g,w,p=map(float,sys.argv[1:]); sys.exit(0 if abs(g-w)<=w*p/100 else 1)" "$@"
}
model_period() { # the model period tidald logged for the group's pair
	grep -E "interleave: group $1: jobs [0-9]+, [0-9]+ " "$T/n1.log" | tail -1 |
		sed -E 's/.*model period ([0-9.]+) s.*/\1/'
}

# ---- solo
train 100 io 10
wait "$LAST"
solo=$(period 100 5 10)
echo "   io alone: $solo s per step (0.37 x 1.015 = 0.3756)"
check "alone, a step takes the stage sum x 1.015" within "$solo" 0.3756 5

# ---- a pair sharing a GPU
train 101 io 30 n1-gpu0/2
A=$LAST
train 102 gpu 60 n1-gpu0/2
B=$LAST
wait "$A"
model=$(model_period n1-gpu0)
pa=$(period 101 10 30)
pb=$(period 102 10 30)
echo "   model $model s; measured io $pa s, gpu $pb s per step"
grep "interleave: group n1-gpu0" "$T/n1.log" | sed 's/^/   /' | head -4
check "tidald planned the pair with Muri's model" test -n "$model"
check "io's iteration time is within 10% of the model's" within "$pa" "$model" 10
check "gpu's iteration time is within 10% of the model's" within "$pb" "$model" 10
check "interleaved, each runs faster than the two one after the other (0.74 s)" \
	python3 -c "import sys; sys.exit(0 if $pa < 0.74 * 0.9 else 1)"
check "the step events say the group and its factor" \
	grep -q '"group":{"n":2,"factor":1.31' "$T/train-101.log"

# ---- the member that finished left; the other goes on alone
wait "$B"
check "the first member's leaving is logged" \
	grep -q "group n1-gpu0: job 101 rank 0 leaves, 1 left" "$T/n1.log"
alone=$(period 102 45 60)
echo "   gpu alone after io finished: $alone s per step (0.37 x 1.015)"
check "the member left runs at its solo time" within "$alone" 0.3756 5
check "... in a group of 1" grep -q '"step":60,.*"group":{"n":1,' "$T/train-102.log"

# ---- three members, staggered over four slots
train 105 io 25 n1-gpu2/3
E=$LAST
train 106 gpu 25 n1-gpu2/3
F=$LAST
train 107 net 25 n1-gpu2/3
G=$LAST
wait "$E" "$F" "$G"
model3=$(grep -E "interleave: group n1-gpu2: jobs [0-9]+, [0-9]+, [0-9]+ " "$T/n1.log" |
	tail -1 | sed -E 's/.*model period ([0-9.]+) s.*/\1/')
p3=$(period 107 5 20)
echo "   three: model $model3 s; measured net $p3 s per step"
check "a group of three runs within 10% of its model period" within "$p3" "${model3:-0}" 10

# ---- kill -9 of a member while grouped
train 103 io 1000 n1-gpu1/2
C=$LAST
train 104 gpu 40 n1-gpu1/2
D=$LAST
for _ in $(seq 40); do grep -q '"step":10,' "$T/train-104.log" 2>/dev/null && break; sleep 0.5; done
kill -9 "$C"
wait "$D"
rc=$?
check "after kill -9 of its partner, the other member finishes (exit $rc)" test "$rc" -eq 0
check "tidald saw the killed member leave" \
	grep -q "group n1-gpu1: job 103 rank 0 leaves, 1 left" "$T/n1.log"

# ---- no tidald to take turns from: the trainer says so and trains alone
env TIDAL_RANK=0 TIDAL_WORLD=1 TIDAL_LOCAL_RANK=0 TIDAL_JOB=108 \
	TIDAL_GROUP=n1-gpu9/2 TIDAL_AGENT_SOCK=$T/run/none.sock \
	"$BUILD_ABS/tidal-train" --in 8 --out 2 --hidden 16 --layers 1 \
	--iters 5 --log-every 5 --stage-profile "$T/stages.csv" \
	--profile-model gpu >"$T/train-108.log" 2>&1
rc=$?
check "without tidald, a grouped trainer trains alone (exit $rc)" \
	eval '[ $rc -eq 0 ] && grep -q "interleaving group n1-gpu9: .*pacing alone" "$T/train-108.log" &&
		grep -q "\"ev\":\"done\"" "$T/train-108.log"'

# ---- bad joins
ask() {
	python3 - "$AGENT" "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
print(s.makefile().readline().strip())
PY
}
r=$(ask '{"v":1,"op":"interleave","job":5,"group":"g","size":5,"stages":[1,1,1]}')
echo "   $r"
check "a group of 5 is refused, naming the rule" grep -q '"size\\" must be an integer from 1 to 4' <<<"$r"
r=$(ask '{"v":1,"op":"interleave","job":5,"group":"g","size":2,"stages":[1,1]}')
check "stages must be 3" grep -q 'must be 3 numbers' <<<"$r"

r=$(python3 - "$AGENT" <<'PY'
import json, socket, sys
join = {"v": 1, "op": "interleave", "group": "full", "size": 4,
        "stages": [0.1, 0.1, 0.1]}
held = []
for job in range(1, 5):  # four members: the group runs, turns come
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(sys.argv[1])
    s.sendall(json.dumps(dict(join, job=job)).encode() + b"\n")
    held.append(s)
held[0].makefile().readline()  # the first turn: all four are in
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall(json.dumps(dict(join, job=5)).encode() + b"\n")
print(s.makefile().readline().strip())
PY
)
echo "   $r"
check "a fifth member is refused: 4 is the most Muri interleaves" \
	grep -q 'has 4 members, the most Muri interleaves' <<<"$r"

echo "$NAME: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
