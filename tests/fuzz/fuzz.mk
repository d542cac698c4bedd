# tests/fuzz/fuzz.mk - libFuzzer targets for every input reader.
#
#   make fuzz        build build-fuzz/fuzz-<target> with clang++
#                    -fsanitize=fuzzer,address,undefined
#   make check-fuzz  run each target for FUZZ_SECONDS (default 5) from its
#                    seed corpus in tests/fuzz/corpus/<target>/; skipped,
#                    with a line saying so, where clang++ or libFuzzer is
#                    missing
#   make fuzz-long   run each target for FUZZ_RUNS executions (default 10
#                    million; hours for the slower targets), one line per
#                    target with its count, time and rate; FUZZ_TARGETS=
#                    picks targets
#
# The targets (each file's banner says what it checks):
#
#   muri elasticflow lucid pollux gavel sacct tidal ub
#                 one trace reader each (fuzz_trace.cc, -DFUZZ_FORMAT)
#   cluster       load_cluster: slurm.conf, gres.conf, topology.conf, CSVs
#                 (fuzz_cluster.cc)
#   options       job option values as sbatch checks them and as sched/tidal
#                 reads them from spank_job_env (fuzz_options.cc;
#                 plugin/common/options.c)
#   ckpt          the checkpoint reader, newest() and pin names
#                 (fuzz_ckpt.cc; node/checkpoint.cc)
#   agent-wire    every message of the wire, one decoder at a time, each
#                 accepted message round-tripped through its encoder
#                 (fuzz_agent_wire.cc; proto/messages.cc,
#                 nodeagent/requests.cc)
#   plugin-wire   what sched/tidal answers: node agents' ops and tidalctl
#                 requests, then a state round trip of what they left
#                 (fuzz_plugin_wire.cc; plugin/sched/agents/,
#                 ctl_engine.cc)
#   conf          tidal.conf: Params, the engine's configure, and the node
#                 side's conf_value (fuzz_conf.cc)
#   state         the plugin state file: load, save, load again
#                 (fuzz_state.cc; plugin/sched/state.c and the lines of
#                 resize.c, agents/persist.cc and engine.cc), over tests/emu's
#                 emulated slurmctld; only with a configured Slurm source
#                 tree (HAVE_SLURM_SRC), like tidal-emu
#
# Included from tests/tests.mk.

CLANG ?= $(shell command -v clang++ 2>/dev/null)
FUZZ_BUILD := build-fuzz
FUZZ_SECONDS ?= 5
FUZZ_FORMATS := muri elasticflow lucid pollux gavel sacct tidal ub
FUZZ_TARGETS := $(FUZZ_FORMATS) cluster options ckpt agent-wire plugin-wire \
	conf
ifeq ($(HAVE_SLURM_SRC),1)
FUZZ_TARGETS += state
endif
FUZZ_BIN := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz-%)

FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
FUZZ_CXXFLAGS := -std=c++20 -O1 -g -Wall -Wno-unused-parameter -I. \
	$(FUZZ_SAN)
FUZZ_OBJ := $(CORE_SRC:%.cc=$(FUZZ_BUILD)/obj/%.o) \
	$(SIM_SRC:%.cc=$(FUZZ_BUILD)/obj/%.o)

$(FUZZ_BUILD)/obj/%.o: %.cc
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CXXFLAGS) $(JSONC_CFLAGS) -fsanitize=fuzzer-no-link \
		-MMD -MP -c $< -o $@

CLANG_C ?= $(patsubst %++,%,$(CLANG))
FUZZ_CFLAGS := -std=gnu11 -O1 -g -Wall -Wno-unused-parameter \
	-Wno-sign-compare -Wno-missing-field-initializers -I. $(FUZZ_SAN)

# The plugin's C files: options.c needs nothing, the others Slurm's
# source tree (as for tidal-emu, tests/emu/emu.mk).
$(FUZZ_BUILD)/obj/plugin/common/%.o: plugin/common/%.c
	@mkdir -p $(dir $@)
	$(CLANG_C) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP \
		-c $< -o $@

$(FUZZ_BUILD)/obj/plugin/sched/%.o: plugin/sched/%.c
	@mkdir -p $(dir $@)
	$(CLANG_C) $(FUZZ_CFLAGS) $(SLURM_CFLAGS) -fsanitize=fuzzer-no-link \
		-MMD -MP -c $< -o $@

$(FUZZ_BUILD)/obj/tests/emu/%.o: tests/emu/%.c
	@mkdir -p $(dir $@)
	$(CLANG_C) $(FUZZ_CFLAGS) $(SLURM_CFLAGS) -fsanitize=fuzzer-no-link \
		-MMD -MP -c $< -o $@

FUZZ_OPTIONS_OBJ := $(FUZZ_BUILD)/obj/plugin/common/options.o
# proto/json.o: in the engine's objects, and beside the node's where they
# are linked without the engine.
FUZZ_JSON_OBJ := $(FUZZ_BUILD)/obj/proto/json.o \
	$(FUZZ_BUILD)/obj/proto/messages.o
FUZZ_NODE_OBJ := $(addprefix $(FUZZ_BUILD)/obj/, nodeagent/requests.o \
	proto/wire.o node/checkpoint.o)
FUZZ_ENGINE_OBJ := $(addprefix $(FUZZ_BUILD)/obj/plugin/sched/, engine.o \
	ctl_engine.o metrics.o) $(AGENTS_SRC:%.cc=$(FUZZ_BUILD)/obj/%.o) \
	$(FUZZ_OPTIONS_OBJ) $(FUZZ_JSON_OBJ)
FUZZ_EMU_OBJ := $(addprefix $(FUZZ_BUILD)/obj/plugin/sched/, snapshot.o \
	apply.o resize.o state.o slurm_compat.o share.o account.o) \
	$(FUZZ_BUILD)/obj/tests/emu/emu.o

-include $(FUZZ_OBJ:.o=.d) $(FUZZ_NODE_OBJ:.o=.d) $(FUZZ_ENGINE_OBJ:.o=.d) \
	$(FUZZ_EMU_OBJ:.o=.d)

# LEMON compiles as C++17 only (see the top-level Makefile).
$(FUZZ_BUILD)/obj/core/solvers/matching.o: FUZZ_CXXFLAGS += $(LEMON_CFLAGS) \
	$(LEMON_CXXFLAGS)

# An archive, so each target links only the readers it reaches.
$(FUZZ_BUILD)/libtidal-fuzz.a: $(FUZZ_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_BUILD)/fuzz-cluster: tests/fuzz/fuzz_cluster.cc \
		$(FUZZ_BUILD)/libtidal-fuzz.a
	$(CLANG) $(FUZZ_CXXFLAGS) -fsanitize=fuzzer -o $@ $< \
		$(FUZZ_BUILD)/libtidal-fuzz.a $(CORE_LIBS)

# The engine's policies register themselves from static constructors:
# the core is linked whole where the engine is.
$(FUZZ_BUILD)/libtidal-fuzz-core.a: $(CORE_SRC:%.cc=$(FUZZ_BUILD)/obj/%.o)
	@rm -f $@
	ar rcs $@ $^
FUZZ_ENGINE_LIBS := -Wl,--whole-archive $(FUZZ_BUILD)/libtidal-fuzz-core.a \
	-Wl,--no-whole-archive $(CORE_LIBS)

$(FUZZ_BUILD)/fuzz-options: tests/fuzz/fuzz_options.cc $(FUZZ_OPTIONS_OBJ)
	$(CLANG) $(FUZZ_CXXFLAGS) -fsanitize=fuzzer -o $@ $< \
		$(FUZZ_OPTIONS_OBJ)

$(FUZZ_BUILD)/fuzz-ckpt: tests/fuzz/fuzz_ckpt.cc \
		$(FUZZ_BUILD)/obj/node/checkpoint.o
	$(CLANG) $(FUZZ_CXXFLAGS) -fsanitize=fuzzer -o $@ $< \
		$(FUZZ_BUILD)/obj/node/checkpoint.o

$(FUZZ_BUILD)/fuzz-agent-wire: tests/fuzz/fuzz_agent_wire.cc $(FUZZ_NODE_OBJ) \
		$(FUZZ_JSON_OBJ)
	$(CLANG) $(FUZZ_CXXFLAGS) $(JSONC_CFLAGS) -fsanitize=fuzzer -o $@ $< \
		$(FUZZ_NODE_OBJ) $(FUZZ_JSON_OBJ) $(JSONC_LIBS) $(MUNGE_LIBS)

$(FUZZ_BUILD)/fuzz-plugin-wire: tests/fuzz/fuzz_plugin_wire.cc \
		$(FUZZ_ENGINE_OBJ) $(FUZZ_BUILD)/libtidal-fuzz-core.a
	$(CLANG) $(FUZZ_CXXFLAGS) $(JSONC_CFLAGS) -fsanitize=fuzzer -o $@ $< \
		$(FUZZ_ENGINE_OBJ) $(FUZZ_ENGINE_LIBS)

$(FUZZ_BUILD)/fuzz-conf: tests/fuzz/fuzz_conf.cc $(FUZZ_ENGINE_OBJ) \
		$(FUZZ_NODE_OBJ) $(FUZZ_BUILD)/libtidal-fuzz-core.a
	$(CLANG) $(FUZZ_CXXFLAGS) $(JSONC_CFLAGS) -fsanitize=fuzzer -o $@ $< \
		$(FUZZ_ENGINE_OBJ) $(FUZZ_NODE_OBJ) $(FUZZ_ENGINE_LIBS) \
		$(MUNGE_LIBS)

$(FUZZ_BUILD)/fuzz-state: tests/fuzz/fuzz_state.cc $(FUZZ_EMU_OBJ) \
		$(FUZZ_ENGINE_OBJ) $(FUZZ_BUILD)/libtidal-fuzz-core.a
	$(CLANG) $(FUZZ_CXXFLAGS) $(SLURM_CFLAGS) -fsanitize=fuzzer -o $@ $< \
		$(FUZZ_EMU_OBJ) $(FUZZ_ENGINE_OBJ) $(FUZZ_ENGINE_LIBS) \
		-L$(SLURM_LIBDIR) -lslurmfull -Wl,-rpath,$(SLURM_LIBDIR)

$(FUZZ_FORMATS:%=$(FUZZ_BUILD)/fuzz-%): $(FUZZ_BUILD)/fuzz-%: \
		tests/fuzz/fuzz_trace.cc $(FUZZ_BUILD)/libtidal-fuzz.a
	$(CLANG) $(FUZZ_CXXFLAGS) -fsanitize=fuzzer -DFUZZ_FORMAT='"$*"' \
		-o $@ $< $(FUZZ_BUILD)/libtidal-fuzz.a $(CORE_LIBS)

# Can this clang++ link a fuzzer?  (Debian's clang needs libclang-rt-dev
# or the versioned libclang-common package for libFuzzer.)
FUZZ_PROBE = ( test -n "$(CLANG)" && printf '%s\n' \
	'extern "C" int LLVMFuzzerTestOneInput(const char *, unsigned long)' \
	'{ return 0; }' | $(CLANG) -x c++ -fsanitize=fuzzer - \
	-o $(FUZZ_BUILD)/.probe >/dev/null 2>&1 )

.PHONY: fuzz-targets
fuzz-targets: $(FUZZ_BIN)
	@:

fuzz:
	@mkdir -p $(FUZZ_BUILD)
	@if ! $(FUZZ_PROBE); then \
		echo "fuzz: no clang++ with libFuzzer ($(or $(CLANG),clang++ not found)); nothing built"; \
		exit 1; fi
	@$(MAKE) --no-print-directory fuzz-targets

check-fuzz:
	@mkdir -p $(FUZZ_BUILD)
	@if ! $(FUZZ_PROBE); then \
		echo "check-fuzz: SKIPPED: no clang++ with libFuzzer ($(or $(CLANG),clang++ not found))"; \
	else \
		$(MAKE) --no-print-directory fuzz-targets && \
		tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BIN); \
	fi

FUZZ_RUNS ?= 10000000
.PHONY: fuzz-long
fuzz-long: fuzz
	@tests/fuzz/run.sh --runs $(FUZZ_RUNS) $(FUZZ_BIN)

.PHONY: clean-fuzz
clean: clean-fuzz
clean-fuzz:
	rm -rf $(FUZZ_BUILD)
