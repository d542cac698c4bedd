#!/usr/bin/env bash
# bench/run.sh BUILD - `make bench`: how tidal-sim's native replay scales.
#
# Prints the machine, then one table row per (load, jobs, policy) of the
# scale series: synthetic traces (bench/gen_trace.cc) of 10k, 100k and 1M
# jobs on 2,000 nodes x 8 GPUs, at load 0.8 (nothing waits long) and 1.2
# (the queue grows without end), replayed by the `tidal` preset with the
# queue and elastic baselines.  CPU s is tidal-sim's own cpu_seconds (the
# replay only, from --json); wall s and peak RSS come from /usr/bin/time
# (the whole process, trace loading included).  A policy stopped at one
# size is not run at the larger ones ("skipped").  Nothing here passes or
# fails.
#
#   BENCH_MAX_JOBS=N    leave out traces of more than N jobs (default 1000000)
#   BENCH_POLICIES=...  comma-separated policies (default: fifo, sjf, qssf,
#                       srtf, srsf, edf, tiresias, elastic-fifo, elastic-edf)
#   BENCH_LOADS=...     comma-separated offered loads (default 0.8,1.2)
#   BENCH_RUN_TIMEOUT=S stop a replay after S seconds and print ">S" (default
#                       120)
#   BENCH_SCALE_ONLY=1  the scale series alone (not the anchors and the
#                       elasticflow growth before it)
#
# GPL-2.0-or-later.
set -euo pipefail

BUILD=${1:-build}
SIM=$BUILD/tidal-sim
GEN=$BUILD/gen-trace
MAX_JOBS=${BENCH_MAX_JOBS:-1000000}
POLICIES=${BENCH_POLICIES:-fifo,sjf,qssf,srtf,srsf,edf,tiresias,elastic-fifo,elastic-edf}
LOADS=${BENCH_LOADS:-0.8,1.2}
RUN_TIMEOUT=${BENCH_RUN_TIMEOUT:-120}
SCALE_JOBS=(10000 100000 1000000)
NODES=2000
GPUS_PER_NODE=8
SEED=1

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tidal-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

print_machine() {
	local cpu cores mem
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null |
	      head -1)
	cores=$(nproc 2>/dev/null || echo "?")
	mem=$(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' \
	      /proc/meminfo 2>/dev/null)
	echo "machine: ${cpu:-unknown CPU}, $cores cores, ${mem:-? GiB} memory"
	echo "date:    $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "load:    $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')" \
	     "(1/5/15 min; other work on the machine skews wall times)"
}

# write_cluster FILE - the scale series' cluster as a slurm.conf.
write_cluster() {
	printf 'ClusterName=bench\nGresTypes=gpu\n' >"$1"
	printf 'NodeName=n[0001-%04d] CPUs=128 RealMemory=1000000 Gres=gpu:%d\n' \
	       "$NODES" "$GPUS_PER_NODE" >>"$1"
	printf 'PartitionName=all Nodes=n[0001-%04d] Default=YES\n' \
	       "$NODES" >>"$1"
}

# json_number FILE KEY - the first number called KEY in a tidal-sim JSON.
json_number() {
	sed -n "s/.*\"$2\":[[:space:]]*\([-0-9.eE+]*\).*/\1/p" "$1" | head -1
}

# run_sim CLUSTER TRACE POLICY - prints "cpu_s wall_s rss_mib avg_jct",
# or ">T" fields for a replay stopped after RUN_TIMEOUT seconds.
run_sim() {
	local json=$WORK/out.json times=$WORK/time.txt cpu wall rss=n/a t0
	local cmd=(timeout "$RUN_TIMEOUT" "$SIM" --cluster "$1" --trace "$2"
		   --policy "$3" --quiet --json "$json")
	rm -f "$json"
	t0=$(date +%s.%N)
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%M' -o "$times" "${cmd[@]}" || true
		rss=$(awk 'END {printf "%.0f", $1 / 1024}' "$times")
	else
		"${cmd[@]}" || true
	fi
	wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" \
	       'BEGIN {printf "%.2f", b - a}')
	if [ ! -s "$json" ]; then
		echo ">${RUN_TIMEOUT} >${RUN_TIMEOUT} n/a n/a"
		return
	fi
	cpu=$(json_number "$json" cpu_seconds)
	printf '%.2f %s %s %.1f\n' "$cpu" "$wall" "$rss" \
	       "$(json_number "$json" avg_jct)"
}

scale_series() {
	local cluster=$WORK/slurm.conf gpus=$((NODES * GPUS_PER_NODE))
	local load n p
	write_cluster "$cluster"
	for load in ${LOADS//,/ }; do
		local stopped=" "
		echo
		echo "scale: tidal preset, $NODES nodes x $GPUS_PER_NODE GPUs," \
		     "load $load, seed $SEED"
		printf '%9s  %-12s %9s %9s %10s %12s\n' jobs policy "cpu s" \
		       "wall s" "peak MiB" "avg JCT s"
		for n in "${SCALE_JOBS[@]}"; do
			[ "$n" -le "$MAX_JOBS" ] || continue
			"$GEN" "$n" "$gpus" "$load" "$SEED" >"$WORK/trace.csv"
			for p in ${POLICIES//,/ }; do
				local cpu wall rss jct
				if [[ $stopped == *" $p "* ]]; then
					printf '%9d  %-12s %9s\n' "$n" "$p" skipped
					continue
				fi
				read -r cpu wall rss jct < <(run_sim "$cluster" \
					"$WORK/trace.csv" "$p")
				[[ $cpu != ">"* ]] || stopped+="$p "
				printf '%9d  %-12s %9s %9s %10s %12s\n' "$n" "$p" \
				       "$cpu" "$wall" "$rss" "$jct"
			done
			rm -f "$WORK/trace.csv"
		done
	done
}

main() {
	print_machine
	if [ "${BENCH_SCALE_ONLY:-0}" != 1 ]; then
		"$(dirname "$0")/anchors.sh" "$BUILD"
		echo
		echo "elasticflow preset growth (bench/elasticflow.sh):"
		"$(dirname "$0")/elasticflow.sh" "$BUILD"
	fi
	scale_series
}

main "$@"
