# tests/fuzz/fuzz.mk - libFuzzer targets for every input reader.
#
#   make fuzz        build build-fuzz/fuzz-<target> with clang++
#                    -fsanitize=fuzzer,address,undefined
#   make check-fuzz  run each target for FUZZ_SECONDS (default 5) from its
#                    seed corpus in tests/fuzz/corpus/<target>/; skipped,
#                    with a line saying so, where clang++ or libFuzzer is
#                    missing
#
# One target per trace format (tests/fuzz/fuzz_trace.cc built with
# -DFUZZ_FORMAT) and one for load_cluster (tests/fuzz/fuzz_cluster.cc).
# Included from tests/tests.mk.

CLANG ?= $(shell command -v clang++ 2>/dev/null)
FUZZ_BUILD := build-fuzz
FUZZ_SECONDS ?= 5
FUZZ_FORMATS := muri elasticflow lucid pollux gavel sacct tidal
FUZZ_TARGETS := $(FUZZ_FORMATS) cluster
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

-include $(FUZZ_OBJ:.o=.d)

# LEMON compiles as C++17 only (see the top-level Makefile).
$(FUZZ_BUILD)/obj/core/matching.o: FUZZ_CXXFLAGS += $(LEMON_CFLAGS) \
	$(LEMON_CXXFLAGS)

# An archive, so each target links only the readers it reaches.
$(FUZZ_BUILD)/libtidal-fuzz.a: $(FUZZ_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_BUILD)/fuzz-cluster: tests/fuzz/fuzz_cluster.cc \
		$(FUZZ_BUILD)/libtidal-fuzz.a
	$(CLANG) $(FUZZ_CXXFLAGS) -fsanitize=fuzzer -o $@ $< \
		$(FUZZ_BUILD)/libtidal-fuzz.a $(CORE_LIBS)

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

.PHONY: clean-fuzz
clean: clean-fuzz
clean-fuzz:
	rm -rf $(FUZZ_BUILD)
