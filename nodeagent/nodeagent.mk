# nodeagent/nodeagent.mk - tidald, the per-node agent.  Included from the
# top-level Makefile's node-side section.

# ---- tidald (AGENT) -------------------------------------------------------
# wire.cc (MUNGE + TCP / unix-socket JSON lines) goes into libtidal-node.a
# so that tidal-launch talks to tidald with the same code.  tidald sends
# nodeagent/topo.h's summary at registration once that is in the tree
# (plugin_link.cc checks with __has_include; it registers with {} before).

NODE_LIB_SRC += nodeagent/wire.cc
NODE_LIBS += $(JSONC_LIBS)

TIDALD_SRC := nodeagent/tidald.cc nodeagent/plugin_link.cc \
	nodeagent/serve.cc nodeagent/fetch.cc nodeagent/ckpt_local.cc
TIDALD_OBJ := $(TIDALD_SRC:%.cc=$(BUILD)/obj/%.o)
-include $(TIDALD_OBJ:.o=.d)

$(TIDALD_OBJ): TIDAL_CXXFLAGS += $(NODE_CFLAGS)

$(BUILD)/tidald: $(TIDALD_OBJ) $(BUILD)/libtidal-node.a
	$(CXX) $(TIDAL_LDFLAGS) -o $@ $(TIDALD_OBJ) $(BUILD)/libtidal-node.a \
		$(NODE_LIBS)

NODE_TARGETS += $(BUILD)/tidald
# ---- end of tidald (AGENT) ------------------------------------------------
