# nodeagent/nodeagent.mk - tidald, the per-node agent.  Included from the
# top-level Makefile's node-side section.

# ---- tidald (AGENT) -------------------------------------------------------
# The wire (proto/proto.mk) goes into libtidal-node.a so that every node
# program talks with the same code.  tidald sends
# nodeagent/topo.h's summary (and, with HCAs, the fabric:
# core/placement/fabric.cc, hence libtidal-core.a) at registration.

NODE_LIB_SRC += $(PROTO_SRC) nodeagent/requests.cc
NODE_LIBS += $(JSONC_LIBS)

TIDALD_SRC := nodeagent/tidald.cc nodeagent/plugin_link.cc nodeagent/pins.cc \
	nodeagent/serve.cc nodeagent/fetch.cc nodeagent/ckpt_local.cc
TIDALD_OBJ := $(TIDALD_SRC:%.cc=$(BUILD)/obj/%.o)
-include $(TIDALD_OBJ:.o=.d)

$(TIDALD_OBJ): TIDAL_CXXFLAGS += $(NODE_CFLAGS)

$(BUILD)/tidald: $(TIDALD_OBJ) $(BUILD)/libtidal-node.a \
		$(BUILD)/libtidal-core.a
	$(CXX) $(TIDAL_LDFLAGS) -o $@ $(TIDALD_OBJ) $(BUILD)/libtidal-node.a \
		$(BUILD)/libtidal-core.a $(CORE_LIBS) $(NODE_LIBS)

NODE_TARGETS += $(BUILD)/tidald

# make install: the daemon in sbin, its systemd unit beside the others.
SYSTEMD_UNIT_DIR ?= /etc/systemd/system
.PHONY: install-tidald
install: install-tidald
install-tidald: $(BUILD)/tidald
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(SYSTEMD_UNIT_DIR)
	install -m 755 $(BUILD)/tidald $(DESTDIR)$(PREFIX)/sbin/tidald
	sed 's|/usr/local/sbin/tidald|$(PREFIX)/sbin/tidald|' conf/tidald.service \
		>$(DESTDIR)$(SYSTEMD_UNIT_DIR)/tidald.service
# ---- end of tidald (AGENT) ------------------------------------------------

# ---- topology and fabric (TOPO) -------------------------------------------
# nodeagent/topo*.cc (hwloc summary, libibverbs ports) and fabric_ib.cc
# (libibnetdisc) go into libtidal-node.a for tidald and tidal-launch; each
# library is optional and switched on by its HAVE_ flag from config.mk.
# Programs that call fabric::to_json()/build_tree() also link
# libtidal-core.a (core/placement/fabric.cc).

NODE_LIB_SRC += nodeagent/topo.cc nodeagent/topo_verbs.cc \
	nodeagent/fabric_ib.cc
NODE_LIBS += $(JSONC_LIBS)
ifeq ($(HAVE_HWLOC),1)
NODE_CFLAGS += -DTIDAL_HAVE_HWLOC $(HWLOC_CFLAGS)
NODE_LIBS += $(HWLOC_LIBS)
endif
ifeq ($(HAVE_IBVERBS),1)
NODE_CFLAGS += -DTIDAL_HAVE_IBVERBS $(IBVERBS_CFLAGS)
NODE_LIBS += $(IBVERBS_LIBS)
endif
ifeq ($(HAVE_IBNETDISC),1)
NODE_CFLAGS += -DTIDAL_HAVE_IBNETDISC $(IBNETDISC_CFLAGS)
NODE_LIBS += $(IBNETDISC_LIBS) -libmad
endif

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
