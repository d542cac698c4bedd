#!/bin/bash
# test_options.sh - Tidal's sbatch options (spank_tidal.so): bad values are
# refused by sbatch with the option and the rule; good ones reach
# sched/tidal through job_ptr->spank_job_env.
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
cluster_up "Policy=fifo
CycleInterval=1"
[ -f "$PLUGIN_ABS/spank_tidal.so" ] || { fail "spank_tidal.so not built"; finish; exit; }

refused() { # refused EXPECTED_MESSAGE SBATCH_ARGS...
	local want=$1 out; shift
	if out=$(sbatch -D "$T/out" -o /dev/null "$@" --wrap true 2>&1); then
		echo "  accepted: $*"; return 1
	fi
	echo "$out" | grep -qF -- "$want" || { echo "  got: $out"; return 1; }
}
check "--elastic-gpus=8-2 refused: MIN <= MAX" \
	refused "--elastic-gpus=8-2: must be MIN-MAX with integers 1 <= MIN <= MAX <= 4096" --elastic-gpus=8-2
check "--elastic-gpus=4 refused: not a range" \
	refused "--elastic-gpus=4: must be MIN-MAX" --elastic-gpus=4
check "--train-batch=abc refused" \
	refused "--train-batch=abc: must be an integer in [1, 1000000000]" --train-batch=abc
check "--train-iters=0 refused" \
	refused "--train-iters=0: must be an integer in [1, 1000000000000000]" --train-iters=0
check "--train-model='a b' refused" \
	refused "--train-model=a b: must be 1 to 64 characters" "--train-model=a b"

# --elastic-gpus against the GPU request: sbatch sees it and refuses.
check "--elastic-gpus=2-8 without a GPU request refused" \
	refused "--elastic-gpus=2-8: the job asks for no GPUs; give the size it starts at with --gpus=N, 2 <= N <= 8" \
	--elastic-gpus=2-8
check "--gpus=16 outside --elastic-gpus=2-8 refused" \
	refused "--elastic-gpus=2-8: the job asks for 16 GPUs (--gpus=16), outside the range; its GPU request must be from MIN to MAX" \
	--gpus=16 --elastic-gpus=2-8
check "-N2 --gpus-per-node=8 outside --elastic-gpus=2-8 refused" \
	refused "the job asks for 16 GPUs (--nodes=2 --gpus-per-node=8), outside the range" \
	-N2 --gpus-per-node=8 --elastic-gpus=2-8
# The cluster's size sbatch does not know: the plugin rejects.
big=$(submit --gpus=4 --elastic-gpus=1-4096 --wrap 'sleep 30')
check "--elastic-gpus=1-4096 on 32 GPUs: rejected, its Reason names both numbers" \
	wait_for 20 reason_has "$big" \
	"TidalReject: --elastic-gpus=1-4096: MAX is more than the 32 GPUs of the cluster; MAX must be at most 32"
check "and it never ran" is_state "$big" PENDING
scancel "$big"

j=$(submit -N1 --gpus-per-node=2 --elastic-gpus=2-8 --train-model=resnet50 \
	--train-batch=256 --train-iters=1000 --wrap 'sleep 30')
check "good options accepted (job $j)" test -n "$j"
check "sched/tidal read them from spank_job_env" wait_for 20 grep -q \
	"job $j: Tidal options: elastic 2-8 GPUs model resnet50 batch 256 iterations 1000" \
	"$T/log/slurmctld.log"
check "the job runs" wait_state 30 "$j" RUNNING
# srun inside the job makes a step: it inherits --elastic-gpus, and a step
# that asks for no GPUs of its own (tidal-launch --srun unsets SLURM_GPUS
# and the like, so that its step gets every GPU the job holds) must not be
# refused for that.
s=$(submit -N1 --gpus=2 --elastic-gpus=2-8 --wrap \
	'env -u SLURM_GPUS -u SLURM_GPUS_PER_NODE srun -n1 echo step-ran')
check "srun inside an elastic job runs its step" \
	wait_for 60 grep -q '^step-ran$' "$T/out/$s.out"
check "... with no error from the plugin" eval "! grep -q 'srun: error' '$T/out/$s.out'"
finish
