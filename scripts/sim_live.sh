#!/usr/bin/env bash
# scripts/sim_live.sh PLAN OUT TIDAL_CONF - a live replay: the jobs of a
# submit plan (tidal-sim --submit-plan) through a real slurmctld with
# sched/tidal, real slurmd nodes and real sbatch submissions.
#
# A throwaway cluster on loopback (tests/cluster/lib.sh with slurmdbd:
# NODES, GPUS_PER_NODE fake GPUs each, tidal.conf = TIDAL_CONF) takes each
# job at its plan time, as
#
#   sbatch -J tidal-<id> <the plan's options> work.sh RUN STATE
#
# where work.sh is a paced rigid job: it works RUN seconds in all, keeps
# what it has done in STATE, and after a requeue resumes from there.  A job
# whose options give --train-iters (a trainer job: tidal-sim writes them
# with --profiles) runs train.sh instead: tidal-launch over tidal-train,
# one rank per GPU, each step paced by the job's table in PLAN.profiles
# (tidal-train --profile), with a tidald on every node, so that a resize
# or a preemption is a real checkpoint, requeue and restart.  When
# every job has ended, sacct's record of each run goes to OUT:
#
#   OUT/slurm_acct.out   sacct -a -D -X --parsable2 -o JobID,JobName,
#                        Submit,Start,End,Elapsed,State,AllocTRES
#                        (for tidal-sim --live-result)
#   OUT/etc/             the cluster's slurm.conf, gres.conf and
#                        topology.conf (for tidal-sim --cluster)
#   OUT/work.tsv         each run of each job's process, to the
#                        microsecond (Slurm's times are whole seconds):
#                        "# start EPOCH" (the replay's time 0), then
#                        name, start and end (Unix seconds); read by
#                        --live-result beside slurm_acct.out
#   OUT/submit.log       each submission: planned and actual seconds
#   OUT/slurmctld.log    slurmctld's log (sched/tidal's decisions: each
#                        start, requeue and resize with the policy's
#                        reason), kept also when the replay fails
#
# Progress goes to stderr every PROGRESS seconds (default 10).  Exit 0 when
# every job ran to its end; 1 otherwise (what failed is said); 2 for bad
# usage.  Needs root (lib.sh).
#
# A deadline goes to sbatch as --deadline (whole seconds: the replay
# starts on a whole second), unless DEADLINES=ignore says that the policy
# does not read them (fifo, sjf, srtf, tiresias, ...; tidal-sim --live
# sets it for them): they then count only in the deadline ratio that
# tidal-sim --live-result computes from the trace, and Slurm does not
# cancel a job whose time limit cannot end by its deadline.  A job the
# policy rejects is cancelled (RejectAction=cancel, unless TIDAL_CONF
# says otherwise) and counts as rejected.  So does a job that reached
# slurmctld after its deadline (a submission due seconds before its
# deadline, on a busy cluster): Slurm refuses it ("Requested time limit is
# invalid"), and the record gets a row for it with no start.
#
# GPL-2.0-or-later.
set -u
if [ $# -ne 3 ]; then
	echo "usage: scripts/sim_live.sh PLAN OUT TIDAL_CONF" >&2
	exit 2
fi
PLAN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mkdir -p "$2" || exit 1
OUT=$(cd "$2" && pwd)
CONF=$3
PROGRESS=${PROGRESS:-10}
die() { keep_log; echo "sim-live: $*" >&2; exit 1; }
# keep_log: slurmctld's log to OUT, before the cluster's directory goes.
keep_log() { [ -z "${T:-}" ] || cp "$T/log/slurmctld.log" "$OUT/slurmctld.log" 2>/dev/null || :; }
# lib.sh sets its own four 8-GPU nodes: the caller's shape wins.
want_nodes=${NODES:-n1 n2 n3 n4}
want_gpus=${GPUS_PER_NODE:-8}
cd "$(dirname "$0")/.."
. tests/cluster/lib.sh
TEST_NAME=sim-live
ACCOUNTING=1
NODES=$want_nodes
GPUS_PER_NODE=$want_gpus
case " $NODES " in
*[!a-z0-9\ ]*) die "NODES='$NODES': node names are letters and digits, separated by spaces" ;;
esac
[[ $GPUS_PER_NODE =~ ^[1-9][0-9]?$ ]] || die "GPUS_PER_NODE='$GPUS_PER_NODE': must be 1 to 99"

[ -f "$PLAN" ] || die "$PLAN: no such plan"
head -n 2 "$PLAN" | tail -n 1 | grep -q $'^at\tname\toptions\trun\tdeadline$' ||
	die "$PLAN: not a tidal-sim --submit-plan (its second line must be the header 'at name options run deadline', tab-separated)"
case ${DEADLINES:-submit} in
submit | ignore) ;;
*) die "DEADLINES='$DEADLINES': must be submit (the default) or ignore" ;;
esac
jobs=$(awk 'NR > 2' "$PLAN" | wc -l)
[ "$jobs" -gt 0 ] || die "$PLAN: no jobs"
# Trainer jobs: their tables beside the plan, and the node side built.
trainers=$(awk -F'\t' 'NR > 2 && $3 ~ /--train-iters=/' "$PLAN" | wc -l)
PROFILES=$PLAN.profiles
if [ "$trainers" -gt 0 ]; then
	[ -d "$PROFILES" ] || die "$PLAN: $trainers trainer job(s) but no tables in $PROFILES (tidal-sim --submit-plan with --profiles writes them)"
	for b in tidald tidal-launch tidal-train; do
		[ -x "$BUILD_ABS/$b" ] || die "$BUILD/$b is not built: the plan's $trainers trainer job(s) need it (make node)"
	done
fi
grep -qi '^RejectAction=' <<<"$CONF" || CONF="$CONF
RejectAction=cancel"

# lib.sh skips (exit 0) where it cannot run; here that is a failure.
why=$(skip_unless_runnable | head -n 1)
[ -z "$why" ] || die "cannot run a live cluster here: ${why#*skipped: }"
cluster_up "$CONF"
if [ "$trainers" -gt 0 ]; then
	# Each trainer job's rendezvous store takes a port of its own, by job
	# id, from the 500 past this cluster's block of ports (sbatch passes
	# TIDAL_STORE_PORTS on): lib.sh's ten are too few for a replay's many
	# jobs at once, all of them on 127.0.0.1.
	store_lo=$((PORT_CTL + 20 + $(echo $NODES | wc -w)))
	export TIDAL_STORE_PORTS="$store_lo-$((store_lo + 499))"
	say "starting a tidald on each of the $(echo $NODES | wc -w) nodes for the $trainers trainer job(s)"
	for n in $NODES; do start_tidald "$n"; done
	agents_all_up() { [ "$("$TIDALCTL" -o show nodes 2>/dev/null | grep -c 'Agent=UP')" -eq "$(echo $NODES | wc -w)" ]; }
	wait_for 60 agents_all_up || die "the node agents did not all register within 60 s (see $T/log/tidald-*.log)"
fi
mkdir -p "$OUT/etc" "$OUT/progress" "$OUT/jobs"
cp "$T/etc/slurm.conf" "$T/etc/gres.conf" "$T/etc/topology.conf" "$OUT/etc/"
rm -f "$OUT/progress/"*
cat >"$OUT/work.sh" <<'EOF'
#!/bin/bash
# work.sh RUN STATE: RUN seconds of work in all, resumed from STATE.
run=$1 state=$2 done=0
[ -s "$state" ] && read -r done <"$state"
t0=$EPOCHREALTIME
save() {
	local now=$EPOCHREALTIME
	awk -v d="$done" -v a="$t0" -v b="$now" \
		'BEGIN { printf "%.3f\n", d + b - a }' >"$state.tmp" &&
		mv "$state.tmp" "$state"
	echo "$t0 $now" >>"$state.runs"
}
trap 'save; exit 143' TERM
left=$(awk -v r="$run" -v d="$done" 'BEGIN { x = r - d; print (x > 0 ? x : 0) }')
sleep "$left" &
wait $!
save
EOF
chmod +x "$OUT/work.sh"
# train.sh NAME MODEL BATCH ITERS: the trainer job's work, ITERS steps of
# global batch BATCH, each as long as MODEL's table says at the job's GPU
# count; a tiny model (it is the pace that counts), checkpoints only when
# the plugin asks for one (a resize or a preemption, through tidald).
# One tidal-launch per node: srun starts them on a job of several nodes,
# one task per node of this run, each with the GPUs the run holds there
# (a step gets all of the job's GRES; sbatch's --gpus of the first run is
# not the step's).
cat >"$OUT/train.sh" <<EOF
#!/bin/bash
runs=$OUT/progress/\$1.runs t0=\$EPOCHREALTIME
trap 'echo "\$t0 \$EPOCHREALTIME" >>"\$runs"; exit 143' TERM
launch=("$BUILD_ABS/tidal-launch" --run-dir "$T/tidal-run")
if [ "\${SLURM_JOB_NUM_NODES:-1}" -gt 1 ]; then
	unset SLURM_GPUS SLURM_GPUS_PER_NODE SLURM_TRES_PER_TASK
	launch=(srun --ntasks="\$SLURM_JOB_NUM_NODES" --ntasks-per-node=1 "\${launch[@]}")
fi
"\${launch[@]}" -- "$BUILD_ABS/tidal-train" \\
	--profile "$PROFILES/\$2.csv" --profile-model "\$2" --global-batch "\$3" \\
	--iters "\$4" --in 8 --hidden 8 --layers 1 --out 1 --ckpt-every 0 \\
	--log-every 10 &
wait \$!
rc=\$?
echo "\$t0 \$EPOCHREALTIME" >>"\$runs"
exit \$rc
EOF
chmod +x "$OUT/train.sh"

# now_s: seconds since the replay began (EPOCHREALTIME, microseconds), on
# a whole second, which the deadlines count from.
sleep "$(awk -v t="$EPOCHREALTIME" 'BEGIN { printf "%.6f", 1 - (t - int(t)) }')"
start=$EPOCHREALTIME
start_s=${start%.*}
now_s() { awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }'; }
progress() {
	local q
	q=$(squeue -h -o %T 2>/dev/null | sort | uniq -c | awk '{printf "%s%s %s", (NR > 1 ? ", " : ""), $1, tolower($2)}')
	echo "sim-live: +$(printf '%.0f' "$(now_s)") s: $1; ${q:-nothing in the queue}" >&2
}

say "replaying $jobs jobs of $PLAN"
: >"$OUT/submit.log"
rm -f "$OUT/refused.psv"
n=0 last=0 subs=()
while IFS=$'\t' read -r at name options run deadline; do
	wait_s=$(awk -v t="$at" -v n="$(now_s)" 'BEGIN { d = t - n; print (d > 0 ? d : 0) }')
	[ "$wait_s" = 0 ] || sleep "$wait_s"
	due=()
	if [ "$deadline" != - ] && [ "${DEADLINES:-submit}" != ignore ]; then
		due=(--deadline="$(date -d "@$((start_s + ${deadline%.*}))" +%Y-%m-%dT%H:%M:%S)")
		# Slurm 24.11 refuses a deadline its time limit ends after,
		# and a limit is whole minutes: a trainer job (its time is
		# its table's, Profiles=) or one whose limit does not fit goes
		# without one.
		limit=$(sed -n 's/.*-t \([0-9]*\).*/\1/p' <<<"$options")
		if [[ $options == *--train-iters=* ]] ||
			awk -v a="$at" -v d="$deadline" -v l="${limit:-0}" 'BEGIN { exit !(d - a < l * 60) }'; then
			options=$(sed 's/-t [0-9]* *//' <<<"$options")
		fi
	fi
	work=("$OUT/work.sh" "$run" "$OUT/progress/$name")
	if [[ $options == *--train-iters=* ]]; then
		model=$(sed -n 's/.*--train-model=\([^ ]*\).*/\1/p' <<<"$options")
		batch=$(sed -n 's/.*--train-batch=\([^ ]*\).*/\1/p' <<<"$options")
		iters=$(sed -n 's/.*--train-iters=\([^ ]*\).*/\1/p' <<<"$options")
		work=("$OUT/train.sh" "$name" "$model" "$batch" "$iters")
	fi
	# In the background: a slow sbatch (slurmctld busy) must not hold up
	# the submissions due after it.
	# shellcheck disable=SC2086 # the plan's options are words
	(
		if sbatch --parsable -J "$name" -D "$OUT/jobs" -o "$OUT/jobs/%j.out" \
			$options "${due[@]}" "${work[@]}" >"$OUT/jobs/$name.id" 2>"$OUT/jobs/$name.err"; then
			printf '%s\t%s\t%s\n' "$name" "$at" "$(now_s)" >>"$OUT/submit.log"
		elif [ -n "${due[*]}" ] && grep -q "time limit is invalid" "$OUT/jobs/$name.err" &&
			[ "$(date +%s)" -ge $((start_s + ${deadline%.*})) ]; then
			# slurmctld took it in after its deadline (seconds late
			# when busy) and refused it: a job the cluster could not
			# admit, recorded as such (its row in the record, with
			# no start, counts as rejected).
			echo "sim-live: $name reached slurmctld after its deadline (+${deadline%.*} s): refused, counted as rejected" >&2
			printf 'refused|%s|%s|Unknown|Unknown|00:00:00|REFUSED deadline passed|\n' \
				"$name" "$(date +%Y-%m-%dT%H:%M:%S)" >>"$OUT/refused.psv"
			printf '%s\t%s\t%s\n' "$name" "$at" "$(now_s)" >>"$OUT/submit.log"
		else
			echo "sim-live: sbatch of $name failed: $(cat "$OUT/jobs/$name.err")" >&2
			: >"$OUT/jobs/$name.failed"
		fi
	) &
	subs+=($!)
	n=$((n + 1))
	got=$(now_s)
	if [ "$(printf '%.0f' "$got")" -ge $((last + PROGRESS)) ]; then
		last=$(printf '%.0f' "$got")
		progress "submitted $n of $jobs"
	fi
done < <(awk 'NR > 2' "$PLAN")
wait "${subs[@]}"
failed=$(find "$OUT/jobs" -name '*.failed' | wc -l)
worst=$(awk -F'\t' '{ d = $3 - $2; if (d > w) w = d } END { printf "%.3f", w }' "$OUT/submit.log")
say "all $n submitted; the latest $worst s after its plan time"

ours() { squeue -h -o %j 2>/dev/null | grep -c '^tidal-'; }
none_left() { [ "$(ours)" -eq 0 ]; }
# A job still queued three times past the plan's last end (plus five
# minutes) will not end: say which and stop.
limit=$(awk -F'\t' 'NR > 2 && $1 + $4 > m { m = $1 + $4 } END { printf "%.0f", 3 * m + 300 }' "$PLAN")
last=$(printf '%.0f' "$(now_s)")
while ! none_left; do
	sleep 1
	t=$(printf '%.0f' "$(now_s)")
	if [ "$t" -ge "$limit" ]; then
		echo "sim-live: jobs still queued after $t s, three times the plan's length:" >&2
		squeue -o '%.8i %.12j %.9T %.6D %r' >&2
		FAILED=1
		die "the live replay did not end (the cluster's logs are kept above)"
	fi
	if [ "$t" -ge $((last + PROGRESS)) ]; then
		last=$t
		progress "waiting for the last jobs"
	fi
done
say "every job has left the queue after $(now_s) s"
# The processes' own times first: they are kept even if sacct fails below.
{
	echo "# start $start"
	for f in "$OUT/progress/"*.runs; do
		[ -f "$f" ] || continue
		n=$(basename "$f" .runs)
		awk -v n="$n" '{ printf "%s\t%s\t%s\n", n, $1, $2 }' "$f"
	done
} >"$OUT/work.tsv"

# slurmdbd has each job's end once its record carries an End.
record() {
	sacct -a -D -X --parsable2 --name="$(awk -F'\t' 'NR > 2 {printf "%s%s", (NR > 3 ? "," : ""), $2}' "$PLAN")" \
		-o JobID,JobName,Submit,Start,End,Elapsed,State,AllocTRES \
		>"$OUT/slurm_acct.out.tmp" 2>"$OUT/sacct.err" || return 1
	[ ! -f "$OUT/refused.psv" ] || cat "$OUT/refused.psv" >>"$OUT/slurm_acct.out.tmp"
}
complete() {
	record || return 1
	[ "$(awk -F'|' 'NR > 1 && $2 ~ /^tidal-/ {print $2}' "$OUT/slurm_acct.out.tmp" | sort -u | wc -l)" -eq "$jobs" ] &&
		! awk -F'|' 'NR > 1 && $5 == "Unknown" && $4 != "Unknown"' "$OUT/slurm_acct.out.tmp" | grep -q .
}
wait_for 60 complete || die "sacct's record lacks jobs or ends after 60 s (see $OUT/slurm_acct.out.tmp, $OUT/sacct.err)"
mv "$OUT/slurm_acct.out.tmp" "$OUT/slurm_acct.out"
# A job the policy rejected is cancelled before it ever starts.
rejected=$(awk -F'|' 'NR > 1 && $7 ~ /^CANCELLED/ && $8 == ""' "$OUT/slurm_acct.out" | wc -l)
[ "$rejected" -eq 0 ] || say "$rejected job(s) rejected by the policy (cancelled before they started)"
# A job refused at submission (its deadline passed on the way, above) is
# counted as rejected, said where it happened: not a failure of the run.
not_done=$(awk -F'|' 'NR > 1 && $7 != "COMPLETED" && $7 != "REQUEUED" && $7 != "PREEMPTED" && !($7 ~ /^CANCELLED/ && $8 == "") && $7 !~ /^REFUSED/' "$OUT/slurm_acct.out")
if [ -n "$not_done" ]; then
	echo "sim-live: jobs that did not complete:" >&2
	echo "$not_done" >&2
	failed=$((failed + 1))
fi
say "sacct's record: $OUT/slurm_acct.out ($(($(wc -l <"$OUT/slurm_acct.out") - 1)) runs)"
keep_log
cluster_down
[ "$failed" -eq 0 ]
