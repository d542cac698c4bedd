#!/bin/bash
# test_launch.sh - tidal-launch with real tidal-train ranks on loopback, no
# Slurm: two "nodes" on one host (two launchers, --node-index 0/1, one rank
# each, one store), sharing one checkpoint root as a shared file system
# would.
#
#   1. a 2-node run trains to completion, the loss goes down
#   2. kill -9 of one rank: every rank restarts from the last checkpoint as
#      generation 1, one restart spent, and the run completes; run again
#      (a requeue), the job keeps its spent restart
#   3. the newest checkpoint corrupted: the previous one is used, with the
#      warning printed
#   4. control socket: checkpoint answers a durable step whose .done exists;
#      checkpoint_stop leaves the launchers alive and the trainers gone,
#      SIGTERM then ends them with status 0; a stranger uid is refused;
#      ranks are bound to their GPU's CPUs and HCA (a DGX hwloc XML)
#   5. checkpoint_stop without SIGTERM: training resumes after --stop-grace
#      without spending the budget
#   6. the restart budget exhausted: exit 1 with a clear message
#   7. SIGTERM while training: the trainers checkpoint and stop, the
#      launchers die by SIGTERM (an interrupted job, not a finished one)
#   8. a full checkpoint disk (a small tmpfs; skipped without root): a
#      clear error naming the step, the file and ENOSPC, training goes
#      on and completes, the older checkpoints stay complete
#   9. the store with MUNGE (where munged can run): another uid's hello and
#      a request before the hello are refused and logged, the job trains
#      on; a store served by another uid is not used; --store-auth munge
#      without munged fails saying why.  Without munged the store is open
#      and the launcher warns (section 1's log)
#
# GPL-2.0-or-later.

BUILD=${BUILD:-build}
LAUNCH=$BUILD/tidal-launch
TRAIN=$BUILD/tidal-train
NAME=test_launch
PASSED=0
FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "ok   - $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $*"; }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
finish() {
	echo "$NAME: $PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ]
}
for b in "$LAUNCH" "$TRAIN"; do
	if [ ! -x "$b" ]; then
		echo "$NAME: skipped: $b not built"
		echo "$NAME: 0 passed, 0 failed"
		exit 0
	fi
done
LAUNCH=$(cd "$(dirname "$LAUNCH")" && pwd)/tidal-launch
TRAIN=$(cd "$(dirname "$TRAIN")" && pwd)/tidal-train

T=$(mktemp -d /tmp/tidal-launch-test.XXXXXX)
chmod 755 "$T"
PIDS=
cleanup() {
	local p
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	mountpoint -q "$T/ckpt-full" 2>/dev/null && umount "$T/ckpt-full"
	if [ "$FAILED" -gt 0 ] || [ -n "${TIDAL_KEEP_LOGS:-}" ]; then
		for f in "$T"/*.log; do echo "---- $f"; tail -n 30 "$f"; done
	fi
	rm -rf "$T"
}
trap cleanup EXIT

free_port() {
	local used p
	used=$(ss -Htan 2>/dev/null | awk '{print $4}' | sed 's/.*://' | sort -u)
	for _ in $(seq 50); do
		p=$((30000 + RANDOM % 20000))
		echo "$used" | grep -qx "$p" || { echo "$p"; return; }
	done
	echo 39999
}

# wait_for SECONDS COMMAND...: poll every 0.1 s.
wait_for() {
	local t=$1 i; shift
	for i in $(seq $((t * 10))); do
		"$@" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# start_job JOB ITERS [LAUNCH OPTIONS...] -- [TRAIN OPTIONS...]: two
# launchers in the background; their pids in A and B, logs in
# $T/JOB-a.log and $T/JOB-b.log.
start_job() {
	local job=$1 iters=$2 lopt=() topt=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do lopt+=("$1"); shift; done
	[ "${1:-}" = -- ] && shift
	topt=("$@")
	local port common
	port=$(free_port)
	STORE_PORT=$port # its rendezvous store's port
	# --no-bind unless a test binds from an XML: hwloc's live discovery
	# leaks a little in its plugins, which LeakSanitizer (SAN=1) reports.
	case " ${lopt[*]} " in *" --topology-xml "*) ;; *) lopt+=(--no-bind) ;; esac
	common=(-J "$job" --nodes 2 --ranks 1 --store "127.0.0.1:$port"
		--run-dir "$T/run" --ckpt-dir "$T/ckpt" "${lopt[@]}")
	local tr=("$TRAIN" --hidden 64 --global-batch 64 --iters "$iters"
		  --log-every 10 "${topt[@]}")
	"$LAUNCH" "${common[@]}" -N a --node-index 0 -- "${tr[@]}" \
		>"$T/$job-a.out" 2>"$T/$job-a.log" &
	A=$!
	"$LAUNCH" "${common[@]}" -N b --node-index 1 -- "${tr[@]}" \
		>"$T/$job-b.out" 2>"$T/$job-b.log" &
	B=$!
	PIDS="$PIDS $A $B"
}

# wait_exit PID SECONDS: RC = its exit status, or 124 (then killed) after
# SECONDS.  Not in $(...): only this shell can wait for its children.
wait_exit() {
	if ! wait_for "$2" gone "$1"; then
		kill -9 "$1"
		wait "$1" 2>/dev/null
		RC=124
		return
	fi
	wait "$1"
	RC=$?
}
# A process that has exited (a zombie, for our own children) or is gone.
gone() { ! awk '$3 != "Z" { f = 1 } END { exit !f }' "/proc/$1/stat" 2>/dev/null; }
alive() { ! gone "$1"; }
# both_exit SECONDS: RA and RB, the exit statuses of A and B.
both_exit() {
	wait_exit "$A" "$1"; RA=$RC
	wait_exit "$B" 10; RB=$RC
}
has() { echo "$1" | grep -q -- "$2"; } # has TEXT PATTERN

ctl() { # ctl JOB NODE OP
	"$LAUNCH" --ctl "$3" -J "$1" -N "$2" --run-dir "$T/run"
}
# The pid of global rank R from NODE's status.
rank_pid() { # rank_pid JOB NODE RANK
	ctl "$1" "$2" status | grep -o "\"rank\":$3,\"pid\":[0-9]*" | sed 's/.*://'
}
# Wait until JOB's trainers run on both nodes: "running" is also the
# state of generation 0 before its ranks are spawned, and a rank's pid is
# known before it has exec'd (binding and environment not yet its own);
# the launcher logs "generation 0 running" once every rank said start.
ranks_up() { # ranks_up SECONDS JOB
	wait_for "$1" eval "grep -q 'generation 0 running' $T/$2-a.log &&
		grep -q 'generation 0 running' $T/$2-b.log &&
		[ -n \"\$(rank_pid $2 a 0)\" ] && [ -n \"\$(rank_pid $2 b 1)\" ]"
}
# Loss of the first and the last step line in LOG.
first_loss() { grep -m1 -o ' loss [0-9.]*' "$1" | awk '{print $2}'; }
last_loss() { grep -o ' loss [0-9.]*' "$1" | tail -1 | awk '{print $2}'; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 < b + 0) }'; }
# Seconds since the epoch of a log line's HH:MM:SS.mmm.
line_time() { date -d "$(echo "$1" | awk '{print $2}')" +%s.%N; }

# ---- 1. two nodes to completion
start_job 1 200 -- --ckpt-every 50
both_exit 60; ra=$RA; rb=$RB
check "2-node run: both launchers exit 0 (node 0: $ra, node 1: $rb)" test "$ra$rb" = 00
check "2-node run: world 2, trained to step 200" \
	grep -q "training done at step 200" "$T/1-a.log"
check "2-node run: global ranks in node order (a: 0, b: 1)" eval \
	"grep -q 'world 2, ranks 0-0 here' $T/1-a.log && grep -q 'world 2, ranks 1-1 here' $T/1-b.log"
l0=$(first_loss "$T/1-a.log"); l1=$(last_loss "$T/1-a.log")
check "2-node run: loss goes down ($l0 -> $l1)" lt "$l1" "$l0"
check "2-node run: checkpoints durable with step and rate" \
	grep -qE "checkpoint durable: step 200, .* MB/s" "$T/1-a.log"

# ---- 2. kill -9 of one rank
start_job 2 4000 -- --ckpt-every 200
wait_for 60 grep -q "checkpoint durable: step 400" "$T/2-a.log"
victim=$(rank_pid 2 b 1)
t_kill=$(date +%s.%N)
kill -9 "$victim"
both_exit 90; ra=$RA; rb=$RB
check "kill -9 rank 1 (pid $victim): the run still completes (exits $ra, $rb)" \
	test "$ra$rb" = 00
check "kill -9: the failure is named with its signal" \
	grep -q "rank 1 (pid $victim) failed: killed by signal 9" "$T/2-b.log"
check "kill -9: all ranks restart as generation 1, budget 2 of 3 left" eval \
	"grep -q 'restarting all ranks as generation 1 .*restart budget left 2 of 3' $T/2-a.log &&
	 grep -q 'restarting all ranks as generation 1 .*restart budget left 2 of 3' $T/2-b.log"
resumed=$(grep -o 'generation 1: .*resuming from step [0-9]*' "$T/2-a.log" | sed 's/.* //')
last_before=$(sed '/restarting all ranks/q' "$T/2-a.log" | grep -o 'checkpoint durable: step [0-9]*' | tail -1 | sed 's/.* //')
# A checkpoint can become durable (its .done written) in the moment the
# generation is torn down, before rank 0's event reaches the log: then
# the newest on disk is one interval past the last logged one.
check "kill -9: resumed from the last durable checkpoint (step ${resumed:-none}, last logged before the kill ${last_before:-none})" \
	eval '[ -n "$resumed" ] && [ -n "$last_before" ] &&
	      { [ "$resumed" = "$last_before" ] || [ "$resumed" = $((last_before + 200)) ]; }'
check "kill -9: trained to step 4000" grep -q "training done at step 4000" "$T/2-a.log"
run_line=$(grep -m1 "generation 1 running" "$T/2-a.log")
step_line=$(grep -A1000 "generation 1 running" "$T/2-a.log" | grep -m1 ' step [0-9]* loss')
if [ -n "$run_line" ] && [ -n "$step_line" ]; then
	echo "# restart latency: kill -9 -> generation 1 started $(echo "$(line_time "$run_line") - $t_kill" | bc) s," \
		"-> its first step line $(echo "$(line_time "$step_line") - $t_kill" | bc) s"
fi

# A requeued job keeps its budget: node 0 records restarts beside the
# checkpoints.
check "kill -9: the restart count is kept beside the checkpoints" \
	test "$(cat "$T/ckpt/2/launch-restarts" 2>/dev/null)" = 1
start_job 2 4050
both_exit 30; ra=$RA; rb=$RB
check "job 2 run again: resumes from step 4000 with 1 of 3 restarts spent (exits $ra, $rb)" eval \
	'[ "$ra$rb" = 00 ] && grep -q "restart budget: 1 of 3 spent by earlier runs" "$T/2-a.log" &&
	 grep -q "resuming from step 4000" "$T/2-a.log"'

# ---- 3. the newest checkpoint corrupted
newest=$(ls "$T"/ckpt/1/ckpt-*.tck | sort | tail -1)
prev=$(ls "$T"/ckpt/1/ckpt-*.tck | sort | tail -2 | head -1)
size=$(stat -c %s "$newest")
printf 'garbage!' | dd of="$newest" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
cp "$T/1-a.log" "$T/1-first-a.log"
start_job 1 250 -- --ckpt-every 50
both_exit 60; ra=$RA; rb=$RB
pstep=$(basename "$prev" .tck | sed 's/ckpt-0*//')
check "corrupt newest: the warning names $(basename "$newest")" \
	grep -q "warning: $newest: .*using the previous one" "$T/1-a.log"
check "corrupt newest: resumed from the previous one (step $pstep)" \
	grep -q "resuming from step $pstep ($prev)" "$T/1-a.log"
check "corrupt newest: completes (exits $ra, $rb)" test "$ra$rb" = 00

# ---- 4. control socket: checkpoint, checkpoint_stop, SIGTERM; binding
XML=$(cd "$(dirname "$0")" && pwd)/data/dgx-8gpu.xml
unset CUDA_VISIBLE_DEVICES NCCL_IB_HCA
start_job 4 100000 --topology-xml "$XML"
ranks_up 30 4
p0=$(rank_pid 4 a 0)
cpus=$(awk '/^Cpus_allowed_list/ {print $2}' "/proc/$p0/status")
check "binding: rank 0 bound to GPU 0's CPUs (0-15,32-47) here: $cpus, HCA mlx5_1" eval \
	'grep -q "rank 0: GPU 0 (NUMA 0): bound to CPUs $cpus, HCA mlx5_1" "$T/4-a.log" &&
	 tr "\0" "\n" <"/proc/$p0/environ" | grep -qx NCCL_IB_HCA=mlx5_1'
for c in $(echo "$cpus" | tr ',' ' '); do
	lo=${c%-*}; hi=${c#*-}
	[ "$lo" -ge 0 ] && [ "$hi" -le 15 ] || [ "$lo" -ge 32 ] && [ "$hi" -le 47 ] ||
		fail "binding: CPUs $c outside GPU 0's 0-15,32-47"
done
reply=$(ctl 4 a checkpoint)
step=$(echo "$reply" | grep -o '"step":[0-9]*' | sed 's/.*://')
path=$(echo "$reply" | grep -o '"path":"[^"]*"' | sed 's/.*:"//; s/"$//; s,\\/,/,g')
check "checkpoint: answered ok with step ${step:-?} ($reply)" \
	has "$reply" '"ok":true'
check "checkpoint: its .done exists (${path%.tck}.done)" test -n "$path" -a -f "${path%.tck}.done"
reply=$(ctl 4 b checkpoint)
check "checkpoint on node 1: refused, only node 0 serves it" \
	has "$reply" "only node 0"
if id nobody >/dev/null 2>&1; then
	reply=$(setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$LAUNCH" --ctl status -J 4 -N a --run-dir "$T/run" 2>&1)
	check "control socket: another uid is refused ($reply)" \
		has "$reply" "permission denied"
fi
pa=$(rank_pid 4 a 0); pb=$(rank_pid 4 b 1)
reply=$(ctl 4 a checkpoint_stop)
sstep=$(echo "$reply" | grep -o '"step":[0-9]*' | sed 's/.*://')
check "checkpoint_stop: answered ok with a later step (${sstep:-?} > $step)" \
	eval 'has "$reply" "\"ok\":true" && [ "${sstep:-0}" -gt "$step" ]'
check "checkpoint_stop: the trainers are gone (pids $pa, $pb)" \
	wait_for 10 eval "gone $pa && gone $pb"
sleep 0.5
check "checkpoint_stop: both launchers still alive, node 0 'stopped'" \
	eval "alive $A && alive $B && ctl 4 a status | grep -q '\"state\":\"stopped\"'"
kill -TERM $A $B
both_exit 10; ra=$RA; rb=$RB
check "checkpoint_stop, then SIGTERM: both exit 0 ($ra, $rb)" test "$ra$rb" = 00

# ---- 5. checkpoint_stop without SIGTERM: resume after --stop-grace
start_job 5 3000 --stop-grace 1
ranks_up 30 5
ctl 5 a checkpoint_stop >/dev/null
both_exit 60; ra=$RA; rb=$RB
check "stop-grace: resumed without spending a restart, completed (exits $ra, $rb)" eval \
	"[ '$ra$rb' = 00 ] && grep -q 'resuming as generation 1 (no restart spent)' $T/5-b.log &&
	 grep -q 'training done at step 3000' $T/5-a.log"

# ---- 6. restart budget exhausted
start_job 6 100 --restart-budget 1 -- --lr -1
both_exit 30; ra=$RA; rb=$RB
check "budget exhausted: non-zero exit ($ra, $rb)" eval "[ '$ra' != 0 ] && [ '$rb' != 0 ]"
check "budget exhausted: a clear message" \
	grep -q "restart budget exhausted (1 restart used of 1): giving up" "$T/6-a.log"

# ---- 7. SIGTERM while training: checkpoint, then die by the signal
start_job 7 100000 -- --ckpt-every 50
ranks_up 30 7
kill -TERM $A $B
both_exit 30; ra=$RA; rb=$RB
check "SIGTERM while training: both die by it (143: $ra, $rb), a checkpoint first" eval \
	"[ '$ra$rb' = 143143 ] && grep -q 'trainers exited after SIGTERM; exiting by the signal' $T/7-a.log &&
	 sed -n '/SIGTERM: forwarding/,\$p' $T/7-a.log | grep -q 'checkpoint durable'"

# ---- 8. a full checkpoint disk: a clear error, training goes on, the
# older checkpoints stay.  A 2.2 MB tmpfs holds two of these 1 MB
# checkpoints (hidden 256); the third write fails with ENOSPC.
full=$T/ckpt-full
mkdir -p "$full"
if mount -t tmpfs -o size=2200k tmpfs "$full" 2>/dev/null; then
	port=$(free_port)
	"$LAUNCH" -J 8 --nodes 1 --ranks 1 --store "127.0.0.1:$port" \
		--run-dir "$T/run" --ckpt-dir "$full" --no-bind -N a --node-index 0 -- \
		"$TRAIN" --hidden 256 --global-batch 64 --iters 100 --log-every 10 \
		--ckpt-every 10 >"$T/8-a.out" 2>"$T/8-a.log" &
	A=$!; PIDS="$PIDS $A"
	wait_exit "$A" 60; ra=$RC
	kept=$(ls "$full/8" | sed -n 's/^ckpt-0*\([0-9]*\)\.done$/\1/p' | sort -n | tr '\n' ' ')
	check "full disk: training completes anyway (exit $ra)" eval \
		"[ '$ra' = 0 ] && grep -q 'training done at step 100' $T/8-a.log"
	check "full disk: the error names the step, the file and ENOSPC, and the checkpoint kept" \
		grep -Eq "error: checkpoint at step 30 failed: $full/8/.*No space left on device.*; the newest durable checkpoint stays step 20 " "$T/8-a.log"
	check "full disk: steps 10 and 20 stay complete (kept: $kept)" test "$kept" = "10 20 "
	check "full disk: no temporary file left behind" \
		eval "! ls -a '$full/8' | grep -q '^\.ckpt-tmp-'"
	umount "$full"
else
	echo "skip - full disk: cannot mount a tmpfs here (not root?)"
fi

# ---- 9. the store takes only its job's uid (MUNGE), both ways
if command -v munged >/dev/null && command -v munge >/dev/null && id nobody >/dev/null 2>&1 &&
	command -v python3 >/dev/null; then
	. "$(dirname "$0")/munge.sh"
	start_munged "$T"
	PIDS="$PIDS $(cat "$T/munged.pid" 2>/dev/null)"
	export TIDAL_MUNGE_SOCKET=$SOCK
	# store_hello PORT [FIRST_OP]: as nobody, say hello (or send FIRST_OP
	# first) to the store at PORT; print its status byte and arguments.
	store_hello() {
		runuser -u nobody -- python3 - "$1" "$SOCK" "${2:-H}" <<'PY'
import socket, struct, subprocess, sys
port, sock, op = int(sys.argv[1]), sys.argv[2], sys.argv[3]
cred = subprocess.run(["munge", "-S", sock, "-n"], capture_output=True).stdout.strip()
s = socket.create_connection(("127.0.0.1", port), timeout=20)
s.sendall(op.encode()[:1] + struct.pack("<I", 1) + struct.pack("<I", len(cred)) + cred)
f = s.makefile("rb")
st = f.read(1)
n = struct.unpack("<I", f.read(4))[0] if st else 0
args = [f.read(struct.unpack("<I", f.read(4))[0]).decode() for _ in range(n)]
print(st[0] if st else "closed", *args)
PY
	}
	start_job 9 100000 --store-auth munge -- --ckpt-every 50
	port9=$STORE_PORT # (not from /proc/$A/cmdline: A may not have exec'd yet)
	ranks_up 30 9
	check "store auth: a 2-node run rendezvoused through an authenticated store" \
		grep -q "generation 0 running" "$T/9-b.log"
	reply=$(store_hello "$port9")
	check "store auth: another uid's hello is refused ($reply)" \
		has "$reply" "^2 uid 65534 is not this job's"
	check "store auth: ... and logged" \
		grep -q "store: refused a connection from 127.0.0.1: uid 65534 is not this job's" "$T/9-a.log"
	reply=$(store_hello "$port9" S)
	check "store auth: a request before the hello is refused ($reply)" \
		has "$reply" "^2 the first request is not a hello"
	alive9() { alive "$A" && alive "$B" && [ "$(grep -c 'generation [0-9]*: world' "$T/9-a.log")" = 1 ]; }
	check "store auth: the job trains on, not restarted" alive9
	kill -TERM $A $B; both_exit 30
	# A store served by another uid: the launcher will not use it.
	fport=$(free_port)
	runuser -u nobody -- python3 - "$fport" "$SOCK" <<'PY' &
import socket, struct, subprocess, sys
port, sock = int(sys.argv[1]), sys.argv[2]
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", port)); l.listen(1); l.settimeout(30)
c, _ = l.accept(); f = c.makefile("rb")
f.read(1); n = struct.unpack("<I", f.read(4))[0]
for _ in range(n): f.read(struct.unpack("<I", f.read(4))[0])
cred = subprocess.run(["munge", "-S", sock, "-n"], capture_output=True).stdout.strip()
c.sendall(b"\0" + struct.pack("<I", 1) + struct.pack("<I", len(cred)) + cred)
PY
	fake=$!
	sleep 1
	out=$("$LAUNCH" -J 10 --nodes 2 --ranks 1 --store "127.0.0.1:$fport" --node-index 1 -N b \
		--run-dir "$T/run" --ckpt-dir "$T/ckpt" --no-bind --store-auth munge \
		--rdzv-timeout 10 -- "$TRAIN" --iters 10 2>&1); rc=$?
	wait "$fake" 2>/dev/null
	check "store auth: a store of another uid is not used (exit $rc)" \
		eval '[ $rc != 0 ] && has "$out" "the server is uid 65534, not this job.s (0)"'
	out=$(TIDAL_MUNGE_SOCKET=$T/nowhere "$LAUNCH" -J 11 --nodes 1 --ranks 1 \
		--store "127.0.0.1:$(free_port)" --run-dir "$T/run" --ckpt-dir "$T/ckpt" \
		--no-bind --store-auth munge -- "$TRAIN" --iters 10 2>&1); rc=$?
	check "store auth: --store-auth munge without munged fails, saying why (exit $rc)" \
		eval '[ $rc != 0 ] && has "$out" "--store-auth munge: MUNGE: .*is munged running"'
	unset TIDAL_MUNGE_SOCKET
	kill "$(cat "$T/munged.pid")" 2>/dev/null
else
	echo "skip - store auth: needs munged, munge, python3 and the user nobody"
fi
if munge -n </dev/null >/dev/null 2>&1; then
	check "a munged at MUNGE's default socket: section 1's store used it" \
		eval "! grep -q 'takes requests from anyone' '$T/1-a.log'"
else
	check "no munged: the store is open, and the launcher says so" \
		grep -q "warning: the rendezvous store 127.0.0.1:[0-9]* takes requests from anyone" "$T/1-a.log"
fi

# ---- usage errors
out=$("$LAUNCH" -J 1 --ranks 0 -- true 2>&1); rc=$?
check "bad --ranks: exit 2 naming the option, value and rule" \
	eval '[ $rc = 2 ] && has "$out" "ranks .0.: must be an integer from 1 to 1024"'
finish
