#!/usr/bin/env bash
# bench/resize.sh BUILD - `make bench`: how long an elastic resize takes,
# from the plugin's decision to the first training step at the new size.
#
# The resize is the one of tests/cluster/test_agent_resize2.sh, on the same
# private loopback Slurm cluster (tests/cluster/lib.sh: 4 nodes x 4 fake
# GPUs, Policy=elastic-edf, tidald on every node), with a model of ~256 MB
# in its checkpoint: tidal-train --hidden 2720 --layers 4 is 22.4 M
# parameters, and the checkpoint holds them plus Adam's two moments (3 x
# 4 bytes each).  E starts on 4 GPUs over n3 and n4 (one CPU/Gloo rank per
# GPU); a deadline job D asks for 2 GPUs, so the plugin shrinks E to 2:
# checkpoint_stop through n3's tidald, requeue on the ack, restart at 2
# ranks from that checkpoint.  Every time below comes from a component's
# own log line (slurmctld's, tidald's and the launchers' millisecond
# timestamps), read after the fact.
#
#   BENCH_RESIZE_REPS=N   resizes to time (default 2; each is a fresh job)
#   BENCH_RESIZE_CYCLE=S  the plugin's CycleInterval and tidald's
#                         --heartbeat (default 1)
#
# Needs root, Slurm, munge and the plugin, like the cluster tests; without
# them it says what is missing and prints nothing else.  Nothing here
# passes or fails; the target is under 10 s.
#
# GPL-2.0-or-later.
set -uo pipefail

BUILD=${1:-build}
REPS=${BENCH_RESIZE_REPS:-2}
CYCLE=${BENCH_RESIZE_CYCLE:-1}
HIDDEN=2720
LAYERS=4

TEST_NAME=bench/resize.sh
# lib.sh's own skip line ends in "0 passed, 0 failed": not a test here.
if [ "$(id -u)" -ne 0 ]; then
	echo "bench/resize.sh: skipped: not root (the loopback Slurm cluster needs it)"
	exit 0
fi
for b in slurmctld slurmd munged sbatch; do
	command -v $b >/dev/null 2>&1 ||
		{ echo "bench/resize.sh: skipped: $b not installed"; exit 0; }
done
for b in sched_tidal.so tidald tidal-launch tidal-train tidalctl; do
	[ -e "$BUILD/$b" ] ||
		{ echo "bench/resize.sh: skipped: $BUILD/$b not built"; exit 0; }
done

BUILD_ABS=$(cd "$BUILD" && pwd)
. "$(dirname "$0")/../tests/cluster/lib.sh"
GPUS_PER_NODE=4

machine() {
	local cpu
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	echo "machine: ${cpu:-unknown CPU}, $(nproc) cores," \
	     "$(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
	echo "disk:    checkpoints in $T/ckpt on" \
	     "$(df -P "$T" | awk 'NR == 2 { print $1 " (" $6 ")" }')"
	echo "model:   mlp --hidden $HIDDEN --layers $LAYERS: params + Adam m, v" \
	     "in the checkpoint; CPU + Gloo (no GPU here), global batch 8"
	echo "cluster: loopback Slurm, 4 nodes x 4 fake GPUs, CycleInterval=$CYCLE," \
	     "tidald --heartbeat $CYCLE"
}

# ms NAME TIME: TIME (ISO date-time, or HH:MM:SS.mmm of today's DAY) in
# ms since the epoch, remembered as NAME; empty TIME leaves NAME unset.
declare -A TS
ms() {
	local t=$2
	[ -n "$t" ] || { unset "TS[$1]"; return; }
	[[ $t == *T* ]] || t="$DAY $t"
	TS[$1]=$(date -d "${t/T/ }" +%s%3N)
}

# The first line of FILE after line AFTER that matches RE.
first_after() { tail -n +"$(($2 + 1))" "$1" | grep -m1 -E -- "$3"; }
slurm_t() { sed -n 's/^\[\([^]]*\)\].*/\1/p' <<<"$1"; }
launch_t() { awk '{ print $2 }' <<<"$1"; }
tidald_t() { awk '{ print $1 }' <<<"$1"; }

row() { # row LABEL FROM TO [NOTE]
	local a=${TS[$2]:-} b=${TS[$3]:-}
	if [ -n "$a" ] && [ -n "$b" ]; then
		printf '  %-34s %8d %9d   %s\n' "$1" $((b - a)) $((b - TS[dec])) "${4:-}"
	else
		printf '  %-34s %8s %9s   %s\n' "$1" "?" "?" "${4:-}"
	fi
}

# One resize of a fresh elastic job; prints its table.
one_resize() {
	local rep=$1 e d log=$T/log/slurmctld.log out l0 step line mb
	l0=$(wc -l <"$log")
	e=$(submit -N2 --gpus-per-node=1 --elastic-gpus=2-4 --open-mode=append \
		"$T/out/elastic.sh")
	wait_for 60 has_gpus "$e" 4 || { say "E ($e) did not start at 4 GPUs"; return 1; }
	out=$T/out/$e.out
	# Trained a few steps at world 4 before the deadline job comes.
	wait_for 240 grep -q "tidal-launch\[n3\] .* step 3 loss" "$out" ||
		{ say "E ($e) did not train"; tail "$out"; return 1; }
	d=$(submit -N1 --gpus=2 --deadline=now+2hours -t 30 --wrap 'sleep 600')
	wait_for 120 has_gpus "$e" 2 || { say "E did not run again at 2 GPUs"; return 1; }
	step=
	wait_for 60 eval 'step=$(grep -o "resize JobId=$e: tidald checkpointed it at step [0-9]*" "$log" | awk "{print \$NF}"); [ -n "$step" ]'
	[ -n "$step" ] || { say "no ack for E ($e)"; return 1; }
	wait_for 240 grep -qE "tidal-launch\[n[34]\] .* step $((step + 1)) loss" "$out" ||
		{ say "E ($e) made no step after the resize"; tail "$out"; return 1; }
	DAY=$(date +%F)
	line=$(first_after "$log" "$l0" "resize JobId=$e to 2 GPUs: checkpoint_stop")
	ms dec "$(slurm_t "$line")"
	DAY=${TS[dec]:+$(date -d "@$((TS[dec] / 1000))" +%F)}
	ms cmd "$(tidald_t "$(grep -h -m1 "checkpoint_stop of job $e via" "$T"/log/tidald-n*.log)")"
	ms req "$(launch_t "$(grep -m1 "control: checkpoint_stop requested" "$out")")"
	line=$(grep -m1 "checkpoint durable: step $step," "$out")
	ms dur "$(launch_t "$line")"
	mb=$(sed -n 's/.*durable: step [0-9]*, \(.* MB\) in \([0-9]*\) ms (\([0-9]*\) MB\/s).*/\1, \2 ms, \3 MB\/s/p' <<<"$line")
	ms ack "$(slurm_t "$(first_after "$log" "$l0" "resize JobId=$e: tidald checkpointed")")"
	ms rq "$(slurm_t "$(first_after "$log" "$l0" "resize JobId=$e: requeued")")"
	# The second start of E since this resize's lines began.
	ms run "$(slurm_t "$(tail -n +"$((l0 + 1))" "$log" |
		grep "sched/tidal: started JobId=$e on" | sed -n 2p)")"
	# The second run's lines: after the first "start: job" that follows
	# the requeue (the first run's launchers wrote theirs before).
	local n
	n=$(grep -n "tidal-launch\[n[34]\] .* start: job $e" "$out" | sed -n '3p' | cut -d: -f1)
	ms lst "$(launch_t "$(sed -n "${n:-1}p" "$out")")"
	ms res "$(launch_t "$(grep -E -m1 "generation [0-9]+: world 2, .*resuming from step $step " "$out")")"
	ms gen "$(launch_t "$(grep -E -m1 "generation [0-9]+ running: .* at step $step," "$out")")"
	ms stp "$(launch_t "$(grep -E -m1 "tidal-launch\[n[34]\] .* step $((step + 1)) loss" "$out")")"
	echo
	echo "resize $rep: job $e, 4 -> 2 GPUs, checkpoint at step $step;" \
	     "load $(cut -d' ' -f1-3 /proc/loadavg)"
	printf '  %-34s %8s %9s   %s\n' phase "ms" "total ms" ""
	row "decision (slurmctld)" dec dec
	row "command at tidald (heartbeat)" dec cmd
	row "checkpoint requested (launcher)" cmd req
	row "checkpoint durable (trainer)" req dur "$mb"
	row "ack seen by the plugin" dur ack
	row "requeued" ack rq
	row "job running again (plugin)" rq run
	row "launcher start" run lst
	row "checkpoint found/fetched" lst res "$(grep -o "fetched from n[0-9]*" <<<"$(grep -m1 "resuming from step $step " "$out")")"
	row "trainers up (ckpt loaded, Gloo)" res gen
	row "first step at 2 ranks" gen stp
	scancel "$e" "$d"
	wait_for 30 eval '[ -z "$(squeue -h -j "$e,$d" -t R,CG 2>/dev/null)" ]'
}

main() {
	cluster_up "Policy=elastic-edf
CycleInterval=$CYCLE
ResizeSignal=none
CheckpointTimeout=300
RejectAction=cancel" >/dev/null
	# lib.sh's trap tears down but returns: stop here too.
	trap 'cluster_down; exit 1' INT TERM
	for n in $NODES; do
		"$BUILD_ABS/tidald" -D -N "$n" --listen 127.0.0.1:0 \
			--run-dir "$T/tidal-run" --ckpt-dir "$T/ckpt/$n" \
			--heartbeat "$CYCLE" >>"$T/log/tidald-$n.log" 2>&1 &
		disown
	done
	wait_for 30 agents_up || { say "tidald agents did not come up"; dump_logs; return 0; }
	echo "resize latency, decision to the first step at the new size" \
	     "(bench/resize.sh)"
	machine
	# n1, n2 full, 2 GPUs taken on n3 and n4: E gets 2 + 2 there.
	# Each waited for: a job planned before the one ahead of it has
	# started can be given GPUs that are gone by the time it starts.
	local r
	r=$(submit -N2 --gpus-per-node=4 --wrap 'sleep 3600')
	wait_state 30 "$r" RUNNING || { say "R did not start"; return 0; }
	r=$(submit -N2 --gpus-per-node=2 --wrap 'sleep 3600')
	wait_state 30 "$r" RUNNING || { say "R2 did not start"; return 0; }
	cat >"$T/out/elastic.sh" <<EOF
#!/bin/bash
export TIDAL_RUN_DIR="$T/tidal-run"
srun --ntasks=\$SLURM_JOB_NUM_NODES --ntasks-per-node=1 --gpus-per-node=\$SLURM_GPUS_ON_NODE "$BUILD_ABS/tidal-launch" -- \
	"$BUILD_ABS/tidal-train" --backend cpu --hidden $HIDDEN --layers $LAYERS \
	--global-batch 8 --iters 10000000 --ckpt-every 1000000 --log-every 1
EOF
	for i in $(seq "$REPS"); do
		one_resize "$i" || { dump_logs; break; }
	done
}

agents_up() { [ "$("$TIDALCTL" -o show nodes 2>/dev/null | grep -c 'Agent=UP')" -eq 4 ]; }
gpus_of() { "$TIDALCTL" -o show job "$1" 2>/dev/null | grep -o 'AllocGPUs=[0-9]*' | cut -d= -f2; }
has_gpus() { [ "$(job_state "$1")" = RUNNING ] && [ "$(gpus_of "$1")" = "$2" ]; }

main
cluster_down
