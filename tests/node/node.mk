# tests/node/node.mk - the node-side tier: tidal-train, tidal-launch, tidald.
#
#   check-node   CMocka tests of the node libraries (tests/node/test_*.cc,
#                linked with the node archives) and the process-level scripts
#                tests/node/test_*.sh (real trainers, launchers and agents
#                on loopback; no Slurm).
#
# Included from tests/tests.mk.

NODE_UNIT_SRC := $(sort $(wildcard tests/node/test_*.cc))
NODE_UNIT_BIN := $(NODE_UNIT_SRC:tests/node/%.cc=$(BUILD)/tests/node/%)

# Every node archive: the programs' own pieces, then the node library.
NODE_TEST_LIBS := $(BUILD)/libtidal-launch.a $(BUILD)/libtidal-train.a \
	$(BUILD)/libtidal-agent.a $(BUILD)/libtidal-node.a $(BUILD)/libtidal-core.a

$(BUILD)/tests/node/%: tests/node/%.cc tests/unit/unit.h $(NODE_TEST_LIBS)
	@mkdir -p $(dir $@)
	$(CXX) $(TIDAL_CXXFLAGS) $(NODE_CFLAGS) -o $@ $< $(TIDAL_LDFLAGS) \
		$(NODE_TEST_LIBS) $(CORE_LIBS) $(NODE_LIBS) $(CMOCKA_LIBS)

.PHONY: check-node
check-node: $(NODE_UNIT_BIN) $(NODE_TARGETS)
	@rc=0; if [ -n "$(NODE_UNIT_BIN)" ]; then \
		tests/run-unit.sh $(NODE_UNIT_BIN) || rc=1; fi; \
	BUILD=$(BUILD) tests/run-scripts.sh check-node \
		$(sort $(wildcard tests/node/test_*.sh)) || rc=1; \
	exit $$rc
