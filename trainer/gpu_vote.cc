/*
 * gpu_vote.cc - the device vote of a world's ranks (gpu_module.h), in
 * tidal-train and in its GPU module alike.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "trainer/gpu_module.h"

#include <chrono>
#include <exception>

#include "node/store.h"

namespace tidal::train {

std::string agree(store::Client &c, const std::string &key, const GpuSetup &s,
		  const std::string &mine)
{
	c.set(key + "." + std::to_string(s.rank), mine.empty() ? "ok" : "no:" + mine);
	if (!mine.empty())
		return mine; /* its own reason, whatever the others say */
	for (int r = 0; r < s.world; r++) {
		store::Bytes b = c.get(key + "." + std::to_string(r));
		std::string v(b.begin(), b.end());
		if (v != "ok")
			return "rank " + std::to_string(r) + ": " + v.substr(3);
	}
	return "";
}

std::string connect_store(store::Client &c, const GpuSetup &s)
{
	if (s.store.empty())
		return "TIDAL_STORE is unset (NCCL needs it for the unique id)";
	std::string err;
	if (!c.connect(s.store, std::chrono::seconds(s.timeout_s), err))
		return err;
	c.set_timeout(std::chrono::seconds(s.timeout_s));
	return "";
}

std::string vote_no(const GpuSetup &s, const std::string &local_err)
{
	store::Client c;
	std::string err = connect_store(c, s);
	if (!err.empty())
		return local_err + " (and " + err + ")";
	try {
		return agree(c, s.prefix + "/gpu.vote", s, local_err);
	} catch (const std::exception &ex) {
		return local_err + " (and store: " + ex.what() + ")";
	}
}

} /* namespace tidal::train */
