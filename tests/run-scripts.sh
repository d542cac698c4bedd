#!/usr/bin/env bash
# tests/run-scripts.sh [-j N] TIER SCRIPT... - run a tier's test scripts,
# every one of them even after one fails, then one closing line with the
# checks of all of them added up and the scripts that failed.
#
# -j N runs N scripts at a time (default 1): N workers take the scripts in
# the order given, each the next one when its last ends, so that the
# slowest scripts should come first.  Scripts that each start their own
# loopback cluster (tests/cluster/lib.sh: own ports and directory) spend
# most of their time waiting on it, so two at a time take little more
# than one.  With N > 1 every line a script writes comes prefixed with
# its name ("test_arrays| ok   - ..."), as it is written.
#
# A script fails if it exits non-zero; its own closing line ("NAME: N
# passed, M failed", see tests/cluster/lib.sh) gives the counts.  A script
# that failed without saying how many checks it failed counts as one.
# Each script's wall time follows its closing line ("took N s"), and the
# slowest scripts are listed at the end, so that a tier that grows towards
# CI's time limit shows where its time goes.
#
# A script whose header has the line "# run-scripts: alone" measures
# timing against a model (a live replay beside tidal-sim's, paced
# trainers beside Muri's group time): it runs with
# no other script of any tier running on this machine (make check runs
# the two cluster tiers side by side, four loopback clusters on CI's two
# cores).  Every other script holds a shared lock on QUIET_LOCK
# (default /tmp/tidal-check-quiet.lock) while it runs, such a script an
# exclusive one; a turnstile lock beside it lets a waiting "alone" script
# in before the scripts that come after it.
# A script that ends well without one check (it said "skipped") is named
# in a line of its own.  Exits non-zero if any script failed; 2 on bad
# usage.
set -uo pipefail
jobs=1
if [ "${1:-}" = -j ]; then
	case ${2:-} in
	[1-9] | [1-9][0-9]) jobs=$2 ;;
	*) echo "run-scripts.sh: -j '${2:-}': the number of scripts at a time is a whole number from 1 to 99" >&2
	   exit 2 ;;
	esac
	shift 2
fi
[ $# -ge 1 ] || { echo "usage: tests/run-scripts.sh [-j N] TIER SCRIPT..." >&2; exit 2; }
tier=$1; shift
scripts=()
for t in "$@"; do [ -f "$t" ] && scripts+=("$t"); done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo 0 >"$dir/next"
tier_start=$(date +%s)
quiet=${QUIET_LOCK:-/tmp/tidal-check-quiet.lock}

# locked SCRIPT: runs SCRIPT under the quiet lock, exclusive for an
# "alone" script, shared for any other (flock -o: the script and the
# daemons it starts do not hold the lock themselves).
locked() {
	if grep -q '^# run-scripts: alone$' "$1"; then
		flock -o "$quiet.turn" flock -o "$quiet" bash "$1"
	else
		flock "$quiet.turn" true
		flock -s -o "$quiet" bash "$1"
	fi
}

# run_script I: runs the Ith script, writes its result to $dir/result.I
# ("RC SECONDS PASSED FAILED").
run_script() {
	local t=${scripts[$1]} name log start rc secs counts p f
	name=$(basename "$t" .sh)
	log=$dir/log.$1
	start=$(date +%s)
	if [ "$jobs" -eq 1 ]; then
		locked "$t" 2>&1 | tee "$log"
		rc=${PIPESTATUS[0]}
	else
		locked "$t" 2>&1 | tee "$log" | sed -u "s/^/$name| /"
		rc=${PIPESTATUS[0]}
	fi
	secs=$(( $(date +%s) - start ))
	echo "$tier: $name took $secs s"
	counts=$(grep -E '^[A-Za-z0-9_.-]+: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	p=$(sed -E 's/.*: ([0-9]+) passed.*/\1/' <<<"$counts")
	f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$counts")
	echo "$rc $secs ${p:-0} ${f:-0}" >"$dir/result.$1"
}

# worker: runs the next script not yet taken until none is left.
worker() {
	local i
	while :; do
		i=$(flock "$dir/next" sh -c 'i=$(cat "$1"); echo $((i + 1)) >"$1"; echo "$i"' _ "$dir/next")
		[ "$i" -lt ${#scripts[@]} ] || return 0
		run_script "$i"
	done
}

if [ "$jobs" -eq 1 ]; then
	worker
else
	for _ in $(seq "$jobs"); do worker & done
	wait
fi

pass=0 fail=0 failed=() skipped=() times=()
for i in "${!scripts[@]}"; do
	name=$(basename "${scripts[$i]}" .sh)
	if [ -f "$dir/result.$i" ]; then
		read -r rc secs p f <"$dir/result.$i"
	else
		rc=1 secs=0 p=0 f=0
	fi
	times+=("$secs $name")
	pass=$((pass + p))
	fail=$((fail + f))
	if [ "$rc" -ne 0 ]; then
		failed+=("$(basename "${scripts[$i]}") (exit $rc)")
		[ "$f" -gt 0 ] || fail=$((fail + 1))
	elif [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		skipped+=("$(basename "${scripts[$i]}")")
	fi
done
[ ${#failed[@]} -eq 0 ] || echo "$tier: failed scripts: ${failed[*]}"
# A script that ends well without a check (it found something missing
# and said "skipped") is no pass: named, so that a tier that checked
# nothing does not read as one that checked everything.
[ ${#skipped[@]} -eq 0 ] || echo "$tier: scripts that ran no check: ${skipped[*]}"
if [ ${#times[@]} -gt 1 ]; then
	echo "$tier: slowest: $(printf '%s\n' "${times[@]}" | sort -rn | head -n 5 |
		awk '{printf "%s%s %d s", (NR > 1 ? ", " : ""), $2, $1}')"
fi
at=
[ "$jobs" -eq 1 ] || at=", $jobs scripts at a time"
echo "$tier: $pass passed, $fail failed in $(( $(date +%s) - tier_start )) s$at"
[ ${#failed[@]} -eq 0 ]
