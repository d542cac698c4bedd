# tests/slurm/slurm.mk - Slurm's own regression suite under sched/backfill
# and sched/tidal (tests/slurm/run.sh).  Included from tests/tests.mk.
#
#   make check-slurm        every test of tests/slurm/tests.list, under
#                           backfill, fifo, tiresias and elastic-edf
#   make check-slurm-quick  tests/slurm/quick.list, the part that fits CI's
#                           budget (one of make check's tiers), after
#                           test_run_args.sh (run.sh's own arguments);
#                           the groups of SLURM_QUICK_GROUPS at the same
#                           time, each on its own cluster
# SLURM_SUITE_SCHED=backfill,fifo picks the schedulers of check-slurm
# (and of check-slurm-quick-24, tests/slurm24.mk), SLURM_QUICK_GROUPS
# (groups of such lists, separated by spaces) those of check-slurm-quick;
# ACCOUNTING=1 runs each cluster with slurmdbd (Slurm's QOS tests run too).

SLURM_SUITE_SCHED ?= backfill,fifo,tiresias,elastic-edf

.PHONY: check-slurm check-slurm-quick
check-slurm: plugin
	@BUILD=$(BUILD) tests/slurm/run.sh --sched $(SLURM_SUITE_SCHED)

# check-slurm-quick runs its schedulers in groups at the same time, each
# group on its own cluster into one LOGS, whose table comes after.
SLURM_QUICK_GROUPS ?= backfill,fifo tiresias,elastic-edf
check-slurm-quick: plugin
	@rc=0; tests/slurm/test_run_args.sh || rc=1; \
	logs=$$(mktemp -d /tmp/tidal-slurm-quick.XXXXXX); \
	for g in $(SLURM_QUICK_GROUPS); do \
		BUILD=$(BUILD) tests/slurm/run.sh --no-report --logs "$$logs" \
			--sched "$$g" --list tests/slurm/quick.list 2>&1 | \
			sed -u "s/^/$$g| /" & \
	done; wait; \
	BUILD=$(BUILD) tests/slurm/run.sh --report --logs "$$logs" \
		--list tests/slurm/quick.list || rc=1; \
	if [ $$rc -eq 0 ]; then rm -rf "$$logs"; \
		echo "check-slurm-quick: no difference; $$logs removed"; fi; \
	exit $$rc
