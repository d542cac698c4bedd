# tests/cluster/cluster.mk - what `make check-cluster` needs built first.
# The tier itself (tests/cluster/test_*.sh, each with BUILD set) is run by
# tests/tests.mk's check-cluster rule.  Included from tests/tests.mk.

check-cluster: plugin

# make check-cluster-san: the same tier with slurmctld loading an ASan+UBSan
# sched_tidal.so (build-san/) under the preloaded sanitizer runtime; every
# report slurmctld writes fails its script (SAN_PLUGIN in lib.sh).
.PHONY: check-cluster-san
check-cluster-san: plugin node
	@$(MAKE) --no-print-directory SAN=1 BUILD=build-san build-san/sched_tidal.so
	@BUILD=$(BUILD) SAN_PLUGIN=build-san tests/run-scripts.sh \
		check-cluster-san $(sort $(wildcard tests/cluster/test_*.sh))
