/*
 * supervise.cc - tidal-launch's event loop: trainer events, exits,
 * signals, control requests and the other nodes' verdicts (launcher.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "launcher/launcher.h"

#include "launcher/log.h"

#include <json.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tidal::launch {

namespace {

/* How often the other nodes' verdict is read from the store. */
constexpr double kRemotePollS = 0.1;
/* How long node 0 waits for the others to leave before it does. */
constexpr double kByeWaitS = 5;

bool clean_exit(int status)
{
	return (WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

} /* namespace */

int Launcher::supervise()
{
	double next_remote = 0;
	while (exit_code_ < 0) {
		std::vector<pollfd> fds = { { sig_fd_, POLLIN, 0 } };
		for (const Rank &r : ranks_)
			if (r.event_fd >= 0)
				fds.push_back({ r.event_fd, POLLIN, 0 });
		size_t ctl_at = fds.size();
		ctl_.poll_fds(fds);
		if (poll(fds.data(), fds.size(), 100) < 0 && errno != EINTR) {
			note("error: poll: %s", std::strerror(errno));
			return 1;
		}
		try {
			drain_events();
			if (fds[0].revents)
				on_signals();
			std::vector<pollfd> cfds(fds.begin() + ctl_at,
						 fds.end());
			std::vector<Request> reqs;
			ctl_.service(cfds, reqs);
			for (const Request &q : reqs)
				on_request(q);
			after_exits();
			if (exit_code_ < 0 && now_s() >= next_remote) {
				next_remote = now_s() + kRemotePollS;
				poll_remote_end();
			}
		} catch (const std::exception &e) {
			/* Only the store throws: node 0's launcher is gone.
			 * With nothing of ours running, that is the end. */
			if (state_ == State::Stopped ||
			    state_ == State::Finished) {
				note("node 0's launcher has left: exiting");
				exit_code_ = 0;
				break;
			}
			note("error: lost the rendezvous store %s: %s",
			     store_addr_.c_str(), e.what());
			kill_and_reap();
			exit_code_ = 1;
		}
	}
	ctl_.close();
	return exit_code_;
}

void Launcher::on_signals()
{
	signalfd_siginfo si;
	while (read(sig_fd_, &si, sizeof si) == sizeof si) {
		if (si.ssi_signo == SIGCHLD) {
			reap();
			continue;
		}
		const char *name = sigabbrev_np(si.ssi_signo);
		if (state_ == State::Stopped || state_ == State::Finished) {
			note("SIG%s while %s: exiting", name,
			     state_ == State::Stopped ? "stopped" : "finished");
			answer_pending("the launcher is exiting");
			exit_code_ = 0;
			return;
		}
		if (state_ == State::Terminating) {
			note("SIG%s again: killing the trainers", name);
			signal_ranks(SIGKILL);
			continue;
		}
		note("SIG%s: forwarding SIGTERM to the trainers (they "
		     "checkpoint and stop)", name);
		state_ = State::Terminating;
		term_signal_ = (int)si.ssi_signo;
		signal_ranks(SIGTERM);
	}
}

void Launcher::reap()
{
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (Rank &r : ranks_) {
			if (r.pid != pid || r.exited)
				continue;
			r.exited = true;
			r.status = status;
			if (!clean_exit(status) && state_ != State::Terminating)
				note("rank %d (pid %d) failed: %s", r.global,
				     (int)pid, describe_status(status).c_str());
		}
	}
}

void Launcher::on_event(Rank &r, const Event &e)
{
	if (e.ev == "start") {
		r.started = true;
		step_ = e.step;
		if (e.batch)
			batch_ = e.batch;
		if (e.progress)
			progress_ = e.progress;
		if (state_ == State::Starting && all_started()) {
			state_ = State::Running;
			note("generation %d running: ranks %d-%d here at step "
			     "%llu, backend %s", generation_, ranks_[0].global,
			     ranks_.back().global, (unsigned long long)e.step,
			     e.backend.empty() ? "?" : e.backend.c_str());
			deliver_owed_signal();
		}
	} else if (e.ev == "step") {
		step_ = e.step;
		loss_ = e.loss;
		has_loss_ = e.has_loss;
		it_s_ = e.it_s;
		stages_ = e.stages;
		gpu_ = e.gpu;
		gns_ = e.gns;
		batch_ = e.batch ? e.batch : batch_;
		progress_ = e.progress ? e.progress : progress_;
		grad_sqr_ = e.grad_sqr;
		grad_var_ = e.grad_var;
		note("step %llu loss %.4f, %.2f it/s, %.1f samples/s",
		     (unsigned long long)e.step, e.loss, e.it_s, e.samples_s);
		if (!first_step_seen_ && failed_at_ > 0)
			note("first step of generation %d: %.2f s after the "
			     "failure", generation_, now_s() - failed_at_);
		first_step_seen_ = true;
		failed_at_ = 0;
	} else if (e.ev == "ckpt") {
		Ckpt c{ e.step, e.path, e.bytes, e.ms };
		last_ckpt_ = c;
		note("checkpoint durable: step %llu, %.1f MB in %.0f ms "
		     "(%.0f MB/s), %s", (unsigned long long)e.step,
		     e.bytes / 1e6, e.ms, e.mb_s, e.path.c_str());
		for (int client : want_ckpt_)
			ctl_.reply(client, ckpt_json(c));
		want_ckpt_.clear();
		if (state_ == State::Stopping || state_ == State::Terminating)
			stop_ckpt_ = c;
	} else if (e.ev == "ckpt_error") {
		/* Training goes on; the newest durable checkpoint stays what
		 * it was (a stop answers with it). */
		std::string kept = last_ckpt_
			? "step " + std::to_string(last_ckpt_->step) + " (" +
				  last_ckpt_->path + ")"
			: std::string("none");
		std::string msg = "checkpoint at step " +
				  std::to_string(e.step) + " failed: " +
				  e.error + "; the newest durable checkpoint "
				  "stays " + kept;
		note("error: %s", msg.c_str());
		for (int client : want_ckpt_)
			ctl_.reply(client, wire::error_reply(msg));
		want_ckpt_.clear();
	} else if (e.ev == "stopped") {
		r.stopped = true;
		step_ = e.step;
	} else if (e.ev == "done") {
		r.done = true;
		step_ = e.step;
		if (e.has_loss)
			note("training done at step %llu, loss %.4f",
			     (unsigned long long)e.step, e.loss);
		else
			note("training done at step %llu",
			     (unsigned long long)e.step);
	}
}

void Launcher::on_request(const Request &q)
{
	if (!q.error.empty()) {
		ctl_.reply(q.client, wire::error_reply(q.error));
		return;
	}
	if (q.op == "status") {
		ctl_.reply(q.client, status_json());
		return;
	}
	if (q.op != "checkpoint" && q.op != "checkpoint_stop") {
		ctl_.reply(q.client,
			   wire::error_reply("unknown op '" + q.op +
					     "': one of status, checkpoint, "
					     "checkpoint_stop"));
		return;
	}
	if (o_.node_index != 0) {
		ctl_.reply(q.client,
			   wire::error_reply(
				   "only node 0's launcher serves " + q.op +
				   " (this is " + o_.node + ", node index " +
				   std::to_string(o_.node_index) + ")"));
		return;
	}
	if (state_ == State::Finished) {
		ctl_.reply(q.client,
			   wire::error_reply("training finished at step " +
					     std::to_string(step_)));
		return;
	}
	if (state_ == State::Stopped) {
		/* Already stopped: that checkpoint is the answer. */
		ctl_.reply(q.client,
			   last_ckpt_ ? ckpt_json(*last_ckpt_)
				      : wire::error_reply("stopped without a "
							  "checkpoint"));
		return;
	}
	bool stop = q.op == "checkpoint_stop";
	note("control: %s requested", q.op.c_str());
	(stop ? want_stop_ : want_ckpt_).push_back(q.client);
	if (stop || !owed_signal_)
		owed_signal_ = stop ? SIGUSR2 : SIGUSR1;
	deliver_owed_signal();
}

/* Trainers set their handlers before they say "start": a signal sent
 * earlier would kill them, so requests wait for that. */
void Launcher::deliver_owed_signal()
{
	if (!owed_signal_ || state_ != State::Running)
		return;
	if (owed_signal_ == SIGUSR2) {
		state_ = State::Stopping;
		stop_ckpt_.reset();
	}
	signal_ranks(owed_signal_);
	owed_signal_ = 0;
}

void Launcher::signal_ranks(int sig)
{
	for (const Rank &r : ranks_)
		if (r.pid > 0 && !r.exited &&
		    (r.started || sig == SIGKILL || sig == SIGTERM))
			kill(r.pid, sig);
}

/* SIGKILL every rank and wait for them: the state they would lose is in
 * the checkpoint already. */
void Launcher::kill_and_reap()
{
	signal_ranks(SIGKILL);
	for (Rank &r : ranks_) {
		if (r.pid > 0 && !r.exited) {
			while (waitpid(r.pid, &r.status, 0) < 0 &&
			       errno == EINTR)
				;
			r.exited = true;
		}
		if (r.event_fd >= 0) {
			close(r.event_fd);
			r.event_fd = -1;
		}
	}
}

bool Launcher::all_exited() const
{
	for (const Rank &r : ranks_)
		if (!r.exited)
			return false;
	return true;
}

bool Launcher::all_started() const
{
	for (const Rank &r : ranks_)
		if (!r.started)
			return false;
	return true;
}

void Launcher::drain_events()
{
	for (Rank &r : ranks_) {
		std::vector<Event> evs;
		read_events(r, evs);
		for (const Event &e : evs)
			on_event(r, e);
	}
}

/* Act on exits: a failure ends the generation everywhere; all ranks gone
 * means stopped, terminated or done. */
void Launcher::after_exits()
{
	drain_events();
	if (state_ == State::Stopped || state_ == State::Finished ||
	    ranks_.empty())
		return;
	if (state_ != State::Terminating) {
		for (const Rank &r : ranks_) {
			if (!r.exited || clean_exit(r.status))
				continue;
			failed_at_ = now_s();
			std::string reason = "fail rank " +
				std::to_string(r.global) + " on " + o_.node +
				" (pid " + std::to_string(r.pid) + ") " +
				describe_status(r.status);
			if (!claim_end(reason)) {
				store::Bytes b = store_.get(key("end"));
				reason.assign(b.begin(), b.end());
			}
			end_generation(reason);
			return;
		}
	}
	if (!all_exited())
		return;
	bool stopped = false, bad = false;
	for (const Rank &r : ranks_) {
		stopped |= r.stopped;
		bad |= !clean_exit(r.status) &&
		       !(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGTERM);
	}
	const std::optional<Ckpt> &c = stop_ckpt_ ? stop_ckpt_ : last_ckpt_;
	for (int client : want_stop_)
		ctl_.reply(client,
			   c ? ckpt_json(*c)
			     : wire::error_reply("the trainers stopped without "
						 "a checkpoint"));
	want_stop_.clear();
	if (state_ == State::Terminating) {
		note("trainers exited after SIGTERM%s; exiting%s",
		     bad ? " (some abnormally)" : "",
		     bad ? "" : " by the signal (training interrupted)");
		answer_pending("the launcher is exiting");
		exit_code_ = bad ? 1 : 0;
		if (bad)
			term_signal_ = 0;
	} else if (stopped) {
		state_ = State::Stopped;
		stopped_at_ = now_s();
		owed_signal_ = 0;
		for (int client : want_ckpt_)
			ctl_.reply(client,
				   c ? ckpt_json(*c)
				     : wire::error_reply("no checkpoint"));
		want_ckpt_.clear();
		note("trainers stopped at step %llu; waiting for SIGTERM "
		     "(resuming in %g s otherwise)", (unsigned long long)step_,
		     o_.stop_grace_s);
	} else {
		/* Not over yet: a rank elsewhere may still fail in the last
		 * step (its peers gone), and then all restart together. */
		answer_pending("training finished");
		state_ = State::Finished;
		finished_at_ = now_s();
		store_.set(key("finished/" + std::to_string(o_.node_index)),
			   "1");
	}
}

/* Another node may have ended the generation; node 0 also ends a stop
 * that no SIGTERM followed. */
void Launcher::poll_remote_end()
{
	if (state_ == State::Terminating || ranks_.empty())
		return;
	if (state_ == State::Stopped && o_.node_index == 0 &&
	    now_s() - stopped_at_ >= o_.stop_grace_s) {
		note("no SIGTERM within %g s of the stop: resuming",
		     o_.stop_grace_s);
		claim_end("resume");
	}
	if (state_ == State::Finished && all_finished()) {
		note("all ranks of all nodes finished: exiting");
		exit_code_ = 0;
		/* Node 0 serves the store: it leaves last. */
		std::vector<std::string> byes;
		for (int i = 1; i < o_.nodes; i++)
			byes.push_back(key("bye/" + std::to_string(i)));
		std::string err;
		if (o_.node_index)
			store_.set(key("bye/" + std::to_string(o_.node_index)),
				   "1");
		else
			wait_keys(byes, kByeWaitS, err);
		return;
	}
	if (state_ == State::Finished &&
	    now_s() - finished_at_ > o_.rdzv_timeout_s) {
		note("warning: the other nodes did not finish within %g s; "
		     "exiting", o_.rdzv_timeout_s);
		exit_code_ = 0;
		return;
	}
	if (!store_.check({ key("end") }))
		return;
	store::Bytes b = store_.get(key("end"));
	std::string reason(b.begin(), b.end());
	if (reason.compare(0, 5, "fail ") == 0) {
		failed_at_ = now_s();
		note("generation %d failed elsewhere: %s", generation_,
		     reason.c_str() + 5);
	}
	end_generation(reason);
}

void Launcher::answer_pending(const std::string &error)
{
	for (int client : want_ckpt_)
		ctl_.reply(client, wire::error_reply(error));
	for (int client : want_stop_)
		ctl_.reply(client, wire::error_reply(error));
	want_ckpt_.clear();
	want_stop_.clear();
}

std::string Launcher::ckpt_json(const Ckpt &c) const
{
	wire::CkptDone d;
	d.ok = true;
	d.ckpt = { c.step, c.path };
	d.bytes = c.bytes;
	d.ms = c.ms;
	return wire::encode(d);
}

std::string Launcher::status_json() const
{
	/* tidal-launch(1)'s three states; a new generation that has not started
	 * yet is "restarting"; trainers winding down for SIGTERM, or
	 * finished, are "stopped". */
	const char *state = state_ == State::Stopped ||
					    state_ == State::Terminating ||
					    state_ == State::Finished ?
				    "stopped" :
			    state_ == State::Starting && generation_ > 0 ?
				    "restarting" :
				    "running";
	wire::LauncherStatus m;
	m.job = o_.job;
	wire::TrainStatus &s = m.status;
	s.node = o_.node;
	s.world = world_;
	s.generation = generation_;
	s.step = step_;
	if (has_loss_)
		s.loss = loss_;
	s.it_s = it_s_;
	s.stages = stages_;
	s.gpu = gpu_;
	s.gns = gns_;
	s.batch = batch_;
	s.progress = progress_;
	s.grad_sqr = grad_sqr_;
	s.grad_var = grad_var_;
	s.restarts_left = o_.restart_budget - restarts_used_;
	if (last_ckpt_)
		s.last_ckpt = { last_ckpt_->step, last_ckpt_->path };
	s.state = state;
	/* Beyond those: this node's trainer processes. */
	for (const Rank &r : ranks_)
		s.ranks.emplace_back(r.global, r.pid);
	return wire::encode(m);
}

} /* namespace tidal::launch */
