# tests/cluster/cluster.mk - what `make check-cluster` needs built first.
# The tier itself (tests/cluster/test_*.sh, each with BUILD set) is run by
# tests/tests.mk's check-cluster rule.  Included from tests/tests.mk.

check-cluster: plugin $(BUILD)/tidal-sim

# How many scripts of a cluster tier run at a time, each on its own
# loopback cluster.  make check runs both cluster tiers side by side, so
# 2 here is four clusters on CI's two cores: they spend most of their
# time waiting on their daemons and on jobs' sleeps.
CLUSTER_JOBS ?= 2
# The scripts in the order they start.  First those that run alone
# ("# run-scripts: alone", tests/run-scripts.sh), one after another with
# nothing beside them: started later, each would wait for every running
# script to end, a long one keeping the machine half idle.  Then the
# slowest (as measured in make check's "took N s" lines), so that the
# last to start are short and the workers end together; then every other
# script in name order.
CLUSTER_ALONE := $(shell grep -l '^\# run-scripts: alone$$' tests/cluster/test_*.sh)
CLUSTER_SLOW := test_rounds test_faults test_pollux test_qos \
	test_rounds_restart test_lucid_live test_het
CLUSTER_SCRIPTS := $(CLUSTER_ALONE) $(CLUSTER_SLOW:%=tests/cluster/%.sh) \
	$(filter-out $(CLUSTER_ALONE) $(CLUSTER_SLOW:%=tests/cluster/%.sh), \
	$(sort $(wildcard tests/cluster/test_*.sh)))

# make check runs the alone scripts of both Slurm versions as a tier of
# their own, one after another (check-cluster-alone), before the two
# tiers side by side, which then leave them out (CLUSTER_SKIP_ALONE=1):
# within those, the two tiers' alone scripts were not started together,
# so one tier's waited for the other's long scripts to end (in one run
# test_rounds waited 560 s, the tiers took 2762 and 2835 s).
ifeq ($(CLUSTER_SKIP_ALONE),1)
CLUSTER_TIER_SCRIPTS := $(filter-out $(CLUSTER_ALONE),$(CLUSTER_SCRIPTS))
else
CLUSTER_TIER_SCRIPTS := $(CLUSTER_SCRIPTS)
endif

.PHONY: check-cluster-alone
check-cluster-alone: slurm24 plugin node $(BUILD)/tidal-sim
	@rc=0; \
	BUILD=$(BUILD) tests/run-scripts.sh check-cluster-alone $(CLUSTER_ALONE) || rc=1; \
	$(S24_ENV) tests/run-scripts.sh check-cluster-alone-24 \
		$(CLUSTER_ALONE) || rc=1; \
	exit $$rc

# make check-cluster-san: the same tier with slurmctld loading an ASan+UBSan
# sched_tidal.so (build-san/) under the preloaded sanitizer runtime; every
# report slurmctld writes fails its script (SAN_PLUGIN in lib.sh).
.PHONY: check-cluster-san
check-cluster-san: plugin node
	@$(MAKE) --no-print-directory SAN=1 BUILD=build-san build-san/sched_tidal.so
	@BUILD=$(BUILD) SAN_PLUGIN=build-san tests/run-scripts.sh \
		check-cluster-san $(sort $(wildcard tests/cluster/test_*.sh))
