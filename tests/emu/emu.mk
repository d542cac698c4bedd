# tests/emu/emu.mk - tidal-emu: sched/tidal's snapshot/apply code over an
# emulated slurmctld (tests/emu/emu.c), for `make check-emu` (the tier's
# tests/emu/test_*.sh, run by tests/tests.mk) and `make bench-emu`.
# Needs the configured Slurm source tree, like sched_tidal.so; without it
# the tier's scripts say they are skipped.  Included from tests/tests.mk.

SLURM_LIBDIR ?= $(SLURM_PLUGIN_DIR)
EMU_OBJ := $(BUILD)/obj/tests/emu/emu.o $(BUILD)/obj/tests/emu/emu_main.o \
	$(addprefix $(BUILD)/obj/plugin/sched/, snapshot.o apply.o resize.o \
		slurm_compat.o share.o account.o \
		state.o engine.o ctl_engine.o metrics.o) $(AGENTS_OBJ) \
	$(BUILD)/obj/plugin/common/options.o $(PROTO_JSON_OBJ)

$(BUILD)/obj/tests/emu/%.o: tests/emu/%.c
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_CFLAGS) $(SLURM_CFLAGS) -MMD -MP -c $< -o $@

-include $(EMU_OBJ:.o=.d)

# The whole core archive: policies register themselves at static init.
$(BUILD)/tidal-emu: $(EMU_OBJ) $(BUILD)/libtidal-core.a
	$(CXX) -o $@ $(EMU_OBJ) -Wl,--whole-archive $(BUILD)/libtidal-core.a \
		-Wl,--no-whole-archive -L$(SLURM_LIBDIR) -lslurmfull \
		-Wl,-rpath,$(SLURM_LIBDIR) $(CORE_LIBS) $(TIDAL_LDFLAGS)

ifeq ($(HAVE_SLURM_SRC),1)
check-emu: $(BUILD)/tidal-emu
bench: bench-emu
endif

.PHONY: bench-emu
bench-emu: $(BUILD)/tidal-emu
	bench/emu.sh $(BUILD)
