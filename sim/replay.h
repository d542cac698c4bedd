/*
 * replay.h - Tidal's own event-driven replay model.
 *
 * Time jumps from event to event (arrival, completion, a policy's wake-up,
 * a period boundary); it never steps one second at a time.  At each event:
 *
 *   1. advance every running job to the event time (progress at its speed,
 *      after any restart overhead it still owes; counted from the job's
 *      last change and brought up to date only when read, replay.cc);
 *   2. complete jobs whose work is done;
 *   3. admit arrivals (appended to the active list: Pending);
 *   4. ask the policy (every event, or only on period boundaries; not when
 *      nothing is pending and the policy is then idle) and apply the plan
 *      (changes only): Start / Resize charge the restart overhead, Preempt
 *      sends the job to the back of its queue (Job::seq).
 *
 * Hooks change the model without copying it:
 *   speed(job, gpus)             iterations per second (default: the job's
 *                                own speed, scaled linearly in GPUs)
 *   restart_overhead(job, gpus)  seconds without progress after a start,
 *                                resume or resize (default 0)
 *   period                       decide only when now % period == 0
 *   cycle                        sched/tidal's cycle: an arrival is
 *                                decided at once (a submission wakes the
 *                                plugin), anything else at the next tick
 *                                of the last decision + k cycle
 *   on_preempt(job)              e.g. Lucid's +40/60 s checkpoint cost
 *   requeue_delay                a preempted job is out of the policy's
 *                                view for this long (Slurm's begin time
 *                                on a requeue), then pending again
 *   preempt_release              the nodes of a preempted job take no
 *                                new start for this long (their jobs'
 *                                processes and epilog ending: Slurm's
 *                                COMPLETING); a start planned there waits
 *                                for a later decision
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <functional>

#include "core/model/policy.h"
#include "sim/preset.h"

namespace tidal::sim {

struct ReplayHooks {
	std::function<double(const Job &, int gpus)> speed;
	std::function<double(const Job &, int gpus)> restart_overhead;
	Time period = 0;
	Time cycle = 0;
	std::function<void(Job &)> on_preempt;
	Time requeue_delay = 0;
	Time preempt_release = 0;
};

/* Default speed: 1/iter_time at the requested size, linear in GPUs. */
double linear_speed(const Job &job, int gpus);

RunResult replay(const SimInput &in, Policy &policy, const ReplayHooks &hooks,
		 const Progress &progress);

} /* namespace tidal::sim */
