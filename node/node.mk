# node/node.mk - the node library: what more than one node program uses,
# archived with the wire (proto/proto.mk) in libtidal-node.a.  Included
# from the top-level Makefile's node side, before the programs' .mk files,
# which add their own flags after these.
#
#   checkpoint.cc   the checkpoint format, pins and rotation: tidal-train
#                   writes, tidal-launch chooses, tidald serves and fetches
#   store.cc        the rendezvous store: tidal-train's ranks, tidal-launch's
#                   server
#   cpu_list.cc     Linux CPU lists: topo.cc, tidal-launch's binding (no
#                   hwloc needed)
#   topo.cc,        the node's topology (hwloc, libibverbs ports) and the
#   topo_verbs.cc,  fabric (libibnetdisc): tidald reports them, tidal-launch
#   fabric_ib.cc    binds by them, tidal-topo prints them; each library is
#                   optional and switched on by its HAVE_ flag from
#                   config.mk.  Programs that call fabric::to_json() or
#                   build_tree() also link libtidal-core.a
#                   (core/placement/fabric.cc).

NODE_LIB_SRC += $(PROTO_SRC) node/checkpoint.cc node/store.cc \
	node/cpu_list.cc node/topo.cc node/topo_verbs.cc node/fabric_ib.cc
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
