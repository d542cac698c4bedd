#!/usr/bin/env bash
# bench/srun.sh BUILD - `make bench-load`: how long srun waits for its
# allocation when the GPUs are free, under Slurm's own schedulers and
# under sched/tidal.
#
# For each scheduler in turn, a fresh private cluster (tests/cluster/lib.sh:
# 4 nodes x 8 fake GPUs) runs RUNS interactive jobs one after another:
# `srun --gpus=1 -t 1 date +%s%3N`.  Time to start is from just before
# srun is run to the time its task prints (both clocks are this machine's);
# the table gives p50 / p99 / max in ms.  Schedulers:
#
#   backfill   sched/backfill, SchedulerParameters unset: slurmctld starts
#              a job that fits inside the submit RPC
#   tidal      sched/tidal (Policy=fifo, CycleInterval=2), with
#              defer,sched_interval=-1: a submission wakes its cycle
#
#   BENCH_SRUN_RUNS=N          interactive jobs per scheduler (default 100)
#   BENCH_SRUN_SCHEDULERS=...  comma-separated (default backfill,tidal)
#
# Needs root, Slurm, munge and the plugin, like the cluster tests; without
# them it says what is missing and prints nothing else.
#
# GPL-2.0-or-later.
set -uo pipefail

BUILD=${1:-build}
RUNS=${BENCH_SRUN_RUNS:-100}
SCHEDULERS=${BENCH_SRUN_SCHEDULERS:-backfill,tidal}

NAME=bench/srun.sh
. "$(dirname "$0")/cluster_bench.sh"
whole_numbers BENCH_SRUN_ RUNS
runnable "$BUILD" slurmctld slurmd munged srun -- sched_tidal.so

run_one() { # run_one SCHEDULER
	local s=$1 i t0 t1 fails=0
	case $s in
	backfill) SCHED_TYPE=sched/backfill SCHED_PARAMS= cluster_up "" ;;
	tidal) cluster_up "Policy=fifo
CycleInterval=2" ;;
	*) echo "$NAME: BENCH_SRUN_SCHEDULERS: '$s' is not backfill or tidal" >&2
	   exit 2 ;;
	esac
	: >"$T/start"
	for ((i = 1; i <= RUNS; i++)); do
		t0=$(now_ms)
		t1=$(srun -D "$T/out" --gpus=1 -t 1 date +%s%3N </dev/null 2>/dev/null)
		if [[ $t1 =~ ^[0-9]+$ ]]; then
			echo $((t1 - t0)) >>"$T/start"
		else
			fails=$((fails + 1))
		fi
		[ $((i % 25)) -eq 0 ] && say "$s: $i of $RUNS"
	done
	printf '%-10s %5d %6d   %s\n' "$s" "$(wc -l <"$T/start")" "$fails" \
		"$(three "$T/start")" >>"$RESULTS"
	cluster_down
}

RESULTS=$(mktemp "${TMPDIR:-/tmp}/tidal-srun.XXXXXX")
IFS=, read -r -a scheds <<<"$SCHEDULERS"
for s in "${scheds[@]}"; do run_one "$s"; done
echo
echo "== bench/srun.sh: srun's time to start on free GPUs"
echo "machine: $(machine_line); Slurm $(slurmctld -V | awk '{print $2}')"
printf '%-10s %5s %6s   %s\n' scheduler runs failed "ms to start p50 / p99 / max"
cat "$RESULTS"
rm -f "$RESULTS"
