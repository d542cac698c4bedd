#!/bin/bash
# test_muri_live.sh - Muri's interleaving, live: two real training jobs
# (tidal-launch over tidal-train, paced by their stage profiles) that
# muri-s groups on one GPU take their stages in turns that tidald hands
# out, at the group iteration time of Muri's model.
#
# 1 node x 1 GPU with 4 shards; one data-heavy (io) and one compute-heavy
# (gpu) job, twice the GPUs there are, so muri-s pairs them:
#
#   both run at once, each holding a shard of GPU 0
#   the launchers join both to tidald's group n1-gpu0, which plans them
#     with Muri's model (its period logged)
#   each job's measured step rate (tidalctl's Training=) is within 10% of
#     the model's group iteration time, and of the one tidalctl explain
#     gives (the policy's own number); tidalctl show job names the
#     shared GPU (SharedGPU=n1-gpu0), the partner and the stage times
#   kill -9 of slurmctld while grouped: the group goes on taking turns
#     through it, at the same step time; slurmctld comes back to both jobs
#     running on their shards
#   kill -9 of the io job's trainer: its launcher restarts it from its
#     newest checkpoint, it joins the group again, the pair runs at the
#     model's step time again
#   the io job cancelled: tidald sees it leave, and the gpu job runs on,
#     alone on its shard, at its solo time (stage sum x 1.015)
#   all gone: no GPU and no shard held
#
# The step rates are paced real time, so the script runs with nothing
# else beside it (a pair at 1.76 it/s for the model's 2.0 with three
# other clusters on two cores):
# run-scripts: alone
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
skip_unless_node_side
NODES="n1"
GPUS_PER_NODE=1
SHARDS_PER_GPU=4
profile=$(mktemp /tmp/tidal-muri-live.XXXXXX)
chmod 644 "$profile"
cat >"$profile" <<'CSV'
model,data,compute,comm
io,0.300,0.040,0.030
gpu,0.040,0.300,0.030
CSV
cluster_up "Policy=muri-s
CycleInterval=1
ResizeSignal=none
CheckpointTimeout=120
Muri.Profiles=$profile"
trap 'cluster_down; rm -f "$profile"' EXIT
check "the agent is up" start_agents

args="--stage-profile $profile --iters 100000 --log-every 5 --ckpt-every 20 --in 8 --out 2 --hidden 16 --layers 1"
train_script "$T/io.sh" "$args --profile-model io"
train_script "$T/gpu.sh" "$args --profile-model gpu"
begin=$(date -d '+12 sec' +%Y-%m-%dT%H:%M:%S)
a=$(submit --begin="$begin" --gpus=1 -t 10 --train-model=io "$T/io.sh")
b=$(submit --begin="$begin" --gpus=1 -t 10 --train-model=gpu "$T/gpu.sh")
both_run() { is_state "$a" RUNNING && is_state "$b" RUNNING; }
check "io ($a) and gpu ($b) run at once on the one GPU" wait_for 60 both_run
show_queue
shard_of() { scontrol show job -d "$1" | grep -o 'GRES=shard:[0-9]*([^)]*)' | head -1; }
say "Slurm: $a $(shard_of "$a"), $b $(shard_of "$b")"
check "both hold a shard" test -n "$(shard_of "$a")" -a -n "$(shard_of "$b")"

tlog=$T/log/tidald-n1.log
paired() { grep -qE "interleave: group n1-gpu0: jobs ($a, $b|$b, $a) " "$tlog"; }
check "tidald groups both on n1-gpu0 and plans them with Muri's model" \
	wait_for 60 paired
grep "interleave: group n1-gpu0" "$tlog" | sed 's/^/    /'
model=$(grep -E "interleave: group n1-gpu0: jobs ($a, $b|$b, $a) " "$tlog" | tail -1 |
	sed -E 's/.*model period ([0-9.]+) s.*/\1/')

# it/s as the launcher reports it (tidalctl show job's Training=), once
# it is past the group's first steps.
rate() { "$TIDALCTL" show job "$1" 2>/dev/null | grep -o 'Training=step [0-9]*, [0-9.e+-]* it/s' | awk '{print $3}'; }
s0=$(train_step "$a")
wait_for 60 train_past "$a" $((${s0:-0} + 20))
sleep 3
ra=$(rate "$a") rb=$(rate "$b")
explain=$("$TIDALCTL" explain "$a" 2>&1 | grep -o 'interleaved with job [0-9]* ([0-9.]* s per iteration)')
policy=$(sed -E 's/.*\(([0-9.]+) s per.*/\1/' <<<"$explain")
say "model (tidald) ${model:-none} s, policy (explain) ${policy:-none} s; measured io $ra it/s, gpu $rb it/s"
within() { python3 -c "import sys; g,w,p=map(float,sys.argv[1:]); sys.exit(0 if w > 0 and abs(g-w)<=w*p/100 else 1)" "$@"; }
per() { python3 -c "import sys; print('%.4f' % (1/float(sys.argv[1])))" "$1" 2>/dev/null; }
check "io's step time ($(per "$ra") s) is within 10% of the model's" within "$(per "$ra")" "${model:-0}" 10
check "gpu's step time ($(per "$rb") s) is within 10% of the model's" within "$(per "$rb")" "${model:-0}" 10
check "the policy's own group time agrees with tidald's model" within "${policy:-0}" "${model:-0}" 1
show=$("$TIDALCTL" show job "$a" 2>&1)
grep -oE '(SharesGPUsWith|SharedGPU|Training|Stages)=[^=]*( |$)' <<<"$show" | sed 's/^/    /'
check "tidalctl show job: the shared GPU, the partner and the stage times" \
	eval 'grep -q "SharedGPU=n1-gpu0" <<<"$show" && grep -q "SharesGPUsWith=$b" <<<"$show" &&
		grep -qE "Stages=data [0-9]+ ms, compute [0-9]+ ms, sync [0-9]+ ms" <<<"$show"'

# kill -9 slurmctld: the turns are tidald's; the trainers never notice.
sa=$(train_step "$a")
sleep 6 # slurmctld's own state save comes within 5 s of a change
restart_slurmctld_hard || { say "slurmctld did not restart"; dump_logs; exit 1; }
check "slurmctld answers again" wait_for 60 scontrol ping
check "both still run, each on its shard" \
	eval 'both_run && [ -n "$(shard_of "$a")" ] && [ -n "$(shard_of "$b")" ]'
check "tidald did not replan the group (no member left or came)" \
	test "$(grep -cE "interleave: group n1-gpu0: jobs [0-9]+, [0-9]+ " "$tlog")" -eq 1
wait_for 90 train_past "$a" $((${sa:-0} + 40))
sleep 3
ra2=$(rate "$a")
say "io after the restart: $ra2 it/s"
check "the pair's step time after the restart is still within 10% of the model's" \
	within "$(per "$ra2")" "${model:-0}" 10

# kill -9 of a member's trainer: its launcher restarts it from its newest
# checkpoint (a restart of its budget), and it joins the group again.
# (This cluster's: the other Slurm version's tier may run this script now.)
tp=$(pgrep -f -- "--profile-model io" | while read -r p; do
	[ "$(cat /proc/$p/comm 2>/dev/null)" = tidal-train ] &&
		tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
		grep -qx "SLURM_CONF=$T/etc/slurm.conf" && echo "$p"; done | head -1)
joins() { grep -c "group n1-gpu0: job $a rank 0 (uid [0-9]*) joins" "$tlog"; }
j0=$(joins)
say "kill -9 of io's trainer ($tp)"
kill -9 "$tp"
check "io's launcher restarts its trainer from a checkpoint" \
	wait_for 60 grep -qE "generation 1: world 1, ranks 0-0 here, resuming from step [1-9]" "$T/out/$a.out"
grep -E "restarting all ranks|generation 1: world" "$T/out/$a.out" | sed 's/^/    /'
rejoined() { [ "$(joins)" -gt "$j0" ]; }
check "the restarted trainer joins the group again" wait_for 60 rejoined
check "the partner ran on meanwhile" is_state "$b" RUNNING
sa=$(train_step "$a")
wait_for 90 train_past "$a" $((${sa:-0} + 30))
sleep 3
ra3=$(rate "$a")
say "io after its restart: $ra3 it/s"
check "the pair runs at the model's step time again" within "$(per "$ra3")" "${model:-0}" 10

leaves() { grep -c "group n1-gpu0: job $a rank 0 leaves, 1 left" "$tlog"; }
l0=$(leaves)
left_again() { [ "$(leaves)" -gt "$l0" ]; }
scancel "$a"
check "tidald sees the cancelled member leave" wait_for 30 left_again
s1=$(train_step "$b")
wait_for 60 train_past "$b" $((${s1:-0} + 25))
sleep 3
rb=$(rate "$b")
say "gpu alone: $rb it/s ($(per "$rb") s; solo 0.37 x 1.015 = 0.3756 s)"
check "the member left runs on at its solo time" within "$(per "$rb")" 0.3756 10
check "... still holding its shard" test -n "$(shard_of "$b")"
scancel "$b"
check "all gone: no GPU and no shard held" wait_for 30 gres_idle n1
check "tidald's group is gone with its last member" \
	wait_for 30 grep -q "group n1-gpu0: job $b rank 0 leaves, 0 left" "$tlog"
finish
