# tests/slurm24.mk - Slurm 24.11 beside the Slurm the tree is configured
# for (Debian 12's 22.05): its build, the plugins built for it, and the
# cluster tier run on its daemons.  Included from tests/tests.mk.
#
#   make slurm24           Slurm 24.11 built into the cache
#                          (scripts/slurm-build.sh), configure run for it in
#                          $(S24_OUT), sched_tidal.so and spank_tidal.so
#                          built there
#   make check-cluster-24  every tests/cluster script against it
#   make check-cluster-san-24
#                          the same with an ASan+UBSan sched_tidal.so
#   make demo-24           the live half of make demo on it
#   make check-slurm-quick-24, check-slurm-24
#                          Slurm 24.11's own regression suite on it, under
#                          sched/backfill and sched/tidal (tests/slurm)
#
# The rest of the tree (core, tidald, tidalctl, ...) knows no Slurm
# version and is shared with the main build in $(BUILD).

S24_VERSION := 24.11.5
S24_OUT := $(BUILD)/slurm-$(S24_VERSION)

# The build's two paths, "prefix=DIR" and "src=DIR", for the rules below.
$(S24_OUT)/slurm.paths: scripts/slurm-build.sh | $(BUILD)/.deps
	@mkdir -p $(S24_OUT)
	scripts/slurm-build.sh --version $(S24_VERSION) >$@.tmp
	mv $@.tmp $@

$(S24_OUT)/config.mk: $(S24_OUT)/slurm.paths config.mk
	cd $(S24_OUT) && . ./slurm.paths && \
		$(CURDIR)/configure --with-slurm="$$prefix" \
			--with-slurm-src="$$src" >configure.out 2>&1 || \
		{ tail -n 20 configure.out; exit 1; }
	@grep -q '^HAVE_SLURM_SRC = 1' $@ || \
		{ echo "slurm24: configure for $(S24_VERSION) found no source tree ($(S24_OUT)/configure.out)"; exit 1; }

.PHONY: slurm24 check-cluster-24
slurm24: $(S24_OUT)/config.mk $(BUILD)/libtidal-core.a $(BUILD)/libtidal-proto.a
	@$(MAKE) --no-print-directory CONFIG_MK=$(S24_OUT)/config.mk \
		PLUGIN_OUT=$(S24_OUT) $(S24_OUT)/sched_tidal.so \
		$(S24_OUT)/spank_tidal.so

# What a recipe that runs against Slurm 24.11 starts with: its install
# prefix (slurm.paths) and the plugins built for it.
S24_ENV = . $(S24_OUT)/slurm.paths && BUILD=$(BUILD) PLUGIN_BUILD=$(S24_OUT) \
	SLURM_PREFIX="$$prefix"

check-cluster-24: slurm24 plugin node $(BUILD)/tidal-sim
	@$(S24_ENV) tests/run-scripts.sh -j $(CLUSTER_JOBS) \
		check-cluster-24 $(CLUSTER_TIER_SCRIPTS)

# The same tier with Slurm 24.11's slurmctld loading an ASan+UBSan
# sched_tidal.so built for it (as check-cluster-san does for 22.05).
.PHONY: check-cluster-san-24
check-cluster-san-24: slurm24 plugin node
	@$(MAKE) --no-print-directory SAN=1 BUILD=build-san \
		CONFIG_MK=$(S24_OUT)/config.mk \
		PLUGIN_OUT=build-san/slurm-$(S24_VERSION) \
		build-san/slurm-$(S24_VERSION)/sched_tidal.so
	@$(S24_ENV) SAN_PLUGIN=build-san/slurm-$(S24_VERSION) \
		tests/run-scripts.sh check-cluster-san-24 \
		$(sort $(wildcard tests/cluster/test_*.sh))

# The live half of make demo (scripts/demo_cluster.sh) on Slurm 24.11.
.PHONY: demo-24
demo-24: slurm24 plugin node
	@. $(S24_OUT)/slurm.paths && PLUGIN_BUILD=$(S24_OUT) \
		SLURM_PREFIX="$$prefix" scripts/demo_cluster.sh $(BUILD)

# Slurm's own regression suite (tests/slurm/run.sh), 24.11's, on 24.11:
# the quick list, or every test of tests/slurm/tests.list.
.PHONY: check-slurm-24 check-slurm-quick-24
check-slurm-24 check-slurm-quick-24: check-slurm%-24: slurm24 plugin
	@$(S24_ENV) SLURM_SRC="$$src" tests/slurm/run.sh \
		--sched $(SLURM_SUITE_SCHED) \
		--list tests/slurm/$(if $(filter -quick,$*),quick,tests).list
