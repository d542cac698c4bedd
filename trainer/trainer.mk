# trainer/trainer.mk - tidal-train and the trainer's library pieces
# (checkpoint format, rendezvous store), included from the top-level
# Makefile's node side.

NODE_LIB_SRC += trainer/checkpoint.cc trainer/store.cc

ifeq ($(HAVE_GLOO),1)
TRAIN_SRC := trainer/train_main.cc trainer/train_loop.cc trainer/mlp.cc \
	trainer/gemm.cc trainer/comm_gloo.cc trainer/bench_cpu.cc
TRAIN_OBJ := $(TRAIN_SRC:%.cc=$(BUILD)/obj/%.o)
-include $(TRAIN_OBJ:.o=.d)
$(TRAIN_OBJ): TIDAL_CXXFLAGS += $(NODE_CFLAGS) $(GLOO_CFLAGS)

$(BUILD)/tidal-train: $(TRAIN_OBJ) $(BUILD)/libtidal-node.a \
		$(BUILD)/libtidal-core.a
	$(CXX) $(TIDAL_LDFLAGS) -o $@ $(TRAIN_OBJ) $(BUILD)/libtidal-node.a \
		$(BUILD)/libtidal-core.a $(CORE_LIBS) $(GLOO_LIBS) $(NODE_LIBS)

NODE_TARGETS += $(BUILD)/tidal-train
endif
