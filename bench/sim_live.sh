#!/usr/bin/env bash
# bench/sim_live.sh BUILD - `make bench-live`: simulator mode's fidelity.
# Each trace under each policy is replayed live (tidal-sim --live: a
# throwaway loopback Slurm cluster with sched/tidal, real sbatch jobs at
# the trace's submit times, paced work, elastic and deadline jobs through
# tidal-launch and tidal-train) and by tidal-sim on the same input; one
# table row per run: each metric live, replayed, and the difference, and
# the live run's wall time.
#
# The traces (BENCH_LIVE_TRACES, default "fig10 syn200"):
#   fig10   ElasticFlow's Fig 10 trace (100 jobs, 16 nodes x 8 GPUs,
#           ../shared/anchors/elasticflow), times divided by
#           BENCH_LIVE_SPEEDUP_FIG10 (default 450)
#   syn200  200 jobs from gen-trace at load 1.2, seed 7, in ElasticFlow's
#           format over its A100 throughput tables (models, batch sizes,
#           iterations and deadlines of submit + 1.5 x duration), on
#           conf/slurm.conf's 8 x 8 GPUs, divided by
#           BENCH_LIVE_SPEEDUP_SYN200 (default 120: its median job runs
#           1,800 s with 900 s to spare, 15 s and 7.5 s live; with
#           --live's costs replayed unscaled, elastic-edf's deadline ratio
#           is 0.905 at 1x and 0.86 at 120x, elasticflow's 0.94 and
#           0.875, tiresias' 0.815 and 0.425: its requeues cost 3 live
#           seconds each)
# The policies: BENCH_LIVE_POLICIES (default "fifo tiresias elastic-edf
# elasticflow").  BENCH_LIVE_OUT=DIR keeps every run's directory (the
# live record, slurmctld's log, the per-job CSV) under DIR.
#
# The tolerance wanted of simulator mode is 5% in average JCT and
# makespan and 0.02 in the deadline ratio; a row beyond it is marked "!".
# Timing-sensitive: run it with nothing else on the machine (the whole of
# it takes about two and a half hours on 2 cores: half an hour a Fig 10
# run, ten minutes a syn200 one).  Needs root,
# Slurm, munge, the plugin and the node side, like the cluster tests;
# without them tidal-sim --live says what is missing.
#
# GPL-2.0-or-later.
set -uo pipefail

BUILD=${1:-build}
SIM=$BUILD/tidal-sim
GEN=$BUILD/gen-trace
for b in "$SIM" "$GEN"; do
	[ -x "$b" ] || { echo "bench/sim_live.sh: $b is not built" >&2; exit 1; }
done
command -v jq >/dev/null || { echo "bench/sim_live.sh: needs jq" >&2; exit 1; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
EF=${ANCHORS:-$ROOT/../shared/anchors}/elasticflow
PROFILES=$EF/throughputs_A100
[ -d "$PROFILES" ] || { echo "bench/sim_live.sh: skipped: no ElasticFlow anchor at $EF" >&2; exit 0; }

if [ -n "${BENCH_LIVE_OUT:-}" ]; then
	W=$BENCH_LIVE_OUT
	mkdir -p "$W" || exit 1
else
	W=$(mktemp -d /tmp/tidal-bench-sim-live.XXXXXX)
	trap 'rm -rf "$W"' EXIT
fi

printf 'ClusterName=fig10\nGresTypes=gpu\nNodeName=n[1-16] CPUs=16 RealMemory=64000 Gres=gpu:8\nPartitionName=gpu Nodes=n[1-16] Default=YES\n' \
	>"$W/fig10.conf"
"$GEN" 200 64 1.2 7 "$PROFILES" >"$W/syn200.csv" || exit 1

# trace NAME: "CLUSTER TRACE SPEEDUP" for it.
trace() {
	case $1 in
	fig10) echo "$W/fig10.conf $EF/traces/generated_fig10_100jobs_1500lam_seed1.csv ${BENCH_LIVE_SPEEDUP_FIG10:-450}" ;;
	syn200) echo "$ROOT/conf/slurm.conf $W/syn200.csv ${BENCH_LIVE_SPEEDUP_SYN200:-120}" ;;
	*) return 1 ;;
	esac
}

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
echo "machine: ${cpu:-unknown CPU}, $(nproc) cores," \
     "$(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo) memory"
echo "date:    $(date -u '+%Y-%m-%d %H:%M UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
fmt='%-7s %-12s %5s %6s  %-28s %-28s %-24s %s\n'
printf "$fmt" trace policy speed wall "avg JCT s live/sim" "makespan s live/sim" "deadline ratio live/sim" rejected
for t in ${BENCH_LIVE_TRACES:-fig10 syn200}; do
	read -r cluster file speed < <(trace "$t") ||
		{ echo "bench/sim_live.sh: unknown trace '$t' (fig10, syn200)" >&2; exit 2; }
	for p in ${BENCH_LIVE_POLICIES:-fifo tiresias elastic-edf elasticflow}; do
		d=$W/$t-$p
		rm -rf "$d"
		mkdir -p "$d"
		t0=$(date +%s)
		"$SIM" --cluster "$cluster" --trace "$file" --profiles "$PROFILES" \
			--policy "$p" --speedup "$speed" --live "$d/live" \
			--json "$d/result.json" --jobs-csv "$d/jobs.csv" \
			>"$d/out" 2>"$d/err"
		rc=$?
		wall=$(($(date +%s) - t0))
		if [ $rc -ne 0 ] || [ ! -s "$d/result.json" ]; then
			printf "$fmt" "$t" "$p" "$speed" "$wall" "failed (exit $rc): $(tail -n 1 "$d/err")" "" "" ""
			continue
		fi
		jq -r --arg p "$p" '.policies as $r | ($r["live:" + $p]) as $l | $r[$p] as $s |
			def rel(a; b): if b == 0 then "n/a" else ((a - b) / b * 100 | . * 100 | round / 100 | tostring) + "%" end;
			def r3(x): x * 1000 | round / 1000;
			[ "\(r3($l.avg_jct))/\(r3($s.avg_jct)) \(rel($l.avg_jct; $s.avg_jct))",
			  "\(r3($l.makespan))/\(r3($s.makespan)) \(rel($l.makespan; $s.makespan))",
			  (if $l.deadline_ratio == null then "n/a" else
			   "\($l.deadline_ratio * 10000 | round / 10000)/\($s.deadline_ratio * 10000 | round / 10000) \(($l.deadline_ratio - $s.deadline_ratio) * 10000 | round / 10000)" end),
			  "\($l.rejected)/\($s.rejected)",
			  (if (($l.avg_jct - $s.avg_jct) | fabs) > 0.05 * $s.avg_jct or
			      (($l.makespan - $s.makespan) | fabs) > 0.05 * $s.makespan or
			      ($l.deadline_ratio != null and (($l.deadline_ratio - $s.deadline_ratio) | fabs) > 0.02)
			   then "!" else "" end) ] | @tsv' "$d/result.json" |
		while IFS=$'\t' read -r jct mk ddl rej mark; do
			printf "$fmt" "$t" "$p" "$speed" "$wall" "$jct" "$mk" "$ddl" "$rej $mark"
		done
	done
done
echo
echo "(live/sim: tidal-sim --live beside its replay of the same input; \"!\": beyond 5% in" \
     "avg JCT or makespan, or 0.02 in the deadline ratio; wall: the live run)"
