/*
 * messages.h - every message of Tidal's wire (proto/wire.h), defined once
 * here with its encoder and decoder, so that no writer and reader can
 * drift apart.  The schema of each is written above its struct.
 *
 * Conventions, for every message:
 *   - one JSON object per line, with the wire version "v":1 (a reader
 *     also takes the older key "version"); a request has "op";
 *   - a reply has "ok"; when false, "error" says why, and no other field
 *     is read;
 *   - a job id is a JSON integer 1..4294967295 (Slurm's uint32), a step,
 *     a byte count or a command id a JSON integer >= 0; anything else (a
 *     string, a fraction, true) is refused or dropped, never read as some
 *     number;
 *   - a decoder takes what the schema allows and drops what it does not
 *     (an entry with a bad id is skipped); a field it does not know is
 *     ignored, so that a newer writer can add one.
 *
 * decode(LINE, &M) returns false when LINE is not a JSON object; a
 * request's decoder also returns false, with *ERR saying which field
 * breaks which rule, when a field the op needs is missing or out of
 * range.  tests/node/test_wire.cc checks decode(encode(m)) == m for each;
 * tests/fuzz/fuzz_agent_wire.cc feeds every decoder and holds what it
 * accepts to the rules above.
 *
 * Who speaks to whom (the sockets are in wire.h and defaults.h):
 *
 *   tidald -> sched/tidal (TCP, MUNGE)   node_register, node_heartbeat,
 *                                        node_ack, ckpt_where, job_plan
 *   tidal-launch -> tidald (unix)        hello, fetch, job_plan
 *   tidal-train -> tidald (unix)         interleave, then turn_done
 *   tidald -> tidal-train (unix)         turn
 *   tidald -> tidald (TCP, MUNGE)        ckpt_stat, ckpt_get
 *   tidald -> tidal-launch (unix)        status, checkpoint, checkpoint_stop
 *   tidalctl -> sched/tidal (TCP, MUNGE) show, explain, set
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "proto/json.h"

namespace tidal::wire
{

constexpr int64_t kMaxJobId = 4294967295LL; /* Slurm's job ids: uint32 */

/* ==== tidald -> sched/tidal (plugin/sched/agents/node_ops.cc) ==== */

/*
 * node_register, once at start and whenever a heartbeat's reply asks:
 *
 *   {"v":1,"op":"node_register","node":"n1","addr":"10.0.0.1:6830",
 *    "agent_version":"0.9","ckpt_dir":"/nvme/tidal","ckpt_free_bytes":N,
 *    "heartbeat_s":10,"topology":{...},"fabric":{...}}
 *
 * addr: where tidald serves its peers, HOST:PORT, or ":PORT" for the
 * address the request came from.  topology: node/topo.h's summary;
 * fabric: the InfiniBand fabric (core/placement/fabric.h), absent without
 * HCAs.  Both are carried as JSON text, for the plugin to read with the
 * code that wrote them.  Reply: {"v":1,"ok":true}.
 */
struct NodeRegister {
	std::string node, addr, agent_version, ckpt_dir;
	uint64_t ckpt_free_bytes = 0;
	double heartbeat_s = 10;
	std::string topology = "{}"; /* a JSON object */
	std::string fabric;	     /* a JSON object, or "" */
	bool operator==(const NodeRegister &) const = default;
};

/* A checkpoint by its step and path; step 0 = none. */
struct CkptRef {
	uint64_t step = 0;
	std::string path;
	bool operator==(const CkptRef &) const = default;
};

/* Milliseconds per step in each stage, as the trainer measured them. */
struct Stages {
	bool present = false;
	double data = 0, compute = 0, comm = 0;
	bool operator==(const Stages &) const = default;
};

/* How the job uses its GPUs, as the trainer measured it: the percentage
 * of each step its GPU stage took (what NVML's utilisation counts), and
 * the GPU memory it takes per GPU, MiB (tidal-train(1) --gpu-mem). */
struct GpuUse {
	bool present = false;
	double util = 0, mem_mb = 0;
	bool operator==(const GpuUse &) const = default;
};

/*
 * What tidal-launch knows of its job on this node: the fields of its
 * status reply and of a heartbeat's job entry.
 *
 *   "node":"n1","world":4,"generation":2,"step":3000,"loss":2.31,
 *   "it_s":5.2,"stages":{"data":3.1,"compute":150,"comm":20},"gns":812,
 *   "gpu":{"util":86.5,"mem_mb":3000},
 *   "batch":256,"progress":3400.5,"grad_sqr":2.1,"grad_var":6.3,
 *   "restarts_left":3,"last_ckpt":{"step":3000,"path":"/nvme/..."},
 *   "state":"running","ranks":[{"rank":0,"pid":4242}]
 *
 * state: running, restarting or stopped (tidal-launch(1)); "unknown" in a
 * heartbeat when the launcher did not answer ok.  loss and gns are null
 * until measured, stages and gpu absent; last_ckpt is null before the first
 * checkpoint.  batch: the global batch the trainer runs at (0 before its
 * first step event); progress: steps of its initial batch done
 * (AdaScale's scale-invariant count, tidal-train(1)); grad_sqr and
 * grad_var: Pollux's gradient statistics, |G|^2 and the noise of a
 * gradient of the initial batch, smoothed; each null until measured.
 */
struct TrainStatus {
	std::string node, state;
	int64_t world = 0, generation = 0, restarts_left = 0;
	uint64_t step = 0;
	std::optional<double> loss, gns;
	double it_s = 0;
	int64_t batch = 0;
	std::optional<double> progress, grad_sqr, grad_var;
	Stages stages;
	GpuUse gpu;
	CkptRef last_ckpt;
	std::vector<std::pair<int64_t, int64_t>> ranks; /* rank, pid */
	bool operator==(const TrainStatus &) const = default;
};

/*
 * node_heartbeat, every heartbeat_s:
 *
 *   {"v":1,"op":"node_heartbeat","node":"n1","ckpt_free_bytes":N,
 *    "ckpt_error":"...","heartbeat_s":10,
 *    "jobs":[{"job":12, TrainStatus's fields}]}
 *
 * ckpt_error: why the checkpoint directory cannot be written ("" or
 * absent: it can), for tidalctl check.
 *
 * In a job entry, last_ckpt is the job's newest complete checkpoint on
 * this node, pinned by tidald before it is reported (nodeagent/pins.cc);
 * the launcher's own only when this node has none.
 *
 * held (absent when empty): checkpoints this node copied in (a fetch) of
 * jobs with no launcher here, "held":[{"job":12,"step":2900,"path":...}],
 * carried until the plugin has answered one heartbeat with them, so that
 * a fetch elsewhere can find this copy when the job's own nodes are gone.
 * Reply: HeartbeatReply.
 */
struct JobReport {
	uint64_t job = 0;
	TrainStatus status;
	bool operator==(const JobReport &) const = default;
};
struct HeldCkpt {
	uint64_t job = 0;
	CkptRef ckpt;
	bool operator==(const HeldCkpt &) const = default;
};
struct NodeHeartbeat {
	std::string node;
	std::optional<uint64_t> ckpt_free_bytes;
	std::optional<std::string> ckpt_error;
	std::optional<double> heartbeat_s;
	std::vector<JobReport> jobs; /* entries without a valid job dropped */
	/* entries without a valid job or with step 0 dropped */
	std::vector<HeldCkpt> held;
	bool operator==(const NodeHeartbeat &) const = default;
};

/*
 * node_heartbeat's reply:
 *
 *   {"v":1,"ok":true,"commands":[{"id":7,"op":"checkpoint_stop","job":12}],
 *    "keep":[{"job":12,"step":3000}]}
 *   {"v":1,"ok":false,"error":"...","register":true}
 *
 * commands: what the plugin asks of this node's agent (resize.c), each id
 * >= 1, job 1..kMaxJobId.  keep: per job, the checkpoint step the plugin's
 * saved state names for this node, which tidald must not rotate away
 * (step >= 1).  register: the plugin does not know this node (it
 * restarted without its state): register again.
 */
struct AgentCommand {
	uint64_t id = 0;
	std::string op; /* checkpoint or checkpoint_stop */
	uint64_t job = 0;
	bool operator==(const AgentCommand &) const = default;
};
struct HeartbeatReply {
	bool ok = false;
	bool reregister = false; /* !ok: the plugin does not know us */
	std::string error;	 /* !ok */
	std::vector<AgentCommand> commands;
	std::vector<std::pair<uint64_t, uint64_t>> keep; /* job, step */
	bool operator==(const HeartbeatReply &) const = default;
};

/*
 * node_ack, when a command is done or has failed:
 *
 *   {"v":1,"op":"node_ack","node":"n1","id":7,"job":12,"ok":true,
 *    "step":3000,"path":"/nvme/...","bytes":N,"ms":840}
 *   {"v":1,"op":"node_ack","node":"n1","id":7,"job":12,"ok":false,
 *    "error":"..."}
 *
 * Reply: {"v":1,"ok":true}.
 */
struct NodeAck {
	std::string node;
	uint64_t id = 0, job = 0;
	bool ok = false;
	CkptRef ckpt;	    /* ok */
	uint64_t bytes = 0; /* ok */
	double ms = 0;	    /* ok */
	std::string error;  /* !ok */
	bool operator==(const NodeAck &) const = default;
};

/*
 * ckpt_where, from a tidald that must bring up a job's checkpoint:
 *
 *   {"v":1,"op":"ckpt_where","job":12}
 *   -> {"v":1,"ok":true,"job":12,"node":"n4","addr":"10.0.0.4:6830",
 *       "step":3000,"path":"/nvme/...","uid":1000,
 *       "holders":[{"node":"n4","addr":"10.0.0.4:6830","step":3000}]}
 *
 * node, addr, step, path: the newest checkpoint recorded; holders: every
 * node known to hold one, newest first (each step a lower bound: the
 * node may hold newer ones by now).  uid: the job's owner, absent when
 * the plugin does not know it.
 */
struct CkptWhere {
	uint64_t job = 0;
	bool operator==(const CkptWhere &) const = default;
};
struct CkptHolderRef {
	std::string node, addr;
	uint64_t step = 0;
	bool operator==(const CkptHolderRef &) const = default;
};
struct CkptWhereReply {
	bool ok = false;
	std::string error;
	uint64_t job = 0;
	CkptHolderRef newest;
	std::string path;
	std::vector<CkptHolderRef> holders;
	int64_t uid = -1;
	bool operator==(const CkptWhereReply &) const = default;
};

/*
 * job_plan, from a tidald that a launcher asked what its job should run
 * with from the generation it starts:
 *
 *   {"v":1,"op":"job_plan","job":12}
 *   -> {"v":1,"ok":true,"job":12,"batch":256[,"group_size":2]}
 *
 * batch: the global batch the scheduler's policy chose for the job
 * (Pollux: Decision::batch), an integer in [0, 1e9]; 0 = none chosen, the
 * trainer's own --global-batch.  group_size: the running jobs that share
 * the job's GPU, itself included, 1 to 4, as the plugin's last cycle saw
 * them; absent (0) when it shares none or the plugin has not seen it run
 * yet.  share: how the policy in force has jobs on one GPU share it,
 * "interleave" (in turns, tidald's interleaving groups: Muri) or "pack"
 * (at once: Lucid, AntMan); absent when it shares none (a reply without
 * it is read as "interleave", what tidald did before packs).  The same
 * request and reply pass on
 * tidald's local socket (tidal-launch -> tidald), which forwards them.
 */
struct JobPlan {
	uint64_t job = 0;
	bool operator==(const JobPlan &) const = default;
};
struct JobPlanReply {
	bool ok = false;
	std::string error;
	uint64_t job = 0;
	int64_t batch = 0;
	int group_size = 0;
	std::string share; /* "", "interleave" or "pack" */
	bool operator==(const JobPlanReply &) const = default;
};

/* ==== tidal-launch -> tidald, its local socket (nodeagent/serve.cc) ==== */

/*
 *   {"v":1,"op":"hello"}
 *   -> {"v":1,"ok":true,"node":"n1","ckpt_dir":"/nvme/tidal"}
 *   {"v":1,"op":"fetch","job":12[,"peer":"HOST:PORT"][,"step":S]}
 *   -> {"v":1,"ok":true,"path":P,"step":S,"from":"n4"[,"bytes":N,"ms":T]
 *       [,"warnings":["..."]]}
 *
 * fetch: the newest checkpoint of the job, local or copied here; with
 * peer, from that tidald without asking the plugin, at step or newer.
 * bytes and ms: a copy was made.  warnings: what the launcher should tell
 * the job's log (corrupt newer checkpoints skipped, the newest one out of
 * reach).
 */
/*
 * interleave: a trainer joins the interleaving group of the GPU it shares
 * (nodeagent/interleave.cc); the connection stays open for the group's
 * turns:
 *
 *   {"v":1,"op":"interleave","job":12,"rank":0,"group":"n1-gpu0",
 *    "size":2,"stages":[0.30,0.12,0.05]}
 *   <- {"v":1,"op":"turn","first":0,"last":0,"factor":1.31,"n":2,
 *       "position":1}
 *   -> {"v":1,"op":"turn_done","secs":[0.301]}
 *   <- ... until either side closes; an error is a reply with "ok":false
 *
 * group: 1 to 64 of [A-Za-z0-9._:-]; size: the members the group waits
 * for, 1 to 4; rank: the trainer's rank in its job, 0 to 65535; stages:
 * seconds per iteration of data loading, GPU compute and network sync
 * alone, each finite, 0 to 3600, their sum > 0.
 *
 * turn: run stages FIRST..LAST (0 data, 1 compute, 2 sync) now, each
 * paced to its solo seconds x FACTOR, then answer turn_done with the
 * seconds each took.  n: the members now in the group, position: this
 * one's slot.
 */
struct InterleaveJoin {
	uint64_t job = 0;
	uint64_t rank = 0;
	std::string group;
	int size = 0;
	std::vector<double> stages; /* 3 */
	bool operator==(const InterleaveJoin &) const = default;
};
struct Turn {
	int first = 0, last = 0;
	double factor = 1;
	int n = 1, position = 0;
	bool operator==(const Turn &) const = default;
};
struct TurnDone {
	std::vector<double> secs; /* one per stage run, >= 0 */
	bool operator==(const TurnDone &) const = default;
};

/*
 * pack: a trainer on a GPU whose jobs run at once, packed (share "pack"
 * in job_plan: Lucid, AntMan), joins that GPU's pack (nodeagent/pack.cc);
 * the connection stays open, and at every join and leave tidald tells each
 * member who is in it, so that a trainer on fake GPUs can run at the
 * speed the pair would have (tidal-train --colocate):
 *
 *   {"v":1,"op":"pack","job":14,"rank":0,"group":"n1-gpu0",
 *    "workload":"DCGAN/LSUN/128/0"}
 *   <- {"v":1,"op":"partners","group":"n1-gpu0","members":[
 *        {"job":12,"rank":0,"workload":"ResNet18/CIFAR-10/64/0"},
 *        {"job":14,"rank":0,"workload":"DCGAN/LSUN/128/0"}]}
 *   <- ... until either side closes; an error is a reply with "ok":false
 *
 * group: as for interleave; rank: 0 to 65535; workload: what the trainer
 * runs, 0 to 128 of [A-Za-z0-9._:/+-] ("" = not said); members: 1 to 64,
 * in the order they joined, the receiver among them.
 */
struct PackJoin {
	uint64_t job = 0;
	uint64_t rank = 0;
	std::string group, workload;
	bool operator==(const PackJoin &) const = default;
};
struct PackMember {
	uint64_t job = 0;
	uint64_t rank = 0;
	std::string workload;
	bool operator==(const PackMember &) const = default;
};
struct Partners {
	std::string group;
	std::vector<PackMember> members;
	bool operator==(const Partners &) const = default;
};

struct LocalRequest {
	std::string op;	  /* hello, fetch, job_plan, interleave or pack */
	uint64_t job = 0; /* fetch, job_plan: > 0 */
	std::string peer; /* "" = ask the plugin */
	uint64_t step = 0;
	InterleaveJoin join; /* interleave */
	PackJoin pack;	     /* pack */
	bool operator==(const LocalRequest &) const = default;
};
struct HelloReply {
	std::string node, ckpt_dir;
	bool operator==(const HelloReply &) const = default;
};
struct FetchReply {
	bool ok = false;
	std::string error;
	CkptRef ckpt;
	std::string from;
	std::optional<uint64_t> bytes; /* copied: its size and time */
	double ms = 0;
	std::vector<std::string> warnings;
	bool operator==(const FetchReply &) const = default;
};

/* ==== tidald -> tidald, the peer port (nodeagent/serve.cc, fetch.cc) ==== */

/*
 *   {"v":1,"op":"ckpt_stat","job":12}
 *   -> {"v":1,"ok":true,"step":S,"bytes":N}   the newest complete one
 *   {"v":1,"op":"ckpt_get","job":12,"step":S}
 *   -> {"v":1,"ok":true,"bytes":N,"name":"ckpt-...tck","step":S'} + N bytes
 *
 * S' = S if that checkpoint is still there, else the newest complete one
 * newer than S; S = 0 asks for the newest.  A MUNGE credential line comes
 * first (wire.h).
 */
struct PeerRequest {
	std::string op; /* ckpt_stat or ckpt_get */
	uint64_t job = 0;
	uint64_t step = 0;
	bool operator==(const PeerRequest &) const = default;
};
/* ckpt_stat's reply and ckpt_get's header line. */
struct CkptOffer {
	uint64_t step = 0, bytes = 0;
	std::string name; /* ckpt_get */
	bool operator==(const CkptOffer &) const = default;
};

/* ==== tidald -> tidal-launch, its control socket (launcher/control.h) ==== */

/*
 *   {"v":1,"op":"status"}          -> {"v":1,"ok":true,"job":"12",
 *                                      TrainStatus's fields}
 *   {"v":1,"op":"checkpoint"}      -> CkptDone, once it is durable
 *   {"v":1,"op":"checkpoint_stop"} -> CkptDone, once the trainers exited
 *
 * status's job is the launcher's --job as given (text).  CkptDone:
 *   {"v":1,"ok":true,"step":S,"path":P,"bytes":N,"ms":T}
 */
struct ControlRequest {
	std::string op; /* status, checkpoint or checkpoint_stop */
	bool operator==(const ControlRequest &) const = default;
};
struct LauncherStatus {
	std::string job;
	TrainStatus status;
	bool operator==(const LauncherStatus &) const = default;
};
struct CkptDone {
	bool ok = false;
	std::string error;
	CkptRef ckpt;
	uint64_t bytes = 0;
	double ms = 0;
	bool operator==(const CkptDone &) const = default;
};

/* ==== tidalctl -> sched/tidal (plugin/sched/ctl_engine.cc) ==== */

/*
 *   {"v":1,"op":"show","what":"jobs|nodes|policy|config|decisions"}
 *   {"v":1,"op":"show","what":"job","id":12}
 *   {"v":1,"op":"explain","id":12}
 *   {"v":1,"op":"set","what":"policy","policy":"sjf"}   root/SlurmUser
 *   -> {"v":1,"ok":true,"records":[{"JobId":12,"JobName":"train",...},...]}
 *
 * id: -1 when absent.  A record is a flat object of scontrol-style keys in
 * the order tidalctl prints them (tidalctl(1) lists them); each value is
 * text ("None" when empty), a whole number, a number written with at most
 * three decimals (or three significant digits), or null (not known).
 * Anything else in a record is dropped.
 */
struct CtlRequest {
	std::string op, what, policy;
	int64_t id = -1;
	bool operator==(const CtlRequest &) const = default;
};
struct CtlValue {
	enum Kind { None, Text, Integer, Number } kind = None;
	std::string text; /* Text; Number: as written ("0.054") */
	int64_t integer = 0;
	bool operator==(const CtlValue &) const = default;
};
using CtlRecord = std::vector<std::pair<std::string, CtlValue>>;
struct CtlReply {
	bool ok = false;
	std::string error;
	std::vector<CtlRecord> records;
	bool operator==(const CtlReply &) const = default;
};

/* ---- encoders: one line with its newline ---- */

std::string encode(const NodeRegister &m);
std::string encode(const NodeHeartbeat &m);
std::string encode(const HeartbeatReply &m);
std::string encode(const NodeAck &m);
std::string encode(const CkptWhere &m);
std::string encode(const CkptWhereReply &m);
std::string encode(const JobPlan &m);
std::string encode(const JobPlanReply &m);
std::string encode(const InterleaveJoin &m);
std::string encode(const Turn &m);
std::string encode(const TurnDone &m);
std::string encode(const PackJoin &m);
std::string encode(const Partners &m);
std::string encode(const LocalRequest &m);
std::string encode(const HelloReply &m);
std::string encode(const FetchReply &m);
std::string encode(const PeerRequest &m);
std::string encode(const CkptOffer &m);
std::string encode(const ControlRequest &m);
std::string encode(const LauncherStatus &m);
std::string encode(const CkptDone &m);
std::string encode(const CtlRequest &m);
std::string encode(const CtlReply &m);

/* ---- decoders ---- */

/* Requests: RET false with *ERR naming the field and the rule.  The
 * json_object forms read an object already parsed (its op checked by the
 * caller); the line forms parse it first. */
bool decode(json_object *o, NodeRegister *out, std::string *err);
bool decode(json_object *o, NodeHeartbeat *out, std::string *err);
bool decode(json_object *o, NodeAck *out, std::string *err);
bool decode(json_object *o, CkptWhere *out, std::string *err);
bool decode(json_object *o, JobPlan *out, std::string *err);
bool decode(const std::string &line, LocalRequest *out, std::string *err);
/* A turn, or an error reply (false with *ERR saying it). */
bool decode(const std::string &line, Turn *out, std::string *err);
bool decode(const std::string &line, TurnDone *out, std::string *err);
/* The members of a pack, or an error reply (false with *ERR saying it). */
bool decode(const std::string &line, Partners *out, std::string *err);
bool decode(const std::string &line, PeerRequest *out, std::string *err);
bool decode(const std::string &line, ControlRequest *out, std::string *err);
bool decode(json_object *o, CtlRequest *out, std::string *err);
bool decode(const std::string &line, NodeRegister *out, std::string *err);
bool decode(const std::string &line, NodeHeartbeat *out, std::string *err);
bool decode(const std::string &line, NodeAck *out, std::string *err);

/* Replies: RET false if LINE is not a JSON object; otherwise true, with
 * ok false and error set when the reply says so. */
bool decode(const std::string &line, HeartbeatReply *out);
bool decode(const std::string &line, CkptWhereReply *out);
bool decode(const std::string &line, JobPlanReply *out);
bool decode(const std::string &line, FetchReply *out);
bool decode(const std::string &line, CkptDone *out);
bool decode(const std::string &line, CtlReply *out);
/* RET false with *ERR if LINE is not an ok reply. */
bool decode(const std::string &line, HelloReply *out, std::string *err);
bool decode(const std::string &line, LauncherStatus *out, std::string *err);
/* O is an ok reply already parsed (a header line before a body); steps
 * and bytes must be integers >= 0, step defaults to DFLT_STEP. */
bool decode(json_object *o, CkptOffer *out, uint64_t dflt_step,
	    std::string *err);

/* TrainStatus's fields in O (a status reply or a heartbeat job entry). */
TrainStatus decode_status(json_object *o);

} /* namespace tidal::wire */
