/*
 * pins.cc - which of a job's checkpoints on this node rotation must keep.
 *
 * The trainer keeps its newest few checkpoints and deletes older ones as
 * it writes (node/checkpoint.h); it may write several per heartbeat.
 * What tidald tells sched/tidal about a checkpoint here must stay true
 * until the plugin's saved state has moved past it, also across a kill -9
 * of slurmctld (the record is in that state).  So, per job:
 *
 *   before a heartbeat   the step to report is pinned: the one reported
 *                        before if the plugin has not yet saved it, else
 *                        the newest complete one here (pin_for_report)
 *   request never left   a pin made for it alone goes again
 *   request left         the step stays pinned: the plugin may have
 *                        recorded and saved it even if no reply came
 *   reply's keep K       the plugin's state on disk records K as this
 *                        node's newest: every older pin goes (recorded)
 *   checkpoint ack       the step a resize waits for is pinned before the
 *                        ack leaves (pin_acked)
 *
 * A copy a fetch brought here of a job that runs elsewhere is reported
 * apart, as "held" (copied), once: nothing here writes that job's
 * checkpoints, so nothing rotates it.
 *
 * So at most three checkpoints are pinned beside the trainer's newest few:
 * the saved one, the one reported, and one a resize waits for.  The
 * plugin's record lags the newest by a heartbeat or a cycle; a fetch asks
 * the node what it holds now anyway (fetch.cc).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <sys/stat.h>

#include "nodeagent/agent.h"
#include "nodeagent/ckpt_local.h"
#include "node/checkpoint.h"

namespace tidal::agent
{

namespace
{

bool is_complete(const std::string &dir, uint64_t step)
{
	struct stat st;
	return stat(ckpt::file_name(dir, step, ".done").c_str(), &st) == 0;
}

} /* namespace */

uint64_t Agent::pin_for_report(uint64_t job, std::string *path)
{
	std::lock_guard<std::mutex> g(pin_mu_);
	std::string dir = job_dir(opt_.ckpt_dir, job), err;
	Pins &p = pins_[job];
	/* Until the plugin has saved the last report, it is reported again:
	 * one step in flight at a time. */
	if (p.reporting && is_complete(dir, p.reporting)) {
		*path = ckpt::file_name(dir, p.reporting, ".tck");
		return p.reporting;
	}
	p.reporting = 0;
	p.sent = false;
	/* A few tries: the newest may be rotated away between the look and
	 * the pin; once pinned and still complete, it stays. */
	for (int tries = 0; tries < 3; tries++) {
		auto f = ckpt::newest_marked(dir);
		if (!f)
			break;
		if (f->step <= p.recorded) {
			*path = f->path;
			return f->step; /* nothing newer: pinned as recorded */
		}
		if (!ckpt::pin(dir, f->step, err)) {
			logf("job %llu: %s", (unsigned long long)job,
			     err.c_str());
			return 0;
		}
		if (is_complete(dir, f->step)) {
			p.reporting = f->step;
			*path = f->path;
			return f->step;
		}
		ckpt::unpin(dir, f->step);
	}
	if (p.recorded == 0)
		pins_.erase(job);
	return 0;
}

void Agent::report_done(uint64_t job, uint64_t step, bool sent)
{
	std::lock_guard<std::mutex> g(pin_mu_);
	auto it = pins_.find(job);
	if (it == pins_.end() || it->second.reporting != step)
		return;
	Pins &p = it->second;
	if (sent) {
		p.sent = true;
	} else if (!p.sent) { /* it never reached the plugin */
		ckpt::unpin(job_dir(opt_.ckpt_dir, job), step);
		p.reporting = 0;
	}
}

void Agent::recorded(uint64_t job, uint64_t step)
{
	std::lock_guard<std::mutex> g(pin_mu_);
	std::string dir = job_dir(opt_.ckpt_dir, job), err;
	Pins &p = pins_[job];
	if (step < p.recorded)
		return; /* a reply that crossed a newer one */
	p.recorded = step;
	if (p.reporting <= step) {
		p.reporting = 0;
		p.sent = false;
	}
	/* The disk is the truth: pins of an earlier tidald go too. */
	if (!ckpt::pin(dir, step, err))
		logf("job %llu: %s", (unsigned long long)job, err.c_str());
	for (uint64_t s : ckpt::pins(dir))
		if (s < step)
			ckpt::unpin(dir, s);
}

void Agent::copied(uint64_t job, const wire::CkptRef &ref)
{
	std::lock_guard<std::mutex> g(pin_mu_);
	wire::CkptRef &c = copies_[job];
	if (ref.step >= c.step)
		c = ref;
}

void Agent::pin_acked(uint64_t job, uint64_t step)
{
	std::lock_guard<std::mutex> g(pin_mu_);
	std::string err;
	if (step && !ckpt::pin(job_dir(opt_.ckpt_dir, job), step, err))
		logf("job %llu: %s", (unsigned long long)job, err.c_str());
}

} /* namespace tidal::agent */
