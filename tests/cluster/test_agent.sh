#!/bin/bash
# test_agent.sh - tidald on every node of a live cluster:
#
#   tidald -N n1..n4       register with sched/tidal (MUNGE, the ctl port);
#                          tidalctl show nodes: Agent=UP, heartbeat age,
#                          checkpoint space; n1 (from a DGX-like hwloc XML)
#                          its GPUs, NUMA nodes and HCAs
#   kill -9 tidald n2      Agent=DOWN after 3 heartbeats; restarted, it
#                          registers again and is UP
#   tidalctl check         every check ok; n3's checkpoint directory gone,
#                          n4's tidald killed, a plugstack.conf without
#                          spank_tidal.so: each fails, naming what
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

# tidalctl check: the preflight, its lines and exit status.
ctl_check() { "$TIDALCTL" check "$@" >"$T/out/check.txt" 2>&1; }
check_line() { grep -Eq "^$1 +$2 " "$T/out/check.txt"; }
check "tidalctl check: exit 0 with all 4 agents up" ctl_check
cat "$T/out/check.txt" | sed 's/^/   /'
check "... config, plugin, slurm, spank, agents and ckpt all ok" \
	eval 'for w in config plugin slurm spank agents ckpt; do check_line $w ok || exit 1; done'
check "... the Slurm version it was built for is slurmctld's" \
	grep -Eq "^slurm +ok +built for Slurm $(scontrol --version | awk '{print $2}'); slurmctld runs" "$T/out/check.txt"
check "... 4 of 4 GPU nodes have their tidald UP" grep -q "4 of 4 GPU nodes have their tidald UP" "$T/out/check.txt"
check "tidalctl check --min-free 1P: a warning, exit 0" \
	eval 'ctl_check --min-free 1P && check_line ckpt WARN'
check "tidalctl check --min-free 12Q: usage error, exit 2" \
	eval '"$TIDALCTL" check --min-free 12Q 2>/dev/null; [ $? -eq 2 ]'
mv "$T/ckpt/n3" "$T/ckpt/n3.away"
ckpt_fails() { ! ctl_check && check_line ckpt FAIL && grep -q "n3: no (.*ckpt/n3: No such file or directory)" "$T/out/check.txt"; }
check "n3's checkpoint directory gone: tidalctl check fails and says why" wait_for 10 ckpt_fails
grep "^ckpt" "$T/out/check.txt" | sed 's/^/   /'
mv "$T/ckpt/n3.away" "$T/ckpt/n3"
kill -9 "${APID[n4]}"
agents_fail() { ! ctl_check && check_line agents FAIL && grep -q "3 of 4 GPU nodes have their tidald UP; not: n4 (DOWN)" "$T/out/check.txt"; }
check "tidald n4 killed: tidalctl check fails naming n4" wait_for 15 agents_fail
start_tidald n4
check "n4 back: tidalctl check passes again" wait_for 15 ctl_check
# sbatch reads the plugstack.conf of the slurm.conf it is given.
sed "s|^PlugStackConfig=.*|PlugStackConfig=$T/etc/empty-plugstack.conf|" "$T/etc/slurm.conf" >"$T/etc/nospank.conf"
: >"$T/etc/empty-plugstack.conf"
spank_fails() {
	! SLURM_CONF="$T/etc/nospank.conf" "$TIDALCTL" check >"$T/out/check2.txt" 2>&1 &&
		grep -Eq "^spank +FAIL .*lacks --elastic-gpus" "$T/out/check2.txt"
}
check "a plugstack.conf without spank_tidal.so: the spank check fails" spank_fails
grep "^spank" "$T/out/check2.txt" | sed 's/^/   /'

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
