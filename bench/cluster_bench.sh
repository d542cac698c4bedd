# bench/cluster_bench.sh - what the loopback-cluster benchmarks share
# (bench/ctl.sh, bench/load.sh): their checks before starting, and the
# numbers they print.  Sourced, with NAME (the script, for messages) set.
#
# GPL-2.0-or-later.

# whole_numbers PREFIX VAR...: each VAR (set from PREFIX$VAR) must be a
# whole number; exit 2 naming the first that is not.
whole_numbers() {
	local prefix=$1 v; shift
	for v in "$@"; do
		[[ ${!v} =~ ^[0-9]+$ ]] || {
			echo "$NAME: $prefix$v=${!v}: must be a whole number" >&2
			exit 2
		}
	done
}

# runnable BUILD COMMAND... -- FILE...: exit 0 with a line saying why
# unless root, every COMMAND installed and every FILE built in BUILD;
# then source tests/cluster/lib.sh.
runnable() {
	local build=$1 c; shift
	if [ "$(id -u)" -ne 0 ]; then
		echo "$NAME: skipped: not root (the loopback Slurm cluster needs it)"
		exit 0
	fi
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		command -v "$1" >/dev/null 2>&1 ||
			{ echo "$NAME: skipped: $1 not installed"; exit 0; }
		shift
	done
	[ $# -gt 0 ] && shift
	for c in "$@"; do
		[ -e "$build/$c" ] ||
			{ echo "$NAME: skipped: $build/$c not built"; exit 0; }
	done
	BUILD_ABS=$(cd "$build" && pwd)
	. "$(dirname "${BASH_SOURCE[0]}")/../tests/cluster/lib.sh"
}

now_ms() { date +%s%3N; }

# machine_line: "CPU model, N cores, M GiB", for the tables' machine line.
machine_line() {
	local cpu
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	echo "${cpu:-unknown CPU}, $(nproc) cores," \
	     "$(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
}

# pct P: the P-th percentile (nearest rank) of the numbers on stdin.
pct() { sort -g | awk -v p="$1" '{ v[NR] = $1 } END {
	if (!NR) { print "?"; exit }
	i = int(NR * p / 100 + 0.999999); if (i < 1) i = 1; if (i > NR) i = NR
	print v[i] }'; }
three() { # three FILE: p50 / p99 / max of FILE's numbers
	printf '%s / %s / %s' "$(pct 50 <"$1")" "$(pct 99 <"$1")" "$(pct 100 <"$1")"
}
