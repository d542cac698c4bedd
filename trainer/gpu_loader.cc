/*
 * gpu_loader.cc - tidal-train's side of the GPU module (gpu_module.h),
 * built where the module is: gpu_built(), make_gpu_trainer() and
 * --bench-gemm through tidal-train-cuda.so, loaded at the first call.  A
 * rank that cannot load it trains on CPU + Gloo and says why, as it does
 * for a missing GPU, and a world falls back together (vote_no).  With
 * --backend auto, a node without an NVIDIA driver (no
 * /proc/driver/nvidia/version, nor WSL's /dev/dxg) does not load it at
 * all: no GPU can work there, and CUDA's libraries cost a rank's start
 * about 0.4 s and 220 MB on the 2-core loopback cluster.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "trainer/gpu_module.h"

namespace tidal::train {

int bench_gemm_cpu(const Options &o); /* bench_cpu.cc */

namespace {

const char kModule[] = "tidal-train-cuda.so";

/* Where to look, in order. */
std::vector<std::string> module_paths()
{
	if (const char *e = std::getenv("TIDAL_TRAIN_GPU_MODULE"); e && *e)
		return {e};
	char exe[PATH_MAX];
	ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return {kModule}; /* the loader's own search */
	std::string dir(exe, (size_t)n);
	dir.erase(dir.rfind('/') + 1);
	return {dir + kModule, dir + "../lib/tidal/" + kModule};
}

/* The module's table, or nullptr with WHY (every path tried). */
const GpuModule *load(std::string &why)
{
	static const GpuModule *mod = nullptr;
	static std::string failed;
	if (mod || !failed.empty()) {
		why = failed;
		return mod;
	}
	std::string tried;
	for (const std::string &p : module_paths()) {
		void *h = ::dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			const char *e = ::dlerror();
			tried += std::string(tried.empty() ? "" : "; ") +
				 (e ? e : p + ": cannot load");
			continue;
		}
		auto entry = (const GpuModule *(*)(void))::dlsym(
			h, "tidal_train_gpu_module");
		const GpuModule *m = entry ? entry() : nullptr;
		if (m && m->abi == kGpuModuleAbi &&
		    m->setup_size == sizeof(GpuSetup) &&
		    m->options_size == sizeof(Options)) {
			mod = m;
			return mod;
		}
		tried += std::string(tried.empty() ? "" : "; ") + p +
			 ": not this tidal-train's GPU module (another build)";
		::dlclose(h);
	}
	failed = "cannot load the GPU backend: " + tried;
	why = failed;
	return nullptr;
}

/* Can a GPU work here at all?  RET false with WHY where no NVIDIA driver
 * is seen. */
bool driver_seen(std::string &why)
{
	if (::access("/proc/driver/nvidia/version", F_OK) == 0 ||
	    ::access("/dev/dxg", F_OK) == 0)
		return true;
	why = "no NVIDIA driver here: no /proc/driver/nvidia/version";
	return false;
}

} /* namespace */

bool gpu_built() { return true; }

std::unique_ptr<GpuTrainer> make_gpu_trainer(const GpuSetup &s,
					     std::string &why)
{
	const GpuModule *m = s.asked || driver_seen(why) ? load(why) : nullptr;
	if (m)
		return m->make(s, why);
	if (s.world > 1)
		why = vote_no(s, why);
	return nullptr;
}

} /* namespace tidal::train */

/* --backend cpu: the CPU GEMM; cuda: a GPU or exit 1 ("no GPU (why)");
 * auto: a GPU, else the CPU GEMM. */
int bench_gemm(const tidal::train::Options &o)
{
	using namespace tidal::train;
	if (o.backend == "cpu")
		return bench_gemm_cpu(o);
	std::string why;
	const GpuModule *m =
		o.backend == "cuda" || driver_seen(why) ? load(why) : nullptr;
	int rc = m ? m->bench(o, why) : -1;
	if (rc >= 0)
		return rc;
	fprintf(stderr, "tidal-train: no GPU (%s)%s\n", why.c_str(),
		o.backend == "cuda" ? "" : ": CPU GEMM instead");
	return o.backend == "cuda" ? 1 : bench_gemm_cpu(o);
}
