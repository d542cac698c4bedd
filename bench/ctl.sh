#!/usr/bin/env bash
# bench/ctl.sh BUILD - `make bench`: how long tidalctl waits for sched/tidal
# while node agents heart-beat and other clients ask at the same time.
#
# A fresh private cluster (tests/cluster/lib.sh: 4 nodes, Policy=tiresias)
# with AGENTS real tidald processes heart-beating every second (named a1,
# a2, ...: the plugin takes any node name), 20 pending and running jobs,
# and then, for each phase, CLIENTS tidalctl processes in parallel, each
# running `tidalctl show jobs` CALLS times in a row:
#
#   quiet      only the clients and the agents
#   stalled    the same while SLOW connections to the port stay open and
#              send nothing (a client that hangs, a port scan): a server
#              that serves one connection at a time makes every request
#              behind one of them wait for its read timeout
#
# The table gives each phase's tidalctl wall time (process start, MUNGE
# credential and the answer) p50 / p99 / max over all calls, the calls
# that failed, and the agents' heartbeats that failed meanwhile (their
# "heartbeat to ... failed" lines).
#
#   BENCH_CTL_AGENTS=N    tidald processes (default 64)
#   BENCH_CTL_CLIENTS=N   parallel tidalctl loops (default 10)
#   BENCH_CTL_CALLS=N     calls per loop (default 30)
#   BENCH_CTL_SLOW=N      idle connections in the stalled phase (default 2)
#
# Needs root, Slurm, munge and the plugin, like the cluster tests; without
# them it says what is missing and prints nothing else.  Nothing here
# passes or fails.
#
# GPL-2.0-or-later.
set -uo pipefail

BUILD=${1:-build}
AGENTS=${BENCH_CTL_AGENTS:-64}
CLIENTS=${BENCH_CTL_CLIENTS:-10}
CALLS=${BENCH_CTL_CALLS:-30}
SLOW=${BENCH_CTL_SLOW:-2}

NAME=bench/ctl.sh
. "$(dirname "$0")/cluster_bench.sh"
whole_numbers BENCH_CTL_ AGENTS CLIENTS CALLS SLOW
runnable "$BUILD" slurmctld slurmd munged sbatch python3 -- \
	sched_tidal.so tidald tidalctl

registered() { cat "$T"/log/tidald-a*.log 2>/dev/null | grep -c "registered with sched/tidal"; }
hb_failed() { cat "$T"/log/tidald-a*.log 2>/dev/null | grep -c "heartbeat to .* failed"; }

client() { # client K: CALLS timed calls, one "MS RC" line each
	local i t0 t1 rc
	for ((i = 0; i < CALLS; i++)); do
		t0=$(now_ms)
		"$BUILD_ABS/tidalctl" show jobs >/dev/null 2>&1
		rc=$?
		t1=$(now_ms)
		echo "$((t1 - t0)) $rc"
	done >"$T/client-$1.out"
}

# Idle connections to the tidalctl port: open, send nothing, until STOP.
slow() {
	python3 - "$PORT_TIDALCTL" "$1" "$2" <<'EOF'
import os, socket, sys, time
port, n, stop = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
socks = []
while not os.path.exists(stop):
    # Reopened as the server drops them, so that N stay open.
    socks = [s for s in socks if s.fileno() >= 0]
    while len(socks) < n:
        s = socket.create_connection(("127.0.0.1", port))
        s.setblocking(False)
        socks.append(s)
    for s in list(socks):
        try:
            if s.recv(4096) == b"":
                s.close(); socks.remove(s)
        except BlockingIOError:
            pass
        except OSError:
            s.close(); socks.remove(s)
    time.sleep(0.05)
EOF
}

phase() { # phase NAME SLOW_CONNECTIONS
	local name=$1 k spid= fails hb0
	hb0=$(hb_failed)
	rm -f "$T"/client-*.out "$T/slow.stop"
	if [ "$2" -gt 0 ]; then
		slow "$2" "$T/slow.stop" & spid=$!
		sleep 1
	fi
	for ((k = 0; k < CLIENTS; k++)); do client "$k" & done
	wait $(jobs -p | grep -vx "${spid:-x}")
	[ -n "$spid" ] && { touch "$T/slow.stop"; wait "$spid"; }
	cat "$T"/client-*.out | awk '{ print $1 }' >"$T/lat-$name"
	fails=$(cat "$T"/client-*.out | awk '$2 != 0' | wc -l)
	printf '  %-9s %5d %6d %5d   %-22s %d\n' "$name" "$2" "$(wc -l <"$T/lat-$name")" \
		"$fails" "$(three "$T/lat-$name")" $(($(hb_failed) - hb0)) >>"$RESULTS"
}

RESULTS=$(mktemp "${TMPDIR:-/tmp}/tidal-ctl.XXXXXX")
cluster_up "Policy=tiresias"
for ((i = 1; i <= AGENTS; i++)); do start_tidald "a$i"; done
wait_for 60 eval '[ "$(registered)" -ge "$AGENTS" ]' ||
	say "only $(registered) of $AGENTS agents registered"
for i in $(seq 20); do submit -N1 --gpus=4 --wrap 'sleep 600' >/dev/null; done
sleep 3
{
	echo
	echo "== bench/ctl.sh: tidalctl latency, $BUILD"
	echo "machine: $(machine_line); $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "load:    $AGENTS tidald heart-beating every 1 s ($(registered) registered)," \
	     "$CLIENTS parallel clients x $CALLS calls of 'tidalctl show jobs'"
	printf '  %-9s %5s %6s %5s   %-22s %s\n' phase idle calls fails "ms p50 / p99 / max" "heartbeats failed"
} >"$RESULTS.head"
: >"$RESULTS"
say "$AGENTS agents up; quiet phase"
phase quiet 0
say "stalled phase ($SLOW idle connections)"
phase stalled "$SLOW"
for ((i = 1; i <= AGENTS; i++)); do kill_pidfile "$T/run/tidald-a$i.pid"; done
cluster_down
echo
cat "$RESULTS.head" "$RESULTS"
rm -f "$RESULTS" "$RESULTS.head"
