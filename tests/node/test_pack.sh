#!/bin/bash
# test_pack.sh - packs on one real tidald (no Slurm): real tidal-train
# processes, paced by a stage profile, join the pack of the GPU they share
# (TIDAL_PACK, as tidal-launch sets it under a packing policy), are told
# their partners' workloads (nodeagent/pack.cc) and run at the speeds
# Lucid's colocate_info.csv gives the pair (trainer/pack.h):
#
#   alone                  a packed trainer alone runs at its solo time
#   a pair                 each member's step time is its solo time over
#                          the table's speed for it beside the other, within
#                          10%, for both orientations of the row
#   the partner leaves     the other is told and runs at its solo time again
#   a pair the table lacks runs as alone, said once
#   bad options            --workload of the wrong form, --colocate without
#                          --workload: exit 2, the rule named
#   no tidald              a packed trainer says so and runs as alone
#   bad joins              a bad workload, a member joining twice: refused
#
# The table is the Lucid artifact's colocate_info.csv when the anchors are
# beside the checkout; else a table of the same form made here.
#
# GPL-2.0-or-later.
NAME=test_pack
. "$(dirname "$0")/lib.sh"
BUILD_ABS=$(cd "$BUILD" && pwd)
[ -x "$BUILD_ABS/tidald" ] || { echo "skip - $BUILD/tidald is not built"; finish; }
command -v munged >/dev/null || { echo "skip - munge is not installed"; finish; }
command -v python3 >/dev/null || { echo "skip - python3 is not installed"; finish; }
chmod 755 "$W"
. "$(dirname "$0")/munge.sh"
start_munged "$W" || { echo "skip - munged did not start"; finish; }
stop_munged() { [ -f "$W/munged.pid" ] && kill "$(cat "$W/munged.pid")" 2>/dev/null; }
trap 'stop_munged; [ "$FAILED" -gt 0 ] && tail -n 30 "$W"/*.log; cleanup' EXIT

"$BUILD_ABS/tidald" -D -N n1 --plugin 127.0.0.1:1 --listen 127.0.0.1:0 \
	--run-dir "$W/run" --ckpt-dir "$W/ckpt/n1" --heartbeat 1 \
	--munge-socket "$SOCK" >>"$W/n1.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 40); do [ -S "$W/run/n1/tidald.sock" ] && break; sleep 0.25; done
AGENT=$W/run/n1/tidald.sock
check "tidald n1 starts" test -S "$AGENT"

HEAVY=ResNet18/CIFAR-10/64/0
LIGHT=DCGAN/LSUN/128/0
TABLE=$(dirname "$0")/../../../shared/anchors/lucid/lucid/colocate_info.csv
if [ ! -r "$TABLE" ]; then
	TABLE=$W/colocate.csv
	cat >"$TABLE" <<'CSV'
,model1,dataset1,gpu_num1,batchsize1,amp1,speed1,model2,dataset2,gpu_num2,batchsize2,amp2,speed2,gpu_util,gmem_util,gmem
0,ResNet18,CIFAR-10,1,64,0,0.5,DCGAN,LSUN,1,128,0,0.8,99.0,48.0,5778
CSV
fi
echo "   colocate table: $TABLE"
PAIR_SPEED=$(cd "$(dirname "$0")/.." && pwd)/pair_speed.py
# speed J T: J's packed speed beside T, from the table
speed() { python3 "$PAIR_SPEED" "$TABLE" "$1" "$2"; }
S_HEAVY=$(speed $HEAVY $LIGHT)
S_LIGHT=$(speed $LIGHT $HEAVY)
echo "   packed speeds: $HEAVY ${S_HEAVY:-none}, $LIGHT ${S_LIGHT:-none}"
check "the table has the pair" test -n "$S_HEAVY" -a -n "$S_LIGHT"

cat >"$W/stages.csv" <<'CSV'
model,data,compute,comm
heavy,0.020,0.180,0.010
light,0.020,0.030,0.010
CSV
SOLO_HEAVY=0.21315 # 0.21 s x Muri's 1.015 alone, as every paced step
SOLO_LIGHT=0.0609

# train JOB MODEL ITERS WORKLOAD [PACK]: a paced trainer in the background;
# its step events and messages in $W/train-JOB.log.
train() {
	env TIDAL_RANK=0 TIDAL_WORLD=1 TIDAL_LOCAL_RANK=0 TIDAL_JOB="$1" \
		${5:+TIDAL_PACK=$5 TIDAL_AGENT_SOCK=$AGENT} \
		"$BUILD_ABS/tidal-train" --in 8 --out 2 --hidden 16 --layers 1 \
		--iters "$3" --log-every 5 --stage-profile "$W/stages.csv" \
		--profile-model "$2" --workload "$4" --colocate "$TABLE" \
		>"$W/train-$1.log" 2>&1 &
	PIDS+=($!)
	LAST=$!
}
# period JOB N: mean seconds per step over the step windows in which the
# job had N partners, each after a window with as many (a window that
# follows a change may straddle it)
period() {
	python3 - "$W/train-$1.log" "$2" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"ev":"step"')]
n = [e.get("pack", {}).get("n") for e in ev]
want = int(sys.argv[2])
w = [e for i, e in enumerate(ev) if i > 0 and n[i] == want and n[i - 1] == want]
print("%.4f" % (sum(1 / e["it_s"] for e in w) / len(w)) if w else "nan")
PY
}
within() { # within GOT WANT PCT
	python3 -c "import sys; g,w,p=map(float,sys.argv[1:]); sys.exit(0 if abs(g-w)<=w*p/100 else 1)" "$@"
}
over() { python3 -c "import sys; print('%.4f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$@"; }
until_step() { # until_step JOB STEP
	for _ in $(seq 100); do
		grep -q "\"step\":$2," "$W/train-$1.log" 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

# ---- heavy alone, then light packed beside it, then heavy alone again
train 201 heavy 80 $HEAVY n1-gpu0
A=$LAST
until_step 201 15
train 202 light 120 $LIGHT n1-gpu0
B=$LAST
wait "$B"
rc_b=$?
wait "$A"
rc_a=$?
check "both packed trainers finish (exit $rc_a and $rc_b)" test "$rc_a" -eq 0 -a "$rc_b" -eq 0
alone=$(period 201 0)
pa=$(period 201 1)
pb=$(period 202 1)
want_a=$(over $SOLO_HEAVY "${S_HEAVY:-1}")
want_b=$(over $SOLO_LIGHT "${S_LIGHT:-1}")
echo "   heavy: alone $alone s per step (want $SOLO_HEAVY), packed $pa (want $want_a)"
echo "   light: packed $pb s per step (want $want_b)"
grep "pack: n1-gpu0" "$W/n1.log" | sed 's/^/   /' | head -4
check "alone in its pack, heavy runs at its solo time" within "$alone" $SOLO_HEAVY 10
check "packed, heavy runs at the table's speed for it ($S_HEAVY)" within "$pa" "$want_a" 10
check "packed, light runs at the table's speed for it ($S_LIGHT)" within "$pb" "$want_b" 10
check "the step events say the pack and the speed" \
	grep -q "\"pack\":{\"n\":1,\"speed\":$S_HEAVY" "$W/train-201.log"
check "the trainer says whom it runs beside and how fast" \
	grep -q "pack n1-gpu0: beside job 202 ($LIGHT); speed .* of alone (--colocate)" "$W/train-201.log"
check "tidald logs the joins with the workloads" \
	grep -q "pack: n1-gpu0: job 202 rank 0 (uid [0-9]*) joins; in it now: 201 ($HEAVY), 202 ($LIGHT)" "$W/n1.log"
check "tidald logs the partner leaving" \
	grep -q "pack: n1-gpu0: job 202 rank 0 leaves; in it now: 201 ($HEAVY)" "$W/n1.log"
check "after its partner left, heavy is told and runs as alone" \
	grep -q "pack n1-gpu0: alone; speed 1.000 of alone" "$W/train-201.log"
after=$(python3 - "$W/train-201.log" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"ev":"step"')]
print("%.4f" % (1 / ev[-1]["it_s"]))
PY
)
echo "   heavy after light left: $after s per step"
check "... at its solo time" within "$after" $SOLO_HEAVY 10

# ---- a pair the table has no row for: as alone, said once
train 203 light 30 Odd/Data/8/0 n1-gpu1
C=$LAST
train 204 light 30 $LIGHT n1-gpu1
D=$LAST
wait "$C" "$D"
pc=$(period 203 1)
echo "   a pair the table lacks: $pc s per step (solo $SOLO_LIGHT)"
check "a pair the table lacks runs as alone" within "${pc}" $SOLO_LIGHT 10
check "... and says so once" test "$(grep -c 'the table has no row for Odd/Data/8/0 with' "$W/train-203.log")" -eq 1

# ---- bad options
"$BUILD_ABS/tidal-train" --workload ResNet18/CIFAR-10 --iters 1 >"$W/bad1.log" 2>&1
rc=$?
check "--workload of the wrong form: exit 2 ($rc), the rule named" \
	eval '[ $rc -eq 2 ] && grep -q "a workload is MODEL/DATASET/BATCH/AMP" "$W/bad1.log"'
"$BUILD_ABS/tidal-train" --colocate "$TABLE" --iters 1 >"$W/bad2.log" 2>&1
rc=$?
check "--colocate without --workload: exit 2 ($rc), the rule named" \
	eval '[ $rc -eq 2 ] && grep -q "looked up by this job.s --workload" "$W/bad2.log"'
env TIDAL_RANK=0 TIDAL_WORLD=1 TIDAL_LOCAL_RANK=0 "$BUILD_ABS/tidal-train" \
	--iters 1 --colocate "$W/none.csv" --workload $LIGHT >"$W/bad3.log" 2>&1
rc=$?
check "an unreadable --colocate table is named (exit $rc)" \
	eval '[ $rc -ne 0 ] && grep -q "none.csv: cannot be read" "$W/bad3.log"'

# ---- no tidald: a packed trainer says so and runs as alone
env TIDAL_RANK=0 TIDAL_WORLD=1 TIDAL_LOCAL_RANK=0 TIDAL_JOB=205 \
	TIDAL_PACK=n1-gpu9 TIDAL_AGENT_SOCK=$W/run/none.sock \
	"$BUILD_ABS/tidal-train" --in 8 --out 2 --hidden 16 --layers 1 \
	--iters 5 --log-every 5 --stage-profile "$W/stages.csv" \
	--profile-model light --workload $LIGHT >"$W/train-205.log" 2>&1
rc=$?
check "without tidald, a packed trainer runs as alone (exit $rc)" \
	eval '[ $rc -eq 0 ] && grep -q "pack n1-gpu9: .*running as alone" "$W/train-205.log" &&
		grep -q "\"ev\":\"done\"" "$W/train-205.log"'

# ---- bad joins
r=$(python3 - "$AGENT" <<'PY'
import json, socket, sys
def join(**kw):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(sys.argv[1])
    m = {"v": 1, "op": "pack", "job": 7, "rank": 0, "group": "g"}
    m.update(kw)
    s.sendall(json.dumps(m).encode() + b"\n")
    return s, s.makefile().readline().strip()
print(join(workload="has space")[1])
held, first = join(workload="A/B/1/0")
print(first)
print(join(workload="A/B/1/0")[1])
PY
)
echo "$r" | sed 's/^/   /'
check "a workload with a space is refused, naming the rule" \
	grep -q '"workload\\" must be 0 to 128 of' <<<"$r"
check "a member is told the pack's members" \
	grep -qF '"op":"partners","group":"g","members":[{"job":7,"rank":0,"workload":"A/B/1/0"}]' <<<"$r"
check "a member joining twice is refused" grep -q 'job 7 rank 0 is in pack g already' <<<"$r"

finish
