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
		$(BUILD)/libtidal-core.a $(TRAIN_LINK_EXTRA) $(CORE_LIBS) \
		$(GLOO_LIBS) $(NODE_LIBS)

NODE_TARGETS += $(BUILD)/tidal-train
endif

# The GPU side (probe, --bench-gemm) when configure found CUDA and cuBLAS:
# host code only, so the C++ compiler builds it against the CUDA headers.
ifeq ($(HAVE_GLOO)$(HAVE_CUDA),11)
TRAIN_CUDA_OBJ := $(BUILD)/obj/trainer/train_cuda.o
-include $(TRAIN_CUDA_OBJ:.o=.d)
$(TRAIN_CUDA_OBJ): TIDAL_CXXFLAGS += $(CUDA_CFLAGS)
$(TRAIN_OBJ): TIDAL_CXXFLAGS += -DTIDAL_HAVE_CUDA
$(BUILD)/tidal-train: $(TRAIN_CUDA_OBJ)
$(BUILD)/tidal-train: TRAIN_LINK_EXTRA := $(TRAIN_CUDA_OBJ) $(CUBLAS_LIBS) \
	$(CUDA_LIBS)
endif
