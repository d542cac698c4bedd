/*
 * messages.cc - encoders and decoders of the wire's messages (see
 * messages.h for the schemas).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "proto/messages.h"

#include <json.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace tidal::wire
{

namespace
{

/* ---- writing ---- */

void put(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}
void put_str(json_object *o, const char *k, const std::string &v)
{
	put(o, k, json_object_new_string(v.c_str()));
}
void put_int(json_object *o, const char *k, int64_t v)
{
	put(o, k, json_object_new_int64(v));
}
void put_num(json_object *o, const char *k, double v)
{
	put(o, k, json_object_new_double(v));
}
/* TEXT, a JSON object carried as text; {} if it is not one. */
json_object *object_of(const std::string &text)
{
	json_object *o = parse_object(text);
	return o ? o : json_object_new_object();
}
json_object *reply(bool ok, const std::string &error)
{
	if (!ok) {
		json_object *o = new_message();
		put(o, "ok", json_object_new_boolean(0));
		put_str(o, "error", error);
		return o;
	}
	return ok_reply();
}
json_object *ckpt_ref(const CkptRef &c)
{
	json_object *o = json_object_new_object();
	put_int(o, "step", (int64_t)c.step);
	put_str(o, "path", c.path);
	return o;
}

/* ---- reading ---- */

/* KEY's JSON array in O, or null. */
json_object *array(json_object *o, const char *key)
{
	json_object *a;
	return json_object_object_get_ex(o, key, &a) &&
			       json_object_is_type(a, json_type_array)
		       ? a
		       : nullptr;
}
/* KEY's JSON object in O, or null. */
json_object *object(json_object *o, const char *key)
{
	json_object *a;
	return json_object_object_get_ex(o, key, &a) &&
			       json_object_is_type(a, json_type_object)
		       ? a
		       : nullptr;
}
/* KEY as an integer in [0, HI], else DFLT (absent, or any other value). */
uint64_t count(json_object *o, const char *key, int64_t hi = INT64_MAX,
	       uint64_t dflt = 0)
{
	int64_t v;
	return get_integer_in(o, key, 0, hi, &v) > 0 ? (uint64_t)v : dflt;
}
/* KEY as a finite number, or nothing. */
std::optional<double> number(json_object *o, const char *key)
{
	bool has;
	double v = get_number(o, key, 0, &has);
	if (!has || !std::isfinite(v))
		return std::nullopt;
	return v;
}
double num(json_object *o, const char *key, double dflt = 0)
{
	return number(o, key).value_or(dflt);
}
/* KEY is JSON true. */
bool is_true(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) &&
	       json_object_is_type(v, json_type_boolean) &&
	       json_object_get_boolean(v);
}
/* F(job, entry) for each entry of O's array KEY whose "job" is a job id
 * (1..kMaxJobId); the others are dropped. */
template <class F> void each_job_entry(json_object *o, const char *key, F &&f)
{
	json_object *a = array(o, key);
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);
		int64_t job;
		if (get_integer_in(e, "job", 1, kMaxJobId, &job) > 0)
			f((uint64_t)job, e);
	}
}
CkptRef ckpt_ref_of(json_object *o)
{
	CkptRef c;
	if (o) {
		c.step = count(o, "step");
		c.path = get_string(o, "path");
	}
	return c;
}

/*
 * The counts a node op may carry: present means an integer in range.
 * "" if they are, else the rule broken.
 */
std::string bad_count(json_object *q)
{
	static const struct {
		const char *key;
		int64_t max;
	} keys[] = { { "job", kMaxJobId },
		     { "id", INT64_MAX },
		     { "step", INT64_MAX },
		     { "bytes", INT64_MAX },
		     { "ckpt_free_bytes", INT64_MAX } };
	for (const auto &k : keys) {
		int64_t v;
		if (get_integer_in(q, k.key, 0, k.max, &v) < 0)
			return std::string("\"") + k.key +
			       "\" must be an integer from 0 to " +
			       std::to_string(k.max);
	}
	return "";
}

/* LINE as a reply: RET its object if its "ok" is true (the caller reads
 * its fields, then puts it); else null, with *ERROR from it and *JSON
 * saying whether LINE was a JSON object at all. */
json_object *ok_object(const std::string &line, std::string *error, bool *json)
{
	json_object *o = parse_object(line);
	*json = o != nullptr;
	if (reply_ok(o, error))
		return o;
	if (o)
		json_object_put(o);
	return nullptr;
}

/* LINE as the reply *OUT (ok, error): RET false if it is not a JSON
 * object; when ok, READ(its object) fills in the rest. */
template <typename T, typename F>
bool decode_reply(const std::string &line, T *out, F &&read)
{
	*out = T();
	bool json;
	json_object *o = ok_object(line, &out->error, &json);
	if (!o)
		return json;
	out->ok = true;
	read(o);
	json_object_put(o);
	return true;
}

/* LINE as a reply that must be ok: RET false with *ERR if it is not;
 * else READ(its object) fills *OUT in. */
template <typename T, typename F>
bool decode_ok(const std::string &line, T *out, std::string *err, F &&read)
{
	*out = T();
	bool json;
	json_object *o = ok_object(line, err, &json);
	if (!o)
		return false;
	read(o);
	json_object_put(o);
	return true;
}

/* Parse LINE and decode it as a T; RET false with *ERR. */
template <typename T>
bool decode_line(const std::string &line, T *out, std::string *err)
{
	json_object *o = parse_object(line);
	if (!o) {
		*err = "request is not a JSON object";
		return false;
	}
	bool ok = decode(o, out, err);
	json_object_put(o);
	return ok;
}

} /* namespace */

/* ---- tidald -> sched/tidal ---- */

std::string encode(const NodeRegister &m)
{
	json_object *o = new_message("node_register");
	put_str(o, "node", m.node);
	put_str(o, "addr", m.addr);
	put_str(o, "agent_version", m.agent_version);
	put_str(o, "ckpt_dir", m.ckpt_dir);
	put_int(o, "ckpt_free_bytes", (int64_t)m.ckpt_free_bytes);
	put_num(o, "heartbeat_s", m.heartbeat_s);
	put(o, "topology", object_of(m.topology));
	if (!m.fabric.empty())
		put(o, "fabric", object_of(m.fabric));
	return to_line(o);
}

bool decode(json_object *o, NodeRegister *out, std::string *err)
{
	*out = NodeRegister();
	if ((*err = bad_count(o)) != "")
		return false;
	out->node = get_string(o, "node");
	out->addr = get_string(o, "addr");
	out->agent_version = get_string(o, "agent_version");
	out->ckpt_dir = get_string(o, "ckpt_dir");
	out->ckpt_free_bytes = count(o, "ckpt_free_bytes");
	out->heartbeat_s = num(o, "heartbeat_s", 10);
	if (json_object *t = object(o, "topology"))
		out->topology = json_object_to_json_string_ext(
			t, JSON_C_TO_STRING_PLAIN);
	if (json_object *f = object(o, "fabric"))
		out->fabric = json_object_to_json_string_ext(
			f, JSON_C_TO_STRING_PLAIN);
	return true;
}

static void put_status(json_object *o, const TrainStatus &s)
{
	put_str(o, "node", s.node);
	put_int(o, "world", s.world);
	put_int(o, "generation", s.generation);
	put_int(o, "step", (int64_t)s.step);
	put(o, "loss", s.loss ? json_object_new_double(*s.loss) : nullptr);
	put_num(o, "it_s", s.it_s);
	if (s.stages.present) {
		json_object *st = json_object_new_object();
		put_num(st, "data", s.stages.data);
		put_num(st, "compute", s.stages.compute);
		put_num(st, "comm", s.stages.comm);
		put(o, "stages", st);
	}
	if (s.gpu.present) {
		json_object *g = json_object_new_object();
		put_num(g, "util", s.gpu.util);
		put_num(g, "mem_mb", s.gpu.mem_mb);
		put(o, "gpu", g);
	}
	put(o, "gns", s.gns ? json_object_new_double(*s.gns) : nullptr);
	put_int(o, "batch", s.batch);
	for (auto [key, v] : {std::pair{"progress", &s.progress},
			      std::pair{"grad_sqr", &s.grad_sqr},
			      std::pair{"grad_var", &s.grad_var}})
		put(o, key, *v ? json_object_new_double(**v) : nullptr);
	put_int(o, "restarts_left", s.restarts_left);
	put(o, "last_ckpt",
	    s.last_ckpt.step || !s.last_ckpt.path.empty()
		    ? ckpt_ref(s.last_ckpt)
		    : nullptr);
	put_str(o, "state", s.state);
	json_object *rs = json_object_new_array();
	for (const auto &[rank, pid] : s.ranks) {
		json_object *x = json_object_new_object();
		put_int(x, "rank", rank);
		put_int(x, "pid", pid);
		json_object_array_add(rs, x);
	}
	put(o, "ranks", rs);
}

TrainStatus decode_status(json_object *o)
{
	TrainStatus s;
	if (!o)
		return s;
	s.node = get_string(o, "node");
	s.state = get_string(o, "state");
	s.world = get_integer(o, "world");
	s.generation = get_integer(o, "generation");
	s.restarts_left = get_integer(o, "restarts_left");
	s.step = count(o, "step");
	s.loss = number(o, "loss");
	s.gns = number(o, "gns");
	int64_t batch;
	if (get_integer_in(o, "batch", 0, 1000000000, &batch) > 0)
		s.batch = batch;
	for (auto [key, v] : {std::pair{"progress", &s.progress},
			      std::pair{"grad_sqr", &s.grad_sqr},
			      std::pair{"grad_var", &s.grad_var}})
		if ((*v = number(o, key)) && **v < 0)
			v->reset(); /* a count and two squares: never below 0 */
	s.it_s = num(o, "it_s");
	if (json_object *st = object(o, "stages")) {
		s.stages.present = true;
		s.stages.data = num(st, "data");
		s.stages.compute = num(st, "compute");
		s.stages.comm = num(st, "comm");
	}
	if (json_object *g = object(o, "gpu")) {
		double u = num(g, "util"), m = num(g, "mem_mb");
		/* a percentage and a size: out of range is not measured */
		if (std::isfinite(u) && u >= 0 && u <= 100 &&
		    std::isfinite(m) && m >= 0 && m <= 1e9)
			s.gpu = { true, u, m };
	}
	s.last_ckpt = ckpt_ref_of(object(o, "last_ckpt"));
	if (json_object *rs = array(o, "ranks"))
		for (size_t i = 0; i < json_object_array_length(rs); i++) {
			json_object *x = json_object_array_get_idx(rs, i);
			int64_t rank, pid;
			if (get_integer_in(x, "rank", 0, INT32_MAX, &rank) >
				    0 &&
			    get_integer_in(x, "pid", 1, INT32_MAX, &pid) > 0)
				s.ranks.emplace_back(rank, pid);
		}
	return s;
}

std::string encode(const NodeHeartbeat &m)
{
	json_object *o = new_message("node_heartbeat");
	put_str(o, "node", m.node);
	if (m.ckpt_free_bytes)
		put_int(o, "ckpt_free_bytes", (int64_t)*m.ckpt_free_bytes);
	if (m.ckpt_error)
		put_str(o, "ckpt_error", *m.ckpt_error);
	if (m.heartbeat_s)
		put_num(o, "heartbeat_s", *m.heartbeat_s);
	json_object *jobs = json_object_new_array();
	for (const JobReport &j : m.jobs) {
		json_object *e = json_object_new_object();
		put_int(e, "job", (int64_t)j.job);
		put_status(e, j.status);
		json_object_array_add(jobs, e);
	}
	put(o, "jobs", jobs);
	if (!m.held.empty()) {
		json_object *held = json_object_new_array();
		for (const HeldCkpt &h : m.held) {
			json_object *e = ckpt_ref(h.ckpt);
			put_int(e, "job", (int64_t)h.job);
			json_object_array_add(held, e);
		}
		put(o, "held", held);
	}
	return to_line(o);
}

bool decode(json_object *o, NodeHeartbeat *out, std::string *err)
{
	*out = NodeHeartbeat();
	if ((*err = bad_count(o)) != "")
		return false;
	out->node = get_string(o, "node");
	int64_t v;
	if (get_integer_in(o, "ckpt_free_bytes", 0, INT64_MAX, &v) > 0)
		out->ckpt_free_bytes = (uint64_t)v;
	json_object *ce;
	if (json_object_object_get_ex(o, "ckpt_error", &ce) &&
	    json_object_get_type(ce) == json_type_string)
		out->ckpt_error = json_object_get_string(ce);
	out->heartbeat_s = number(o, "heartbeat_s");
	each_job_entry(o, "jobs", [&](uint64_t job, json_object *e) {
		out->jobs.push_back({ job, decode_status(e) });
	});
	each_job_entry(o, "held", [&](uint64_t job, json_object *e) {
		HeldCkpt h{ job, ckpt_ref_of(e) };
		if (h.ckpt.step)
			out->held.push_back(h);
	});
	return true;
}

std::string encode(const HeartbeatReply &m)
{
	json_object *o = reply(m.ok, m.error);
	if (!m.ok) {
		if (m.reregister)
			put(o, "register", json_object_new_boolean(1));
		return to_line(o);
	}
	json_object *cmds = json_object_new_array();
	for (const AgentCommand &c : m.commands) {
		json_object *e = json_object_new_object();
		put_int(e, "id", (int64_t)c.id);
		put_str(e, "op", c.op);
		put_int(e, "job", (int64_t)c.job);
		json_object_array_add(cmds, e);
	}
	put(o, "commands", cmds);
	json_object *keep = json_object_new_array();
	for (const auto &[job, step] : m.keep) {
		json_object *e = json_object_new_object();
		put_int(e, "job", (int64_t)job);
		put_int(e, "step", (int64_t)step);
		json_object_array_add(keep, e);
	}
	put(o, "keep", keep);
	return to_line(o);
}

bool decode(const std::string &line, HeartbeatReply *out)
{
	*out = HeartbeatReply();
	json_object *r = parse_object(line), *a;
	if (!reply_ok(r, &out->error)) {
		out->reregister = get_bool(r, "register");
		if (r)
			json_object_put(r);
		return r != nullptr;
	}
	out->ok = true;
	if ((a = array(r, "keep")))
		for (size_t i = 0; i < json_object_array_length(a); i++) {
			json_object *k = json_object_array_get_idx(a, i);
			int64_t job, step;
			if (get_integer_in(k, "job", 1, kMaxJobId, &job) > 0 &&
			    get_integer_in(k, "step", 1, INT64_MAX, &step) > 0)
				out->keep.emplace_back(job, step);
		}
	if ((a = array(r, "commands")))
		for (size_t i = 0; i < json_object_array_length(a); i++) {
			json_object *c = json_object_array_get_idx(a, i);
			int64_t id, job;
			if (get_integer_in(c, "id", 1, INT64_MAX, &id) <= 0 ||
			    get_integer_in(c, "job", 1, kMaxJobId, &job) <= 0)
				continue;
			out->commands.push_back({ (uint64_t)id,
						  get_string(c, "op"),
						  (uint64_t)job });
		}
	json_object_put(r);
	return true;
}

std::string encode(const NodeAck &m)
{
	json_object *o = new_message("node_ack");
	put_str(o, "node", m.node);
	put_int(o, "id", (int64_t)m.id);
	put_int(o, "job", (int64_t)m.job);
	put(o, "ok", json_object_new_boolean(m.ok));
	if (m.ok) {
		put_int(o, "step", (int64_t)m.ckpt.step);
		put_str(o, "path", m.ckpt.path);
		put_int(o, "bytes", (int64_t)m.bytes);
		put_num(o, "ms", m.ms);
	} else {
		put_str(o, "error", m.error);
	}
	return to_line(o);
}

bool decode(json_object *o, NodeAck *out, std::string *err)
{
	*out = NodeAck();
	if ((*err = bad_count(o)) != "")
		return false;
	out->node = get_string(o, "node");
	out->id = count(o, "id");
	out->job = count(o, "job", kMaxJobId);
	out->ok = is_true(o, "ok");
	if (out->ok) {
		out->ckpt = ckpt_ref_of(o);
		out->bytes = count(o, "bytes");
		out->ms = num(o, "ms");
	} else {
		out->error = get_string(o, "error");
	}
	return true;
}

std::string encode(const CkptWhere &m)
{
	json_object *o = new_message("ckpt_where");
	put_int(o, "job", (int64_t)m.job);
	return to_line(o);
}

bool decode(json_object *o, CkptWhere *out, std::string *err)
{
	*out = CkptWhere();
	if ((*err = bad_count(o)) != "")
		return false;
	out->job = count(o, "job", kMaxJobId);
	return true;
}

bool decode(const std::string &line, NodeRegister *out, std::string *err)
{
	return decode_line(line, out, err);
}
bool decode(const std::string &line, NodeHeartbeat *out, std::string *err)
{
	return decode_line(line, out, err);
}
bool decode(const std::string &line, NodeAck *out, std::string *err)
{
	return decode_line(line, out, err);
}

static json_object *holder(const CkptHolderRef &h)
{
	json_object *e = json_object_new_object();
	put_str(e, "node", h.node);
	put_str(e, "addr", h.addr);
	put_int(e, "step", (int64_t)h.step);
	return e;
}

std::string encode(const CkptWhereReply &m)
{
	json_object *o = reply(m.ok, m.error);
	if (!m.ok)
		return to_line(o);
	put_int(o, "job", (int64_t)m.job);
	put_str(o, "node", m.newest.node);
	put_str(o, "addr", m.newest.addr);
	put_int(o, "step", (int64_t)m.newest.step);
	put_str(o, "path", m.path);
	json_object *arr = json_object_new_array();
	for (const CkptHolderRef &h : m.holders)
		json_object_array_add(arr, holder(h));
	put(o, "holders", arr);
	if (m.uid >= 0)
		put_int(o, "uid", m.uid);
	return to_line(o);
}

static CkptHolderRef holder_of(json_object *e)
{
	return { get_string(e, "node"), get_string(e, "addr"),
		 count(e, "step") };
}

bool decode(const std::string &line, CkptWhereReply *out)
{
	return decode_reply(line, out, [out](json_object *r) {
		out->job = count(r, "job", kMaxJobId);
		out->newest = holder_of(r);
		out->path = get_string(r, "path");
		if (json_object *hs = array(r, "holders"))
			for (size_t i = 0; i < json_object_array_length(hs);
			     i++)
				out->holders.push_back(holder_of(
					json_object_array_get_idx(hs, i)));
		int64_t uid;
		if (get_integer_in(r, "uid", 0, 4294967295LL, &uid) > 0)
			out->uid = uid;
	});
}

std::string encode(const JobPlan &m)
{
	json_object *o = new_message("job_plan");
	put_int(o, "job", (int64_t)m.job);
	return to_line(o);
}

bool decode(json_object *o, JobPlan *out, std::string *err)
{
	*out = JobPlan();
	if ((*err = bad_count(o)) != "")
		return false;
	out->job = count(o, "job", kMaxJobId);
	return true;
}

std::string encode(const JobPlanReply &m)
{
	json_object *o = reply(m.ok, m.error);
	if (!m.ok)
		return to_line(o);
	put_int(o, "job", (int64_t)m.job);
	put_int(o, "batch", m.batch);
	if (m.group_size > 0)
		put_int(o, "group_size", m.group_size);
	if (!m.share.empty())
		put_str(o, "share", m.share);
	return to_line(o);
}

bool decode(const std::string &line, JobPlanReply *out)
{
	return decode_reply(line, out, [out](json_object *r) {
		out->job = count(r, "job", kMaxJobId);
		int64_t b;
		if (get_integer_in(r, "batch", 0, 1000000000, &b) > 0)
			out->batch = b;
		if (get_integer_in(r, "group_size", 1, 4, &b) > 0)
			out->group_size = (int)b;
		std::string sh = get_string(r, "share");
		if (sh == "interleave" || sh == "pack")
			out->share = sh;
	});
}

/* ---- tidal-launch -> tidald ---- */

std::string encode(const LocalRequest &m)
{
	if (m.op == "interleave")
		return encode(m.join);
	if (m.op == "pack")
		return encode(m.pack);
	json_object *o = new_message(m.op.c_str());
	if (m.op == "job_plan")
		put_int(o, "job", (int64_t)m.job);
	if (m.op == "fetch") {
		put_int(o, "job", (int64_t)m.job);
		if (!m.peer.empty())
			put_str(o, "peer", m.peer);
		if (m.step)
			put_int(o, "step", (int64_t)m.step);
	}
	return to_line(o);
}

std::string encode(const InterleaveJoin &m)
{
	json_object *o = new_message("interleave");
	put_int(o, "job", (int64_t)m.job);
	put_int(o, "rank", (int64_t)m.rank);
	put_str(o, "group", m.group);
	put_int(o, "size", m.size);
	json_object *a = json_object_new_array();
	for (double x : m.stages)
		json_object_array_add(a, json_object_new_double(x));
	put(o, "stages", a);
	return to_line(o);
}

/* KEY's array of finite numbers in [0, HI] (at most MAX of them) into
 * *OUT: RET false if it is absent or breaks that. */
static bool numbers(json_object *o, const char *key, double hi, size_t max,
		    std::vector<double> *out)
{
	json_object *a = array(o, key);
	if (!a || json_object_array_length(a) > max)
		return false;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);
		if (!json_object_is_type(e, json_type_double) &&
		    !json_object_is_type(e, json_type_int))
			return false;
		double v = json_object_get_double(e);
		if (!std::isfinite(v) || v < 0 || v > hi)
			return false;
		out->push_back(v);
	}
	return true;
}

static bool group_name_ok(const std::string &g)
{
	if (g.empty() || g.size() > 64)
		return false;
	for (unsigned char c : g)
		if (!isalnum(c) && c != '.' && c != '_' && c != ':' && c != '-')
			return false;
	return true;
}

/* The interleave op's fields of O into *J: RET "" or the rule broken. */
static std::string join_of(json_object *o, InterleaveJoin *j)
{
	int64_t v;
	if (get_integer_in(o, "job", 1, kMaxJobId, &v) <= 0)
		return "interleave: \"job\" must be a job id > 0";
	j->job = (uint64_t)v;
	switch (get_integer_in(o, "rank", 0, 65535, &v)) {
	case -1:
		return "interleave: \"rank\" must be an integer from 0 to "
		       "65535";
	case 1:
		j->rank = (uint64_t)v;
	}
	j->group = get_string(o, "group");
	if (!group_name_ok(j->group))
		return "interleave: \"group\" must be 1 to 64 of A-Z a-z 0-9 . "
		       "_ : -";
	if (get_integer_in(o, "size", 1, 4, &v) <= 0)
		return "interleave: \"size\" must be an integer from 1 to 4";
	j->size = (int)v;
	double sum = 0;
	if (!numbers(o, "stages", 3600, 3, &j->stages) || j->stages.size() != 3)
		return "interleave: \"stages\" must be 3 numbers of seconds, "
		       "each 0 to 3600";
	for (double x : j->stages)
		sum += x;
	if (!(sum > 0))
		return "interleave: \"stages\" must not all be 0";
	return "";
}

std::string encode(const Turn &m)
{
	json_object *o = new_message("turn");
	put_int(o, "first", m.first);
	put_int(o, "last", m.last);
	put_num(o, "factor", m.factor);
	put_int(o, "n", m.n);
	put_int(o, "position", m.position);
	return to_line(o);
}

bool decode(const std::string &line, Turn *out, std::string *err)
{
	*out = Turn();
	err->clear();
	json_object *o = parse_object(line);
	if (!o) {
		*err = "not a JSON object";
		return false;
	}
	std::string why;
	int64_t first, last, n, pos;
	if (json_object_object_get_ex(o, "ok", nullptr) && !reply_ok(o, &why))
		*err = why;
	else if (get_string(o, "op") != "turn")
		*err = "not a turn";
	else if (get_integer_in(o, "first", 0, 2, &first) <= 0 ||
		 get_integer_in(o, "last", first, 2, &last) <= 0)
		*err = "turn: \"first\" and \"last\" must be stages 0 to 2, "
		       "first <= last";
	else if (!number(o, "factor") || num(o, "factor") <= 0 ||
		 num(o, "factor") > 100)
		*err = "turn: \"factor\" must be a number above 0, at most 100";
	else if (get_integer_in(o, "n", 1, 4, &n) <= 0 ||
		 get_integer_in(o, "position", 0, n - 1, &pos) <= 0)
		*err = "turn: \"n\" must be 1 to 4 and \"position\" 0 to n-1";
	else {
		out->first = (int)first;
		out->last = (int)last;
		out->factor = num(o, "factor");
		out->n = (int)n;
		out->position = (int)pos;
	}
	json_object_put(o);
	return err->empty();
}

std::string encode(const TurnDone &m)
{
	json_object *o = new_message("turn_done");
	json_object *a = json_object_new_array();
	for (double x : m.secs)
		json_object_array_add(a, json_object_new_double(x));
	put(o, "secs", a);
	return to_line(o);
}

bool decode(const std::string &line, TurnDone *out, std::string *err)
{
	*out = TurnDone();
	err->clear();
	json_object *o = parse_object(line);
	if (!o) {
		*err = "not a JSON object";
		return false;
	}
	if (get_string(o, "op") != "turn_done")
		*err = "expected turn_done, got op '" + get_string(o, "op") +
		       "'";
	else if (!numbers(o, "secs", 1e6, 3, &out->secs) || out->secs.empty())
		*err = "turn_done: \"secs\" must be 1 to 3 numbers >= 0";
	json_object_put(o);
	if (!err->empty())
		out->secs.clear();
	return err->empty();
}

static bool workload_ok(const std::string &w)
{
	if (w.size() > 128)
		return false;
	for (unsigned char c : w)
		if (!isalnum(c) && (!c || !strchr("._:/+-", c)))
			return false;
	return true;
}

std::string encode(const PackJoin &m)
{
	json_object *o = new_message("pack");
	put_int(o, "job", (int64_t)m.job);
	put_int(o, "rank", (int64_t)m.rank);
	put_str(o, "group", m.group);
	put_str(o, "workload", m.workload);
	return to_line(o);
}

/* Job, rank and workload of a pack member or join in O into *M: RET ""
 * or the rule broken (WHAT names the message). */
template <typename M>
static std::string member_of(json_object *o, const std::string &what, M *m)
{
	int64_t v;
	if (get_integer_in(o, "job", 1, kMaxJobId, &v) <= 0)
		return what + ": \"job\" must be a job id > 0";
	m->job = (uint64_t)v;
	switch (get_integer_in(o, "rank", 0, 65535, &v)) {
	case -1:
		return what + ": \"rank\" must be an integer from 0 to 65535";
	case 1:
		m->rank = (uint64_t)v;
	}
	m->workload = get_string(o, "workload");
	if (!workload_ok(m->workload))
		return what + ": \"workload\" must be 0 to 128 of A-Z a-z "
			      "0-9 . _ : / + -";
	return "";
}

/* The pack op's fields of O into *J: RET "" or the rule broken. */
static std::string pack_of(json_object *o, PackJoin *j)
{
	std::string why = member_of(o, "pack", j);
	if (!why.empty())
		return why;
	j->group = get_string(o, "group");
	if (!group_name_ok(j->group))
		return "pack: \"group\" must be 1 to 64 of A-Z a-z 0-9 . _ : "
		       "-";
	return "";
}

std::string encode(const Partners &m)
{
	json_object *o = new_message("partners");
	put_str(o, "group", m.group);
	json_object *a = json_object_new_array();
	for (const PackMember &p : m.members) {
		json_object *e = json_object_new_object();
		put_int(e, "job", (int64_t)p.job);
		put_int(e, "rank", (int64_t)p.rank);
		put_str(e, "workload", p.workload);
		json_object_array_add(a, e);
	}
	put(o, "members", a);
	return to_line(o);
}

bool decode(const std::string &line, Partners *out, std::string *err)
{
	*out = Partners();
	err->clear();
	json_object *o = parse_object(line);
	if (!o) {
		*err = "not a JSON object";
		return false;
	}
	std::string why;
	json_object *a = nullptr;
	if (json_object_object_get_ex(o, "ok", nullptr) && !reply_ok(o, &why))
		*err = why;
	else if (get_string(o, "op") != "partners")
		*err = "not a partners message";
	else if (!group_name_ok(out->group = get_string(o, "group")))
		*err = "partners: \"group\" must be 1 to 64 of A-Z a-z 0-9 . "
		       "_ : -";
	else if (!(a = array(o, "members")) ||
		 json_object_array_length(a) < 1 ||
		 json_object_array_length(a) > 64)
		*err = "partners: \"members\" must be 1 to 64 objects";
	for (size_t i = 0; a && err->empty() &&
			   i < json_object_array_length(a);
	     i++) {
		json_object *e = json_object_array_get_idx(a, i);
		PackMember m;
		if (!json_object_is_type(e, json_type_object))
			*err = "partners: \"members\" must be 1 to 64 objects";
		else
			*err = member_of(e, "partners", &m);
		if (err->empty())
			out->members.push_back(m);
	}
	json_object_put(o);
	if (!err->empty())
		*out = Partners();
	return err->empty();
}

bool decode(const std::string &line, LocalRequest *out, std::string *err)
{
	*out = LocalRequest();
	json_object *o = parse_object(line);
	if (!o) {
		*err = "request is not a JSON object";
		return false;
	}
	int64_t v = version_of(o), job = 0, step = 0;
	out->op = get_string(o, "op");
	out->peer = get_string(o, "peer");
	int has_job = get_integer_in(o, "job", 1, kMaxJobId, &job);
	int has_step = get_integer_in(o, "step", 0, INT64_MAX, &step);
	std::string join_err;
	if (out->op == "interleave")
		join_err = join_of(o, &out->join);
	if (out->op == "pack")
		join_err = pack_of(o, &out->pack);
	json_object_put(o);
	if (v != TIDAL_WIRE_VERSION) {
		*err = "wire version " + std::to_string(v) +
		       " not supported (tidald speaks 1)";
		out->join = InterleaveJoin();
		out->pack = PackJoin();
		return false;
	}
	if (out->op == "pack") {
		out->peer.clear();
		if (!join_err.empty()) {
			*err = join_err;
			out->pack = PackJoin();
			return false;
		}
		out->job = out->pack.job;
		return true;
	}
	if (out->op == "interleave") {
		out->peer.clear();
		if (!join_err.empty()) {
			*err = join_err;
			out->join = InterleaveJoin();
			return false;
		}
		out->job = out->join.job;
		return true;
	}
	if (out->op == "hello") {
		out->peer.clear(); /* hello takes no fields */
		return true;
	}
	if (out->op != "fetch" && out->op != "job_plan") {
		*err = "unknown op '" + out->op +
		       "' (hello, fetch, job_plan, interleave, pack)";
		return false;
	}
	if (has_job <= 0) {
		*err = out->op + ": \"job\" must be a job id > 0";
		return false;
	}
	if (out->op == "job_plan") {
		out->peer.clear(); /* job_plan takes only the job */
		out->job = (uint64_t)job;
		return true;
	}
	if (has_step < 0) {
		*err = "fetch: \"step\" must be an integer >= 0";
		return false;
	}
	out->job = (uint64_t)job;
	out->step = (uint64_t)step;
	return true;
}

std::string encode(const HelloReply &m)
{
	json_object *o = ok_reply();
	put_str(o, "node", m.node);
	put_str(o, "ckpt_dir", m.ckpt_dir);
	return to_line(o);
}

bool decode(const std::string &line, HelloReply *out, std::string *err)
{
	return decode_ok(line, out, err, [out](json_object *o) {
		out->node = get_string(o, "node");
		out->ckpt_dir = get_string(o, "ckpt_dir");
	});
}

std::string encode(const FetchReply &m)
{
	json_object *o = reply(m.ok, m.error);
	if (!m.ok)
		return to_line(o);
	put_str(o, "path", m.ckpt.path);
	put_int(o, "step", (int64_t)m.ckpt.step);
	put_str(o, "from", m.from);
	if (m.bytes) {
		put_int(o, "bytes", (int64_t)*m.bytes);
		put_num(o, "ms", m.ms);
	}
	if (!m.warnings.empty()) {
		json_object *a = json_object_new_array();
		for (const std::string &w : m.warnings)
			json_object_array_add(
				a, json_object_new_string(w.c_str()));
		put(o, "warnings", a);
	}
	return to_line(o);
}

bool decode(const std::string &line, FetchReply *out)
{
	return decode_reply(line, out, [out](json_object *o) {
		out->ckpt = ckpt_ref_of(o);
		out->from = get_string(o, "from");
		int64_t b;
		if (get_integer_in(o, "bytes", 0, INT64_MAX, &b) > 0) {
			out->bytes = (uint64_t)b;
			out->ms = num(o, "ms");
		}
		if (json_object *a = array(o, "warnings"))
			for (size_t i = 0; i < json_object_array_length(a);
			     i++) {
				json_object *w =
					json_object_array_get_idx(a, i);
				if (json_object_is_type(w, json_type_string))
					out->warnings.push_back(
						json_object_get_string(w));
			}
	});
}

/* ---- tidald -> tidald ---- */

std::string encode(const PeerRequest &m)
{
	json_object *o = new_message(m.op.c_str());
	put_int(o, "job", (int64_t)m.job);
	if (m.op == "ckpt_get")
		put_int(o, "step", (int64_t)m.step);
	return to_line(o);
}

bool decode(const std::string &line, PeerRequest *out, std::string *err)
{
	*out = PeerRequest();
	json_object *o = parse_object(line);
	int64_t job = 0, step = 0;
	out->op = get_string(o, "op");
	int has_job = get_integer_in(o, "job", 1, kMaxJobId, &job);
	int has_step = get_integer_in(o, "step", 0, INT64_MAX, &step);
	if (o)
		json_object_put(o);
	if ((out->op != "ckpt_get" && out->op != "ckpt_stat") || has_job <= 0 ||
	    has_step < 0) {
		*err = "expected {\"v\":1,\"op\":\"ckpt_get\",\"job\":J,"
		       "\"step\":S} or {\"v\":1,\"op\":\"ckpt_stat\","
		       "\"job\":J} (J > 0 and S >= 0 integers)";
		return false;
	}
	out->job = (uint64_t)job;
	out->step = out->op == "ckpt_get" ? (uint64_t)step : 0;
	return true;
}

std::string encode(const CkptOffer &m)
{
	json_object *o = ok_reply();
	put_int(o, "step", (int64_t)m.step);
	put_int(o, "bytes", (int64_t)m.bytes);
	if (!m.name.empty())
		put_str(o, "name", m.name);
	return to_line(o);
}

bool decode(json_object *o, CkptOffer *out, uint64_t dflt_step,
	    std::string *err)
{
	*out = CkptOffer();
	int64_t step = (int64_t)dflt_step, bytes;
	if (get_integer_in(o, "step", 0, INT64_MAX, &step) < 0) {
		*err = "sent no valid step";
		return false;
	}
	if (get_integer_in(o, "bytes", 0, INT64_MAX, &bytes) <= 0) {
		*err = "sent no size";
		return false;
	}
	out->step = (uint64_t)step;
	out->bytes = (uint64_t)bytes;
	out->name = get_string(o, "name");
	return true;
}

/* ---- tidald -> tidal-launch ---- */

std::string encode(const ControlRequest &m)
{
	return to_line(new_message(m.op.c_str()));
}

bool decode(const std::string &line, ControlRequest *out, std::string *err)
{
	*out = ControlRequest();
	json_object *o = parse_object(line), *op = nullptr;
	bool ok = false;
	if (!o)
		*err = "request is not a JSON object";
	else if (version_of(o) != TIDAL_WIRE_VERSION)
		*err = "unsupported version: need \"v\":1";
	else if (!json_object_object_get_ex(o, "op", &op) ||
		 !json_object_is_type(op, json_type_string))
		*err = "no \"op\" string";
	else {
		out->op = json_object_get_string(op);
		ok = true;
	}
	if (o)
		json_object_put(o);
	return ok;
}

std::string encode(const LauncherStatus &m)
{
	json_object *o = ok_reply();
	put_str(o, "job", m.job);
	put_status(o, m.status);
	return to_line(o);
}

bool decode(const std::string &line, LauncherStatus *out, std::string *err)
{
	return decode_ok(line, out, err, [out](json_object *o) {
		out->job = get_string(o, "job");
		out->status = decode_status(o);
	});
}

std::string encode(const CkptDone &m)
{
	json_object *o = reply(m.ok, m.error);
	if (m.ok) {
		put_int(o, "step", (int64_t)m.ckpt.step);
		put_str(o, "path", m.ckpt.path);
		put_int(o, "bytes", (int64_t)m.bytes);
		put_num(o, "ms", m.ms);
	}
	return to_line(o);
}

bool decode(const std::string &line, CkptDone *out)
{
	return decode_reply(line, out, [out](json_object *o) {
		out->ckpt = ckpt_ref_of(o);
		out->bytes = count(o, "bytes");
		out->ms = num(o, "ms");
	});
}

/* ---- tidalctl -> sched/tidal ---- */

std::string encode(const CtlRequest &m)
{
	json_object *o = new_message(m.op.c_str());
	if (!m.what.empty())
		put_str(o, "what", m.what);
	if (m.id >= 0)
		put_int(o, "id", m.id);
	if (!m.policy.empty())
		put_str(o, "policy", m.policy);
	return to_line(o);
}

bool decode(json_object *o, CtlRequest *out, std::string *err)
{
	*out = CtlRequest();
	if (version_of(o) != TIDAL_WIRE_VERSION) {
		*err = "wire version " + std::to_string(version_of(o)) +
		       " not supported (this plugin speaks " +
		       std::to_string(TIDAL_WIRE_VERSION) + ")";
		return false;
	}
	out->op = get_string(o, "op");
	out->what = get_string(o, "what");
	out->policy = get_string(o, "policy");
	int64_t id;
	if (get_integer_in(o, "id", 1, kMaxJobId, &id) > 0)
		out->id = id;
	return true;
}

std::string encode(const CtlReply &m)
{
	json_object *o = reply(m.ok, m.error);
	if (!m.ok)
		return to_line(o);
	json_object *records = json_object_new_array();
	for (const CtlRecord &r : m.records) {
		json_object *rec = json_object_new_object();
		for (const auto &[key, v] : r) {
			json_object *val = nullptr;
			if (v.kind == CtlValue::Text)
				val = json_object_new_string(v.text.c_str());
			else if (v.kind == CtlValue::Integer)
				val = json_object_new_int64(v.integer);
			else if (v.kind == CtlValue::Number)
				val = json_object_new_double_s(
					std::strtod(v.text.c_str(), nullptr),
					v.text.c_str());
			json_object_object_add(rec, key.c_str(), val);
		}
		json_object_array_add(records, rec);
	}
	put(o, "records", records);
	return to_line(o);
}

/* VAL as a record's value; RET false if the schema has no such value. */
static bool ctl_value(json_object *val, CtlValue *v)
{
	*v = CtlValue();
	switch (json_object_get_type(val)) {
	case json_type_null:
		return true;
	case json_type_string:
		*v = { CtlValue::Text, json_object_get_string(val), 0 };
		return true;
	case json_type_int:
		*v = { CtlValue::Integer, "", json_object_get_int64(val) };
		return true;
	case json_type_double: {
		if (!std::isfinite(json_object_get_double(val)))
			return false;
		std::string text = json_object_get_string(val);
		/* json-c writes some whole doubles ("0e") as "0", which
		 * reads back as an integer: take it as one. */
		char *end;
		long long n = std::strtoll(text.c_str(), &end, 10);
		if (!text.empty() && !*end)
			*v = { CtlValue::Integer, "", (int64_t)n };
		else
			*v = { CtlValue::Number, text, 0 };
		return true;
	}
	default:
		return false;
	}
}

bool decode(const std::string &line, CtlReply *out)
{
	return decode_reply(line, out, [out](json_object *o) {
		json_object *records = array(o, "records");
		size_t n = records ? json_object_array_length(records) : 0;
		for (size_t i = 0; i < n; i++) {
			json_object *rec =
				json_object_array_get_idx(records, i);
			if (!json_object_is_type(rec, json_type_object))
				continue;
			CtlRecord r;
			CtlValue v;
			json_object_object_foreach(rec, key, val)
			{
				if (ctl_value(val,
					      &v)) /* else not in the schema */
					r.emplace_back(key, v);
			}
			out->records.push_back(std::move(r));
		}
	});
}

} /* namespace tidal::wire */
