/*
 * gpu_trainer.cc - GpuTrainer on CUDA (see gpu.h): device buffers, one
 * stream, cuBLAS SGEMM and the kernels of gpu_kernels.cu in the order of
 * gpu_math.h's forward_backward(), the NCCL all-reduce, and the start-up
 * that picks the device and makes every rank agree on the backend; built
 * into tidal-train-cuda.so, which tidal-train loads (gpu_module.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "trainer/gpu.h"
#include "trainer/gpu_module.h"

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#ifdef TIDAL_HAVE_NCCL
#include <nccl.h>
#endif

#include "trainer/gpu_kernels.h"
#include "trainer/gpu_math.h"
#include "node/store.h"
#include "trainer/train.h"

namespace tidal::train {

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail_at(const char *file, int line, const char *call,
			  const std::string &what)
{
	throw std::runtime_error(std::string(file) + ":" + std::to_string(line) +
				 ": " + call + ": " + what);
}

#define CUDA_CHECK(x)                                                         \
	do {                                                                  \
		cudaError_t e_ = (x);                                         \
		if (e_ != cudaSuccess)                                        \
			fail_at(__FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
	} while (0)
#define CUBLAS_CHECK(x)                                                       \
	do {                                                                  \
		cublasStatus_t s_ = (x);                                      \
		if (s_ != CUBLAS_STATUS_SUCCESS)                              \
			fail_at(__FILE__, __LINE__, #x,                       \
				cublasGetStatusString(s_));                   \
	} while (0)

static_assert(kStop == kCkpt + 1, "the flags are copied as one pair");

/* gpu_math.h's Ops on the device. */
struct DeviceOps {
	cublasHandle_t blas;
	cudaStream_t stream;
	float *loss_slot;
	double *partial;

	void gemm(bool ta, bool tb, size_t m, size_t n, size_t k,
		  const float *a, const float *b, float *c)
	{
		gpu::CmGemm g = gpu::rowmajor_to_cublas(ta, tb, (int)m, (int)n,
							(int)k);
		const float one = 1, zero = 0;
		CUBLAS_CHECK(cublasSgemm(
			blas, g.op_a_t ? CUBLAS_OP_T : CUBLAS_OP_N,
			g.op_b_t ? CUBLAS_OP_T : CUBLAS_OP_N, g.m, g.n, g.k,
			&one, b, g.lda, a, g.ldb, &zero, c, g.ldc));
	}
	void bias_act(float *z, const float *bias, size_t b, size_t n, bool relu)
	{
		gpu::launch_bias_act(z, bias, b, n, relu, stream);
	}
	void out_delta(const float *pred, const float *y, size_t count, float *d)
	{
		gpu::launch_out_delta(pred, y, count, d, stream);
	}
	void loss(const float *d, size_t count)
	{
		gpu::launch_sumsq(d, count, partial, 0.5, loss_slot, nullptr,
				  stream);
	}
	void bias_grad(const float *d, size_t b, size_t n, float *db)
	{
		gpu::launch_bias_grad(d, b, n, db, stream);
	}
	void relu_mask(const float *act, size_t count, float *d)
	{
		gpu::launch_relu_mask(act, count, d, stream);
	}
};

class CudaTrainer : public GpuTrainer {
public:
	CudaTrainer(const GpuSetup &s, int dev)
		: s_(s), layout_(s.shape), dev_(dev), n_(layout_.params)
	{
	}
	~CudaTrainer() override;
	void init();
	std::string device() const override { return name_; }
	void upload(const float *params, const float *m, const float *v) override;
	void download(float *params, float *m, float *v) override;
	void compute(const float *x, const float *y, size_t b) override;
	void reduce_update(float ckpt, float stop, float lr, float inv_batch,
			   uint64_t t, float *ctrl, double &big,
			   double &comm_s) override;
#ifdef TIDAL_HAVE_NCCL
	ncclComm_t nccl = nullptr;
#endif

private:
	template <class T> T *dalloc(size_t count);
	void wait(const char *what);
	void allreduce();

	GpuSetup s_;
	gpu::MlpLayout layout_;
	int dev_;
	size_t n_;
	std::string name_;
	cudaStream_t stream_ = nullptr;
	cublasHandle_t blas_ = nullptr;
	cudaEvent_t ar0_ = nullptr, ar1_ = nullptr;
	std::vector<void *> allocs_;
	float *params_ = nullptr, *m_ = nullptr, *v_ = nullptr;
	float *buf_ = nullptr, *y_ = nullptr, *delta_ = nullptr,
	      *delta_prev_ = nullptr;
	std::vector<float *> act_;
	double *partial_ = nullptr, *big_ = nullptr;
	float *host_ctrl_ = nullptr; /* pinned: kSlots floats, then a double */
};

template <class T> T *CudaTrainer::dalloc(size_t count)
{
	void *p = nullptr;
	CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(count, 1) * sizeof(T)));
	allocs_.push_back(p);
	return (T *)p;
}

/* Buffers, stream, cuBLAS; then one kernel, so a binary without code for
 * this GPU fails here ("no kernel image") rather than at step 1. */
void CudaTrainer::init()
{
	CUDA_CHECK(cudaSetDevice(dev_));
	cudaDeviceProp p;
	CUDA_CHECK(cudaGetDeviceProperties(&p, dev_));
	name_ = std::string(p.name) + " (device " + std::to_string(dev_) +
		", sm_" + std::to_string(p.major) + std::to_string(p.minor) + ")";
	CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
	CUDA_CHECK(cudaEventCreate(&ar0_));
	CUDA_CHECK(cudaEventCreate(&ar1_));
	CUBLAS_CHECK(cublasCreate(&blas_));
	CUBLAS_CHECK(cublasSetStream(blas_, stream_));
	/* Plain FP32 (no TF32): both backends train the same model within
	 * fp tolerance, so their checkpoints are interchangeable. */
	CUBLAS_CHECK(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH));
	size_t mb = std::max<size_t>(s_.max_batch, 1);
	params_ = dalloc<float>(n_);
	m_ = dalloc<float>(n_);
	v_ = dalloc<float>(n_);
	buf_ = dalloc<float>(n_ + kSlots);
	y_ = dalloc<float>(mb * layout_.dims.back());
	delta_ = dalloc<float>(mb * layout_.widest);
	delta_prev_ = dalloc<float>(mb * layout_.widest);
	for (size_t d : layout_.dims)
		act_.push_back(dalloc<float>(mb * d));
	partial_ = dalloc<double>(gpu::kReduceBlocks);
	big_ = dalloc<double>(1);
	CUDA_CHECK(cudaMallocHost(&host_ctrl_, kSlots * sizeof(float) +
						       2 * sizeof(double)));
	CUDA_CHECK(cudaMemsetAsync(buf_, 0, (n_ + kSlots) * sizeof(float),
				   stream_));
	gpu::launch_sumsq(buf_, n_, partial_, 1.0, nullptr, big_, stream_);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaStreamSynchronize(stream_));
	if (s_.params)
		upload(s_.params, s_.m, s_.v);
}

CudaTrainer::~CudaTrainer()
{
	if (stream_)
		cudaStreamSynchronize(stream_);
#ifdef TIDAL_HAVE_NCCL
	if (nccl)
		ncclCommDestroy(nccl);
#endif
	for (void *p : allocs_)
		cudaFree(p);
	if (host_ctrl_)
		cudaFreeHost(host_ctrl_);
	if (blas_)
		cublasDestroy(blas_);
	if (ar0_)
		cudaEventDestroy(ar0_);
	if (ar1_)
		cudaEventDestroy(ar1_);
	if (stream_)
		cudaStreamDestroy(stream_);
}

/* Wait for the stream, watching NCCL: a peer that died leaves the
 * all-reduce hanging, so past the timeout the communicator is aborted and
 * the step fails (the launcher restarts the world). */
void CudaTrainer::wait(const char *what)
{
	auto deadline = Clock::now() + std::chrono::seconds(s_.timeout_s);
	for (;;) {
		cudaError_t e = cudaStreamQuery(stream_);
		if (e == cudaSuccess)
			return;
		if (e != cudaErrorNotReady)
			throw std::runtime_error(std::string(what) + ": " +
						 cudaGetErrorString(e));
#ifdef TIDAL_HAVE_NCCL
		ncclResult_t r = ncclSuccess;
		if (nccl && ncclCommGetAsyncError(nccl, &r) == ncclSuccess &&
		    r != ncclSuccess && r != ncclInProgress) {
			std::string last = ncclGetLastError(nccl);
			ncclCommAbort(nccl);
			nccl = nullptr;
			throw std::runtime_error(std::string(what) + ": NCCL: " +
						 ncclGetErrorString(r) + " (" +
						 last + ")");
		}
#endif
		if (Clock::now() > deadline) {
#ifdef TIDAL_HAVE_NCCL
			if (nccl)
				ncclCommAbort(nccl);
			nccl = nullptr;
#endif
			throw std::runtime_error(
				std::string(what) + ": not finished after " +
				std::to_string(s_.timeout_s) +
				" s (a peer rank gone?); --timeout sets the limit");
		}
		std::this_thread::sleep_for(std::chrono::microseconds(20));
	}
}

void CudaTrainer::upload(const float *params, const float *m, const float *v)
{
	size_t bytes = n_ * sizeof(float);
	CUDA_CHECK(cudaMemcpyAsync(params_, params, bytes,
				   cudaMemcpyHostToDevice, stream_));
	CUDA_CHECK(cudaMemcpyAsync(m_, m, bytes, cudaMemcpyHostToDevice, stream_));
	CUDA_CHECK(cudaMemcpyAsync(v_, v, bytes, cudaMemcpyHostToDevice, stream_));
	wait("upload of the parameters and Adam state");
}

void CudaTrainer::download(float *params, float *m, float *v)
{
	size_t bytes = n_ * sizeof(float);
	CUDA_CHECK(cudaMemcpyAsync(params, params_, bytes,
				   cudaMemcpyDeviceToHost, stream_));
	CUDA_CHECK(cudaMemcpyAsync(m, m_, bytes, cudaMemcpyDeviceToHost, stream_));
	CUDA_CHECK(cudaMemcpyAsync(v, v_, bytes, cudaMemcpyDeviceToHost, stream_));
	wait("download of the parameters and Adam state");
}

void CudaTrainer::compute(const float *x, const float *y, size_t b)
{
	if (b > s_.max_batch)
		throw std::runtime_error("batch " + std::to_string(b) +
					 " exceeds the GPU buffers' " +
					 std::to_string(s_.max_batch));
	if (b == 0) { /* a rank with no samples adds zeros */
		CUDA_CHECK(cudaMemsetAsync(buf_, 0, (n_ + kSlots) * sizeof(float),
					   stream_));
		return;
	}
	CUDA_CHECK(cudaMemcpyAsync(act_[0], x, b * layout_.dims[0] * sizeof(float),
				   cudaMemcpyHostToDevice, stream_));
	CUDA_CHECK(cudaMemcpyAsync(y_, y, b * layout_.dims.back() * sizeof(float),
				   cudaMemcpyHostToDevice, stream_));
	DeviceOps ops{blas_, stream_, buf_ + n_ + kLoss, partial_};
	gpu::forward_backward(ops, layout_, params_, act_.data(), y_, b, delta_,
			      delta_prev_, buf_);
	/* the local |g|^2 / b^2 only feeds the noise scale (world > 1) */
	if (s_.world > 1)
		gpu::launch_sumsq(buf_, n_, partial_, 1.0 / ((double)b * b),
				  buf_ + n_ + kLocalNorm2, nullptr, stream_);
	else
		CUDA_CHECK(cudaMemsetAsync(buf_ + n_ + kLocalNorm2, 0,
					   sizeof(float), stream_));
	CUDA_CHECK(cudaGetLastError());
}

void CudaTrainer::allreduce()
{
#ifdef TIDAL_HAVE_NCCL
	if (!nccl)
		return;
	ncclResult_t r = ncclAllReduce(buf_, buf_, n_ + kSlots, ncclFloat,
				       ncclSum, nccl, stream_);
	/* A non-blocking communicator may answer "in progress": the
	 * all-reduce is then not yet on the stream, and Adam must not be
	 * enqueued before it is. */
	auto deadline = Clock::now() + std::chrono::seconds(s_.timeout_s);
	while (r == ncclInProgress) {
		if (Clock::now() > deadline)
			break;
		std::this_thread::sleep_for(std::chrono::microseconds(20));
		ncclCommGetAsyncError(nccl, &r);
	}
	if (r != ncclSuccess) {
		std::string e = std::string("ncclAllReduce: ") +
				(r == ncclInProgress ? "not enqueued within the timeout"
						     : ncclGetErrorString(r)) +
				" (" + ncclGetLastError(nccl) + ")";
		ncclCommAbort(nccl);
		nccl = nullptr;
		throw std::runtime_error(e);
	}
#endif
}

void CudaTrainer::reduce_update(float ckpt, float stop, float lr,
				float inv_batch, uint64_t t, float *ctrl,
				double &big, double &comm_s)
{
	host_ctrl_[0] = ckpt;
	host_ctrl_[1] = stop;
	CUDA_CHECK(cudaMemcpyAsync(buf_ + n_ + kCkpt, host_ctrl_,
				   2 * sizeof(float), cudaMemcpyHostToDevice,
				   stream_));
	CUDA_CHECK(cudaEventRecord(ar0_, stream_));
	allreduce();
	CUDA_CHECK(cudaEventRecord(ar1_, stream_));
	if (s_.world > 1)
		gpu::launch_sumsq(buf_, n_, partial_, 1.0, nullptr, big_, stream_);
	float c1, c2;
	gpu::adam_corrections(t, c1, c2);
	gpu::launch_adam(params_, buf_, m_, v_, n_, lr, inv_batch, c1, c2,
			 stream_);
	CUDA_CHECK(cudaGetLastError());
	double *host_big = (double *)(host_ctrl_ + kSlots + (kSlots & 1));
	CUDA_CHECK(cudaMemcpyAsync(host_ctrl_, buf_ + n_, kSlots * sizeof(float),
				   cudaMemcpyDeviceToHost, stream_));
	CUDA_CHECK(cudaMemcpyAsync(host_big, big_, sizeof(double),
				   cudaMemcpyDeviceToHost, stream_));
	wait("all-reduce and Adam update");
	memcpy(ctrl, host_ctrl_, kSlots * sizeof(float));
	big = s_.world > 1 ? *host_big : 0;
	float ms = 0;
	CUDA_CHECK(cudaEventElapsedTime(&ms, ar0_, ar1_));
	comm_s = ms / 1e3;
}

#ifdef TIDAL_HAVE_NCCL
/* The unique id from rank 0 through the store, then a non-blocking init
 * polled against the timeout and against the other ranks' votes (a rank
 * that failed will never join).  RET "" or the error. */
std::string nccl_connect(store::Client &c, const GpuSetup &s, ncclComm_t &comm)
{
	ncclUniqueId id;
	std::string key = s.prefix + "/nccl.uid";
	if (s.rank == 0) {
		ncclResult_t r = ncclGetUniqueId(&id);
		if (r != ncclSuccess) {
			c.set(key, std::string("none"));
			return std::string("ncclGetUniqueId: ") + ncclGetErrorString(r);
		}
		c.set(key, store::Bytes((uint8_t *)&id, (uint8_t *)&id + sizeof id));
	} else {
		store::Bytes b = c.get(key);
		if (b.size() != sizeof id)
			return "rank 0 has no NCCL unique id";
		memcpy(&id, b.data(), sizeof id);
	}
	ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
	cfg.blocking = 0;
	ncclResult_t r = ncclCommInitRankConfig(&comm, s.world, id, s.rank, &cfg);
	auto deadline = Clock::now() + std::chrono::seconds(s.timeout_s);
	std::string vote = s.prefix + "/nccl.vote.";
	for (int polls = 0; r == ncclInProgress; polls++) {
		ncclCommGetAsyncError(comm, &r);
		if (r != ncclInProgress)
			break;
		if (Clock::now() > deadline) {
			ncclCommAbort(comm);
			return "ncclCommInitRank: not done after " +
			       std::to_string(s.timeout_s) + " s";
		}
		for (int p = 0; polls % 50 == 49 && p < s.world; p++) {
			std::string k = vote + std::to_string(p);
			if (p != s.rank && c.check({k}) &&
			    store::Bytes(c.get(k)) != store::Bytes{'o', 'k'}) {
				ncclCommAbort(comm);
				return "rank " + std::to_string(p) +
				       " failed to start NCCL";
			}
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
	if (r != ncclSuccess) {
		std::string e = std::string("ncclCommInitRank: ") +
				ncclGetErrorString(r) + " (" + ncclGetLastError(comm) + ")";
		ncclCommAbort(comm);
		return e;
	}
	return "";
}
#endif

/* World > 1: agree on the device, then on NCCL.  RET "" or why not. */
std::string connect_world(CudaTrainer *t, const std::string &local_err,
			  const GpuSetup &s)
{
	store::Client c;
	if (std::string err = connect_store(c, s); !err.empty())
		return err;
	try {
		if (std::string why = agree(c, s.prefix + "/gpu.vote", s,
					    local_err); !why.empty())
			return why;
#ifdef TIDAL_HAVE_NCCL
		ncclComm_t comm = nullptr;
		std::string mine = nccl_connect(c, s, comm);
		std::string why = agree(c, s.prefix + "/nccl.vote", s, mine);
		if (!why.empty()) {
			if (mine.empty())
				ncclCommAbort(comm);
			return why;
		}
		t->nccl = comm;
		return "";
#else
		(void)t;
		return agree(c, s.prefix + "/nccl.vote", s,
			     "built without NCCL (world > 1 needs it)");
#endif
	} catch (const std::exception &ex) {
		return std::string("store: ") + ex.what();
	}
}

} /* namespace */

std::unique_ptr<GpuTrainer> make_cuda_trainer(const GpuSetup &s,
					      std::string &why)
{
	std::unique_ptr<CudaTrainer> t;
	std::string err;
	int count = 0;
	cudaError_t e = cudaGetDeviceCount(&count);
	if (e != cudaSuccess)
		err = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
	else if (count <= 0)
		err = "no visible CUDA device";
	else
		try {
			t = std::make_unique<CudaTrainer>(s, s.local_rank % count);
			t->init();
		} catch (const std::exception &ex) {
			err = ex.what();
			t.reset();
		}
	if (s.world > 1)
		err = connect_world(t.get(), err, s);
	if (!err.empty()) {
		why = err;
		return nullptr;
	}
	return t;
}

} /* namespace tidal::train */

extern "C" const tidal::train::GpuModule *tidal_train_gpu_module(void)
{
	using namespace tidal::train;
	static const GpuModule m = {kGpuModuleAbi, sizeof(GpuSetup),
				    sizeof(Options), make_cuda_trainer,
				    bench_gemm_gpu};
	return &m;
}
