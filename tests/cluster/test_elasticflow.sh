#!/bin/bash
# test_elasticflow.sh - Policy=elasticflow in a live slurmctld: admission
# control with the job's throughput profile, leftover GPUs by marginal
# return, an infeasible deadline rejected with the admission arithmetic.
#
#   profiles   $T/profiles/demo.csv (conf/throughput-demo.csv: iterations/s
#              at 1, 2, 4, 8 GPUs for global batch 64)
#   A          --train-model=demo --train-iters=20000, deadline in 1 h 30 s,
#              elastic 1-8: admitted; the idle cluster's leftover GPUs
#              raise it to 8, the most its profile lists; its limit
#              is 61 min, the deadline rounded up to the minute
#   X          10^9 iterations due in 10 minutes: rejected (cancelled),
#              its Reason naming its deadline and the GPU-time it needs
#   N          no --train-model, --train-batch or --train-iters: rejected
#              (cancelled), its Reason naming the three
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
T_PROFILES=$(mktemp -d /tmp/tidal-profiles.XXXXXX)
cp "$(dirname "$0")/../../conf/throughput-demo.csv" "$T_PROFILES/demo.csv"
cluster_up "Policy=elasticflow
ElasticFlow.Profiles=$T_PROFILES
ElasticFlow.Slot=10
CycleInterval=1
ResizeSignal=none
CheckpointTimeout=3
RejectAction=cancel"

train=(--train-model=demo --train-batch=64)

a=$(submit "${train[@]}" --train-iters=20000 --elastic-gpus=1-8 --gpus=1 \
	--deadline=now+3630 --wrap 'sleep 600')
check "A ($a) is admitted and runs at 8 GPUs, its profile's largest level" \
	wait_for 40 has_gpus "$a" 8
# Its limit is cut to its deadline rounded up to the minute (Slurm's rule
# rounds down, to 60 minutes, and would end it before its deadline).
limit_of() { scontrol -o show job "$1" | grep -o 'TimeLimit=[^ ]*'; }
check "A's limit reaches its deadline, rounded up to the minute: $(limit_of "$a")" \
	eval 'limit_of "$a" | grep -qx TimeLimit=01:01:00'
check "tidalctl: the policy in force is elasticflow" \
	eval "$TIDALCTL show policy | grep -q 'Policy=elasticflow'"
# A rejected job is cancelled (RejectAction=cancel); its Reason stays.
cancelled() { scontrol -o show job "$1" 2>/dev/null | grep -q 'JobState=CANCELLED'; }
reason_of() {
	scontrol -o show job "$1" 2>/dev/null | grep -o 'Reason=.* Dependency=' |
		sed 's/ Dependency=$//'
}
x=$(submit "${train[@]}" --train-iters=1000000000 --gpus=1 \
	--deadline=now+10minutes --wrap 'sleep 600')
check "X ($x, 10^9 iterations due in 10 min) is rejected and cancelled" \
	wait_for 30 cancelled "$x"
reason=$(reason_of "$x")
echo "   $reason"
check "X's Reason gives the admission arithmetic" \
	grep -q 'Reason=TidalReject:.deadline.cannot.be.met.*needs.[0-9]*.GPU-s,.the.cluster.can.offer.[0-9]*.GPU-s' <<<"$reason"
n=$(submit --gpus=1 -t 10 --deadline=now+1hour --wrap 'sleep 600')
check "N ($n, no --train-model/batch/iters) is rejected and cancelled, not held forever" \
	wait_for 30 cancelled "$n"
reason=$(reason_of "$n")
echo "   $reason"
check "N's Reason names what it lacks" \
	grep -q 'Reason=TidalReject:.elasticflow.cannot.plan.this.job.without.its.throughput.profile.and.its.iterations:.no.--train-model,.no.--train-batch,.no.--train-iters' <<<"$reason"
check "A keeps running at 8 GPUs" has_gpus "$a" 8
show_queue
scancel "$a"
rm -rf "$T_PROFILES"
finish
