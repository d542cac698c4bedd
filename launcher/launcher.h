/*
 * launcher.h - tidal-launch's supervisor: one per node of a job step.
 *
 * A job runs as a sequence of generations.  Each generation is one
 * rendezvous of all nodes' launchers through the store (keys under
 * <job>/<generation>/launch/) and one set of trainer processes:
 *
 *   start_generation: publish local rank count -> wait for all nodes
 *       -> global ranks in node order -> node 0 picks the checkpoint,
 *       the others look up the same step -> spawn the ranks
 *   supervise: poll event pipes, control socket, signals, the store
 *       |
 *       +- a rank fails        -> end "fail" (first claim wins, all nodes
 *       |                         see it) -> kill -> next generation,
 *       |                         one restart spent, or exit 1
 *       +- checkpoint_stop     -> trainers checkpoint and exit "stopped"
 *       |                         -> wait for SIGTERM (exit 0), or after
 *       |                         --stop-grace node 0 ends the generation
 *       |                         "resume" -> next generation, no restart
 *       |                         spent
 *       +- SIGTERM             -> forward, wait for the trainers, exit
 *       +- all ranks done      -> say so in the store, wait for every
 *                                 node to say so (exit 0), or for a
 *                                 "fail" that a late rank on another node
 *                                 reports (then restart with the others)
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include "launcher/binding.h"
#include "launcher/control.h"
#include "launcher/options.h"
#include "launcher/ranks.h"
#include "launcher/resume.h"
#include "node/store.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tidal::launch {

class Launcher {
public:
	explicit Launcher(const Options &o) : o_(o) {}
	/* RET the process exit status. */
	int run();
	/* The signal (SIGTERM, SIGINT, SIGHUP) that interrupted training
	 * and ended the launcher, 0 if none: main() dies by it, so that
	 * Slurm records an interrupted job, not a finished one. */
	int interrupted_by() const { return term_signal_; }

private:
	enum class State {
		Starting,    /* spawned; not every local rank said "start" */
		Running,
		Stopping,    /* SIGUSR2 sent for checkpoint_stop */
		Stopped,     /* trainers exited "stopped"; waiting */
		Terminating, /* SIGTERM forwarded; exit when they have */
		Finished,    /* ours done; waiting for the other nodes' */
	};
	struct Ckpt {
		uint64_t step = 0;
		std::string path;
		uint64_t bytes = 0;
		double ms = 0;
	};

	/* launcher.cc: set-up and generations */
	bool setup(std::string &err);
	bool start_generation(std::string &err);
	bool rendezvous(int &base, std::string &err);
	bool agree_resume(std::optional<Resume> &r, std::string &err);
	bool spawn_all(int base, const std::optional<Resume> &r,
		       std::string &err);
	bool wait_keys(const std::vector<std::string> &keys, double timeout_s,
		       std::string &err);
	std::string key(const std::string &name) const;
	void bind(SpawnSpec &spec, const Rank &r);
	bool claim_end(const std::string &reason);
	bool end_generation(const std::string &reason);
	bool all_finished();
	void load_restarts();
	void save_restarts(int n);

	/* supervise.cc: the event loop */
	int supervise();
	void drain_events();
	void on_signals();
	void reap();
	void on_event(Rank &r, const Event &e);
	void on_request(const Request &q);
	void deliver_owed_signal();
	void signal_ranks(int sig);
	void kill_and_reap();
	void after_exits();
	void poll_remote_end();
	void answer_pending(const std::string &error);
	std::string status_json() const;
	std::string ckpt_json(const Ckpt &c) const;
	bool all_exited() const;
	bool all_started() const;
	bool store_auth(std::string &err);

	Options o_;
	std::string ckpt_root_, job_dir_, tidald_sock_, store_addr_;
	std::string none_why_; /* why node 0 found no checkpoint */
	std::unique_ptr<store::Server> server_;
	store::Client store_;
	store::Auth auth_; /* the store's, passed on to the ranks */
	ControlServer ctl_;
	Binder binder_;
	bool binding_ = false;      /* topology loaded */
	int sig_fd_ = -1;

	int generation_ = 0;
	int restarts_used_ = 0;
	int world_ = 0;
	State state_ = State::Starting;
	std::vector<Rank> ranks_;
	int exit_code_ = -1;        /* >= 0: leave the loop with it */
	int term_signal_ = 0;       /* the signal that ended training */

	/* What status reports, from the rank 0 events. */
	uint64_t step_ = 0;
	double loss_ = 0, it_s_ = 0;
	bool has_loss_ = false;
	wire::Stages stages_;
	wire::GpuUse gpu_;
	std::optional<double> gns_;
	int64_t batch_ = 0;
	std::optional<double> progress_, grad_sqr_, grad_var_;
	int64_t plan_batch_ = 0; /* TIDAL_BATCH of this generation; 0 none */
	int group_size_ = 0;	 /* jobs on its shared GPU, as node 0 heard */
	std::string share_ = "interleave"; /* how they share it (job_plan) */
	std::optional<Ckpt> last_ckpt_;

	/* Checkpoint requests from the control socket. */
	std::vector<int> want_ckpt_;   /* answered by the next "ckpt" */
	std::vector<int> want_stop_;   /* answered once "stopped" */
	int owed_signal_ = 0;          /* SIGUSR1/2 once all have started */
	std::optional<Ckpt> stop_ckpt_; /* the checkpoint of the stop */
	double stopped_at_ = 0;
	double finished_at_ = 0;
	double failed_at_ = 0;         /* for the restart latency line */
	bool first_step_seen_ = false;
};

} /* namespace tidal::launch */
