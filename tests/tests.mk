# tests/tests.mk - test tiers, included from the top-level Makefile.
#
#   check-unit     CMocka unit tests beside every module (tests/unit), and
#                  the man pages rendered without a warning (tests/man-lint.sh)
#   check-sim      golden replays of the anchors (tests/sim)
#   check-fuzz     a short libFuzzer smoke run of every reader
#   check-emu      the plugin over stubbed slurmctld symbols (tests/emu)
#   check-cluster  real slurmctld + slurmd + munge on loopback
#   check-cluster-24  the same on Slurm 24.11, built from Debian 13's
#                  source (tests/slurm24.mk)
#   check-node     tidal-train, tidal-launch, tidald (tests/node)
#   check-deb      the Debian packages (make deb) built from this tree and
#                  checked: files, exact Slurm dependency, lintian
#                  (tests/pkg/test_deb.sh); make install's prefixes
#                  (tests/pkg/test_install.sh); the bash completions
#                  (tests/pkg/test_completion.sh); the packages installed,
#                  cluster scripts run on the installed files, purged
#                  (tests/pkg/test_installed.sh)
#   check-slurm-quick  a part of Slurm's own regression suite under
#                  sched/backfill and sched/tidal (tests/slurm/quick.list);
#                  make check-slurm runs all of tests/slurm/tests.list

UNIT_SRC := $(sort $(wildcard tests/unit/test_*.cc))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.cc=$(BUILD)/tests/%)

$(BUILD)/tests/%: tests/unit/%.cc tests/unit/unit.h $(BUILD)/libtidal-sim.a \
		$(BUILD)/libtidal-core.a
	@mkdir -p $(dir $@)
	$(CXX) $(TIDAL_CXXFLAGS) -o $@ $< $(TIDAL_LDFLAGS) $(TIDAL_LIBS) \
		$(CMOCKA_LIBS)

# Tests of the plugin's engine side (agents/, engine.cc: no Slurm in
# them) link its objects too.
UNIT_PLUGIN_OBJ := $(addprefix $(BUILD)/obj/plugin/sched/, engine.o \
	ctl_engine.o metrics.o) $(AGENTS_OBJ) $(BUILD)/obj/plugin/common/options.o \
	$(PROTO_JSON_OBJ)
# The job options' table and their reader (plain C, no Slurm).
$(BUILD)/tests/test_job_options: $(BUILD)/obj/plugin/common/options.o
$(BUILD)/tests/test_job_options: TIDAL_LIBS := \
	$(BUILD)/obj/plugin/common/options.o $(TIDAL_LIBS)
$(BUILD)/tests/test_agents_state $(BUILD)/tests/test_engine_views: \
	$(UNIT_PLUGIN_OBJ)
$(BUILD)/tests/test_agents_state $(BUILD)/tests/test_engine_views: \
	TIDAL_LIBS := $(UNIT_PLUGIN_OBJ) $(TIDAL_LIBS)

include tests/fuzz/fuzz.mk

# Build everything the tiers need in parallel first; the tiers then run
# (tests/run-tiers.sh), every one even after one fails, and check fails at
# the end, naming them, after a table of every tier's result and seconds
# (CI's budget is 90 min).  The two cluster tiers run at the same time
# (lines prefixed with the tier's name): each waits mostly on its own
# loopback cluster, on its own ports.  A script that measures timing
# against a model ("run-scripts: alone", tests/run-scripts.sh) runs with
# no other script running: those of both versions run before, one after
# another (check-cluster-alone), and the two tiers leave them out
# (CLUSTER_SKIP_ALONE=1, tests/cluster/cluster.mk).  What both build (the plugins for
# both Slurm versions, the node side) is built once before them
# (check-cluster-prep), so that the two makes never build the same file.
CHECK_TIERS := check-emu check-cluster-prep check-cluster-alone \
	check-cluster+check-cluster-24 \
	check-slurm-quick check-node check-unit check-fuzz check-sim check-deb
check: check-build
	@tests/run-tiers.sh "$(MAKE) CLUSTER_SKIP_ALONE=1" $(CHECK_TIERS)

.PHONY: check-cluster-prep
check-cluster-prep: slurm24 plugin node $(BUILD)/tidal-sim

check-build:
	@$(MAKE) --no-print-directory $(BUILD)/tidal-sim $(UNIT_BIN) $(NODE_TARGETS) $(NODE_UNIT_BIN) \
		$(if $(filter 1,$(HAVE_LIBFUZZER)),$(FUZZ_BIN))

.PHONY: check-deb
check-deb: | $(BUILD)/.deps
	@BUILD=$(BUILD) tests/run-scripts.sh check-deb tests/pkg/test_*.sh

check-unit: $(UNIT_BIN)
	@rc=0; tests/run-unit.sh $(UNIT_BIN) || rc=1; \
	tests/man-lint.sh man/man*/* || rc=1; exit $$rc

check-sim: $(BUILD)/tidal-sim
	@tests/sim/run.sh $(BUILD)/tidal-sim

# The plugin tiers: scripts tests/emu/test_*.sh and tests/cluster/test_*.sh.
# Every script runs even after one fails (a failure must not hide the
# others); the tier fails at the end, naming the scripts that failed.
# A cluster tier runs CLUSTER_JOBS scripts at a time, each on its own
# loopback cluster, slowest first (CLUSTER_SCRIPTS, tests/cluster/cluster.mk).
check-emu:
	@BUILD=$(BUILD) tests/run-scripts.sh check-emu tests/emu/test_*.sh
check-cluster:
	@BUILD=$(BUILD) tests/run-scripts.sh -j $(CLUSTER_JOBS) check-cluster \
		$(CLUSTER_TIER_SCRIPTS)
include tests/cluster/cluster.mk
include tests/slurm24.mk
include tests/slurm/slurm.mk
include tests/emu/emu.mk
include tests/node/node.mk
