#!/usr/bin/env bash
# tests/soak.sh [-r ROUNDS] [-f FIRST] [-o DIR] [--no-load] - every cluster
# script (22.05) and node script, round after round, with a build running
# beside them (a loaded machine, as CI's is), then a table of runs and
# failures per script.
# tests/soak.sh --table DIR - the table of the rounds DIR holds so far.
#
# Each round runs, one after another, what make check runs of them:
#   cluster  the cluster scripts but the "alone" ones, CLUSTER_JOBS (2) at
#            a time, in cluster.mk's order       -> DIR/rN.cluster.log
#   node     tests/node/test_*.sh                 -> DIR/rN.node.log
#   alone    the "# run-scripts: alone" scripts   -> DIR/rN.alone.log
# The build beside: a clone of this checkout's HEAD under DIR/load, built
# from clean again and again (make -j2 build/tidal-sim node, at normal
# priority) for as long as the rounds run; DIR/load.log has a line per
# build.  --no-load runs the rounds without it.  Touch DIR/stop to end
# after the round that is running.
#
# SOAK_CLUSTER, SOAK_NODE and SOAK_ALONE, where set, replace those lists
# (one flaky script ten times: SOAK_CLUSTER=tests/cluster/test_x.sh
# SOAK_NODE= SOAK_ALONE=); an empty list is left out.
#
# Needs what make check-cluster and check-node need, built (make all),
# and root.  A round of everything takes about 40 minutes on 2 cores.
#
# Exits 0 if no script failed in any round, 1 if one did, 2 on bad usage.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

# table DIR: one row per script: runs, failures, the rounds that failed.
table() {
	local f r t
	echo "| script | runs | failed | rounds that failed | checks a run |"
	echo "|---|---|---|---|---|"
	for f in "$1"/r*.cluster.log "$1"/r*.node.log "$1"/r*.alone.log; do
		[ -f "$f" ] || continue
		r=$(basename "$f"); r=${r%%.*}; r=${r#r}
		t=$(basename "$f" .log); t=${t#*.}; [ "$t" = alone ] && t=cluster
		grep -hE '^(test_[a-z0-9_]+\| )?test_[a-z0-9_]+: [0-9]+ passed, [0-9]+ failed$' "$f" |
			sed -E 's/^test_[a-z0-9_]+\| //' |
			awk -v r="$r" -v t="$t" '{ n = $1; sub(":", "", n); print t "/" n, r, $2, $4 }'
	done | awk '
		{ runs[$1]++; checks[$1] += $3 + $4
		  if ($4 > 0) { fails[$1]++; which[$1] = which[$1] (which[$1] == "" ? "" : ", ") $2 } }
		END { for (s in runs)
			printf "| %s | %d | %d | %s | %s |\n", s, runs[s], fails[s] + 0, which[s],
			       checks[s] == 0 ? "none (skipped)" : sprintf("%.0f", checks[s] / runs[s]) }' |
		sort
}

rounds=10 first=1 dir= load=1
while [ $# -gt 0 ]; do
	case $1 in -r | -f | -o | --table)
		[ $# -ge 2 ] || { echo "soak.sh: $1 wants a value" >&2; exit 2; } ;;
	esac
	case $1 in
	-r) rounds=${2:-}; shift 2 ;;
	-f) first=${2:-}; shift 2 ;;
	-o) dir=${2:-}; shift 2 ;;
	--no-load) load=0; shift ;;
	--table) [ -d "${2:-}" ] || { echo "soak.sh: --table '${2:-}': not a directory" >&2; exit 2; }
		table "$2"; exit 0 ;;
	*) echo "usage: tests/soak.sh [-r ROUNDS] [-f FIRST] [-o DIR] [--no-load] | --table DIR" >&2; exit 2 ;;
	esac
done
for v in "$rounds" "$first"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] ||
		{ echo "soak.sh: -r and -f take a round number from 1 up, not '$v'" >&2; exit 2; }
done
[ -n "$dir" ] || dir=$(mktemp -d /tmp/tidal-soak.XXXXXX)
mkdir -p "$dir" || exit 1
dir=$(cd "$dir" && pwd)
cd "$here" || exit 1
BUILD=${BUILD:-build}
for b in sched_tidal.so tidald tidal-launch tidal-train tidal-sim; do
	[ -e "$BUILD/$b" ] || { echo "soak.sh: $BUILD/$b is not built (make all)" >&2; exit 1; }
done
rm -f "$dir/stop"

cluster=$(make -s --no-print-directory -f - x <<'MK'
include tests/cluster/cluster.mk
x: ; @echo $(filter-out $(CLUSTER_ALONE),$(CLUSTER_SCRIPTS))
MK
)
alone=$(grep -l '^# run-scripts: alone$' tests/cluster/test_*.sh)
node=$(ls tests/node/test_*.sh)
cluster=${SOAK_CLUSTER-$cluster} node=${SOAK_NODE-$node} alone=${SOAK_ALONE-$alone}

loader=
if [ $load = 1 ]; then
	rm -rf "$dir/load"
	git clone -q "$here" "$dir/load" || exit 1
	set -m # its own process group: the build's compilers end with it
	(
		n=0
		cd "$dir/load" || exit 1
		while [ ! -f "$dir/stop" ]; do
			rm -rf build
			s=$(date +%s)
			make -j2 build/tidal-sim node >/dev/null 2>&1
			rc=$?
			n=$((n + 1))
			echo "build $n rc $rc $(( $(date +%s) - s )) s, ended $(date +%T)" >>"$dir/load.log"
		done
	) &
	loader=$!
	set +m
	trap 'touch "$dir/stop"; kill -- -$loader 2>/dev/null' EXIT
	echo "soak: a build beside, in $dir/load (log $dir/load.log)"
fi

for r in $(seq "$first" $((first + rounds - 1))); do
	[ -f "$dir/stop" ] && { echo "soak: stopped before round $r ($dir/stop)"; break; }
	echo "soak: round $r started $(date +%T)"
	if [ -n "$cluster" ]; then
		BUILD=$BUILD tests/run-scripts.sh -j "${CLUSTER_JOBS:-2}" check-cluster $cluster >"$dir/r$r.cluster.log" 2>&1
		echo "soak: round $r cluster rc $? $(date +%T)"
	fi
	if [ -n "$node" ]; then
		BUILD=$BUILD tests/run-scripts.sh check-node $node >"$dir/r$r.node.log" 2>&1
		echo "soak: round $r node rc $? $(date +%T)"
	fi
	if [ -n "$alone" ]; then
		BUILD=$BUILD tests/run-scripts.sh check-cluster-alone $alone >"$dir/r$r.alone.log" 2>&1
		echo "soak: round $r alone rc $? $(date +%T)"
	fi
done
touch "$dir/stop"
table "$dir"
! table "$dir" | awk -F'|' 'NR > 2 && $4 + 0 > 0' | grep -q .
