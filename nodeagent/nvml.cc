/*
 * nvml.cc - see nvml.h.  The few NVML entry points used are declared
 * here (NVML's C ABI, stable across driver versions) rather than taken
 * from nvml.h, which Debian's archive does not ship.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "nodeagent/nvml.h"

#include <dlfcn.h>

#include <mutex>

namespace tidal::agent
{

namespace
{

using Ret = int; /* nvmlReturn_t; 0 = NVML_SUCCESS */
using Device = void *;
struct Utilization {
	unsigned gpu, memory;
};
struct Memory {
	unsigned long long total, free, used;
};

struct Lib {
	bool tried = false, up = false;
	std::string why;
	Ret (*init)() = nullptr;
	Ret (*count)(unsigned *) = nullptr;
	Ret (*handle)(unsigned, Device *) = nullptr;
	Ret (*util)(Device, Utilization *) = nullptr;
	Ret (*mem)(Device, Memory *) = nullptr;
	Ret (*uuid)(Device, char *, unsigned) = nullptr;
	const char *(*error)(Ret) = nullptr;
};

std::mutex mu;
Lib lib;

std::string text(Ret r)
{
	if (lib.error)
		if (const char *s = lib.error(r))
			return s;
	return "NVML error " + std::to_string(r);
}

template <class F> bool sym(void *h, const char *name, F *f)
{
	*f = reinterpret_cast<F>(dlsym(h, name));
	if (!*f)
		lib.why = std::string("libnvidia-ml.so.1 lacks ") + name;
	return *f != nullptr;
}

/* mu held. */
void open_once()
{
	if (lib.tried)
		return;
	lib.tried = true;
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		lib.why = std::string("no NVML: ") +
			  (e ? e : "libnvidia-ml.so.1 not found");
		return;
	}
	if (!sym(h, "nvmlInit_v2", &lib.init) ||
	    !sym(h, "nvmlDeviceGetCount_v2", &lib.count) ||
	    !sym(h, "nvmlDeviceGetHandleByIndex_v2", &lib.handle) ||
	    !sym(h, "nvmlDeviceGetUtilizationRates", &lib.util) ||
	    !sym(h, "nvmlDeviceGetMemoryInfo", &lib.mem) ||
	    !sym(h, "nvmlDeviceGetUUID", &lib.uuid) ||
	    !sym(h, "nvmlErrorString", &lib.error))
		return; /* the library stays loaded: it is small */
	Ret r = lib.init();
	if (r) {
		lib.why = "nvmlInit: " + text(r);
		return;
	}
	lib.up = true;
}

} /* namespace */

bool nvml_sample(std::vector<GpuSample> *out, std::string *why)
{
	std::lock_guard<std::mutex> g(mu);
	out->clear();
	open_once();
	if (!lib.up) {
		*why = lib.why;
		return false;
	}
	unsigned n = 0;
	if (Ret r = lib.count(&n)) {
		*why = "nvmlDeviceGetCount: " + text(r);
		return false;
	}
	for (unsigned i = 0; i < n; i++) {
		Device d = nullptr;
		Utilization u{};
		Memory m{};
		char id[96] = "";
		if (lib.handle(i, &d) || lib.util(d, &u) || lib.mem(d, &m))
			continue;
		if (lib.uuid(d, id, sizeof(id)))
			id[0] = 0;
		GpuSample s;
		s.index = i;
		s.uuid = id;
		s.util = u.gpu / 100.0;
		s.mem_used = m.used;
		s.mem_total = m.total;
		out->push_back(s);
	}
	return true;
}

} /* namespace tidal::agent */
