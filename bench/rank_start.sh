#!/usr/bin/env bash
# bench/rank_start.sh BUILD - `make bench`: what a trainer world's start
# costs on the loopback cluster, and the Tidal.RankStart that the replay
# beside a live run needs for it (tidal-sim(1), LIVE REPLAY: --live's
# defaults).
#
# One live replay (tidal-sim --live, Policy=fifo, 4 nodes x 8 fake GPUs):
# 12 trainer jobs, three each of 1, 2, 4 and 8 GPUs on one node, about 5 s
# of steps each.  Then:
#
#   start     per world size: from the batch script's start (its
#             progress file) to the launcher's "generation 0 running"
#             (every rank up), median / min / max over the runs
#   replay    the live record replayed at Tidal.RankStart = 0 ... 0.45
#             (the other --live defaults as they are): average JCT and
#             makespan live against each replay
#
# Needs root, Slurm, munge, the plugin and the node side, like the cluster
# tests; without them tidal-sim --live says what is missing.
#
# GPL-2.0-or-later.
set -uo pipefail

BUILD=${1:-build}
SIM=$BUILD/tidal-sim
[ -x "$SIM" ] || { echo "bench/rank_start.sh: $SIM is not built" >&2; exit 1; }
W=$(mktemp -d /tmp/tidal-bench-rank-start.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/profiles"
printf 'global_batch_size,1,2,4,8\n64,4.0,7.5,13.5,25.0\n' >"$W/profiles/slow.csv"
{
	echo "job_id,submit_time,iteration,model_name,ddl,batch_size,num_gpu,duration,best_effort"
	i=0
	for rep in 1 2 3; do
		for g in 1 2 4 8; do
			case $g in 1) it=20 ;; 2) it=38 ;; 4) it=68 ;; 8) it=125 ;; esac
			echo "$i,$((i * 2)),$it,slow,100000,64,$g,5,0"
			i=$((i + 1))
		done
	done
} >"$W/trace.csv"
printf 'NodeName=n[1-4] Gres=gpu:8 CPUs=16\nPartitionName=gpu Nodes=n[1-4] Default=YES\n' >"$W/cluster.conf"
echo "bench/rank_start.sh: 12 trainer jobs live (1, 2, 4, 8 GPUs on one node), Policy=fifo; about a minute" >&2
if ! "$SIM" --cluster "$W/cluster.conf" --trace "$W/trace.csv" \
	--profiles "$W/profiles" --policy fifo --live "$W/live" --quiet \
	2>"$W/live.log"; then
	tail -n 20 "$W/live.log" >&2
	echo "bench/rank_start.sh: the live replay failed (above)" >&2
	exit 1
fi
run=$W/live/run

echo "== a trainer world's start on $(nproc) CPUs ($(uname -n), $(date -u +%F))"
printf '%-12s %5s %9s %9s %9s\n' "ranks" "runs" "median s" "min s" "max s"
for out in "$run"/jobs/*.out; do
	id=$(basename "$out" .out)
	name=$(awk -F'|' -v id="$id" '$1 == id { print $2 }' "$run/slurm_acct.out")
	runs=$run/progress/$name.runs
	[ -n "$name" ] && [ -f "$runs" ] || continue
	# Script starts (epoch s, UTC) against the launcher's clock (UTC time
	# of day): the Nth start with the Nth "running".
	awk -v runs="$runs" '
		BEGIN { while ((getline l < runs) > 0) { split(l, f, " "); t0[++n] = f[1] } }
		/ start: / { match($0, /[0-9]+ local rank/); k[++s] = substr($0, RSTART, RLENGTH) + 0 }
		/ generation [0-9]+ running/ {
			split($2, c, ":"); at[++r] = c[1] * 3600 + c[2] * 60 + c[3]
		}
		END {
			for (i = 1; i <= r && i <= n; i++) {
				sod = t0[i] - 86400 * int(t0[i] / 86400)
				printf "%d %.3f\n", k[i], at[i] - sod
			}
		}' "$out"
done | sort -k1,1n -k2,2n | awk '
	{ v[$1, ++c[$1]] = $2; if (!($1 in seen)) { seen[$1] = 1; order[++g] = $1 } }
	END {
		for (i = 1; i <= g; i++) {
			k = order[i]; n = c[k]
			printf "%-12s %5d %9.3f %9.3f %9.3f\n", k " per node", n,
				v[k, int((n + 1) / 2)], v[k, 1], v[k, n]
		}
	}'

echo
echo "== the live record replayed at each Tidal.RankStart (live - replay)"
printf '%-16s %12s %12s\n' "RankStart s" "avg JCT" "makespan"
for rs in 0 0.03 0.05 0.1 0.2 0.45; do
	"$SIM" --cluster "$run/etc/slurm.conf" --trace "$W/trace.csv" \
		--profiles "$W/profiles" --policy fifo \
		--live-result "$run/slurm_acct.out" --param Tidal.CycleInterval=1 \
		--param Tidal.RestartOverhead=0.2 --param Tidal.RequeueDelay=3 \
		--param Tidal.PreemptRelease=0.5 --param Tidal.RankStart=$rs \
		2>/dev/null | awk -v rs="$rs" '
		/^avg JCT/ { j = $NF } /^makespan/ { m = $NF }
		END { printf "%-16s %12s %12s\n", rs, j, m }'
done
