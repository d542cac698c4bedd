# proto/proto.mk - the wire every component speaks (proto/wire.h).
# Included from the top-level Makefile before the node side and the plugin.
#
#   libtidal-proto.a   json.cc (the envelope, typed field access: json-c
#                      only), messages.cc (every message, typed, with its
#                      encoder and decoder), wire.cc (framing, sockets,
#                      MUNGE), wire_c.cc (wire.cc for sched/tidal's C
#                      listener) and http.cc (the metrics endpoint,
#                      libmicrohttpd: MHD_LIBS where it is linked).
#                      Linked by sched_tidal.so, tidalctl, and, through
#                      libtidal-node.a, by tidald, tidal-launch, tidal-train
#                      and tidal-topo.
#
# PROTO_JSON_OBJ is the json-c-only part (json.cc, messages.cc), for what
# links the plugin's engine without its listener (unit tests, tidal-emu,
# fuzz targets).

PROTO_SRC := proto/json.cc proto/messages.cc proto/wire.cc proto/wire_c.cc \
	proto/http.cc
PROTO_OBJ := $(PROTO_SRC:%.cc=$(BUILD)/obj/%.o)
PROTO_JSON_OBJ := $(BUILD)/obj/proto/json.o $(BUILD)/obj/proto/messages.o
-include $(PROTO_OBJ:.o=.d)

$(PROTO_OBJ): TIDAL_CXXFLAGS += $(MUNGE_CFLAGS)

$(BUILD)/libtidal-proto.a: $(PROTO_OBJ)
