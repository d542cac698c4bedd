# tests/slurm/slurm.mk - Slurm's own regression suite under sched/backfill
# and sched/tidal (tests/slurm/run.sh).  Included from tests/tests.mk.
#
#   make check-slurm        every test of tests/slurm/tests.list, under
#                           backfill, fifo, tiresias and elastic-edf
#   make check-slurm-quick  tests/slurm/quick.list, the part that fits CI's
#                           budget (one of make check's tiers), after
#                           test_run_args.sh (run.sh's own arguments)
# SLURM_SUITE_SCHED=backfill,fifo picks the schedulers of either;
# ACCOUNTING=1 runs each cluster with slurmdbd (Slurm's QOS tests run too).

SLURM_SUITE_SCHED ?= backfill,fifo,tiresias,elastic-edf

.PHONY: check-slurm check-slurm-quick
check-slurm: plugin
	@BUILD=$(BUILD) tests/slurm/run.sh --sched $(SLURM_SUITE_SCHED)

check-slurm-quick: plugin
	@rc=0; tests/slurm/test_run_args.sh || rc=1; \
	BUILD=$(BUILD) tests/slurm/run.sh --sched $(SLURM_SUITE_SCHED) \
		--list tests/slurm/quick.list || rc=1; exit $$rc
