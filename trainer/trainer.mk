# trainer/trainer.mk - tidal-train, included from the top-level Makefile's
# node side.  The model (mlp, gemm) is archived in libtidal-train.a so that
# tests/node can check the GPU backend's arithmetic against it (and the
# stage pacer, stages.cc, the pack, pack.cc, and the device vote,
# gpu_vote.cc, beside it); the
# checkpoint format and the rendezvous store are the node library's.

TRAIN_LIB_SRC := trainer/mlp.cc trainer/gemm.cc trainer/stages.cc \
	trainer/pack.cc trainer/gpu_vote.cc
TRAIN_LIB_OBJ := $(TRAIN_LIB_SRC:%.cc=$(BUILD)/obj/%.o)
-include $(TRAIN_LIB_OBJ:.o=.d)
$(TRAIN_LIB_OBJ): TIDAL_CXXFLAGS += $(NODE_CFLAGS)

$(BUILD)/libtidal-train.a: $(TRAIN_LIB_OBJ)

ifeq ($(HAVE_GLOO),1)
TRAIN_SRC := trainer/train_main.cc trainer/train_loop.cc \
	trainer/comm_gloo.cc trainer/bench_cpu.cc
TRAIN_OBJ := $(TRAIN_SRC:%.cc=$(BUILD)/obj/%.o)
-include $(TRAIN_OBJ:.o=.d)
$(TRAIN_OBJ): TIDAL_CXXFLAGS += $(NODE_CFLAGS) $(GLOO_CFLAGS)

$(BUILD)/tidal-train: $(TRAIN_OBJ) $(BUILD)/libtidal-train.a \
		$(BUILD)/libtidal-node.a $(BUILD)/libtidal-core.a
	$(CXX) $(TIDAL_LDFLAGS) -o $@ $(TRAIN_OBJ) $(TRAIN_LINK_EXTRA) \
		$(BUILD)/libtidal-train.a $(BUILD)/libtidal-node.a \
		$(BUILD)/libtidal-core.a \
		$(TRAIN_LINK_LIBS) $(CORE_LIBS) $(GLOO_LIBS) $(NODE_LIBS)

NODE_TARGETS += $(BUILD)/tidal-train
endif

# The GPU backend (cuda-nccl) when configure found CUDA and cuBLAS: host
# code by the C++ compiler against the CUDA headers, the kernels by nvcc,
# linked into the module tidal-train-cuda.so (trainer/gpu_module.h), which
# tidal-train loads only to train on a GPU: the executable itself links
# no CUDA library, so a rank on CPU + Gloo starts without mapping them.
# NVCC_ARCH: native code for Hopper (H100/H200) plus its PTX, which newer
# GPUs JIT-compile; a GPU older than sm_90 fails at start-up ("no kernel
# image") and the trainer falls back to CPU.  Override to add e.g. sm_80.
# Without NCCL the backend trains at world size 1 only.
ifeq ($(HAVE_GLOO)$(HAVE_CUDA),11)
NVCC_ARCH ?= -gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_90,code=compute_90
TRAIN_CUDA_OBJ := $(BUILD)/obj/trainer/bench_gpu.o \
	$(BUILD)/obj/trainer/gpu_trainer.o
TRAIN_CU_OBJ := $(BUILD)/obj/trainer/gpu_kernels.o
TRAIN_LOADER_OBJ := $(BUILD)/obj/trainer/gpu_loader.o
-include $(TRAIN_CUDA_OBJ:.o=.d) $(TRAIN_CU_OBJ:.o=.d) $(TRAIN_LOADER_OBJ:.o=.d)
TRAIN_GPU_FLAGS := $(CUDA_CFLAGS)
ifeq ($(HAVE_NCCL),1)
TRAIN_GPU_FLAGS += $(NCCL_CFLAGS) -DTIDAL_HAVE_NCCL
TRAIN_GPU_LIBS := $(CUBLAS_LIBS) $(NCCL_LIBS) $(CUDA_LIBS)
else
TRAIN_GPU_LIBS := $(CUBLAS_LIBS) $(CUDA_LIBS)
endif
$(TRAIN_CUDA_OBJ): TIDAL_CXXFLAGS += $(NODE_CFLAGS) $(TRAIN_GPU_FLAGS)
$(TRAIN_OBJ) $(TRAIN_LOADER_OBJ): TIDAL_CXXFLAGS += -DTIDAL_HAVE_CUDA
$(TRAIN_LOADER_OBJ): TIDAL_CXXFLAGS += $(NODE_CFLAGS)

$(TRAIN_CU_OBJ): $(BUILD)/obj/%.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 -O2 $(NVCC_ARCH) -Xcompiler -fPIC -I. \
		$(CUDA_CFLAGS) -MMD -MP -c $< -o $@

# Its own copies of the static libraries, and one export (gpu_module.map).
$(BUILD)/tidal-train-cuda.so: $(TRAIN_CUDA_OBJ) $(TRAIN_CU_OBJ) \
		trainer/gpu_module.map $(BUILD)/libtidal-train.a \
		$(BUILD)/libtidal-node.a $(BUILD)/libtidal-core.a
	$(CXX) -shared $(TIDAL_LDFLAGS) -Wl,--version-script=trainer/gpu_module.map \
		-Wl,-z,defs -o $@ $(TRAIN_CUDA_OBJ) $(TRAIN_CU_OBJ) \
		$(BUILD)/libtidal-train.a $(BUILD)/libtidal-node.a \
		$(BUILD)/libtidal-core.a $(TRAIN_GPU_LIBS) $(CORE_LIBS) \
		$(NODE_LIBS)

$(BUILD)/tidal-train: $(TRAIN_LOADER_OBJ) | $(BUILD)/tidal-train-cuda.so
$(BUILD)/tidal-train: TRAIN_LINK_EXTRA := $(TRAIN_LOADER_OBJ)
NODE_TARGETS += $(BUILD)/tidal-train-cuda.so
endif
