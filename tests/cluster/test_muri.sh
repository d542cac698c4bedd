#!/bin/bash
# test_muri.sh - Muri in a live slurmctld: jobs interleaved on the same
# GPUs, held through gres/shard so that Slurm's own view stays true.
#
# 2 nodes x 2 GPUs, 4 shards each (GresTypes=gpu,shard).  Eight 1-GPU jobs,
# four data-heavy (model io) and four compute-heavy (model gpu), stage
# times from Muri.Profiles: twice the GPUs the cluster has, so muri-s
# pairs them, each io job with a gpu job, and all eight run at once.
#
#   every GPU is held by two jobs: scontrol show job -d says shard:1(IDX:g)
#     for both (22.05; 24.11 shard:1(1/4,0/4)), and every pair is one io
#     and one gpu job
#   kill -9 slurmctld and start it again: every job keeps its shard, the
#     plugin the requests it made shards of
#   tidalctl explain names the partner and the group's iteration time,
#     show job SharesGPUsWith=, show nodes counts a shared GPU once
#   one member cancelled (and the jobs of the other GPU of its node): its
#     partner runs on with its shard
#   a whole-GPU job asking for both GPUs of that node waits (one is free,
#     one shared: Slurm 22.05 alone would hand it out) and gets them whole
#     once the partner ends
#   all gone: no shard and no GPU held anywhere
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
NODES="n1 n2"
GPUS_PER_NODE=2
SHARDS_PER_GPU=4
profile=$(mktemp /tmp/tidal-muri-stages.XXXXXX)
cat >"$profile" <<'EOF'
model,data,compute,comm
io,0.30,0.05,0.05
gpu,0.05,0.30,0.05
EOF
cleanup_profile() { rm -f "$profile"; }
cluster_up "Policy=muri-s
CycleInterval=1
Muri.Profiles=$profile"
trap 'cluster_down; cleanup_profile' EXIT

# Slurm's view, per job: "NODE:GPU" for every GPU whose shard it holds.
# 22.05 says GRES=shard:1(IDX:g); 24.11 GRES=shard:1(0/4,1/4), the job's
# shards over each GPU's.
shard_gpus() {
	scontrol show job -d "$1" 2>/dev/null | awk '
	/Nodes=.*GRES=shard:[0-9]*\(/ {
		match($0, /Nodes=[^ ]*/); node = substr($0, RSTART + 6, RLENGTH - 6)
		match($0, /GRES=shard:[0-9]*\([^)]*\)/); g = substr($0, RSTART, RLENGTH)
		sub(/^[^(]*\(/, "", g); sub(/\)$/, "", g)
		if (sub(/^IDX:/, "", g)) { print node ":" g; next }
		n = split(g, p, ","); out = ""
		for (i = 1; i <= n; i++) {
			split(p[i], q, "/")
			if (q[1] > 0) out = out (out == "" ? "" : ",") (i - 1)
		}
		print node ":" out
	}'
}
whole_gpus() {
	scontrol show job -d "$1" 2>/dev/null |
		sed -n 's/.*Nodes=\([^ ]*\) .*GRES=gpu[^(]*(IDX:\([0-9,-]*\)).*/\1:\2/p'
}
running_count() { squeue -h -t R -o %i | wc -l; }
at_least_running() { [ "$(running_count)" -ge "$1" ]; }

ids=()
kind=()
# One begin time for all: they become eligible in the same second and are
# grouped in one cycle (jobs that arrive one by one join the groups running
# then: a running group is not regrouped).
begin=$(date -d '+20 sec' +%Y-%m-%dT%H:%M:%S)
for m in io gpu io gpu io gpu io gpu; do
	ids+=("$(submit --begin="$begin" --gpus=1 -t 10 --train-model=$m --wrap 'sleep 300')")
	kind+=("$m")
done
check "all eight 1-GPU jobs run at once on 4 GPUs" wait_for 60 at_least_running 8
show_queue

declare -A holders
for i in "${!ids[@]}"; do
	g=$(shard_gpus "${ids[$i]}")
	[ -n "$g" ] || g="none"
	holders[$g]+="${kind[$i]}:${ids[$i]} "
done
for g in "${!holders[@]}"; do say "GPU $g held by ${holders[$g]}"; done
pairs_ok() {
	local g n
	[ "${#holders[@]}" -eq 4 ] || return 1
	for g in "${!holders[@]}"; do
		[ "$g" != none ] || return 1
		n=$(echo "${holders[$g]}" | wc -w)
		[ "$n" -eq 2 ] || return 1
		echo "${holders[$g]}" | grep -q "io:" || return 1
		echo "${holders[$g]}" | grep -q "gpu:" || return 1
	done
}
check "each of the 4 GPUs is held by two jobs, an io and a gpu job (shard:1 each)" pairs_ok

# kill -9 slurmctld while grouped: Slurm's own state keeps every shard,
# the plugin's keeps which requests it changed; nothing moves.
before=$(for j in "${ids[@]}"; do echo "$j $(shard_gpus "$j")"; done)
sleep 6 # slurmctld's own state save comes within 5 s of a change
restart_slurmctld_hard || { say "slurmctld did not restart"; dump_logs; exit 1; }
check "slurmctld answers again" wait_for 60 scontrol ping
check "the plugin restored its state" \
	wait_for 30 grep -q "state restored from $T/state/tidal_state" "$T/log/slurmctld.log"
check "it remembers the eight requests it made shards of" \
	test "$(grep -c '^sharded ' "$T/state/tidal_state")" -eq 8
sleep 4 # cycles of the restarted plugin
after=$(for j in "${ids[@]}"; do echo "$j $(shard_gpus "$j")"; done)
check "after the restart every job runs on, with the shard it had" \
	test "$before" = "$after" -a "$(running_count)" -eq 8
[ "$before" = "$after" ] || {
	diff <(echo "$before") <(echo "$after")
	grep -E "sched/tidal: .*(preempt|requeue|started|Preempt)" "$T/log/slurmctld.log" | tail -20
}

# Until the nodes register their shards again (slurmd answers the new
# slurmctld's ping), muri waits, keeping every job as it is.
a=${ids[0]}
names_partner() {
	"$TIDALCTL" explain "$1" 2>&1 |
		grep -q "Reason=interleaved with job [0-9]* ([0-9.]* s per iteration)"
}
check "tidalctl explain $a names its partner and the group's iteration time" \
	wait_for 90 names_partner "$a"
"$TIDALCTL" explain "$a" 2>&1 | sed 's/^/    /'
say "shard counts the plugin set right after the restart: $(grep -c 'Slurm counted' "$T/log/slurmctld.log")"
grep 'Slurm counted' "$T/log/slurmctld.log" | head -4 | sed 's/^/    /'

ga=$(shard_gpus "$a")
node=${ga%%:*}
partner="" others=()
for i in "${!ids[@]}"; do
	j=${ids[$i]} g=$(shard_gpus "${ids[$i]}")
	[ "$j" = "$a" ] && continue
	if [ "$g" = "$ga" ]; then partner=$j
	elif [ "${g%%:*}" = "$node" ]; then others+=("$j")
	fi
done
check "tidalctl show job $a: SharesGPUsWith=$partner" \
	eval '"$TIDALCTL" -o show job "$a" | grep -q "SharesGPUsWith=$partner\b"'
"$TIDALCTL" show nodes | sed 's/^/    /'
check "tidalctl show nodes counts each shared GPU once: 2 of 2 held, 0 free on each node" \
	test "$("$TIDALCTL" -o show nodes | grep -c 'AllocGPUs=2 .*FreeGPUs=0')" -eq 2

# On node $node: GPU $ga keeps one of its two jobs, the other GPU none.
say "cancelling $a (on $ga) and ${others[*]} (the other GPU of $node); $partner stays"
scancel "$a" "${others[@]}"
sleep 4
check "with $a cancelled, its partner $partner runs on" is_state "$partner" RUNNING
check "its partner still holds a shard of $ga" test "$(shard_gpus "$partner")" = "$ga"

# One GPU of $node is free, the other has a shard taken: a job asking for
# both whole must wait (Slurm 22.05 alone would hand it the shared GPU).
w=$(submit -w "$node" --gpus=2 -t 10 --wrap 'sleep 300')
sleep 5
check "a whole-GPU job ($w, 2 GPUs on $node) waits: $ga is shared, not free" is_state "$w" PENDING
check "its Reason says the GPUs are taken" reason_has "$w" "TidalHold: .*taken"
no_whole_on() { # no_whole_on NODE:GPU: no job holds that GPU whole
	local j node=${1%%:*} gpu=${1#*:}
	for j in $(squeue -h -t R -o %i); do
		case ",$(whole_gpus "$j" | sed -n "s/^$node://p")," in
		*",$gpu,"* | *",$gpu-"* | *"-$gpu,"*) return 1 ;;
		esac
	done
}
check "no job holds $ga whole while $partner has a shard of it" no_whole_on "$ga"
show_queue
scancel "$partner"
check "with $partner gone too, $w gets both GPUs of $node whole" wait_state 30 "$w" RUNNING
scontrol show job -d "$w" | grep "GRES=" | sed 's/^/    /'

scancel $(squeue -h -o %i)
check "all gone: no GPU and no shard held on any node" wait_for 30 gres_idle
scontrol show node -d n1 | grep "GresUsed" | sed 's/^/    /'
finish
