#!/usr/bin/env bash
# bench/muri_live.sh BUILD - Muri's throughput benefit measured live: one
# workload of 16 one-GPU training jobs with mixed stage profiles on the
# loopback Slurm cluster, once under srsf (no sharing) and once under
# muri-s (interleaving groups on GPU shards), beside what tidal-sim's muri
# preset predicts for the same input.
#
# The cluster is tests/cluster/lib.sh's with 2 nodes x 2 fake GPUs, 4
# shards each, CycleInterval=1, a tidald on each node.  Every job is
# tidal-launch over tidal-train --stage-profile: half load data (io: 0.30,
# 0.04, 0.03 s of data, compute and sync per step), half compute (gpu:
# 0.04, 0.30, 0.03 s); 40, 50, 60 or 70 steps each, all eligible at the
# same second.  Under muri-s the trainers sharing a GPU take their stages
# in the turns of tidald's group clock (tidal-train(1), INTERLEAVING).
# JCT runs from that second to the job's end as scontrol shows it (whole
# seconds); the makespan to the last end.
#
# The prediction is tidal-sim --preset muri on a Muri-format trace of the
# same jobs (iteration_time the stage sum, as Muri's traces give it) and a
# 2 x 2-GPU cluster spec, with Muri.RestartOverhead=0: the anchor charges
# a restart overhead on every event interval, which this cluster's jobs,
# started once and never restarted, do not pay.
#
#   BENCH_MURI_POLICIES=...   live policies, in order (default srsf muri-s)
#
# Needs root, Slurm, munge, the plugin and the node side, like the
# cluster tests; without them it says what is missing.  Nothing here
# passes or fails.
#
# GPL-2.0-or-later.
set -uo pipefail

BUILD=${1:-build}
POLICIES=${BENCH_MURI_POLICIES:-srsf muri-s}

TEST_NAME=bench/muri_live.sh
if [ "$(id -u)" -ne 0 ]; then
	echo "$TEST_NAME: skipped: not root (the loopback Slurm cluster needs it)"
	exit 0
fi
for b in slurmctld slurmd munged sbatch python3; do
	command -v $b >/dev/null 2>&1 ||
		{ echo "$TEST_NAME: skipped: $b not installed"; exit 0; }
done
for b in sched_tidal.so tidald tidal-launch tidal-train tidalctl tidal-sim; do
	[ -e "$BUILD/$b" ] ||
		{ echo "$TEST_NAME: skipped: $BUILD/$b not built"; exit 0; }
done
BUILD_ABS=$(cd "$BUILD" && pwd)

W=$(mktemp -d /tmp/tidal-muri-live.XXXXXX)
chmod 755 "$W"
trap 'rm -rf "$W"' EXIT
cat >"$W/stages.csv" <<'CSV'
model,data,compute,comm
io,0.300,0.040,0.030
gpu,0.040,0.300,0.030
CSV
chmod 644 "$W/stages.csv"
# The workload: job i (1..16), io for odd i, gpu for even, steps
# 40 + 10 x ((i - 1) / 2 mod 4).
MODELS=() STEPS=()
for i in $(seq 1 16); do
	MODELS+=("$([ $((i % 2)) -eq 1 ] && echo io || echo gpu)")
	STEPS+=("$((40 + 10 * (((i - 1) / 2) % 4)))")
done
{
	echo "job_id,num_gpu,submit_time,iterations,model_name,batch_size,duration,interval,iteration_time,resource_time_0,resource_time_1,resource_time_2,priority"
	for i in $(seq 0 15); do
		if [ "${MODELS[$i]}" = io ]; then st="300,40,30"; else st="40,300,30"; fi
		echo "$((i + 1)),1,0,${STEPS[$i]},${MODELS[$i]},64,$((STEPS[i] * 370)),0,370,$st,0"
	done
} >"$W/trace.csv"
printf 'num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node\n1,2,2,2,16\n' \
	>"$W/n2g2.csv"

# live POLICY: run the workload; "POLICY avg_jct makespan done" into
# $W/live, the per-job lines into $W/jobs-POLICY.
live() (
	. "$(dirname "$0")/../tests/cluster/lib.sh"
	NODES="n1 n2"
	GPUS_PER_NODE=2
	SHARDS_PER_GPU=4
	cluster_up "Policy=$1
CycleInterval=1
ResizeSignal=none
CheckpointTimeout=120
Muri.Profiles=$W/stages.csv" >/dev/null
	start_agents || { say "$1: the agents did not come up"; exit 1; }
	local i ids=() begin t0
	begin=$(date -d '+15 sec' +%Y-%m-%dT%H:%M:%S)
	for i in $(seq 0 15); do
		train_script "$T/job$i.sh" "--stage-profile $W/stages.csv" \
			"--profile-model ${MODELS[$i]} --iters ${STEPS[$i]}" \
			"--log-every 10 --in 8 --out 2 --hidden 16 --layers 1"
		ids+=("$(TIDAL_STORE_PORTS=30500-30599 submit --begin="$begin" \
			--gpus=1 -t 10 --train-model="${MODELS[$i]}" "$T/job$i.sh")")
	done
	t0=$(date -d "$begin" +%s)
	printf '%s: 16 jobs eligible at %s\n' "$1" "$begin" >&2
	none_left() { [ -z "$(squeue -h -o %i)" ]; }
	local last=-1 n
	while ! none_left; do
		n=$(squeue -h -t R -o %i | wc -l)
		if [ $(($(date +%s) - t0)) -gt 900 ]; then
			say "$1: not done after 900 s"; break
		fi
		[ "$n" = "$last" ] || printf '%s: %s s: %s running, %s pending\n' "$1" \
			$(($(date +%s) - t0)) "$n" "$(squeue -h -t PD -o %i | wc -l)" >&2
		last=$n
		sleep 2
	done
	local sum=0 max=0 done=0 e end st
	for i in $(seq 0 15); do
		e=$(scontrol show job "${ids[$i]}" 2>/dev/null)
		st=$(grep -o 'JobState=[A-Z]*' <<<"$e" | cut -d= -f2)
		end=$(date -d "$(grep -o 'EndTime=[^ ]*' <<<"$e" | cut -d= -f2)" +%s 2>/dev/null || echo "$t0")
		echo "${ids[$i]} ${MODELS[$i]} ${STEPS[$i]} $st $((end - t0))" >>"$W/jobs-$1"
		[ "$st" = COMPLETED ] && done=$((done + 1))
		sum=$((sum + end - t0))
		[ $((end - t0)) -le "$max" ] || max=$((end - t0))
	done
	grep -h "interleave: group .*: jobs .*model period" "$T"/log/tidald-n*.log |
		sed 's/.*interleave: /  tidald: /' | head -8 >"$W/groups-$1"
	echo "$1 $(python3 -c "print('%.1f' % ($sum / 16))") $max $done" >>"$W/live"
)

machine() {
	local cpu
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	echo "machine: ${cpu:-unknown CPU}, $(nproc) cores," \
	     "$(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
	echo "cluster: loopback Slurm $(slurmctld -V 2>/dev/null | awk '{print $2}'), 2 nodes x 2 fake GPUs, 4 shards each"
	echo "jobs:    16 x 1 GPU, tidal-train --stage-profile (io 0.30/0.04/0.03 s, gpu 0.04/0.30/0.03 s), 40-70 steps"
}

machine
for p in $POLICIES; do live "$p"; done
"$BUILD/tidal-sim" --preset muri --cluster "$W/n2g2.csv" --trace "$W/trace.csv" \
	--policy "${POLICIES// /,}" --param Muri.RestartOverhead=0 --quiet \
	--json "$W/sim.json" || echo "$TEST_NAME: tidal-sim failed"
echo
echo "Muri live (JCT from the common eligible second; s):"
printf '  %-8s %6s %12s %10s %12s %10s %7s %7s\n' policy done "avg JCT" makespan \
	"sim avg JCT" "sim mksp" "d JCT" "d mksp"
while read -r p avg mk done; do
	python3 - "$W/sim.json" "$p" "$avg" "$mk" "$done" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["policies"].get(sys.argv[2], {})
p, avg, mk, done = sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
sa, sm = d.get("avg_jct"), d.get("makespan")
f = lambda x: "%.1f" % x if x is not None else "?"
pct = lambda a, b: "%+.1f%%" % (100 * (a - b) / b) if b else "?"
print("  %-8s %6s %12.1f %10.0f %12s %10s %7s %7s" % (p, done + "/16", avg, mk,
      f(sa), f(sm), pct(avg, sa) if sa else "?", pct(mk, sm) if sm else "?"))
PY
done <"$W/live"
if [ "$(wc -l <"$W/live")" -ge 2 ]; then
	read -r p1 a1 m1 _ < <(sed -n 1p "$W/live")
	read -r p2 a2 m2 _ < <(sed -n 2p "$W/live")
	python3 -c "import sys; a1,m1,a2,m2=map(float,sys.argv[1:]); print('  %s against %s: avg JCT %+.1f%%, makespan %+.1f%%' % ('$p2', '$p1', 100*(a2-a1)/a1, 100*(m2-m1)/m1))" "$a1" "$m1" "$a2" "$m2"
fi
for p in $POLICIES; do
	[ -s "$W/groups-$p" ] && { echo "  $p, tidald's first groups:"; cat "$W/groups-$p"; }
done
exit 0
