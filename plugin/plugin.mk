# plugin/plugin.mk - sched_tidal.so (slurmctld plugin), spank_tidal.so
# (sbatch options) and tidalctl.  Included from the top-level Makefile.
#
# sched_tidal.so needs a configured Slurm source tree of the installed
# version (config.mk: HAVE_SLURM_SRC, SLURM_CFLAGS); without one it is
# skipped with a note.  Its undefined symbols are checked against
# /usr/sbin/slurmctld when it is linked: slurmctld resolves plugin symbols
# lazily, so a typo would otherwise show only when a cycle reaches it.

# PLUGIN_OUT: where the two Slurm plugins and their objects go; $(BUILD),
# unless a second Slurm's build puts its own beside (tests/slurm24.mk).
PLUGIN_OUT ?= $(BUILD)
PLUGIN_CFLAGS := -std=gnu11 $(OPT) -Wall -Wextra -Wno-unused-parameter \
	-Wno-sign-compare -Wno-missing-field-initializers -fPIC $(SANFLAGS) -I. \
	$(CPPFLAGS) $(CFLAGS)
# config.mk names the chosen Slurm's slurmctld and sbatch.
SLURMCTLD ?= /usr/sbin/slurmctld

SCHED_C := plugin/sched/sched_tidal.c plugin/sched/snapshot.c \
	plugin/sched/apply.c plugin/sched/ctl_server.c plugin/sched/resize.c \
	plugin/sched/state.c plugin/sched/slurm_compat.c \
	plugin/sched/share.c plugin/sched/account.c
SCHED_CC := plugin/sched/engine.cc plugin/sched/ctl_engine.cc \
	plugin/sched/metrics.cc plugin/sched/metrics_http.cc $(AGENTS_SRC)
SCHED_OBJ := $(SCHED_C:%.c=$(PLUGIN_OUT)/obj/%.o) $(SCHED_CC:%.cc=$(BUILD)/obj/%.o) \
	$(BUILD)/obj/plugin/common/options.o

$(PLUGIN_OUT)/obj/plugin/sched/%.o: plugin/sched/%.c
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_CFLAGS) $(SLURM_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/plugin/common/%.o: plugin/common/%.c
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_CFLAGS) -MMD -MP -c $< -o $@

-include $(SCHED_OBJ:.o=.d)

# Only Slurm's entry points are exported; the engine stays private.
$(PLUGIN_OUT)/sched_tidal.so: $(SCHED_OBJ) $(BUILD)/libtidal-core.a \
		$(BUILD)/libtidal-proto.a plugin/sched/exports.map \
		plugin/check-syms.sh
	$(CXX) -shared $(TIDAL_LDFLAGS) -Wl,--version-script=plugin/sched/exports.map \
		-o $@.tmp $(SCHED_OBJ) $(BUILD)/libtidal-proto.a -Wl,--whole-archive \
		$(BUILD)/libtidal-core.a -Wl,--no-whole-archive $(CORE_LIBS) \
		$(MUNGE_LIBS) $(MHD_LIBS)
	plugin/check-syms.sh $@.tmp $(SLURMCTLD)
	mv $@.tmp $@

ifeq ($(HAVE_SLURM_SRC),1)
PLUGIN_TARGETS += $(PLUGIN_OUT)/sched_tidal.so
else
PLUGIN_TARGETS += plugin-skip-note
endif


# ---- spank_tidal.so: needs only the installed <slurm/spank.h>.
SPANK_OBJ := $(PLUGIN_OUT)/obj/plugin/spank/spank_tidal.o \
	$(BUILD)/obj/plugin/common/options.o
SBATCH ?= /usr/bin/sbatch

$(PLUGIN_OUT)/obj/plugin/spank/%.o: plugin/spank/%.c
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_CFLAGS) $(LIBSLURM_CFLAGS) -MMD -MP -c $< -o $@

-include $(SPANK_OBJ:.o=.d)

$(PLUGIN_OUT)/spank_tidal.so: $(SPANK_OBJ) plugin/check-syms.sh
	$(CC) -shared $(TIDAL_LDFLAGS) -o $@.tmp $(SPANK_OBJ)
	plugin/check-syms.sh $@.tmp $(SBATCH)
	mv $@.tmp $@

ifeq ($(HAVE_LIBSLURM),1)
PLUGIN_TARGETS += $(PLUGIN_OUT)/spank_tidal.so
endif

# ---- tidalctl: json-c, libmunge and the wire every component speaks
# (proto/: configuration, MUNGE credential, TCP connect, the envelope).
$(BUILD)/tidalctl: plugin/ctl/tidalctl.cc $(BUILD)/libtidal-proto.a
	@mkdir -p $(dir $@)
	$(CXX) $(TIDAL_CXXFLAGS) $(MUNGE_CFLAGS) -o $@ $< \
		$(BUILD)/libtidal-proto.a $(TIDAL_LDFLAGS) \
		$(JSONC_LIBS) $(MUNGE_LIBS)

ifeq ($(HAVE_MUNGE),1)
PLUGIN_TARGETS += $(BUILD)/tidalctl
endif

# ---- install: the plugin beside Slurm's, the rest under PREFIX.
SLURM_PLUGIN_DIR ?= /usr/lib/x86_64-linux-gnu/slurm-wlm
.PHONY: install-plugin
install: install-plugin
install-plugin: $(filter-out plugin-skip-note,$(PLUGIN_TARGETS))
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(SLURM_PLUGIN_DIR)
	for f in $^; do case $$f in \
		*/tidalctl) install -m 755 $$f $(DESTDIR)$(bindir)/ ;; \
		*.so) install -m 755 $$f $(DESTDIR)$(SLURM_PLUGIN_DIR)/ ;; \
	esac; done

.PHONY: plugin plugin-skip-note
plugin-skip-note:
	@echo "note: no configured Slurm source tree (HAVE_SLURM_SRC=0): sched_tidal.so skipped"

plugin: $(PLUGIN_TARGETS)
all: $(PLUGIN_TARGETS)
