#!/usr/bin/env bash
# tests/slurm/run.sh - Slurm's own regression tests under sched/backfill and
# under sched/tidal, side by side.
#
# Runs the expect tests listed in a list file (default tests/slurm/tests.list)
# from the testsuite of the very Slurm source the plugin is built against
# (SLURM_SRC in config.mk, testsuite/expect), on the loopback cluster of
# tests/cluster/lib.sh: once per scheduler, each on a fresh cluster.  A
# scheduler is "backfill" (sched/backfill, Slurm's default) or a Tidal policy
# name (sched/tidal with Policy=NAME, CycleInterval=1).  Prints one table,
# a row per test and a column per scheduler, then every difference from
# backfill: a test that passes (or skips) under backfill and fails or
# times out under a policy.
#
# A difference that Tidal makes on purpose is listed in tests/slurm/
# deliberate.list (TEST POLICY|* WHY); it is printed with its reason and
# does not fail the run.  Every other difference fails it.
#
# Between tests every job is cancelled, reservations are deleted and nodes
# and the partition are set back up, so that one test's leftovers cannot
# fail the next.  Each scheduler's results go to LOGS/SCHED.results (TEST
# STATUS SECONDS) and each test's output to LOGS/SCHED/TEST.log; a run of
# some tests into a LOGS that has results replaces theirs only.  The table
# covers every scheduler with results in LOGS, so that runs of different
# schedulers (one per machine, or two at once) can share one LOGS and be
# reported together; its "seconds" row adds up the tests' own times.
#
# Usage: tests/slurm/run.sh [--list FILE] [--sched NAME[,NAME...]]
#                           [--timeout SECONDS] [--logs DIR] [--report]
#   --list     the tests to run, one name per line (# starts a comment);
#              default tests/slurm/tests.list
#   --sched    the schedulers to run, default backfill,fifo,tiresias,
#              elastic-edf; backfill, the reference, runs first
#   --timeout  per test, default 600 (test3.8 waits out Slurm's 2-minute
#              requeue delay twice)
#   --logs     keep results and output here (default: a temporary
#              directory, removed unless a difference was found)
#   --report   run nothing: print the table of what LOGS holds
#   --no-report  run the tests into LOGS (--logs is then needed), print
#              no table: for schedulers run at the same time into one
#              LOGS, whose table a --report afterwards prints (make
#              check-slurm-quick); exits 0 once every test has run
# SLURM_PREFIX, PLUGIN_BUILD and SLURM_SRC (tests/cluster/lib.sh) run
# another Slurm's suite on its daemons: make check-slurm-24.
# A test that fails or times out is run a second time; one that passes
# then is reported "flaky", with the first try's output, and is no
# difference.
# Exit status: 0 no difference that is not deliberate; 1 there is one, or
# backfill's results are missing; 2 bad usage.  Skips (exit 0) without
# root, Slurm, expect or the plugin.
#
# GPL-2.0-or-later.

set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PROG=tests/slurm/run.sh

list=$here/tests.list
scheds=backfill,fifo,tiresias,elastic-edf
per_test=600
logs=
report_only=0
no_report=0

usage() {
	echo "usage: $PROG [--list FILE] [--sched NAME[,NAME...]] [--timeout SECONDS] [--logs DIR] [--report | --no-report]" >&2
	exit 2
}
bad() { echo "$PROG: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
	case $1 in
	--list) [ $# -ge 2 ] || usage; list=$2; shift 2 ;;
	--sched) [ $# -ge 2 ] || usage; scheds=$2; shift 2 ;;
	--timeout) [ $# -ge 2 ] || usage; per_test=$2; shift 2 ;;
	--logs) [ $# -ge 2 ] || usage; logs=$2; shift 2 ;;
	--report) report_only=1; shift ;;
	--no-report) no_report=1; shift ;;
	-h | --help) sed -n '2,/^# GPL/p' "$0" | sed -e 's/^# \{0,1\}//' -e '$d'; exit 0 ;;
	*) bad "unknown argument '$1' (known: --list, --sched, --timeout, --logs, --report, --no-report)" ;;
	esac
done
[ -r "$list" ] || bad "--list $list: cannot read it"
[[ $per_test =~ ^[1-9][0-9]*$ ]] ||
	bad "--timeout $per_test: must be a whole number of seconds, at least 1"

# The reference first; then the policies in the order given.
IFS=, read -r -a asked <<<"$scheds"
run_scheds=()
for s in backfill "${asked[@]}"; do
	[ -n "$s" ] || continue
	[[ $s =~ ^[a-z][a-z0-9-]*$ ]] ||
		bad "--sched '$s': a scheduler is backfill or a Tidal policy name (fifo, tiresias, elastic-edf, ...)"
	[ "$s" = backfill ] && [[ ",$scheds," != *,backfill,* ]] && continue
	[[ " ${run_scheds[*]} " == *" $s "* ]] || run_scheds+=("$s")
done
[ ${#run_scheds[@]} -gt 0 ] || [ "$report_only" = 1 ] || bad "--sched '$scheds' names no scheduler"
[ "$report_only" = 0 ] || [ -n "$logs" ] || bad "--report needs --logs DIR"
[ "$no_report" = 0 ] || [ -n "$logs" ] || bad "--no-report needs --logs DIR (where a --report finds the results)"
[ "$no_report" = 0 ] || [ "$report_only" = 0 ] || bad "--report and --no-report: one or the other"

mapfile -t tests < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$list" | grep -v '^$' | awk '{print $1}')
[ ${#tests[@]} -gt 0 ] || bad "--list $list: names no test"

cd "$root" || exit 2
BUILD=${BUILD:-build}
MPI_PARAMS=  # none: the suite runs steps of many tasks
SLURM_SRC=${SLURM_SRC:-$(sed -n 's/^SLURM_SRC = //p' config.mk 2>/dev/null)}
suite=$SLURM_SRC/testsuite/expect

TEST_NAME=slurm-suite
# shellcheck source=../cluster/lib.sh
. tests/cluster/lib.sh
TEST_NAME=slurm-suite

why=
if [ "$report_only" = 0 ]; then
	command -v expect >/dev/null || why="expect not installed (make deps)"
	[ -n "$SLURM_SRC" ] && [ -f "$suite/globals" ] ||
		why="no Slurm regression suite at '$suite' (SLURM_SRC in config.mk)"
fi
if [ -n "$why" ]; then
	echo "$TEST_NAME: skipped: $why"
	echo "$TEST_NAME: 0 passed, 0 failed"
	exit 0
fi
# A test the list names that this Slurm's suite lacks: an error for the
# installed Slurm, whose suite the lists were written from; for another
# Slurm (SLURM_PREFIX: 24.11 has converted a few to Python), left out with
# a note.
if [ "$report_only" = 0 ]; then
	kept=() absent=()
	for t in "${tests[@]}"; do
		if [ -f "$suite/$t" ]; then
			kept+=("$t")
		elif [ -n "${SLURM_PREFIX:-}" ]; then
			absent+=("$t")
		else
			bad "--list $list: '$t' is not a test of $suite"
		fi
	done
	[ ${#absent[@]} -eq 0 ] ||
		echo "$TEST_NAME: not in the suite of $suite, left out: ${absent[*]}"
	[ ${#kept[@]} -gt 0 ] || bad "--list $list: none of its tests is in $suite"
	tests=("${kept[@]}")
fi

keep_logs=1
if [ -z "$logs" ]; then
	logs=$(mktemp -d /tmp/tidal-slurm-suite.XXXXXX)
	keep_logs=0
fi
mkdir -p "$logs" || bad "--logs $logs: cannot create it"
logs=$(cd "$logs" && pwd)

# One scheduler's cluster up, with the suite copied beside it (the tests
# write their scratch files into their own directory).
suite_cluster_up() {
	local sched=$1
	if [ "$sched" = backfill ]; then
		SCHED_TYPE=sched/backfill SCHED_PARAMS= cluster_up "Policy=fifo"
	else
		SCHED_TYPE=sched/tidal cluster_up "Policy=$sched
CycleInterval=1"
	fi
	cp -r "$suite" "$T/expect"
	cat >"$T/testsuite.conf" <<CONF
SlurmSourceDir=$SLURM_SRC
SlurmBuildDir=$SLURM_SRC
SlurmInstallDir=${SLURM_PREFIX:-/usr}
SlurmConfigDir=$T/etc
CONF
	export SLURM_TESTSUITE_CONF=$T/testsuite.conf
}

# What a test may have left behind: jobs, reservations, drained nodes.
tidy_cluster() {
	local r
	scancel --full $(squeue -h -o %i 2>/dev/null) 2>/dev/null
	wait_for 30 no_jobs_active
	for r in $(scontrol -o show reservation 2>/dev/null | sed -n 's/^ReservationName=\([^ ]*\).*/\1/p'); do
		scontrol delete ReservationName="$r" >/dev/null 2>&1
	done
	scontrol update NodeName=n[1-4] State=RESUME >/dev/null 2>&1
	scontrol update PartitionName=gpu State=UP >/dev/null 2>&1
	wait_for 30 nodes_idle
}

# try_one SCHED TEST LOG: prints "pass|fail|skip|timeout SECONDS".
try_one() {
	local sched=$1 t=$2 out=$3 rc start status
	start=$(date +%s)
	(cd "$T/expect" && timeout -k 10 "$per_test" expect "$t") </dev/null >"$out" 2>&1
	rc=$?
	case $rc in
	0) status=pass ;;
	255) status=skip ;;
	124 | 137) status=timeout ;;
	*) status=fail ;;
	esac
	echo "$status $(($(date +%s) - start))"
}

# run_one SCHED TEST: prints "STATUS SECONDS".  A test that fails or times
# out is run once more (some of Slurm's expect tests type into a shell
# before it is ready, and lose the race on a loaded machine): if it passes
# or skips then, its status is "flaky" and the first try's output is kept
# in TEST.log.1.
run_one() {
	local sched=$1 t=$2 out st secs st2 secs2
	out=$logs/$sched/$t.log
	read -r st secs < <(try_one "$sched" "$t" "$out")
	if [[ $st == @(fail|timeout) ]]; then
		mv "$out" "$out.1"
		tidy_cluster
		read -r st2 secs2 < <(try_one "$sched" "$t" "$out")
		secs=$((secs + secs2))
		if [[ $st2 == @(pass|skip) ]]; then st=flaky; else st=$st2; fi
	fi
	echo "$st $secs"
}

[ "$report_only" = 1 ] || for sched in "${run_scheds[@]}"; do
	mkdir -p "$logs/$sched"
	# A rerun of some tests replaces their lines and keeps the others.
	touch "$logs/$sched.results"
	printf '%s\n' "${tests[@]}" |
		awk 'NR == FNR { rerun[$1] = 1; next } !($1 in rerun) && $1 != "total"' \
			- "$logs/$sched.results" >"$logs/$sched.results.kept"
	mv "$logs/$sched.results.kept" "$logs/$sched.results"
	FAILED=0 PASSED=0
	suite_cluster_up "$sched"
	echo "$TEST_NAME: $sched: ${#tests[@]} tests (output in $logs/$sched)"
	started=$(date +%s)
	i=0
	for t in "${tests[@]}"; do
		i=$((i + 1))
		read -r st s < <(run_one "$sched" "$t")
		echo "$t $st $s" >>"$logs/$sched.results"
		printf '%s: %s: [%d/%d] %-10s %-7s %4d s\n' "$TEST_NAME" "$sched" \
			"$i" "${#tests[@]}" "$t" "$st" "$s"
		tidy_cluster
	done
	echo "$TEST_NAME: $sched: $(($(date +%s) - started)) s in all"
	# Keep slurmctld's log beside the tests' for a look afterwards.
	cp "$T/log/slurmctld.log" "$logs/$sched/slurmctld.log" 2>/dev/null
	cluster_down
done
[ "$no_report" = 0 ] || exit 0

# Every scheduler with results in LOGS: backfill first, then those run
# now in their order, then any others.
columns=()
[ -f "$logs/backfill.results" ] && columns+=(backfill)
for s in "${run_scheds[@]}" $(cd "$logs" && ls -- *.results 2>/dev/null | sed 's/\.results$//'); do
	[ -f "$logs/$s.results" ] || continue
	[[ " ${columns[*]} " == *" $s "* ]] || columns+=("$s")
done
declare -A result secs_of
for s in "${columns[@]}"; do
	while read -r t st secs; do
		[ "$t" = total ] && continue # (older result files)
		result[$s,$t]=$st
		secs_of[$s,$t]=$secs
	done <"$logs/$s.results"
	secs_of[$s]=0
	for t in "${tests[@]}"; do
		secs_of[$s]=$((secs_of[$s] + ${secs_of[$s,$t]:-0}))
	done
done

# ---- the table
deliberate_why() { # deliberate_why TEST SCHED: prints the reason, if listed
	[ -r "$here/deliberate.list" ] || return 1
	awk -v t="$1" -v s="$2" '
		/^[[:space:]]*(#|$)/ { next }
		$1 == t && ($2 == s || $2 == "*") {
			$1 = ""; $2 = ""; sub(/^[[:space:]]+/, ""); print; found = 1; exit
		}
		END { exit !found }' "$here/deliberate.list"
}

echo
printf '%-12s' test
for s in "${columns[@]}"; do printf ' %-12s' "$s"; done
echo
for t in "${tests[@]}"; do
	printf '%-12s' "$t"
	for s in "${columns[@]}"; do
		if [ -n "${result[$s,$t]:-}" ]; then
			printf ' %-12s' "${result[$s,$t]} ${secs_of[$s,$t]}s"
		else
			printf ' %-12s' -
		fi
	done
	echo
done
echo
printf '%-12s' seconds
for s in "${columns[@]}"; do printf ' %-12s' "${secs_of[$s]:-?} s"; done
echo
for st in pass fail skip timeout flaky; do
	printf '%-12s' "$st"
	for s in "${columns[@]}"; do
		n=0
		for t in "${tests[@]}"; do [ "${result[$s,$t]:-}" = "$st" ] && n=$((n + 1)); done
		printf ' %-12s' "$n"
	done
	echo
done

echo
if [ "${columns[0]:-}" != backfill ]; then
	echo "$TEST_NAME: no backfill results in $logs: nothing to compare with"
	exit 1
fi
echo "differences from backfill:"
undeliberate=0 deliberate=0 other=0
for s in "${columns[@]:1}"; do
	for t in "${tests[@]}"; do
		b=${result[backfill,$t]:-} r=${result[$s,$t]:-}
		[ -n "$r" ] || r=missing
		[ "$b" = "$r" ] && continue
		# A skip under backfill may come after passed subtests (the
		# accounting part of a test, without slurmdbd): failing where
		# backfill passed or skipped is the difference that counts.
		if [[ $r == flaky ]]; then
			other=$((other + 1))
			echo "  $t $s: failed once, passed on the second try ($b under backfill): $logs/$s/$t.log.1"
			continue
		fi
		if [[ $b != @(pass|skip|flaky) ]] || [[ $r == @(pass|skip) ]]; then
			other=$((other + 1))
			# A skip where backfill passed is no failure, but the
			# test's checks did not run: say why, if it is known.
			if [ "$r" = skip ] && why=$(deliberate_why "$t" "$s"); then
				echo "  $t $s: $r (backfill: $b), deliberate: $why"
			else
				echo "  $t $s: $r (backfill: $b)"
			fi
			continue
		fi
		if why=$(deliberate_why "$t" "$s"); then
			deliberate=$((deliberate + 1))
			echo "  $t $s: $r, deliberate: $why"
		else
			undeliberate=$((undeliberate + 1))
			echo "  $t $s: $r, backfill passes it ($b): $logs/$s/$t.log"
		fi
	done
done
[ $((undeliberate + deliberate + other)) -gt 0 ] || echo "  none"
echo "$TEST_NAME: ${#tests[@]} tests x ${#columns[@]} schedulers;" \
	"$undeliberate differences not deliberate, $deliberate deliberate"
if [ "$undeliberate" -gt 0 ] || [ "$keep_logs" = 1 ]; then
	echo "$TEST_NAME: logs kept in $logs"
else
	rm -rf "$logs"
fi
echo "$TEST_NAME: $((${#tests[@]} * (${#columns[@]} - 1) - undeliberate)) passed, $undeliberate failed"
[ "$undeliberate" -eq 0 ]
