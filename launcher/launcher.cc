/*
 * launcher.cc - set-up and generations of tidal-launch (see launcher.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "launcher/launcher.h"

#include "launcher/log.h"
#include "proto/wire.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace tidal::launch {

namespace {

std::string join(const std::vector<std::string> &v)
{
	std::string s;
	for (const std::string &a : v)
		s += (s.empty() ? "" : " ") + a;
	return s;
}

} /* namespace */

int Launcher::run()
{
	log_set_node(o_.node.c_str());
	std::string err;
	if (!setup(err)) {
		note("error: %s", err.c_str());
		return 1;
	}
	try {
		if (!start_generation(err)) {
			note("%s%s", exit_code_ == 0 ? "" : "error: ",
			     err.c_str());
			return exit_code_ >= 0 ? exit_code_ : 1;
		}
	} catch (const std::exception &e) {
		note("error: rendezvous store: %s", e.what());
		return 1;
	}
	return supervise();
}

/* The store's Auth from --store-auth, with munged's socket from
 * TIDAL_MUNGE_SOCKET, else slurm.conf's AuthInfo=socket=, else MUNGE's
 * default.  RET false with ERR if munge is asked for and munged does not
 * answer. */
bool Launcher::store_auth(std::string &err)
{
	const char *env = std::getenv("TIDAL_MUNGE_SOCKET");
	auth_.socket = env && *env ? env : wire::read_slurm_side().munge_socket;
	auth_.munge = o_.store_auth != "none";
	std::string cred, e;
	if (auth_.munge && wire::munge_credential(auth_.socket, &cred, &e))
		return true;
	if (o_.store_auth == "munge") {
		err = "--store-auth munge: " + e;
		return false;
	}
	auth_.munge = false;
	note("warning: the rendezvous store %s takes requests from anyone "
	     "who can reach it (%s); --store-auth munge makes this an error",
	     store_addr_.c_str(),
	     o_.store_auth == "none" ? "--store-auth none" : e.c_str());
	return true;
}

bool Launcher::setup(std::string &err)
{
	/* Signals arrive through a signalfd; block them before the store's
	 * threads exist so that no thread takes them. */
	sigset_t set;
	sigemptyset(&set);
	for (int s : { SIGCHLD, SIGTERM, SIGINT, SIGHUP })
		sigaddset(&set, s);
	sigprocmask(SIG_BLOCK, &set, nullptr);
	signal(SIGPIPE, SIG_IGN);
	sig_fd_ = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sig_fd_ < 0) {
		err = std::string("signalfd: ") + std::strerror(errno);
		return false;
	}
	tidald_sock_ = tidald_socket(o_.run_dir, o_.node);
	ckpt_root_ = resolve_ckpt_root(o_.ckpt_root, tidald_sock_);
	job_dir_ = ckpt_root_ + "/" + o_.job;
	store_addr_ = o_.store_host + ":" + std::to_string(o_.store_port);
	if (o_.node_index == 0)
		load_restarts();
	note("start: job %s, node %s (%d of %d), %d local rank%s, trainer "
	     "'%s', checkpoints in %s, restart budget %d",
	     o_.job.c_str(), o_.node.c_str(), o_.node_index, o_.nodes,
	     o_.ranks, o_.ranks == 1 ? "" : "s", join(o_.trainer).c_str(),
	     job_dir_.c_str(), o_.restart_budget);
	if (!store_auth(err))
		return false;
	store_.set_auth(auth_);
	if (o_.node_index == 0) {
		server_ = std::make_unique<store::Server>();
		server_->set_auth(auth_);
		server_->set_log([this](const std::string &m) {
			note("%s", m.c_str());
		});
		if (!server_->start(o_.store_host, o_.store_port, err)) {
			err = "rendezvous store: " + err +
			      "; HINT: pick a free port with --store HOST:PORT";
			return false;
		}
		note("store: serving on %s", store_addr_.c_str());
	}
	if (!store_.connect(store_addr_,
			    store::Millis((long)(o_.rdzv_timeout_s * 1000)),
			    err)) {
		err = "rendezvous store " + store_addr_ + ": " + err;
		return false;
	}
	if (o_.bind_cpus) {
		std::string berr;
		binding_ = binder_.load(o_.topology_xml, berr);
		if (!binding_)
			note("no CPU binding: %s", berr.c_str());
	}
	std::string sock = o_.run_dir + "/" + o_.node + "/launch-" + o_.job +
			   ".sock";
	std::string cerr;
	if (ctl_.open(sock, cerr))
		note("control socket %s", sock.c_str());
	else
		note("warning: no control socket (%s): the scheduler cannot "
		     "ask this job for checkpoints", cerr.c_str());
	return true;
}

std::string Launcher::key(const std::string &name) const
{
	return o_.job + "/" + std::to_string(generation_) + "/launch/" + name;
}

/* Wait until KEYS are all in the store, watching for SIGTERM and serving
 * the control socket meanwhile (status answers; checkpoint requests wait
 * for the ranks).  RET false with ERR on timeout or termination (then
 * exit_code_ = 0). */
bool Launcher::wait_keys(const std::vector<std::string> &keys,
			 double timeout_s, std::string &err)
{
	double end = now_s() + timeout_s;
	while (!store_.check(keys)) {
		if (now_s() > end) {
			std::string missing;
			for (const std::string &k : keys)
				if (!store_.check({ k }))
					missing += " " + k;
			err = "rendezvous: still missing after " +
			      std::to_string((int)timeout_s) + " s:" + missing +
			      "; HINT: did every node start tidal-launch "
			      "(srun --ntasks-per-node=1)?";
			return false;
		}
		std::vector<pollfd> fds = { { sig_fd_, POLLIN, 0 } };
		ctl_.poll_fds(fds);
		if (poll(fds.data(), fds.size(), 20) <= 0)
			continue;
		std::vector<Request> reqs;
		ctl_.service(fds, reqs);
		for (const Request &q : reqs)
			on_request(q);
		signalfd_siginfo si;
		while (read(sig_fd_, &si, sizeof si) == sizeof si) {
			if (si.ssi_signo == SIGCHLD)
				continue;
			err = std::string("terminated by ") +
			      sigabbrev_np(si.ssi_signo) +
			      " while waiting for the other nodes";
			exit_code_ = 0;
			return false;
		}
	}
	return true;
}

/* Publish our rank count, wait for every node's; OUT BASE = our first
 * global rank (ranks are numbered in node order). */
bool Launcher::rendezvous(int &base, std::string &err)
{
	store_.set(key("ranks/" + std::to_string(o_.node_index)),
		   std::to_string(o_.ranks));
	std::vector<std::string> keys;
	for (int i = 0; i < o_.nodes; i++)
		keys.push_back(key("ranks/" + std::to_string(i)));
	if (!wait_keys(keys, o_.rdzv_timeout_s, err))
		return false;
	base = world_ = 0;
	for (int i = 0; i < o_.nodes; i++) {
		store::Bytes b = store_.get(keys[i]);
		int n = std::stoi(std::string(b.begin(), b.end()));
		if (i < o_.node_index)
			base += n;
		world_ += n;
	}
	return true;
}

/* Node 0 picks the checkpoint and publishes "STEP PATH" or "none"; the
 * others must find that same step. */
bool Launcher::agree_resume(std::optional<Resume> &r, std::string &err)
{
	if (o_.node_index == 0) {
		r = find_newest(job_dir_, o_.job, tidald_sock_, none_why_);
		/* The batch the scheduler chose (Pollux), told to every
		 * node with the checkpoint; without an answer, the trainer's
		 * own --global-batch. */
		std::string perr;
		plan_batch_ =
			plan_batch(o_.job, tidald_sock_, perr, &group_size_,
				   &share_);
		if (plan_batch_ < 0)
			note("warning: no batch from the scheduler (%s): the "
			     "trainer's own",
			     perr.c_str());
		plan_batch_ = std::max<int64_t>(0, plan_batch_);
		if (plan_batch_ > 0)
			note("generation %d: global batch %lld, chosen by the "
			     "scheduler",
			     generation_, (long long)plan_batch_);
		store_.set(key("batch"), std::to_string(plan_batch_));
		store_.set(key("group_size"), std::to_string(group_size_));
		store_.set(key("share"), share_);
		store_.set(key("restarts"), std::to_string(restarts_used_));
		store_.set(key("resume"), r ? std::to_string(r->step) + " " +
						      r->path : "none");
		return true;
	}
	if (!wait_keys({ key("resume") }, o_.rdzv_timeout_s, err))
		return false;
	store::Bytes n = store_.get(key("restarts"));
	restarts_used_ = std::stoi(std::string(n.begin(), n.end()));
	store::Bytes pb = store_.get(key("batch"));
	plan_batch_ = std::strtoll(std::string(pb.begin(), pb.end()).c_str(),
				   nullptr, 10);
	store::Bytes gs = store_.get(key("group_size"));
	group_size_ = std::atoi(std::string(gs.begin(), gs.end()).c_str());
	store::Bytes sh = store_.get(key("share"));
	share_ = std::string(sh.begin(), sh.end());
	store::Bytes b = store_.get(key("resume"));
	std::string v(b.begin(), b.end());
	if (v == "none") {
		r.reset();
		return true;
	}
	Resume found;
	if (!find_step(job_dir_, o_.job, tidald_sock_, std::stoull(v), found,
		       err))
		return false;
	r = found;
	return true;
}

/* CPU and NIC binding of rank R (binding.h); told once, in generation 0.
 * A user's own NCCL_IB_HCA wins. */
void Launcher::bind(SpawnSpec &spec, const Rank &r)
{
	if (!binding_)
		return;
	std::string why;
	std::optional<Binding> b =
		binder_.for_rank(r.local, std::getenv("CUDA_VISIBLE_DEVICES"),
				 why);
	if (b && !b->hca.empty() && !std::getenv("NCCL_IB_HCA"))
		spec.env.push_back("NCCL_IB_HCA=" + b->hca);
	if (b)
		spec.cpus = b->cpus;
	if (generation_ != 0)
		return;
	if (b && !b->cpus.empty())
		note("rank %d: GPU %d (NUMA %d): bound to CPUs %s, HCA %s",
		     r.global, b->gpu, b->numa, b->cpus.c_str(),
		     b->hca.empty() ? "none" : b->hca.c_str());
	else
		note("rank %d: not bound to CPUs: %s", r.global, why.c_str());
}

bool Launcher::spawn_all(int base, const std::optional<Resume> &r,
			 std::string &err)
{
	ranks_.assign(o_.ranks, Rank());
	for (int l = 0; l < o_.ranks; l++) {
		Rank &k = ranks_[l];
		k.local = l;
		k.global = base + l;
		SpawnSpec spec;
		spec.argv = o_.trainer;
		spec.env = {
			"TIDAL_RANK=" + std::to_string(k.global),
			"TIDAL_WORLD=" + std::to_string(world_),
			"TIDAL_LOCAL_RANK=" + std::to_string(l),
			"TIDAL_STORE=" + store_addr_,
			"TIDAL_STORE_PREFIX=" + o_.job + "/" +
				std::to_string(generation_),
			std::string("TIDAL_STORE_AUTH=") +
				(auth_.munge ? "munge" : "none"),
			"TIDAL_MUNGE_SOCKET=" + auth_.socket,
			"TIDAL_CKPT_DIR=" + job_dir_,
			"TIDAL_EVENT_FD=3",
			"TIDAL_GENERATION=" + std::to_string(generation_),
		};
		if (r)
			spec.env.push_back("TIDAL_RESUME=" + r->path);
		else
			spec.unset.push_back("TIDAL_RESUME");
		if (plan_batch_ > 0)
			spec.env.push_back("TIDAL_BATCH=" +
					   std::to_string(plan_batch_));
		/* On a shared GPU: the group whose turns the trainer takes
		 * (tidal-train --stage-profile; ignored without it), or,
		 * under a packing policy, the pack whose members it is told
		 * (tidal-train --colocate). */
		const char *shards = std::getenv("SLURM_SHARDS_ON_NODE"),
			   *visible = std::getenv("CUDA_VISIBLE_DEVICES");
		std::string gpu = shared_gpu(o_.node, l, shards, visible);
		if (!gpu.empty()) {
			if (share_ == "pack") {
				spec.env.push_back("TIDAL_PACK=" + gpu);
				spec.unset.push_back("TIDAL_GROUP");
			} else {
				spec.env.push_back(
					"TIDAL_GROUP=" +
					interleave_group(o_.node, l, shards,
							 visible,
							 group_size_));
				spec.unset.push_back("TIDAL_PACK");
			}
			spec.env.push_back("TIDAL_AGENT_SOCK=" + tidald_sock_);
			spec.env.push_back("TIDAL_JOB=" + o_.job);
		} else {
			spec.unset.push_back("TIDAL_GROUP");
			spec.unset.push_back("TIDAL_PACK");
		}
		bind(spec, k);
		if (!spawn_rank(k, spec, err))
			return false;
	}
	return true;
}

bool Launcher::start_generation(std::string &err)
{
	state_ = State::Starting;
	ranks_.clear();
	first_step_seen_ = false;
	stop_ckpt_.reset();
	int base;
	std::optional<Resume> r;
	if (!rendezvous(base, err) || !agree_resume(r, err))
		return false;
	/* tidald names this node when its answer was already here. */
	bool here = r && (r->from == "local" || r->from == o_.node);
	if (r)
		note("generation %d: world %d, ranks %d-%d here, resuming "
		     "from step %llu (%s%s%s)", generation_, world_, base,
		     base + o_.ranks - 1, (unsigned long long)r->step,
		     r->path.c_str(), here ? "" : ", fetched from ",
		     here ? "" : r->from.c_str());
	else
		note("generation %d: world %d, ranks %d-%d here, starting "
		     "fresh (%s)", generation_, world_, base,
		     base + o_.ranks - 1,
		     o_.node_index == 0 && !none_why_.empty() ?
			     none_why_.c_str() : "node 0 found no checkpoint");
	return spawn_all(base, r, err);
}

/* First claim of the current generation's end wins; RET true if ours. */
bool Launcher::claim_end(const std::string &reason)
{
	if (store_.add(key("end_claim"), 1) != 1)
		return false;
	store_.set(key("end"), reason);
	return true;
}

/* The generation ended with REASON ("fail ..." or "resume") on every
 * node: kill what is left, then start the next one.  RET false when the
 * launcher must exit (exit_code_ set). */
bool Launcher::end_generation(const std::string &reason)
{
	kill_and_reap();
	bool failure = reason.compare(0, 5, "fail ") == 0;
	if (failure && o_.node_index == 0)
		save_restarts(restarts_used_ + 1);
	if (failure && ++restarts_used_ > o_.restart_budget) {
		note("error: %s; restart budget exhausted (%d restart%s used "
		     "of %d): giving up", reason.c_str() + 5,
		     restarts_used_ - 1, restarts_used_ == 2 ? "" : "s",
		     o_.restart_budget);
		answer_pending("restart budget exhausted");
		exit_code_ = 1;
		return false;
	}
	generation_++;
	if (failure)
		note("restarting all ranks as generation %d after: %s; "
		     "restart budget left %d of %d", generation_,
		     reason.c_str() + 5, o_.restart_budget - restarts_used_,
		     o_.restart_budget);
	else
		note("resuming as generation %d (no restart spent)",
		     generation_);
	std::string err;
	if (!start_generation(err)) {
		note("%s%s", exit_code_ == 0 ? "" : "error: ", err.c_str());
		if (exit_code_ < 0)
			exit_code_ = 1;
		return false;
	}
	return true;
}

/* The restarts spent by earlier runs of this job (a requeued job keeps
 * its budget): node 0 keeps the count beside the checkpoints. */
void Launcher::load_restarts()
{
	std::ifstream in(job_dir_ + "/launch-restarts");
	int n;
	if (!(in >> n) || n < 0)
		return;
	restarts_used_ = n;
	note("restart budget: %d of %d spent by earlier runs of this job", n,
	     o_.restart_budget);
}

void Launcher::save_restarts(int n)
{
	std::string path = job_dir_ + "/launch-restarts";
	std::error_code ec;
	std::filesystem::create_directories(job_dir_, ec);
	{
		std::ofstream out(path + ".tmp");
		out << n << "\n";
		if (!out.flush())
			ec = std::make_error_code(std::errc::io_error);
	}
	if (ec || std::rename((path + ".tmp").c_str(), path.c_str()) < 0)
		note("warning: cannot record the restart count in %s; a "
		     "requeued run starts with the full budget", path.c_str());
}

/* Has every node's launcher seen its ranks finish? */
bool Launcher::all_finished()
{
	std::vector<std::string> keys;
	for (int i = 0; i < o_.nodes; i++)
		keys.push_back(key("finished/" + std::to_string(i)));
	return store_.check(keys);
}

} /* namespace tidal::launch */
