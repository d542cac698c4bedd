/*
 * engine.cc - the C++ half of sched/tidal: tidal.conf, the policy object,
 * and the translation between bridge.h's C structs and core's types.
 *
 * It runs the very same policy objects as tidal-sim (make-by-name from the
 * core registry).  Everything here is called from C: each entry point
 * catches every exception and turns it into a return code and a message,
 * because an exception escaping into slurmctld would abort the controller.
 *
 * The engine remembers a little about each job between cycles, because
 * slurmctld forgets it on a requeue: the first submit time (a requeue resets
 * submit_time), an arrival sequence number (Tiresias orders within a level
 * by it), and the GPU-seconds and seconds of earlier runs (attained service).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "core/placement/fabric.h"
#include "core/model/policy.h"
#include "core/model/suggest.h"
#include "plugin/common/options.h"
#include "plugin/sched/agents.h"
#include "plugin/sched/bridge.h"
#include "plugin/sched/c_api.h"
#include "plugin/sched/engine.h"
#include "plugin/sched/metrics.h"

#include <algorithm>
#include <sstream>

namespace tidal {
namespace plugin {

int resize_signal(const Params &p);

Engine &engine()
{
	static Engine e;
	/* ckpt_where's owner, asked of the engine without the agents'
	 * code calling into it (agents.h). */
	static const bool linked = [] {
		agent_set_owner_lookup(
			[](std::uint32_t id) { return engine().job_uid(id); });
		agent_set_plan_lookup(
			[](std::uint32_t id) { return engine().job_plan(id); });
		return true;
	}();
	(void)linked;
	return e;
}

/* Policies that tidal-sim runs inside their anchor's preset only: a
 * tidal.conf naming one gets that said, not just "unknown". */
static const char *replay_only_preset(const std::string &name)
{
	static const std::pair<const char *, const char *> names[] = {
		{ "gandiva", "elasticflow" },
		{ "themis", "elasticflow" },
		{ "edf-admit", "elasticflow" },
		{ "optimus", "pollux" },
	};
	for (const auto &[n, preset] : names)
		if (name == n)
			return preset;
	return nullptr;
}

int Engine::configure(const std::string &text, const std::string &origin,
		      std::string *msg)
{
	Params p = Params::parse(text, origin);
	std::string name = lower(p.get_str("Policy", "fifo"));
	double interval = p.get_double("CycleInterval", 2, 0.1, 3600);
	int ctl_port = (int)p.get_long("CtlPort", TIDAL_CTL_PORT, 0, 65535);
	int metrics_port = (int)p.get_long("MetricsPort", 0, 0, 65535);
	std::string metrics_addr = p.get_str("MetricsAddress", "");
	tidal_apply_conf_t ac;
	ac.resize_signal = resize_signal(p);
	ac.checkpoint_timeout = p.get_double("CheckpointTimeout", 30, 0, 86400);
	ac.reject_cancel = p.get_choice("RejectAction", "hold",
					{"hold", "cancel"}) == "cancel";
	ac.acct_comment = p.get_choice("AccountingComment", "admin",
				       {"admin", "none"}) == "none"
				  ? TIDAL_ACCT_NONE
				  : TIDAL_ACCT_ADMIN;
	p.has("CtlHost"); /* tidalctl's and tidald's (proto/wire.cc) */
	std::string fatal;
	auto add = [](std::string *to, const std::string &line) {
		*to += (to->empty() ? "" : "\n") + line;
	};
	/* Profiles=DIR: a bad directory is said and none is used (Slurm's
	 * rule for a bad value). */
	ThroughputTable profiles;
	std::string pdir = p.get_str("Profiles", "");
	if (!pdir.empty()) {
		std::string err;
		if (!profiles.load_dir(pdir, &err)) {
			add(msg, p.pair_of("Profiles") + ": " + err +
					 "; no profiles used");
			profiles = ThroughputTable();
		} else {
			add(msg, "note: " + p.pair_of("Profiles") + ": the tables of " +
					 std::to_string(profiles.models().size()) +
					 " models");
		}
	}
	/* A line that is not Key=Value, an unknown policy or an unknown key
	 * would silently run something else than the administrator wrote:
	 * refused, like a bad slurm.conf. */
	for (const std::string &e : p.errors())
		if (e.find("is not Key=Value") != std::string::npos)
			add(&fatal, e);
	std::vector<std::string> live, known = p.asked();
	for (const PolicyInfo *i : all_policies())
		live.push_back(i->name);
	/* every policy's keys, to tell typos apart */
	known.insert(known.end(), policy_keys().begin(), policy_keys().end());
	const PolicyInfo *info = find_policy(name);
	std::unique_ptr<Policy> pol;
	if (!info) {
		const char *preset = replay_only_preset(name);
		std::string all;
		for (const std::string &n : live)
			all += (all.empty() ? "" : ", ") + n;
		add(&fatal,
		    p.pair_of("Policy") + ": " +
			    (preset ? std::string("runs only inside "
						  "tidal-sim's ") +
					      preset +
					      " preset, not in slurmctld"
				    : "unknown policy" +
					      did_you_mean(name, live)) +
			    "; the policies sched/tidal runs: " + all);
	} else {
		pol = info->make(p);
	}
	/* Policies share many keys: each once, in first-seen order (the
	 * order did-you-mean breaks ties in). */
	std::set<std::string> known_lower;
	std::vector<std::string> unique;
	for (const std::string &k : known)
		if (known_lower.insert(lower(k)).second)
			unique.push_back(k);
	known.swap(unique);
	for (const Params::Unused &u : p.unused()) {
		bool other = known_lower.count(lower(u.key)) > 0;
		if (other) /* another policy's key: harmless, but say so */
			add(msg, "note: " + u.pair + ": ignored: Policy=" +
					 name + " does not read it");
		else
			add(&fatal,
			    u.pair + ": unknown key" + did_you_mean(u.key, known));
	}
	if (!fatal.empty()) {
		add(&fatal, *msg);
		*msg = fatal;
		return -1;
	}
	/* Slurm's rule: a bad value is logged and its default used. */
	for (const std::string &e : p.errors_using_defaults())
		add(msg, e);
	std::lock_guard<std::mutex> g(mu_);
	/* The same policy again (scontrol reconfigure): it goes on from
	 * where it was, its rounds and their bookkeeping kept. */
	if (policy_ && pol && policy_->name() == pol->name())
		for (const std::string &l : policy_->save_state())
			pol->load_state(l);
	policy_ = std::move(pol);
	sharing_said_ = -1;
	params_ = p;
	name_ = name;
	interval_ = interval;
	ctl_port_ = ctl_port;
	metrics_port_ = metrics_port;
	metrics_addr_ = metrics_addr;
	apply_conf_ = ac;
	profiles_ = std::move(profiles);
	return 0;
}

/* ResizeSignal=NAME|NUMBER|none: what the batch step gets before a resize
 * requeues it (until tidald asks the launcher to checkpoint). */
int resize_signal(const Params &p)
{
	static const std::pair<const char *, int> names[] = {
		{"none", 0}, {"usr1", 10}, {"usr2", 12}, {"term", 15},
		{"int", 2},  {"hup", 1},   {"cont", 18}, {"urg", 23},
	};
	std::string v = lower(p.get_str("ResizeSignal", "usr1"));
	if (v.rfind("sig", 0) == 0)
		v = v.substr(3);
	for (const auto &[n, sig] : names)
		if (v == n)
			return sig;
	char *end = nullptr;
	long n = std::strtol(v.c_str(), &end, 10);
	if (!v.empty() && !*end && n >= 0 && n <= 64)
		return (int)n;
	p.get_choice("ResizeSignal", "usr1",
		     {"none", "usr1", "usr2", "term", "int", "hup", "cont",
		      "urg", "0..64"});
	return 10;
}

/* "seq N", one "memo ..." line per job remembered, and "policy NAME ..."
 * for what the policy carries across a restart (Policy::save_state).
 * Only what changes when something happens is written ("seen" is the last
 * write's; the policy says when its state changed), so a quiet cycle
 * leaves the state clean and costs no formatting. */
bool Engine::state_dump(std::string *out, bool force)
{
	std::lock_guard<std::mutex> g(mu_);
	std::uint64_t serial = policy_ ? policy_->state_serial() : 0;
	if (serial != dumped_serial_)
		state_dirty_ = true;
	if (!state_dirty_ && !force)
		return false;
	state_dirty_ = false;
	dumped_serial_ = serial;
	std::vector<std::uint32_t> ids;
	ids.reserve(memo_.size());
	for (const auto &[id, m] : memo_)
		ids.push_back(id);
	std::sort(ids.begin(), ids.end()); /* same state, same bytes */
	*out = "seq " + std::to_string(next_seq_) + "\n";
	/* One line a job, written every cycle that changed something: the
	 * shortest text that reads back as the same double (to_chars), not
	 * printf's %.17g, which cost most of the dump. */
	out->reserve(out->size() + ids.size() * 120);
	char buf[256];
	char *const end = buf + sizeof(buf) - 1; /* room for the newline */
	for (std::uint32_t id : ids) {
		const JobMemo &m = memo_[id];
		char *p = buf + 4;
		std::memcpy(buf, "memo", 4);
		auto num = [&](auto v) {
			if (p < end) {
				*p++ = ' ';
				p = std::to_chars(p, end, v).ptr;
			}
		};
		num(id);
		num((unsigned long long)m.seq);
		num(m.submit);
		num(m.attained);
		num(m.executed);
		num(m.run_start);
		num(m.run_gpus);
		num(m.seen);
		*p++ = '\n';
		out->append(buf, (std::size_t)(p - buf));
	}
	if (policy_) {
		std::string head = "policy " + policy_->name() + " ";
		for (const std::string &l : policy_->save_state())
			*out += head + l + "\n";
	}
	return true;
}

bool Engine::state_line(const std::string &line)
{
	std::lock_guard<std::mutex> g(mu_);
	unsigned long long seq;
	unsigned id;
	JobMemo m;
	if (std::sscanf(line.c_str(), "seq %llu", &seq) == 1) {
		next_seq_ = std::max<std::uint64_t>(next_seq_, seq);
		return true;
	}
	if (std::sscanf(line.c_str(), "memo %u %llu %lg %lg %lg %lg %d %lg",
			&id, &seq, &m.submit, &m.attained, &m.executed,
			&m.run_start, &m.run_gpus, &m.seen) == 8) {
		m.seq = seq;
		m.run_exact = m.run_start; /* to the second, as saved */
		memo_[id] = m;
		state_dirty_ = true;
		return true;
	}
	/* Another policy's state (tidal.conf changed since) is dropped. */
	if (line.rfind("policy ", 0) == 0) {
		size_t sp = line.find(' ', 7);
		if (sp == std::string::npos)
			return false;
		if (!policy_ || line.compare(7, sp - 7, policy_->name()))
			return true;
		state_dirty_ = true;
		return policy_->load_state(line.substr(sp + 1));
	}
	return false;
}

/* "job 12: elastic 2-8 GPUs, model resnet50, ..." for slurmctld's log. */
static std::string describe_options(const tidal_job_t &b)
{
	std::ostringstream s;
	s << "job " << b.id << ": Tidal options:";
	if (b.max_gpus)
		s << " elastic " << b.min_gpus << "-" << b.max_gpus << " GPUs";
	if (b.model)
		s << " model " << b.model;
	if (b.batch)
		s << " batch " << b.batch;
	if (b.iters)
		s << " iterations " << (long long)b.iters;
	if (b.best_effort)
		s << " best-effort";
	s << "\n";
	return s.str();
}

/* How old an agent's progress report may be and still count (seconds):
 * a few heartbeats. */
constexpr double kProgressMaxAge = 60;

/* Build the core Job for one bridge job, using and updating the memo. */
void Engine::fill_job(const tidal_job_t &b, int index, double now, Job *j,
		      std::string *log)
{
	JobMemo &m = memo_[b.id];
	m.index = index;
	m.cycle = decides_;
	j->index = index;
	if (m.seq == 0) {
		state_dirty_ = true;
		m.seq = ++next_seq_;
		m.submit = b.submit;
		if (b.max_gpus || b.model || b.batch || b.iters || b.best_effort)
			*log += describe_options(b);
	}
	bool running = b.state == TIDAL_JOB_RUNNING;
	if (!running && m.run_start > 0) { /* it stopped since last cycle */
		m.attained += m.run_gpus * (m.seen - m.run_exact);
		m.executed += m.seen - m.run_exact;
		m.run_start = 0;
		/* Requeued: to the back of its queue level (Job::seq), as the
		 * replay does with a preempted job. */
		m.seq = ++next_seq_;
		state_dirty_ = true;
	}
	if (running) {
		if (m.run_start != b.start || m.run_gpus != b.gpus)
			state_dirty_ = true;
		m.run_start = b.start;
		/* Slurm's start is a whole second; sched/tidal's own start
		 * of this run, if it made it, is that second to the
		 * microsecond. */
		m.run_exact = m.started_at >= b.start && m.started_at < b.start + 1
				      ? m.started_at
				      : b.start;
		m.run_gpus = b.gpus;
	}
	m.seen = now;

	j->id = b.id;
	j->name = b.name ? b.name : "";
	j->user = b.user ? b.user : std::to_string(b.uid);
	j->group = b.partition ? b.partition : "";
	j->model = b.model ? b.model : "";
	j->batch = b.batch;
	j->max_batch = b.max_batch;
	j->submit = m.submit;
	j->gpus = b.gpus;
	j->min_gpus = b.min_gpus;
	j->max_gpus = b.max_gpus;
	j->deadline = b.deadline > 0 ? b.deadline : kNoDeadline;
	j->best_effort = b.best_effort != 0;
	/* Without --train-iters the time limit is the only size we know:
	 * work is then counted in seconds (iter_time 1 s).  Without either,
	 * a year stands in, and the job says its size is not known. */
	double limit = b.time_limit > 0 ? b.time_limit : 365 * 86400.0;
	j->duration = limit;
	j->estimate = b.time_limit > 0 ? b.time_limit : -1;
	j->iterations = b.iters > 0 ? b.iters : limit;
	j->iter_time = limit / j->iterations;
	j->iterations_known = b.iters > 0;
	j->time_known = b.time_limit > 0;
	double ran = running ? std::max(0.0, now - m.run_exact) : 0;
	j->executed = m.executed + ran;
	j->attained = m.attained + (running ? b.gpus * ran : 0);
	j->remaining = std::max(0.0, j->iterations - j->executed / j->iter_time);
	/* A job whose launcher reports through its node agent: the work left
	 * and the speed are measured, not guessed from the time limit. */
	JobProgress p;
	if (running && agent_job_progress(b.id, now, kProgressMaxAge, &p)) {
		/* What Pollux learns from (core Job, "measured"). */
		j->measured = true;
		j->step_time = 1 / p.it_s;
		j->run_batch = (int)std::min<std::int64_t>(p.batch, INT32_MAX);
		j->run_world = (int)std::min<std::int64_t>(p.world, INT32_MAX);
		j->grad_sqr = p.grad_sqr;
		j->grad_var = p.grad_var;
		j->sync_time = p.stages[2];
		/* What packing policies pack by (lucid, antman). */
		if (std::isfinite(p.gpu_util) && std::isfinite(p.gpu_mem_mb)) {
			j->gpu_util = p.gpu_util;
			j->gpu_mem_mb = p.gpu_mem_mb;
		}
	}
	if (j->measured && b.iters > 0) {
		/* Progress counts steps of the initial batch (AdaScale in
		 * tidal-train); at another batch a step makes the gain's
		 * worth of them. */
		double done = std::isfinite(p.progress) ? p.progress : p.step;
		double gain = 1;
		if (b.batch > 0 && p.batch > 0 && p.batch != b.batch &&
		    std::isfinite(p.grad_sqr) && std::isfinite(p.grad_var) &&
		    p.grad_sqr + p.grad_var > 0) {
			double s = (double)p.batch / b.batch;
			gain = (p.grad_var + p.grad_sqr) /
			       (p.grad_var / s + p.grad_sqr);
		}
		j->remaining = std::max(0.0, b.iters - done);
		j->iter_time = 1 / (p.it_s * gain);
		j->time_known = true;
		j->stages = {p.stages[0], p.stages[1], p.stages[2]};
	}
	/* Not measured: a job whose model and batch have a row in Profiles
	 * runs as fast as its table says at the GPUs it asks for, which is
	 * a better guess than its time limit. */
	if (!j->measured && b.iters > 0 && b.batch > 0 && b.model) {
		const ThroughputRow *row = profiles_.row(b.model, b.batch);
		double v = row ? row->paced(b.gpus) : NAN;
		if (std::isfinite(v) && v > 0) {
			j->iter_time = 1 / v;
			j->remaining = std::max(0.0, b.iters - j->executed * v);
			j->time_known = true;
		}
	}
	j->seq = m.seq;
	j->state = running ? JobState::Running : JobState::Pending;
	if (running) {
		j->start = m.run_exact;
		for (int i = 0; i < b.n_alloc; i++) {
			j->placement.push_back({b.alloc_node[i], b.alloc_gpus[i]});
			j->alloc += b.alloc_gpus[i];
		}
	}
}

void Engine::fill_cluster(const tidal_snap_t &s, Cluster *c)
{
	/* A node that does not answer (slurmd restarting, or slurmctld
	 * restarted and the node not registered yet) takes no new work, but
	 * the jobs Slurm still has running there keep their GPUs: a policy
	 * that places every job afresh (Muri) would otherwise preempt them.
	 * When Slurm gives up on the node it ends or requeues them itself. */
	std::vector<int> held(s.n_nodes, 0);
	for (int k = 0; k < s.n_jobs; k++) {
		const tidal_job_t &b = s.jobs[k];
		if (b.state != TIDAL_JOB_RUNNING)
			continue;
		for (int m = 0; m < b.n_alloc; m++)
			if (b.alloc_node[m] >= 0 && b.alloc_node[m] < s.n_nodes)
				held[b.alloc_node[m]] += b.alloc_gpus[m];
	}
	c->nodes.resize(s.n_nodes);
	for (int i = 0; i < s.n_nodes; i++) {
		const tidal_node_t &b = s.nodes[i];
		Node &n = c->nodes[i];
		n.name = b.name;
		n.gpus = b.up ? b.gpus : std::min(held[i], b.gpus);
		n.cpus = b.cpus;
		n.mem_mb = b.mem_mb;
		n.switch_id = b.switch_id;
	}
	c->switches.resize(s.n_switches);
	for (int i = 0; i < s.n_switches; i++) {
		Switch &w = c->switches[i];
		w.name = s.switches[i].name;
		w.parent = s.switches[i].parent;
		w.level = s.switches[i].level;
		w.link_gbps = s.switches[i].link;
	}
	for (int i = 0; i < s.n_nodes; i++)
		if (c->nodes[i].switch_id >= 0)
			c->switches[c->nodes[i].switch_id].nodes.push_back(i);
	for (int i = 0; i < s.n_switches; i++)
		if (c->switches[i].parent >= 0)
			c->switches[c->switches[i].parent].children.push_back(i);
	GpuSharing &sh = c->sharing;
	sh.jobs_per_gpu = std::max(1, s.share_jobs_per_gpu);
	sh.gpus_per_node = s.share_gpus_per_node;
	if (s.share_jobs_per_gpu < 0)
		sh.why = "no node has registered its GPU shards yet";
	else if (sh.jobs_per_gpu == 1)
		sh.why = "no GPU is shared: slurm.conf has no gres/shard "
			 "(GresTypes=gpu,shard, and shards in gres.conf)";
	else if (sh.gpus_per_node > 0)
		sh.why = "Slurm's gres/shard gives a job at most " +
			 std::to_string(sh.gpus_per_node) +
			 " GPU per node to share";
}

/*
 * When topology.conf gave no switches (the snapshot has none), take the
 * switch tree from the InfiniBand fabric the node agents reported: REPORTS
 * holds the "fabric" JSON of each agent's registration (tidal-topo
 * --fabric's output).  Reports are merged by GUID (each agent sees its own
 * subnet), so one stale or partial report does not hide the rest; one that
 * does not parse is skipped with a line in LOG.  Nodes the fabric does not
 * name keep no switch.  RET the number of C's nodes given a leaf switch.
 */
int apply_agent_fabric(const std::vector<std::string> &reports, Cluster *c,
		       std::string *log)
{
	if (!c->switches.empty() || reports.empty())
		return 0;
	fabric::Fabric all;
	bool any = false;
	for (size_t i = 0; i < reports.size(); i++) {
		fabric::Fabric f;
		std::string err;
		if (!fabric::from_json(reports[i],
				       "agent fabric report " + std::to_string(i),
				       &f, &err)) {
			*log += err + "; skipped\n";
			continue;
		}
		fabric::merge(&all, f);
		any = true;
	}
	if (!any)
		return 0;
	fabric::SwitchTree tree = fabric::build_tree(all);
	for (const std::string &w : tree.warnings)
		*log += "fabric: " + w + "\n";
	return fabric::apply_tree(tree, c);
}

/* D into O; its share arrays at NODE and GPUS (room for
 * D.placement.size() each, in tidal_plan_t::shares). */
static void copy_decision(const Decision &d, int *node, int *gpus,
			  tidal_decision_t *o)
{
	o->job = (uint32_t)d.job;
	o->action = (int)d.action;
	o->gpus = d.gpus;
	o->shard = d.share;
	o->colocate = (uint32_t)d.colocate;
	o->n_shares = (int)d.placement.size();
	o->share_node = node;
	o->share_gpus = gpus;
	for (size_t i = 0; i < d.placement.size(); i++) {
		o->share_node[i] = d.placement[i].node;
		o->share_gpus[i] = d.placement[i].gpus;
	}
	/* Cut to the bridge's field, as snprintf's %s would. */
	size_t n = std::min(d.reason.size(), sizeof(o->reason) - 1);
	std::memcpy(o->reason, d.reason.data(), n);
	o->reason[n] = '\0';
}

void Engine::started(std::uint32_t id, double when)
{
	std::lock_guard<std::mutex> g(mu_);
	auto it = memo_.find(id);
	if (it != memo_.end())
		it->second.started_at = when;
}

/* V as a new JobView, keeping the storage of its strings and vectors:
 * copied from an empty one, a string or vector is emptied in place
 * (Engine::decide reuses the views of the cycle before last).  Every
 * field is reset, those added to Job or JobView later too. */
static void renew(JobView *v)
{
	static const JobView blank;
	*v = blank;
}

int Engine::decide(const tidal_snap_t &s, tidal_plan_t *out)
{
	std::lock_guard<std::mutex> g(mu_);
	if (!policy_)
		throw std::runtime_error("no policy configured");
	auto t0 = std::chrono::steady_clock::now();
	decides_++;
	Cluster cluster;
	fill_cluster(s, &cluster);
	/* This cycle's views are those of the cycle before last (record()
	 * swaps them with last_'s), made new in place: their strings and
	 * vectors keep their storage, so that a cycle of 10,000 jobs does
	 * not allocate, fault in and free them all again. */
	std::vector<JobView> &views = spare_;
	views.resize(s.n_jobs);
	Snapshot snap;
	snap.cluster = &cluster;
	snap.now = s.now;
	Plan extra; /* jobs the policy does not see */
	std::string log;
	if (cluster.switches.empty()) /* no topology.conf: the agents' fabric */
		apply_agent_fabric(agent_fabric_reports(), &cluster, &log);
	/* --elastic-gpus against the request and the cluster, as sbatch
	 * checks it where it can (plugin/common/options.c): a job that
	 * breaks the rule never runs, elastic with no GPU least of all. */
	int cluster_gpus = 0;
	for (int i = 0; i < s.n_nodes; i++)
		cluster_gpus += s.nodes[i].gpus_total;
	char why[TIDAL_REASON_MAX];
	for (int i = 0; i < s.n_jobs; i++) {
		const tidal_job_t &b = s.jobs[i];
		Job &j = views[i].job;
		renew(&views[i]);
		fill_job(b, i, s.now, &j, &log);
		if (b.max_gpus && b.state == TIDAL_JOB_PENDING &&
		    tidal_elastic_check(b.min_gpus, b.max_gpus, b.gpus, nullptr,
					cluster_gpus, why, sizeof(why)))
			extra.add(j.id, Action::Reject, 0, why);
		else if (j.gpus > 0)
			snap.jobs.push_back(&j);
		else if (j.state == JobState::Pending)
			extra.add(j.id, Action::Start, 0,
				  "no GPUs requested: Slurm places it");
	}
	/* Said once per configuration, not every cycle: a sharing policy
	 * on a cluster that cannot share. */
	bool sharing = cluster.sharing.possible();
	if (policy_->shares_gpus() && s.share_jobs_per_gpu >= 0 &&
	    (int)sharing != sharing_said_) {
		log += policy_->name() + ": " +
		       (sharing ? "GPUs are shared through gres/shard, up to " +
					  std::to_string(
						  cluster.sharing
							  .jobs_per_gpu) +
					  " jobs each"
				: cluster.sharing.why +
					  ": every job runs alone") +
		       "\n";
		sharing_said_ = (int)sharing;
	}
	/* Running jobs on the same shared GPU: one group, named by its
	 * lowest id. */
	std::map<std::pair<int, int>, JobId> on_gpu;
	for (int i = 0; i < s.n_jobs; i++) {
		const tidal_job_t &b = s.jobs[i];
		if (b.state != TIDAL_JOB_RUNNING || b.shard_node < 0)
			continue;
		auto [it, fresh] = on_gpu.try_emplace(
			{ b.shard_node, b.shard_gpu }, (JobId)b.id);
		if (!fresh)
			it->second = std::min<JobId>(it->second, b.id);
	}
	for (int i = 0; i < s.n_jobs; i++) {
		const tidal_job_t &b = s.jobs[i];
		if (b.state == TIDAL_JOB_RUNNING && b.shard_node >= 0)
			views[i].job.gpu_group =
				on_gpu[{ b.shard_node, b.shard_gpu }];
	}
	Plan plan;
	if (policy_->shares_gpus() && s.share_jobs_per_gpu < 0) {
		/* Shards configured, and no node has registered them yet
		 * (slurmctld has just started): the groups cannot be seen,
		 * so nothing moves until they can. */
		for (const Job *j : snap.jobs)
			plan.add(j->id,
				 j->state == JobState::Running ? Action::Keep
							       : Action::Hold,
				 j->gpus,
				 "waiting for the nodes to register their GPU "
				 "shards");
	} else {
		plan = policy_->decide(snap);
	}
	for (const std::string &l : plan.log)
		log += policy_->name() + ": " + l + "\n";
	for (Decision &d : extra.decisions)
		plan.decisions.push_back(std::move(d));
	forget_old(s.now);

	size_t n = plan.decisions.size();
	out->d = (tidal_decision_t *)std::calloc(n + 1,
						 sizeof(tidal_decision_t));
	if (!out->d)
		throw std::bad_alloc();
	out->n = (int)n;
	/* Every decision's share arrays in one allocation. */
	size_t shares = 0;
	for (const Decision &d : plan.decisions)
		shares += d.placement.size();
	out->shares = (int *)std::calloc(2 * shares + 1, sizeof(int));
	if (!out->shares)
		throw std::bad_alloc();
	std::vector<int> slots(n);
	for (size_t i = 0, at = 0; i < n; i++) {
		copy_decision(plan.decisions[i], out->shares + at,
			      out->shares + at + plan.decisions[i].placement.size(),
			      &out->d[i]);
		at += 2 * plan.decisions[i].placement.size();
		out->d[i].snap_index = slots[i] =
			index_of(plan.decisions[i].job);
	}
	out->wake_at = std::isfinite(plan.wake_at) ? plan.wake_at : 0;
	if (!plan.kept_nodes.empty()) {
		out->kept = (int *)std::calloc(plan.kept_nodes.size(),
					       sizeof(int));
		if (!out->kept)
			throw std::bad_alloc();
		for (int k : plan.kept_nodes)
			if (k >= 0 && k < s.n_nodes)
				out->kept[out->n_kept++] = k;
	}
	out->decide_ms = std::chrono::duration<double, std::milli>(
				 std::chrono::steady_clock::now() - t0)
				 .count();
	if (!log.empty())
		out->log = c_string(log);
	count_admissions(views, plan, slots);
	metrics_plan(views, plan, name_);
	record(s, std::move(plan), slots, out->decide_ms);
	return 0;
}

/* Each job once: rejected (its first Reject), or admitted (a job with a
 * deadline, at its first start). */
void Engine::count_admissions(
	const std::vector<JobView> &views, const Plan &plan,
	const std::vector<int> &slots)
{
	for (size_t k = 0; k < plan.decisions.size(); k++) {
		const Decision &d = plan.decisions[k];
		auto m = memo_.find(d.job);
		if (m == memo_.end() || m->second.admission)
			continue;
		if (d.action == Action::Reject) {
			m->second.admission = 2;
			tidal_metrics_admission(0);
		} else if (d.action == Action::Start && slots[k] >= 0 &&
			   views[slots[k]].job.has_deadline()) {
			m->second.admission = 1;
			tidal_metrics_admission(1);
		}
	}
}

int Engine::index_of(JobId id) const
{
	auto it = memo_.find((std::uint32_t)id);
	return it != memo_.end() && it->second.cycle == decides_
		       ? it->second.index
		       : -1;
}

/* Forget jobs not seen for an hour (finished, or ineligible that long). */
void Engine::forget_old(double now)
{
	for (auto it = memo_.begin(); it != memo_.end();)
		if (now - it->second.seen > 3600)
			it = memo_.erase(it), state_dirty_ = true;
		else
			++it;
}

void Engine::record(const tidal_snap_t &s, Plan &&plan,
		    const std::vector<int> &slots, double decide_ms)
{
	std::vector<JobView> &views = spare_;
	/* A job's decision; of two, the later. */
	for (size_t k = 0; k < plan.decisions.size(); k++)
		if (slots[k] >= 0) {
			views[slots[k]].decision =
				std::move(plan.decisions[k]);
			views[slots[k]].decided = true;
		}
	last_.now = s.now;
	last_.decide_ms = decide_ms;
	node_names_.resize(s.n_nodes);
	last_.nodes.resize(s.n_nodes);
	for (int i = 0; i < s.n_nodes; i++) {
		const tidal_node_t &b = s.nodes[i];
		NodeView &n = last_.nodes[i];
		static const NodeView blank; /* as renew() does a JobView */
		n = blank;
		node_names_[i] = n.name = b.name;
		n.up = b.up != 0;
		n.gpus_total = b.gpus_total;
		n.gpus_other = std::max(0, b.gpus_total - b.gpus);
		if (b.switch_id >= 0 && b.switch_id < s.n_switches)
			n.leaf_switch = s.switches[b.switch_id].name;
	}
	/* A shared GPU counts once, whoever of its jobs comes first. */
	std::set<std::pair<int, JobId>> shared_seen;
	std::map<JobId, std::vector<JobId>> groups;
	for (const JobView &v : views) {
		const Job &j = v.job;
		if (j.gpu_group)
			groups[j.gpu_group].push_back(j.id);
		for (const NodeShare &ns : j.placement)
			if (ns.node >= 0 && ns.node < s.n_nodes && ns.gpus > 0) {
				if (!j.gpu_group ||
				    shared_seen.insert({ ns.node, j.gpu_group })
					    .second)
					last_.nodes[ns.node].gpus_alloc +=
						ns.gpus;
				last_.nodes[ns.node].jobs.emplace_back(
					(std::uint32_t)j.id, ns.gpus);
			}
	}
	for (size_t i = 0; i < views.size(); i++) {
		JobView &v = views[i];
		const tidal_job_t &b = s.jobs[i];
		v.uid = b.uid;
		for (const NodeShare &ns : v.job.placement)
			if (ns.node >= 0 && ns.node < s.n_nodes) {
				if (!v.nodes.empty())
					v.nodes += ',';
				v.nodes += s.nodes[ns.node].name;
			}
		if (b.shard_node >= 0 && b.shard_node < s.n_nodes &&
		    b.shard_gpu >= 0)
			v.shared_gpu = std::string(s.nodes[b.shard_node].name) +
				       "-gpu" + std::to_string(b.shard_gpu);
		if (v.job.gpu_group)
			for (JobId id : groups[v.job.gpu_group])
				if (id != v.job.id) {
					if (!v.partners.empty())
						v.partners += ',';
					v.partners += std::to_string(id);
				}
	}
	last_.jobs.swap(views);
	cycles_++;
}

} /* namespace plugin */
} /* namespace tidal */

using tidal::plugin::engine;
using tidal::plugin::guarded;

extern "C" int tidal_engine_configure(const char *text, const char *origin,
				      char **msg)
{
	*msg = nullptr;
	std::string m;
	int rc = -1;
	try {
		rc = engine().configure(text ? text : "", origin, &m);
	} catch (const std::exception &e) {
		m = std::string("tidal.conf: ") + e.what();
	} catch (...) {
		m = "tidal.conf: unknown error";
	}
	if (!m.empty())
		*msg = tidal::plugin::c_string(m);
	return rc;
}

extern "C" int tidal_engine_ctl_port(void)
{
	return guarded(0, [] { return engine().ctl_port(); });
}

extern "C" void tidal_engine_set_slurm_version(const char *version)
{
	guarded([version] {
		engine().set_slurm_version(version ? version : "");
	});
}

extern "C" int tidal_engine_metrics_port(void)
{
	return guarded(0, [] { return engine().metrics_port(); });
}

extern "C" char *tidal_engine_metrics_addr(void)
{
	return guarded((char *)nullptr, [] {
		return tidal::plugin::c_string(engine().metrics_addr());
	});
}

extern "C" double tidal_engine_interval(void)
{
	return guarded(2.0 /* the default */,
		       [] { return engine().interval(); });
}

extern "C" const char *tidal_engine_policy(void)
{
	return guarded((const char *)"", [] { return engine().policy_name(); });
}

extern "C" int tidal_engine_admits_by_deadline(void)
{
	return guarded(0, [] { return (int)engine().admits_by_deadline(); });
}

extern "C" int tidal_engine_decide(const tidal_snap_t *snap,
				   tidal_plan_t *plan, char **msg)
{
	*msg = nullptr;
	std::memset(plan, 0, sizeof(*plan));
	try {
		return engine().decide(*snap, plan);
	} catch (const std::exception &e) {
		*msg = tidal::plugin::c_string(std::string("decide: ") +
					       e.what());
	} catch (...) {
		*msg = tidal::plugin::c_string("decide: unknown error");
	}
	tidal_plan_free(plan);
	return -1;
}

extern "C" void tidal_engine_started(uint32_t job, double when)
{
	guarded(0, [&] {
		engine().started(job, when);
		return 0;
	});
}

extern "C" void tidal_plan_free(tidal_plan_t *plan)
{
	std::free(plan->shares);
	plan->shares = nullptr;
	std::free(plan->d);
	std::free(plan->log);
	std::free(plan->kept);
	plan->kept = nullptr;
	plan->n_kept = 0;
	plan->log = nullptr;
	plan->d = nullptr;
	plan->n = 0;
}

extern "C" void tidal_engine_apply_conf(tidal_apply_conf_t *conf)
{
	guarded([conf] { engine().apply_conf(conf); });
}

extern "C" char *tidal_engine_state_dump(int force)
{
	try {
		std::string s;
		if (!engine().state_dump(&s, force != 0))
			return nullptr;
		return tidal::plugin::c_string(s);
	} catch (...) {
		return nullptr;
	}
}

extern "C" int tidal_engine_state_line(const char *line)
{
	try {
		return engine().state_line(line ? line : "") ? 1 : 0;
	} catch (...) {
		return 0;
	}
}

extern "C" void tidal_engine_shutdown(void)
{
	try {
		engine().shutdown();
	} catch (...) {
	}
}
