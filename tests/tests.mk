# tests/tests.mk - test tiers, included from the top-level Makefile.
#
#   check-unit     CMocka unit tests beside every module (tests/unit)
#   check-sim      golden replays of the anchors (tests/sim)
#   check-fuzz     a short libFuzzer smoke run of every reader
#   check-emu      the plugin over stubbed slurmctld symbols (tests/emu)
#   check-cluster  real slurmctld + slurmd + munge on loopback
#   check-node     tidal-train, tidal-launch, tidald (tests/node)

UNIT_SRC := $(sort $(wildcard tests/unit/test_*.cc))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.cc=$(BUILD)/tests/%)

$(BUILD)/tests/%: tests/unit/%.cc tests/unit/unit.h $(BUILD)/libtidal-sim.a \
		$(BUILD)/libtidal-core.a
	@mkdir -p $(dir $@)
	$(CXX) $(TIDAL_CXXFLAGS) -o $@ $< $(TIDAL_LDFLAGS) $(TIDAL_LIBS) \
		$(CMOCKA_LIBS)

include tests/fuzz/fuzz.mk

# Build everything the tiers need in parallel first; the tiers then run one
# after another so their output stays readable.
check: check-build check-emu check-cluster check-node check-unit check-fuzz \
	check-sim

check-build:
	@$(MAKE) --no-print-directory $(if $(findstring jobserver,$(MAKEFLAGS)),,-j2) \
		$(BUILD)/tidal-sim $(UNIT_BIN) $(NODE_TARGETS) $(NODE_UNIT_BIN) \
		$(if $(filter 1,$(HAVE_LIBFUZZER)),$(FUZZ_BIN))

check-unit: $(UNIT_BIN)
	@tests/run-unit.sh $(UNIT_BIN)

check-sim: $(BUILD)/tidal-sim
	@tests/sim/run.sh $(BUILD)/tidal-sim

# The plugin tiers: scripts tests/emu/test_*.sh and tests/cluster/test_*.sh.
check-emu check-cluster: check-%:
	@set -e; ls tests/$*/test_*.sh >/dev/null 2>&1 || { \
		echo "check-$*: no tests in tests/$*/ yet (they come with the sched/tidal plugin)"; exit 0; }; \
	for t in tests/$*/test_*.sh; do BUILD=$(BUILD) bash $$t; done
include tests/cluster/cluster.mk
include tests/emu/emu.mk
include tests/node/node.mk
