#!/bin/bash
# test_topology.sh - the switch tree sched/tidal reads from Slurm, on each
# Slurm version the same fabric model for the policies:
#
#   topology/tree   s1 (n1, n2) and s2 (n3, n4) under top: leaves s1, s2
#                   at level 0 under top, top at level 1 over all 4 nodes
#   topology/block  (Slurm 24.11 only: 22.05 has no such plugin) base
#                   blocks b1 (n1, n2) and b2 (n3, n4), BlockSizes=2,4:
#                   b1, b2 leaves under the aggregated block of all 4
#
# Each node's leaf is what tidalctl shows (Switch=), and a 2-node job is
# placed within one leaf when one has room: n1+n2 or n3+n4, never across.
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"

version=$(slurmctld -V 2>/dev/null | awk '{print $2}')
log_has() { grep -qF -- "$1" "$T/log/slurmctld.log"; }
leaf_of() { # leaf_of NODE: its Switch= in tidalctl show nodes
	"$TIDALCTL" -o show nodes 2>/dev/null |
		sed -n "s/^NodeName=$1 .*Switch=\([^ ]*\).*/\1/p"
}
leaf_is() { [ "$(leaf_of "$1")" = "$2" ]; }
# With n2 full, one leaf has room for a 2-node job: n3+n4 (n1 and n3,
# across the leaves, would do for GPUs too).  placement LEAF
placement() {
	local a b
	a=$(submit -w n2 -N1 --gpus-per-node=8 --wrap 'sleep 300')
	check "a job on n2 ($a) starts" wait_state 30 "$a" RUNNING
	b=$(submit -N2 --gpus-per-node=4 --wrap 'sleep 300')
	check "a 2-node job ($b) starts within one leaf ($1): n3+n4" \
		eval "wait_state 30 $b RUNNING && [ \"\$(job_nodes $b)\" = 'n[3-4]' ]"
	scancel "$a" "$b"
	wait_for 30 no_jobs_active
}

# fabric KIND TREE LEAF1 LEAF4: a cluster with TOPOLOGY_PLUGIN=topology/KIND,
# whose switch tree the plugin logs as TREE (grep -E), n1 on leaf LEAF1 and
# n4 on LEAF4; a 2-node job placed within LEAF4.
fabric() {
	cluster_up "Policy=fifo
CycleInterval=1"
	say "Slurm $version, topology/$1"
	check "$1: the plugin reads the switch tree Slurm has" \
		wait_for 10 grep -qE "switch tree of $2" "$T/log/slurmctld.log"
	check "$1: n1's leaf is $3" wait_for 10 leaf_is n1 "$3"
	check "$1: n4's leaf is $4" leaf_is n4 "$4"
	placement "$4"
}

fabric tree '3 switches: s1 \(level 0, 2 nodes, under top\), s2 \(level 0, 2 nodes, under top\), top \(level 1, 4 nodes, under none\)' s1 s2

case "$version" in
22.05.*)
	say "topology/block: not in Slurm $version, skipped"
	finish
	exit
	;;
esac

cluster_down
TOPOLOGY_PLUGIN=topology/block
TOPOLOGY_CONF="BlockName=b1 Nodes=n[1-2]
BlockName=b2 Nodes=n[3-4]
BlockSizes=2,4"
# The aggregated block's name is Slurm's own.
fabric block '3 switches: b1 \(level 0, 2 nodes, under ([^ ]+)\), b2 \(level 0, 2 nodes, under \1\), \1 \(level 1, 4 nodes, under none\)' b1 b2
finish
