#!/bin/bash
# test_accounting.sh - Tidal's decisions in Slurm's accounting, and a
# workload read back from sacct and replayed with tidal-sim.
#
# One cluster with slurmdbd (ACCOUNTING=1) under Policy=elastic-edf:
#
#   R  16 GPUs, rigid             runs; cancelled
#   E  --elastic-gpus=8-32        starts at the 16 left, grows to 32 when
#                                 R ends, and exits on its 32-GPU run:
#                                 sacct's AdminComment reads
#                                 "Tidal policy=elastic-edf gpus=32
#                                 resizes=1 preempts=0"
#   X  a --deadline it cannot     cancelled: its AdminComment carries the
#      meet                       policy's reason (rejected=...)
#   A  an AdminComment the        left as the administrator wrote it
#      administrator set
#
# then, under Policy=fifo, eight rigid jobs of 4 to 32 GPUs and 4 to 10 s
# are submitted a second apart and run to the end.  sacct --parsable2
# gives them back; tidal-sim replays that output on this cluster's own
# slurm.conf under fifo with no restart cost, and each job must start
# with the GPUs it held, in slurmctld's order, and no later than it did
# in slurmctld (the replay has no cycle interval and no batch-step launch:
# the test prints by how much each job differs).
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
ACCOUNTING=1
SIM="$BUILD_ABS/tidal-sim"
[ -x "$SIM" ] || { say "skipped: $BUILD/tidal-sim not built"; echo "$TEST_NAME: 0 passed, 0 failed"; exit 0; }
cluster_up "Policy=elastic-edf
CycleInterval=1
ResizeSignal=USR1
CheckpointTimeout=3
RejectAction=cancel"

# sacct's field F of job J (allocations only), once slurmdbd has it.
acct() { sacct -n -X --parsable2 -j "$1" -o "$2" 2>/dev/null | head -n 1; }
acct_has() { acct "$1" "$2" | grep -q -- "$3"; }
ended() { acct "$1" State | grep -qE '^(COMPLETED|CANCELLED|FAILED|TIMEOUT)'; }

log="$T/out/elastic.log"
elastic_job=$(elastic_sleeper "$log" 4)

r=$(submit -N2 --gpus-per-node=8 --wrap 'sleep 600')
check "R ($r, 16 GPUs) starts" wait_state 30 "$r" RUNNING
e=$(submit --elastic-gpus=8-32 --gpus=8 --wrap "$elastic_job")
check "E ($e, elastic 8-32) starts at the 16 GPUs left" wait_for 40 has_gpus "$e" 16
check "E's script runs on 2 nodes" wait_for 30 grep -q "start nodes=2" "$log"
check "scontrol shows E's AdminComment while it runs" \
	eval "scontrol show job $e | grep -q 'AdminComment=Tidal policy=elastic-edf gpus=16 resizes=0 preempts=0'"
scancel "$r"
check "E grows to 32 once R ends" wait_for 90 has_gpus "$e" 32
check "E ends on its 32-GPU run" wait_for 60 ended "$e"
check "sacct: E completed" acct_has "$e" State COMPLETED
check "sacct: E's AdminComment says policy, final size and one resize" \
	acct_has "$e" AdminComment '^Tidal policy=elastic-edf gpus=32 resizes=1 preempts=0$'
say "sacct E: $(acct "$e" JobID,State,AllocTRES,AdminComment)"
check "sacct: R's AdminComment says it ran at 16 GPUs" \
	wait_for 30 acct_has "$r" AdminComment '^Tidal policy=elastic-edf gpus=16 resizes=0 preempts=0$'

x=$(submit -N1 --gpus-per-node=8 -t 120 --time-min=5 --deadline=now+10minutes --wrap 'sleep 600')
check "X ($x, 2 h of work, 10 min to its deadline) ends cancelled" wait_for 30 ended "$x"
check "sacct: X's AdminComment carries the rejection and its reason" \
	acct_has "$x" AdminComment '^Tidal policy=elastic-edf gpus=0 resizes=0 preempts=0 rejected=.*infeasible'
say "sacct X: $(acct "$x" JobID,State,AdminComment)"

a=$(submit -N1 --gpus-per-node=8 -H --wrap 'sleep 2')
scontrol update jobid="$a" AdminComment="site: project 42"
scontrol release "$a"
check "A ($a, AdminComment set by the administrator) runs and ends" wait_for 60 ended "$a"
check "sacct: A's AdminComment is still the administrator's" \
	acct_has "$a" AdminComment '^site: project 42$'

# ---- the round trip
set_tidal_conf "Policy=fifo
CycleInterval=1"
sleep 2
gpus=(16 16 8 24 8 32 4 12)
secs=(6 8 4 6 5 4 10 5)
ids=()
for i in "${!gpus[@]}"; do
	ids+=("$(submit --gpus="${gpus[$i]}" -t 5 --wrap "sleep ${secs[$i]}")")
	sleep 1
done
all_ended() { local j; for j in "${ids[@]}"; do ended "$j" || return 1; done; }
check "the 8 rigid jobs (${ids[*]}) run to the end" wait_for 180 all_ended
list=$(IFS=,; echo "${ids[*]}")
sacct -a -X --parsable2 -j "$list" \
	-o JobID,User,Partition,Submit,Start,End,Elapsed,State,AllocTRES,ReqTRES \
	>"$T/out/sacct.txt" 2>"$T/out/sacct.err"
check "sacct --parsable2 gives back the 8 jobs" \
	test "$(grep -c '|COMPLETED|' "$T/out/sacct.txt")" -eq 8
"$SIM" --cluster "$T/etc/slurm.conf" --trace "$T/out/sacct.txt" \
	--policy fifo --param Tidal.RestartOverhead=0 --quiet \
	--jobs-csv "$T/out/replay.csv" --json "$T/out/replay.json" \
	>"$T/out/sim.out" 2>&1
check "tidal-sim replays sacct's output on the same slurm.conf" \
	eval "[ -s $T/out/replay.csv ] && [ \"\$(jq .policies.fifo.jobs $T/out/replay.json)\" = 8 ]" ||
	cat "$T/out/sim.out"

# Live: submit, start and end of each job (epoch seconds), from sacct.
epoch() { [ "$1" = Unknown ] && echo 0 || date -d "$1" +%s; }
declare -A lsub lstart lend
while IFS='|' read -r id _ _ sub start end _ _ _ _; do
	[[ $id =~ ^[0-9]+$ ]] || continue
	lsub[$id]=$(epoch "$sub") lstart[$id]=$(epoch "$start") lend[$id]=$(epoch "$end")
done <"$T/out/sacct.txt"
first=$(printf '%s\n' "${lsub[@]}" | sort -n | head -n 1)
# The replay's: the jobs CSV's start, end and GPUs, seconds from the
# first submit; the live GPUs from AllocTRES.
col() { head -n 1 "$T/out/replay.csv" | tr ',' '\n' | grep -nx "$1" | cut -d: -f1; }
cid=$(col job_id) cstart=$(col start) cend=$(col end) cgpus=$(col gpus)
declare -A rstart lgpus
while IFS='|' read -r id _ _ _ _ _ _ _ alloc _; do
	[[ $id =~ ^[0-9]+$ ]] && lgpus[$id]=$(grep -o 'gres/gpu=[0-9]*' <<<"$alloc" | cut -d= -f2)
done <"$T/out/sacct.txt"
worst=0 later=0 gpus_differ=0 rows=0 ljct=0 rjct=0
say "round trip, seconds from the first submit:"
printf '%6s %5s %8s %8s %8s %8s\n' job gpus start replay end replay
while IFS=, read -r -a row; do
	id=${row[$((cid - 1))]}
	[[ $id =~ ^[0-9]+$ ]] && [ -n "${lstart[$id]:-}" ] || continue
	rows=$((rows + 1))
	rs=$(printf '%.0f' "${row[$((cstart - 1))]}") re=$(printf '%.0f' "${row[$((cend - 1))]}")
	ls=$((lstart[$id] - first)) le=$((lend[$id] - first))
	rstart[$id]=$rs
	[ "${row[$((cgpus - 1))]}" = "${lgpus[$id]}" ] || gpus_differ=$((gpus_differ + 1))
	[ "$rs" -le $((ls + 1)) ] || later=$((later + 1))
	for d in $((rs - ls)) $((re - le)); do
		d=${d#-}
		[ "$d" -gt "$worst" ] && worst=$d
	done
	ljct=$((ljct + lend[$id] - lsub[$id]))
	rjct=$((rjct + re - (lsub[$id] - first)))
	printf '%6s %5s %8s %8s %8s %8s\n' "$id" "${lgpus[$id]}" "$ls" "$rs" "$le" "$re"
done <"$T/out/replay.csv"
say "worst difference $worst s; JCT summed: live $ljct s, replay $rjct s"
# Jobs that slurmctld started more than a second apart start in the same
# order in the replay.
flips=0
for i in "${ids[@]}"; do
	for j in "${ids[@]}"; do
		[ $((lstart[$i] + 1)) -lt "${lstart[$j]}" ] &&
			[ "${rstart[$i]:-0}" -gt "${rstart[$j]:-0}" ] && flips=$((flips + 1))
	done
done
check "the replay has every job (8 rows matched)" test "$rows" -eq 8
check "each job has the GPUs in the replay that sacct says it held" \
	test "$gpus_differ" -eq 0
check "jobs start in the replay in slurmctld's order ($flips pairs swapped)" \
	test "$flips" -eq 0
# The replay has no scheduling latency (the cycle, a batch step's launch
# and end): it may start a job earlier than slurmctld did, never later.
check "no job starts later in the replay than in slurmctld ($later did)" \
	test "$later" -eq 0
finish
