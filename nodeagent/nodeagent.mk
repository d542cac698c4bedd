# nodeagent/nodeagent.mk - tidald, the per-node agent.  Included from the
# top-level Makefile's node-side section.

# ---- tidald (AGENT) -------------------------------------------------------
# tidald speaks the wire of libtidal-node.a (proto/) and sends node/topo.h's
# summary (and, with HCAs, the fabric: core/placement/fabric.cc, hence
# libtidal-core.a) at registration.  Its request parsing (requests.cc) and
# interleaving clock (group_clock.cc) are archived in libtidal-agent.a for
# tests/node and tests/fuzz.

AGENT_LIB_SRC := nodeagent/requests.cc nodeagent/group_clock.cc
AGENT_LIB_OBJ := $(AGENT_LIB_SRC:%.cc=$(BUILD)/obj/%.o)
TIDALD_SRC := nodeagent/tidald.cc nodeagent/plugin_link.cc nodeagent/pins.cc \
	nodeagent/serve.cc nodeagent/fetch.cc nodeagent/ckpt_local.cc \
	nodeagent/interleave.cc nodeagent/pack.cc nodeagent/metrics.cc \
	nodeagent/nvml.cc
TIDALD_OBJ := $(TIDALD_SRC:%.cc=$(BUILD)/obj/%.o)
-include $(TIDALD_OBJ:.o=.d) $(AGENT_LIB_OBJ:.o=.d)

$(TIDALD_OBJ) $(AGENT_LIB_OBJ): TIDAL_CXXFLAGS += $(NODE_CFLAGS)

$(BUILD)/libtidal-agent.a: $(AGENT_LIB_OBJ)

$(BUILD)/tidald: $(TIDALD_OBJ) $(BUILD)/libtidal-agent.a \
		$(BUILD)/libtidal-node.a $(BUILD)/libtidal-core.a
	$(CXX) $(TIDAL_LDFLAGS) -o $@ $(TIDALD_OBJ) $(BUILD)/libtidal-agent.a \
		$(BUILD)/libtidal-node.a $(BUILD)/libtidal-core.a $(CORE_LIBS) \
		$(NODE_LIBS) $(MHD_LIBS) -ldl

NODE_TARGETS += $(BUILD)/tidald

# make install: the daemon in sbin, its systemd unit where packages put
# theirs ($(prefix)/lib/systemd/system; systemd also reads
# /usr/local/lib/systemd/system), never /etc/systemd/system, which is the
# administrator's.
SYSTEMD_UNIT_DIR ?= $(prefix)/lib/systemd/system
.PHONY: install-tidald
install: install-tidald
install-tidald: $(BUILD)/tidald
	install -d $(DESTDIR)$(sbindir) $(DESTDIR)$(SYSTEMD_UNIT_DIR)
	install -m 755 $(BUILD)/tidald $(DESTDIR)$(sbindir)/tidald
	sed 's|/usr/local/sbin/tidald|$(sbindir)/tidald|' conf/tidald.service \
		>$(DESTDIR)$(SYSTEMD_UNIT_DIR)/tidald.service
	chmod 644 $(DESTDIR)$(SYSTEMD_UNIT_DIR)/tidald.service
# ---- end of tidald (AGENT) ------------------------------------------------

# ---- tidal-topo (TOPO) ----------------------------------------------------
# Prints what node/topo.cc and node/fabric_ib.cc find (libtidal-node.a).

TIDAL_TOPO_OBJ := $(BUILD)/obj/nodeagent/tidal_topo.o
-include $(TIDAL_TOPO_OBJ:.o=.d)
$(TIDAL_TOPO_OBJ): TIDAL_CXXFLAGS += $(NODE_CFLAGS)

$(BUILD)/tidal-topo: $(TIDAL_TOPO_OBJ) $(BUILD)/libtidal-node.a \
		$(BUILD)/libtidal-core.a
	$(CXX) $(TIDAL_LDFLAGS) -o $@ $(TIDAL_TOPO_OBJ) \
		$(BUILD)/libtidal-node.a $(BUILD)/libtidal-core.a \
		$(CORE_LIBS) $(NODE_LIBS)

NODE_TARGETS += $(BUILD)/tidal-topo
# ---- end of topology and fabric (TOPO) ------------------------------------
