#!/bin/bash
# test_agent.sh - tidald on every node of a live cluster:
#
#   tidald -N n1..n4       register with sched/tidal (MUNGE, the ctl port);
#                          tidalctl show nodes: Agent=UP, heartbeat age,
#                          checkpoint space; n1 (from a DGX-like hwloc XML)
#                          its GPUs, NUMA nodes and HCAs
#   kill -9 tidald n2      Agent=DOWN after 3 heartbeats; restarted, it
#                          registers again and is UP
#   kill -9 slurmctld      the restarted plugin knows no agent: each one's
#                          next heartbeat is refused and it registers again
#   a non-root tidald      its node_register is refused with a clear error
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
cluster_up "Policy=fifo
CycleInterval=1"
TIDALD="$BUILD_ABS/tidald"
[ -x "$TIDALD" ] || { fail "tidald not built"; finish; exit; }

declare -A APID
start_tidald() { # start_tidald NODE [ARGS]: in the background, logging to $T/log
	local n=$1; shift
	"$TIDALD" -D -N "$n" --listen 127.0.0.1:0 --run-dir "$T/tidal-run" \
		--ckpt-dir "$T/ckpt/$n" --heartbeat 1 "$@" >>"$T/log/tidald-$n.log" 2>&1 &
	APID[$n]=$!
	disown
}
agent_is() { # agent_is NODE UP|DOWN
	"$TIDALCTL" -o show nodes 2>/dev/null | grep -q "^NodeName=$1 .*Agent=$2 "
}
all_up() { for n in $NODES; do agent_is "$n" UP || return 1; done; }

# n1 describes itself from the DGX-like hwloc XML (8 GPUs, 2 NUMA nodes,
# HCAs), the others from this machine.
DGX=$(cd "$(dirname "$0")/../node/data" && pwd)/dgx-8gpu.xml
start_tidald n1 --topology-xml "$DGX"
for n in n2 n3 n4; do start_tidald "$n"; done
check "4 agents register and show as UP" wait_for 30 all_up
out=$("$TIDALCTL" -o show nodes); echo "$out"
check "show nodes: heartbeat age and checkpoint space per node" \
	test "$(grep -cE 'HeartbeatAge=[0-9]+s CkptFree=[0-9.]+[KMGTP] ' <<<"$out")" -eq 4
check "show nodes: n1's topology from its agent (8 GPUs, their NUMA nodes, HCAs)" \
	grep -Eq "^NodeName=n1 .*HCAs=mlx5_0,mlx5_1,[^ ]* TopoGPUs=8 NUMA=2 \(GPU:NUMA 0,0,0,0,1,1,1,1\)" <<<"$out"
check "slurmctld logs each registration" \
	test "$(grep -c 'sched/tidal: agent n[1-4] registered (tidald' "$T/log/slurmctld.log")" -eq 4

kill -9 "${APID[n2]}"
check "tidald n2 killed -9: Agent=DOWN within 3 heartbeats" wait_for 15 agent_is n2 DOWN
start_tidald n2
check "restarted, n2 registers again: UP" wait_for 15 agent_is n2 UP
check "the plugin saw it come back" \
	grep -q "agent n2 registered (again" "$T/log/slurmctld.log"

pid=$(cat "$T/run/slurmctld.pid")
kill -9 "$pid"
say "kill -9 slurmctld ($pid)"
sleep 1
start_slurmctld || { fail "slurmctld did not restart"; finish; exit; }
check "after a slurmctld restart all 4 agents register again" wait_for 40 all_up
check "... because the plugin told them to" \
	grep -q "does not know this node .*registering again" "$T/log/tidald-n1.log"

mkdir -p "$T/nobody-run" "$T/nobody-ckpt"
chown nobody "$T/nobody-run" "$T/nobody-ckpt"
runuser -u nobody -- "$TIDALD" -D -N n9 --listen 127.0.0.1:0 \
	--run-dir "$T/nobody-run" --ckpt-dir "$T/nobody-ckpt" --heartbeat 1 \
	>"$T/log/tidald-nobody.log" 2>&1 &
nb=$!
disown
check "a non-root client's node_register is refused" \
	wait_for 10 grep -q "node_register is for node agents: it needs root or SlurmUser" \
	"$T/log/tidald-nobody.log"
kill "$nb" 2>/dev/null
check "and the plugin never registered n9" bash -c "! grep -q 'agent n9 registered' '$T/log/slurmctld.log'"
grep . "$T/log/tidald-nobody.log" | head -3 | sed 's/^/   /'
finish
