# launcher/launcher.mk - tidal-launch, the per-node trainer supervisor,
# included from the top-level Makefile's node side.

LAUNCH_SRC := $(sort $(wildcard launcher/*.cc))
LAUNCH_OBJ := $(LAUNCH_SRC:%.cc=$(BUILD)/obj/%.o)
-include $(LAUNCH_OBJ:.o=.d)

$(LAUNCH_OBJ): TIDAL_CXXFLAGS += $(NODE_CFLAGS)

$(BUILD)/tidal-launch: $(LAUNCH_OBJ) $(BUILD)/libtidal-node.a
	$(CXX) $(TIDAL_LDFLAGS) -o $@ $(LAUNCH_OBJ) $(BUILD)/libtidal-node.a \
		$(JSONC_LIBS) $(NODE_LIBS)

NODE_TARGETS += $(BUILD)/tidal-launch
