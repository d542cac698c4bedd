#!/bin/bash
# test_sim_live.sh - a live replay (Slurm's simulator mode, tidal-sim(1)
# LIVE REPLAY): a 20-job trace in the UB Slurm Simulator's events format
# (conf/live-20.events, which make demo replays too) goes through a real slurmctld with sched/tidal (Policy=fifo), real
# slurmd and real sbatch submissions at the trace's times
# (scripts/sim_live.sh), and tidal-sim sets sacct's record of that run
# beside its own replay of the same trace on the same slurm.conf.
#
#   trace    20 rigid jobs of 4 to 32 GPUs and 5 to 16 s, one every 0 to
#            2 s: a queue forms on the 32 GPUs
#   model    --live's defaults: the live cluster's cycle
#            (Tidal.CycleInterval=1, which the live tidal.conf gets as
#            CycleInterval) and a start latency of 0.2 s
#            (Tidal.RestartOverhead: the launch of the batch step); the
#            preemption's costs (Tidal.RequeueDelay=3,
#            Tidal.PreemptRelease=0.5) fifo never pays
#   checks   every job ran once, to its end, with its GPUs; average JCT
#            and makespan live within 5% of the replay's; the replay's
#            sacct-style record (--acct-out) holds every job of both
#
# run-scripts: alone
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
ACCOUNTING=1
SIM="$BUILD_ABS/tidal-sim"
[ -x "$SIM" ] || { say "skipped: $BUILD/tidal-sim not built"; echo "$TEST_NAME: 0 passed, 0 failed"; exit 0; }
skip_unless_runnable
W=$(mktemp -d /tmp/tidal-sim-live.XXXXXX)
trap 'rm -rf "$W"' EXIT

cp conf/live-20.events "$W/trace.events"

check "tidal-sim writes the submit plan of the events file" \
	"$SIM" --cluster conf/slurm.conf --trace "$W/trace.events" --policy fifo \
	--quiet --submit-plan "$W/plan.tsv"
check "the plan has the 20 jobs, named tidal-<id>" \
	test "$(grep -c $'^[0-9.]*\ttidal-10[0-9][0-9]\t--gpus=' "$W/plan.tsv")" -eq 20

# The one command: plan, live cluster (4 x 8 GPUs, as NODES and
# GPUS_PER_NODE of lib.sh), sacct's record, and the replay beside it, with
# --live's model of the live cluster (Tidal.CycleInterval=1,
# Tidal.RestartOverhead=0.2).
printf 'NodeName=n[1-4] Gres=gpu:8 CPUs=16\nPartitionName=gpu Nodes=n[1-4] Default=YES\n' >"$W/cluster.conf"
start=$(date +%s)
"$SIM" --cluster "$W/cluster.conf" --trace "$W/trace.events" --policy fifo \
	--live "$W/live" --json "$W/cmp.json" --jobs-csv "$W/jobs.csv" \
	--acct-out "$W/acct.out" >"$W/cmp.out" 2>"$W/live.log"
rc=$?
grep -E 'submitted;|latest|left the queue|record|failed|did not|--live' "$W/live.log" | sed 's/^/   /'
sed 's/^/   /' "$W/cmp.out"
check "tidal-sim --live replays the trace live and beside it (rc $rc, $(($(date +%s) - start)) s)" \
	test "$rc" -eq 0 || tail -n 30 "$W/live.log"
acct=$W/live/run/slurm_acct.out
check "sacct's record: one COMPLETED run of each job" \
	test "$(awk -F'|' '$7 == "COMPLETED" && $2 ~ /^tidal-10/' "$acct" 2>/dev/null | wc -l)" -eq 20
# Each job held the GPUs the trace asked for (AllocTRES, against -G).
gpus_ok() {
	local n=0 id want got
	while read -r line; do
		id=$(sed -n 's/.*-J jobid_\([0-9]*\).* -G \([0-9]*\) .*/\1 \2/p' <<<"$line")
		want=${id#* } id=${id% *}
		got=$(awk -F'|' -v j="tidal-$id" '$2 == j' "$acct" | grep -o 'gres/gpu=[0-9]*' | cut -d= -f2)
		[ "$got" = "$want" ] && n=$((n + 1))
	done <"$W/trace.events"
	[ "$n" -eq 20 ]
}
check "every job held the GPUs the trace asked for" gpus_ok

within() { # within METRIC PERCENT: live and replay, from the JSON
	jq -e --arg m "$1" --argjson p "$2" \
		'.policies["live:fifo"][$m] as $l | .policies.fifo[$m] as $s |
		 ($l - $s | fabs) <= $p / 100 * $s' "$W/cmp.json" >/dev/null
}
check "average JCT live within 5% of tidal-sim's" within avg_jct 5
check "makespan live within 5% of tidal-sim's" within makespan 5
check "the per-job CSV holds both runs" \
	test "$(grep -c '^live:fifo,' "$W/jobs.csv")" -eq 20 -a "$(grep -c '^fifo,' "$W/jobs.csv")" -eq 20
check "--acct-out: a sacct-style row of every job of both runs" \
	test "$(grep -c '|COMPLETED|gres/gpu=' "$W/acct.out")" -eq 40
check "--acct-out reads back as a sacct trace" \
	"$SIM" --cluster "$W/live/run/etc/slurm.conf" --trace "$W/acct.out" \
	--policy fifo --quiet
finish
