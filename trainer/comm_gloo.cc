/*
 * comm_gloo.cc - Comm over Gloo: the store Client adapted to
 * gloo::rendezvous::Store, a PrefixStore per attempt (TIDAL_STORE_PREFIX,
 * so a restarted generation never reads the previous one's addresses), a
 * TCP device on the address we reach the store from, and AllreduceRing.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "trainer/comm.h"

#include <chrono>
#include <map>
#include <stdexcept>
#include <thread>

#include <gloo/allreduce_ring.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include "node/store.h"

namespace tidal::train {

namespace {

class GlooStore : public gloo::rendezvous::Store {
public:
	explicit GlooStore(store::Client &c) : c_(c) {}
	void set(const std::string &key, const std::vector<char> &data) override
	{
		c_.set(key, store::Bytes(data.begin(), data.end()));
	}
	std::vector<char> get(const std::string &key) override
	{
		store::Bytes b = c_.get(key);
		return std::vector<char>(b.begin(), b.end());
	}
	void wait(const std::vector<std::string> &keys) override
	{
		c_.wait(keys);
	}
	void wait(const std::vector<std::string> &keys,
		  const std::chrono::milliseconds &timeout) override
	{
		c_.wait(keys, timeout);
	}

private:
	store::Client &c_;
};

class GlooComm : public Comm {
public:
	std::shared_ptr<gloo::rendezvous::Context> ctx;

	void allreduce(float *buf, size_t n) override
	{
		auto &algo = rings_[{buf, n}];
		if (!algo)
			algo = std::make_unique<gloo::AllreduceRing<float>>(
				ctx, std::vector<float *>{buf}, (int)n);
		algo->run();
	}

	/* Through the store, not Gloo: a Gloo barrier returns before its
	 * own sends have left the process, so a rank could still exit with
	 * a peer waiting on them.  Every rank here has returned from its
	 * last all-reduce (whose sends it waited for), so none will touch a
	 * connection again. */
	void finish() override
	{
		std::string key = prefix + "/finished";
		client.add(key, 1);
		auto give_up = std::chrono::steady_clock::now() + timeout;
		while (client.add(key, 0) < world) {
			if (std::chrono::steady_clock::now() > give_up)
				throw std::runtime_error(
					"not every rank reached the end within " +
					std::to_string(timeout.count()) + " s (store key " +
					key + ")");
			std::this_thread::sleep_for(std::chrono::milliseconds(5));
		}
	}

	store::Client client; /* rendezvous, then the end-of-run barrier */
	std::string prefix;
	int world = 1;
	std::chrono::seconds timeout{120};

private:
	std::map<std::pair<float *, size_t>,
		 std::unique_ptr<gloo::AllreduceRing<float>>>
		rings_;
};

class LocalComm : public Comm {
public:
	void allreduce(float *, size_t) override {}
};

} /* namespace */

std::unique_ptr<Comm> make_gloo_comm(int rank, int world,
				     const std::string &store_addr,
				     const std::string &prefix, int timeout_s,
				     std::string &err)
{
	auto comm = std::make_unique<GlooComm>();
	store::Client &client = comm->client;
	auto timeout = std::chrono::seconds(timeout_s);
	if (!client.connect(store_addr, timeout, err))
		return nullptr;
	client.set_timeout(timeout);
	comm->prefix = prefix;
	comm->world = world;
	comm->timeout = timeout;
	try {
		GlooStore gs(client);
		gloo::rendezvous::PrefixStore ps(prefix, gs);
		gloo::transport::tcp::attr attr;
		attr.hostname = client.local_ip();
		auto dev = gloo::transport::tcp::CreateDevice(attr);
		comm->ctx = std::make_shared<gloo::rendezvous::Context>(rank,
									world);
		comm->ctx->setTimeout(timeout);
		comm->ctx->connectFullMesh(ps, dev);
		return comm;
	} catch (const std::exception &e) {
		err = "gloo rendezvous (rank " + std::to_string(rank) + " of " +
		      std::to_string(world) + ", store " + store_addr +
		      ", prefix '" + prefix + "'): " + e.what();
		return nullptr;
	}
}

std::unique_ptr<Comm> make_local_comm() { return std::make_unique<LocalComm>(); }

} /* namespace tidal::train */
