#!/usr/bin/env bash
# bench/load.sh BUILD - `make bench`: a burst of short jobs on the loopback
# cluster, under Slurm's own scheduler and under sched/tidal.
#
# For each scheduler in turn, a fresh private cluster (tests/cluster/lib.sh:
# 4 nodes x 8 fake GPUs, munge, real slurmctld and slurmd) takes JOBS short
# jobs (1 GPU, 1 CPU, `true`), submitted at once by SUBMITTERS parallel
# sbatch loops; ARRAY_SHARE percent of them come as job arrays of
# ARRAY_SIZE tasks, the rest as single jobs.  While the burst drains, a
# prober runs `squeue` every PROBE s and times it; the table then gives:
#
#   done        jobs (array tasks counted one by one) that ended COMPLETED,
#               of those submitted; "lost" is every other one: still
#               pending when the wait ran out, failed, or gone
#   submit s    wall time of the whole submission
#   drain s     from the first submission to the last job's end
#   squeue ms   the prober's squeue latency, p50 / p99 / max
#   sdiag       slurmctld's own counters at the end: the main scheduler's
#               mean and max cycle (sched/builtin only: sched/tidal turns
#               it off), and the mean time of REQUEST_SUBMIT_BATCH_JOB and
#               REQUEST_JOB_INFO
#   plugin ms   sched/tidal only, from its per-cycle debug line, p50 /
#               p99 / max per cycle: decide (the policy, no lock held), the
#               time it holds slurmctld's job and node write locks (its
#               snapshot, apply and Reason sections together), and the time
#               it waited for them
#
#   BENCH_LOAD_JOBS=N          jobs in all (default 10000)
#   BENCH_LOAD_SUBMITTERS=N    parallel submitters (default 20)
#   BENCH_LOAD_ARRAY_SHARE=P   percent of the jobs in arrays (default 50)
#   BENCH_LOAD_ARRAY_SIZE=N    tasks per array (default 100)
#   BENCH_LOAD_SCHEDULERS=...  comma-separated: builtin and Tidal policies
#                              (default builtin,tiresias,elastic-edf)
#   BENCH_LOAD_STALL=S         stop waiting once no job has ended for S
#                              seconds (default 120)
#   BENCH_LOAD_PROBE=S         the prober's period (default 0.5)
#
# Needs root, Slurm, munge and the plugin, like the cluster tests; without
# them it says what is missing and prints nothing else.  Nothing here
# passes or fails: the numbers are for comparing the schedulers in one run
# on one machine.
#
# GPL-2.0-or-later.
set -uo pipefail

BUILD=${1:-build}
JOBS=${BENCH_LOAD_JOBS:-10000}
SUBMITTERS=${BENCH_LOAD_SUBMITTERS:-20}
ARRAY_SHARE=${BENCH_LOAD_ARRAY_SHARE:-50}
ARRAY_SIZE=${BENCH_LOAD_ARRAY_SIZE:-100}
SCHEDULERS=${BENCH_LOAD_SCHEDULERS:-builtin,tiresias,elastic-edf}
STALL=${BENCH_LOAD_STALL:-120}
PROBE=${BENCH_LOAD_PROBE:-0.5}

NAME=bench/load.sh
. "$(dirname "$0")/cluster_bench.sh"
whole_numbers BENCH_LOAD_ JOBS SUBMITTERS ARRAY_SHARE ARRAY_SIZE STALL
[ "$ARRAY_SHARE" -le 100 ] || {
	echo "$NAME: BENCH_LOAD_ARRAY_SHARE=$ARRAY_SHARE: must be 0 to 100" >&2
	exit 2
}
runnable "$BUILD" slurmctld slurmd munged sbatch sdiag -- sched_tidal.so

# The burst: arrays first in each submitter's share, then single jobs.
ARRAYS=$((JOBS * ARRAY_SHARE / 100 / (ARRAY_SIZE > 0 ? ARRAY_SIZE : 1)))
[ "$ARRAY_SIZE" -gt 0 ] || ARRAYS=0
SINGLES=$((JOBS - ARRAYS * ARRAY_SIZE))
JOB_ARGS=(-n1 -c1 --gpus=1 -t 5 -o /dev/null -e /dev/null)

machine() {
	echo "machine: $(machine_line)"
	echo "date:    $(date -u '+%Y-%m-%d %H:%M UTC'); Slurm $(slurmctld -V | awk '{print $2}')"
	echo "cluster: loopback Slurm, 4 nodes x $GPUS_PER_NODE fake GPUs, 16 CPUs each"
	echo "burst:   $JOBS jobs (1 GPU, 1 CPU, true): $ARRAYS arrays of" \
	     "$ARRAY_SIZE tasks and $SINGLES single jobs, from $SUBMITTERS parallel submitters"
}

# submitter K: its share of the arrays and of the single jobs.
submitter() {
	local k=$1 i fails=0
	for ((i = k; i < ARRAYS; i += SUBMITTERS)); do
		until sbatch -Q "${JOB_ARGS[@]}" --array=0-$((ARRAY_SIZE - 1)) --wrap true; do
			fails=$((fails + 1)); sleep 0.2
		done
	done
	for ((i = k; i < SINGLES; i += SUBMITTERS)); do
		until sbatch -Q "${JOB_ARGS[@]}" --wrap true; do
			fails=$((fails + 1)); sleep 0.2
		done
	done
	echo "$fails" >"$T/out/submitter-$k.retries"
}

# The prober: one line "T_MS LATENCY_MS ACTIVE" per squeue, until STOP.
prober() {
	local stop=$1 t0 t1 active
	while [ ! -e "$stop" ]; do
		t0=$(now_ms)
		active=$(squeue -h -t PD,R,CG,CF -o %i 2>/dev/null | wc -l)
		t1=$(now_ms)
		echo "$t1 $((t1 - t0)) $active"
		sleep "$PROBE"
	done
}

# Jobs by kind and state as far as slurmctld still knows them (MIN_JOB_AGE
# below keeps every one of this burst): "single COMPLETED 4990, array PENDING 5000"
# (array tasks are the ids with an underscore, one line each with -r).
states() {
	squeue -h -t all -r -o '%i %T' 2>/dev/null | awk '
		{ c[($1 ~ /_/ ? "array" : "single") " " $2]++ }
		END { for (k in c) printf "%s%s %d", (n++ ? ", " : ""), k, c[k] }'
}
secs() { awk -v ms="$1" 'BEGIN { printf "%.1f", ms / 1000 }'; }

run_one() { # run_one SCHEDULER
	local s=$1 t_sub0 t_sub1 t_end last_done done_n=0 stall_t k
	if [ "$s" = builtin ]; then
		SCHED_TYPE=sched/builtin SCHED_PARAMS= cluster_up ""
	else
		SCHED_TYPE= SCHED_PARAMS="SchedulerParameters=defer,sched_interval=-1" \
			cluster_up "Policy=$s"
	fi
	sdiag -r >/dev/null 2>&1
	prober "$T/probe.stop" >"$T/probe.out" &
	local prober_pid=$!
	t_sub0=$(now_ms)
	for ((k = 0; k < SUBMITTERS; k++)); do submitter "$k" & done
	wait $(jobs -p | grep -vx "$prober_pid")
	t_sub1=$(now_ms)
	say "$s: submitted in $(secs $((t_sub1 - t_sub0))) s; draining"
	last_done=-1 stall_t=$(now_ms) t_end=$t_sub1
	while :; do
		done_n=$(squeue -h -t all -r -o %T 2>/dev/null | grep -cx COMPLETED)
		if [ "$done_n" -ne "$last_done" ]; then
			last_done=$done_n stall_t=$(now_ms) t_end=$stall_t
			say "$s: $done_n of $JOBS done"
		fi
		[ "$done_n" -ge "$JOBS" ] && break
		[ $(($(now_ms) - stall_t)) -ge $((STALL * 1000)) ] && {
			say "$s: no job ended for $STALL s; stopped waiting"; break; }
		sleep 5
	done
	touch "$T/probe.stop"; wait "$prober_pid"
	local log=$T/log/slurmctld.log sd retries
	sd=$(sdiag 2>/dev/null)
	retries=$(cat "$T"/out/submitter-*.retries 2>/dev/null | awk '{ n += $1 } END { print n + 0 }')
	awk '{ print $2 }' "$T/probe.out" >"$T/lat"
	local cyc="-" cyc_mean cyc_max sub_us info_us
	cyc_mean=$(awk '/^Main schedule statistics/ { m = 1 } m && /Mean cycle:/ { print $3; exit }' <<<"$sd")
	cyc_max=$(awk '/^Main schedule statistics/ { m = 1 } m && /Max cycle:/ { print $3; exit }' <<<"$sd")
	sub_us=$(awk '/REQUEST_SUBMIT_BATCH_JOB/ { sub(/.*ave_time:/, ""); print $1; exit }' <<<"$sd")
	[ "$s" = builtin ] && cyc="mean ${cyc_mean:-?} us, max ${cyc_max:-?} us"
	info_us=$(awk '/REQUEST_JOB_INFO[^_]/ || /REQUEST_JOB_INFO *\(/ { sub(/.*ave_time:/, ""); print $1; exit }' <<<"$sd")
	local plugin="-"
	if [ "$s" != builtin ]; then
		sed -n 's/.*sched\/tidal: [0-9]* jobs, [0-9]* started; .* decide \([0-9.]*\) ms, .* (held \([0-9.]*\) ms, waited \([0-9.]*\) ms).*/\1 \2 \3/p' \
			"$log" >"$T/cycles"
		awk '{ print $1 }' "$T/cycles" >"$T/decide"
		awk '{ print $2 }' "$T/cycles" >"$T/held"
		awk '{ print $3 }' "$T/cycles" >"$T/waited"
		plugin="decide $(three "$T/decide"); locks held $(three "$T/held"), waited for $(three "$T/waited") ($(wc -l <"$T/cycles") cycles)"
	fi
	{
		echo
		echo "scheduler: $s"
		echo "  jobs by state:   $(states)"
		echo "  done:            $done_n of $JOBS ($((JOBS - done_n)) lost or not ended)"
		echo "  submit:          $(secs $((t_sub1 - t_sub0))) s ($retries sbatch retries)"
		echo "  drain:           $(secs $((t_end - t_sub0))) s from the first submission to the last end seen"
		echo "  squeue ms:       $(three "$T/lat") (p50 / p99 / max of $(wc -l <"$T/lat") probes)"
		echo "  sdiag:           main scheduler cycle $cyc; submit RPC mean ${sub_us:-?} us; job info RPC mean ${info_us:-?} us"
		echo "  plugin ms:       $plugin"
	} | tee -a "$RESULTS"
	cluster_down
}

RESULTS=$(mktemp "${TMPDIR:-/tmp}/tidal-load.XXXXXX")
# (cluster_up owns the EXIT trap: RESULTS is removed at the end)
# MinJobAge keeps every finished job for the count (a burst drains for
# longer than lib.sh's 600 s); MaxJobCount room for all of them at once.
export MIN_JOB_AGE=86400
export EXTRA_SLURM_CONF="MaxJobCount=$((JOBS * 2 + 1000))
MaxArraySize=$((ARRAY_SIZE + 1))"
IFS=, read -r -a scheds <<<"$SCHEDULERS"
for s in "${scheds[@]}"; do run_one "$s"; done
echo
echo "== bench/load.sh: a burst of short jobs"
machine
cat "$RESULTS"
rm -f "$RESULTS"
