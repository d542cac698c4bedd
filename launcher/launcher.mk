# launcher/launcher.mk - tidal-launch, the per-node trainer supervisor,
# included from the top-level Makefile's node side.
#
# The pieces with no state of their own (options, rank processes and
# events, the control socket, checkpoint choice, binding, logging) are
# archived in libtidal-launch.a, where tests/node/test_launch_unit.cc can
# use them; the supervisor itself is the program.

LAUNCH_LIB_SRC := launcher/options.cc launcher/ranks.cc launcher/control.cc \
	launcher/resume.cc launcher/binding.cc launcher/log.cc
LAUNCH_LIB_OBJ := $(LAUNCH_LIB_SRC:%.cc=$(BUILD)/obj/%.o)
-include $(LAUNCH_LIB_OBJ:.o=.d)
$(LAUNCH_LIB_OBJ): TIDAL_CXXFLAGS += $(NODE_CFLAGS)

$(BUILD)/libtidal-launch.a: $(LAUNCH_LIB_OBJ)

LAUNCH_SRC := launcher/main.cc launcher/launcher.cc launcher/supervise.cc
LAUNCH_OBJ := $(LAUNCH_SRC:%.cc=$(BUILD)/obj/%.o)
-include $(LAUNCH_OBJ:.o=.d)

$(LAUNCH_OBJ): TIDAL_CXXFLAGS += $(NODE_CFLAGS)

$(BUILD)/tidal-launch: $(LAUNCH_OBJ) $(BUILD)/libtidal-launch.a \
		$(BUILD)/libtidal-node.a
	$(CXX) $(TIDAL_LDFLAGS) -o $@ $(LAUNCH_OBJ) $(BUILD)/libtidal-launch.a \
		$(BUILD)/libtidal-node.a \
		$(JSONC_LIBS) $(NODE_LIBS)

NODE_TARGETS += $(BUILD)/tidal-launch
