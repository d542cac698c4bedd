# tests/tests.mk - test tiers, included from the top-level Makefile.
#
#   check-unit     CMocka unit tests beside every module (tests/unit)
#   check-sim      golden replays of the anchors (tests/sim)
#   check-fuzz     a short libFuzzer smoke run of every reader
#   check-emu      the plugin over stubbed slurmctld symbols (tests/emu)
#   check-cluster  real slurmctld + slurmd + munge on loopback

UNIT_SRC := $(sort $(wildcard tests/unit/test_*.cc))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.cc=$(BUILD)/tests/%)

$(BUILD)/tests/%: tests/unit/%.cc tests/unit/unit.h $(BUILD)/libtidal-sim.a \
		$(BUILD)/libtidal-core.a
	@mkdir -p $(dir $@)
	$(CXX) $(TIDAL_CXXFLAGS) -o $@ $< $(TIDAL_LDFLAGS) $(TIDAL_LIBS) \
		$(CMOCKA_LIBS)

include tests/fuzz/fuzz.mk
check: check-unit check-sim check-fuzz

check-unit: $(UNIT_BIN)
	@tests/run-unit.sh $(UNIT_BIN)

check-sim: $(BUILD)/tidal-sim
	@tests/sim/run.sh $(BUILD)/tidal-sim
