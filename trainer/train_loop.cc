/*
 * train_loop.cc - tidal-train's loop: data-parallel steps, the control flags
 * reduced with the gradients, checkpoints, resume and events (see train.h).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "trainer/train.h"

#include <chrono>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <csignal>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <json.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/policies/muri.h"
#include "core/profiles/throughput_table.h"
#include "node/checkpoint.h"
#include "proto/json.h"
#include "trainer/comm.h"
#include "trainer/gpu.h"
#include "trainer/pack.h"
#include "trainer/stages.h"

namespace tidal::train {

namespace {

volatile sig_atomic_t g_ckpt = 0, g_stop = 0;

void on_signal(int sig)
{
	if (sig == SIGUSR1)
		g_ckpt = 1;
	else
		g_stop = 1;
}

double now_s()
{
	using namespace std::chrono;
	return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string jstr(const std::string &s)
{
	std::string o = "\"";
	for (char c : s) {
		if (c == '"' || c == '\\')
			o += '\\';
		if ((unsigned char)c < 0x20) {
			char b[8];
			snprintf(b, sizeof b, "\\u%04x", c);
			o += b;
			continue;
		}
		o += c;
	}
	return o + "\"";
}

std::string num(double x, int digits = 9)
{
	if (!std::isfinite(x))
		return "null";
	char b[40];
	snprintf(b, sizeof b, "%.*g", digits, x);
	return b;
}

/* The smoothing of the gradient statistics: an exponential average over
 * about 1 / (1 - kGradBeta) = 50 steps, bias-corrected. */
constexpr double kGradBeta = 0.98;

/* Profile mode: how far behind its clock a paced trainer catches up. */
constexpr double kPaceCatchUp = 1.0;

class Loop {
public:
	Loop(const Options &o, const Env &e)
	    : o_(o), e_(e), mlp_(o.shape, o.seed),
	      batch_(e.batch ? e.batch : o.global_batch)
	{
	}
	int run();

private:
	void emit(const std::string &json);
	void pick_backend();
	bool setup(std::string &err);
	bool setup_stages(std::string &err);
	bool resume(std::string &err);
	double step_once(bool &ckpt, bool &stop, double &gns);
	void cpu_compute(size_t b);
	void late_flags(float *ctrl);
	void cpu_reduce_update(float ckpt, float stop, float lr, float inv,
			       float *ctrl, double &big, double &comm_s);
	void checkpoint();
	void log_step(double loss, double gns, bool last);
	size_t share(int rank) const;
	uint64_t share_start(int rank) const;
	void observe_noise(double g2, double tr);
	double gain() const;
	double grad_sqr() const;
	double grad_var() const;
	std::string grad_json() const;
	std::string group_json() const;
	std::string pack_json() const;
	bool setup_pack(std::string &err);
	std::string gpu_json() const;

	const Options &o_;
	const Env &e_;
	Mlp mlp_;
	std::unique_ptr<Comm> comm_;
	float late_[2] = {0, 0}; /* late_flags()'s all-reduce buffer */
	std::unique_ptr<GpuTrainer> gpu_; /* set: the cuda-nccl backend */
	std::vector<float> params_, m_, v_, buf_, x_, y_;
	uint64_t step_ = 0, samples_ = 0;
	double iter_s_ = 0; /* profile mode: seconds per iteration */
	double pace_due_ = 0; /* profile mode: when this step is due to end */
	std::unique_ptr<StagePacer> pacer_; /* --stage-profile */
	ColocateTable colocate_;	    /* --colocate */
	WorkloadKey workload_;		    /* --workload */
	std::unique_ptr<PackPeer> pack_;    /* TIDAL_PACK */
	double last_ckpt_t_ = 0;
	double st_[3] = {0, 0, 0}, win_t0_ = 0; /* data/compute/comm s */
	uint64_t win_steps_ = 0;
	std::deque<double> loss_tail_;
	/* AdaScale (train.h): this run's global batch, the steps of B0 done,
	 * the gain now, and the smoothed |G|^2 and tr(Sigma) (per sample)
	 * with the weight that corrects their bias. */
	uint64_t batch_;
	double progress_ = 0, gain_ = 1;
	double ema_sqr_ = 0, ema_tr_ = 0, ema_w_ = 0;
};

void Loop::emit(const std::string &json)
{
	std::string line = json + "\n";
	const char *p = line.data();
	size_t n = line.size();
	while (n > 0) {
		ssize_t w = ::write(e_.event_fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* the launcher went away: keep training */
		p += w;
		n -= (size_t)w;
	}
}

/* Global batch B over W ranks: B/W each, the first B%W ranks one more. */
size_t Loop::share(int r) const
{
	uint64_t b = batch_, w = (uint64_t)e_.world;
	return (size_t)(b / w + ((uint64_t)r < b % w ? 1 : 0));
}

uint64_t Loop::share_start(int r) const
{
	uint64_t s = 0;
	for (int i = 0; i < r; i++)
		s += share(i);
	return s;
}

/* Iterations/s of ROW at WORLD GPUs: the cell itself, or for a world size
 * between two measured columns (an elastic policy may give 7 GPUs where
 * the table lists 4 and 8) the straight line between them; NaN outside
 * the measured range or without a row. */
static double paced_throughput(const ThroughputRow *row, int world)
{
	return row ? row->paced(world) : NAN;
}

/* Iterations/s at a global BATCH the table has no row for (an adaptive
 * scheduler's choice): the time per step on the straight line between the
 * nearest rows around it that have a speed at WORLD; outside them, the
 * nearest row's time per sample.  NaN without any. */
static double between_batches(const ThroughputTable &t,
			      const std::string &model, double batch,
			      int world)
{
	double lo = 0, hi = 0, s_lo = NAN, s_hi = NAN;
	for (int b : t.batches(model)) {
		double x = paced_throughput(t.row(model, b), world);
		if (!(std::isfinite(x) && x > 0))
			continue;
		double step = 1 / x;
		if (b <= batch && b >= lo)
			lo = b, s_lo = step;
		if (b >= batch && (!hi || b < hi))
			hi = b, s_hi = step;
	}
	if (lo && hi && hi > lo)
		return 1 / (s_lo + (s_hi - s_lo) * (batch - lo) / (hi - lo));
	if (lo)
		return 1 / (s_lo * batch / lo);
	if (hi)
		return 1 / (s_hi * batch / hi);
	return NAN;
}

/* With --stage-profile: ,"group":{"n":N,"factor":F}, the interleaving
 * group the last turn ran in (n 1: alone). */
std::string Loop::group_json() const
{
	if (!pacer_)
		return "";
	return ",\"group\":{\"n\":" + std::to_string(pacer_->group_size()) +
	       ",\"factor\":" + num(pacer_->factor()) + "}";
}

/* Packed: ,"pack":{"n":N,"speed":S}, the other jobs in the pack and the
 * speed beside them, a fraction of alone. */
std::string Loop::pack_json() const
{
	if (!pack_)
		return "";
	return ",\"pack\":{\"n\":" + std::to_string(pack_->partners()) +
	       ",\"speed\":" + num(pack_->speed()) + "}";
}

/* --colocate's table, and the pack that TIDAL_PACK names joined. */
bool Loop::setup_pack(std::string &err)
{
	if (!o_.colocate.empty() && !colocate_.load(o_.colocate, &err))
		return false;
	if (!o_.workload.empty() &&
	    !parse_workload(o_.workload, &workload_, &err))
		return false;
	PackEnv p;
	if (!read_pack_env(p, err))
		return false;
	if (p.name.empty() || o_.workload.empty())
		return true; /* not packed, or nothing to tell the pack */
	pack_ = std::make_unique<PackPeer>();
	pack_->start(p, e_.rank, o_.workload, &workload_,
		     o_.colocate.empty() ? nullptr : &colocate_);
	return true;
}

/* How this rank uses its GPU over the window: the share of a step its
 * compute stage took (what NVML's utilisation counts), and the memory it
 * takes (--gpu-mem, else parameters, gradients, Adam's two moments and
 * one share of the batch's activations, in float). */
std::string Loop::gpu_json() const
{
	double all = st_[0] + st_[1] + st_[2];
	if (all <= 0)
		return "";
	double mb = o_.gpu_mem_mb;
	if (mb <= 0) {
		double act = 0;
		for (size_t d : o_.shape.dims())
			act += (double)d;
		mb = (4.0 * (double)o_.shape.params() +
		      2.0 * act * (double)share(e_.rank)) *
		     sizeof(float) / (1024.0 * 1024.0);
	}
	return ",\"gpu\":{\"util\":" + num(100 * st_[1] / all) +
	       ",\"mem_mb\":" + num(mb) + "}";
}

/* --stage-profile: the model's solo stage seconds, and the group that
 * TIDAL_GROUP names joined. */
bool Loop::setup_stages(std::string &err)
{
	std::map<std::string, StageTimes> table;
	if (!load_stage_profiles(o_.stage_profile, &table, &err))
		return false;
	auto it = table.find(o_.profile_model);
	if (it == table.end()) {
		err = o_.stage_profile + ": no row for model '" +
		      o_.profile_model + "'";
		return false;
	}
	GroupEnv g;
	if (!read_group_env(g, err))
		return false;
	pacer_ = std::make_unique<StagePacer>();
	return pacer_->setup(it->second, g, e_.rank, err);
}

bool Loop::setup(std::string &err)
{
	if (!setup_pack(err))
		return false;
	if (!o_.stage_profile.empty() && !setup_stages(err))
		return false;
	if (pacer_ && pack_)
		pacer_->set_speed([this] { return pack_->speed(); });
	if (!o_.profile.empty()) {
		std::ifstream f(o_.profile);
		std::stringstream text;
		text << f.rdbuf();
		ThroughputTable t;
		if (!f)
			err = o_.profile + ": cannot read";
		else if (t.parse_csv(o_.profile_model, o_.profile, text.str(), &err)) {
			double tput = paced_throughput(
				t.row(o_.profile_model, (int)batch_), e_.world);
			if (!(std::isfinite(tput) && tput > 0) &&
			    batch_ != o_.global_batch)
				tput = between_batches(t, o_.profile_model,
						       (double)batch_, e_.world);
			if (std::isfinite(tput) && tput > 0)
				iter_s_ = 1.0 / tput;
			else
				err = o_.profile + ": model '" + o_.profile_model +
				      "' has no throughput for global batch " +
				      std::to_string(o_.global_batch) + " at " +
				      std::to_string(e_.world) +
				      " GPUs (need a row with that batch and columns at or around that count)";
		}
		if (!err.empty())
			return false;
	}
	params_.resize(mlp_.size());
	m_.assign(mlp_.size(), 0);
	v_.assign(mlp_.size(), 0);
	buf_.assign(mlp_.size() + kSlots, 0);
	mlp_.init(params_.data());
	if (!e_.resume.empty() && !resume(err))
		return false;
	pick_backend();
	if (gpu_)
		return true;
	if (e_.world == 1) {
		comm_ = make_local_comm();
		return true;
	}
	if (e_.store.empty()) {
		err = "TIDAL_STORE is unset: a world of " +
		      std::to_string(e_.world) + " ranks needs the store";
		return false;
	}
	comm_ = make_gloo_comm(e_.rank, e_.world, e_.store, e_.prefix,
			       o_.timeout_s, err);
	return comm_ != nullptr;
}

bool Loop::resume(std::string &err)
{
	ckpt::State s;
	if (!ckpt::read(e_.resume, s, err)) {
		err = "TIDAL_RESUME: " + err;
		return false;
	}
	auto fail = [&](const std::string &what) {
		err = "TIDAL_RESUME=" + e_.resume + ": " + what;
		return false;
	};
	if (s.model != o_.shape.name())
		return fail("holds model '" + s.model + "', this run trains '" +
			    o_.shape.name() + "' (same --hidden/--layers needed)");
	if (s.rng.empty() || s.rng[0] != o_.seed)
		return fail("was written with another --seed (data and model "
			    "depend on it)");
	if (s.tensors.size() != 3 || s.tensors[0].second.size() != mlp_.size() ||
	    s.tensors[1].second.size() != mlp_.size() ||
	    s.tensors[2].second.size() != mlp_.size())
		return fail("tensors do not match the model's parameter count " +
			    std::to_string(mlp_.size()));
	params_ = std::move(s.tensors[0].second);
	m_ = std::move(s.tensors[1].second);
	v_ = std::move(s.tensors[2].second);
	step_ = s.step;
	samples_ = s.samples;
	/* AdaScale's state (train.h); a checkpoint without it was written
	 * at B0 throughout: one step of B0 per step. */
	progress_ = (double)step_;
	if (json_object *m = wire::parse_object(s.meta_json)) {
		bool has = false;
		double p = wire::get_number(m, "progress", 0, &has);
		uint64_t b0 = (uint64_t)wire::get_number(m, "init_batch", 0);
		if (has && std::isfinite(p) && p >= 0)
			progress_ = p;
		double w = wire::get_number(m, "grad_w", 0);
		double sq = wire::get_number(m, "grad_sqr", 0);
		double tr = wire::get_number(m, "grad_tr", 0);
		if (b0 && b0 != o_.global_batch)
			fprintf(stderr, "tidal-train: rank %d: checkpoint's "
				"initial batch was %" PRIu64 ", --global-batch "
				"is %" PRIu64 ": progress is counted in steps "
				"of %" PRIu64 " from here\n", e_.rank, b0,
				o_.global_batch, o_.global_batch);
		if (w > 0 && w <= 1 && std::isfinite(sq) && std::isfinite(tr) &&
		    sq >= 0 && tr >= 0) {
			ema_w_ = w;
			ema_sqr_ = sq * w;
			ema_tr_ = tr * w;
		}
		json_object_put(m);
	}
	gain_ = gain();
	if (s.global_batch != batch_)
		fprintf(stderr, "tidal-train: rank %d: checkpoint used global "
			"batch %" PRIu64 ", continuing with %" PRIu64
			" (AdaScale gain %.3f, learning rate %.3g)\n", e_.rank,
			s.global_batch, batch_, gain_, o_.lr * std::sqrt(gain_));
	return true;
}

/* One step's |G|^2 and tr(Sigma) into the smoothed statistics; a
 * negative estimate (noise of a small world) is taken as 0. */
void Loop::observe_noise(double g2, double tr)
{
	if (!std::isfinite(g2) || !std::isfinite(tr))
		return;
	ema_sqr_ = kGradBeta * ema_sqr_ + (1 - kGradBeta) * std::max(g2, 0.0);
	ema_tr_ = kGradBeta * ema_tr_ + (1 - kGradBeta) * std::max(tr, 0.0);
	ema_w_ = kGradBeta * ema_w_ + (1 - kGradBeta);
}

/* Pollux's grad_sqr and grad_var: |G|^2 and the noise of a gradient of
 * B0 samples, tr(Sigma) / B0; NaN before the first measurement. */
double Loop::grad_sqr() const
{
	return ema_w_ > 0 ? ema_sqr_ / ema_w_ : NAN;
}

double Loop::grad_var() const
{
	return ema_w_ > 0 ? ema_tr_ / ema_w_ / (double)o_.global_batch : NAN;
}

/* AdaScale's gain at this run's batch (train.h); 1 before any
 * measurement or when both statistics are 0. */
double Loop::gain() const
{
	double scale = (double)batch_ / (double)o_.global_batch;
	double sqr = grad_sqr(), var = grad_var();
	if (!(std::isfinite(sqr) && std::isfinite(var)) || sqr + var <= 0)
		return 1;
	return (var + sqr) / (var / scale + sqr);
}

std::string Loop::grad_json() const
{
	return ",\"grad_sqr\":" + num(grad_sqr()) + ",\"grad_var\":" +
	       num(grad_var());
}

/* The CPU path: per-sample gradient sum, loss and local |g|^2 / b^2 into
 * buf_. */
void Loop::cpu_compute(size_t b)
{
	size_t n = mlp_.size();
	std::fill(buf_.begin(), buf_.end(), 0.0f);
	double loss = b ? mlp_.train_batch(params_.data(), x_.data(), y_.data(),
					   b, buf_.data()) : 0;
	double norm2 = 0;
	if (e_.world > 1 && b > 0)
		for (size_t i = 0; i < n; i++)
			norm2 += (double)buf_[i] * buf_[i];
	buf_[n + kLoss] = (float)loss;
	buf_[n + kLocalNorm2] = b ? (float)(norm2 / ((double)b * b)) : 0.0f;
}

/* The CPU path: flags in, Gloo all-reduce, Adam.  OUT the reduced control
 * slots, |G|^2 of the reduced sum (world > 1), the all-reduce's seconds. */
void Loop::cpu_reduce_update(float ckpt, float stop, float lr, float inv,
			     float *ctrl, double &big, double &comm_s)
{
	size_t n = mlp_.size();
	buf_[n + kCkpt] = ckpt;
	buf_[n + kStop] = stop;
	double t2 = now_s();
	comm_->allreduce(buf_.data(), buf_.size());
	comm_s = now_s() - t2;
	adam_step(params_.data(), buf_.data(), m_.data(), v_.data(), n, lr,
		  inv, step_ + 1);
	big = 0;
	if (e_.world > 1)
		for (size_t i = 0; i < n; i++)
			big += (double)buf_[i] * buf_[i];
	std::copy(buf_.begin() + n, buf_.end(), ctrl);
}

/* A signal that came during the big all-reduce (most of a CPU step) would
 * be acted on only after the whole next step; agree on it now with a
 * two-float all-reduce, so that a checkpoint_stop costs at most the rest
 * of the current step. */
void Loop::late_flags(float *ctrl)
{
	if (ctrl[kStop] > 0)
		return;
	/* A member, not a local: Comm keeps one all-reduce per buffer, and
	 * every rank must create its all-reduces in the same order. */
	late_[0] = g_ckpt ? 1.0f : 0.0f;
	late_[1] = g_stop ? 1.0f : 0.0f;
	g_ckpt = 0;
	if (e_.world > 1)
		comm_->allreduce(late_, 2);
	ctrl[kCkpt] += late_[0];
	ctrl[kStop] += late_[1];
}

/* One step; RET the global mean loss.  OUT the agreed flags.  With
 * --stage-profile each of its three stages runs paced, in the group's
 * turns (stages.h); else the whole step is paced by --profile. */
double Loop::step_once(bool &ckpt, bool &stop, double &gns)
{
	double t0 = now_s();
	size_t b = share(e_.rank);
	float ctrl[kSlots], inv = 1.0f / (float)batch_;
	double big = 0, comm_s = 0;
	auto data = [&] {
		x_.resize(b * o_.shape.in);
		y_.resize(b * o_.shape.out);
		mlp_.make_batch(samples_ + share_start(e_.rank), b, x_.data(),
				y_.data());
	};
	auto compute = [&] {
		if (gpu_)
			gpu_->compute(x_.data(), y_.data(), b);
		else
			cpu_compute(b);
	};
	auto sync = [&] {
		float ckpt_flag = g_ckpt ? 1.0f : 0.0f,
		      stop_flag = g_stop ? 1.0f : 0.0f;
		g_ckpt = 0;
		if (e_.rank == 0 && o_.ckpt_every_s > 0 &&
		    now_s() - last_ckpt_t_ >= o_.ckpt_every_s)
			ckpt_flag = 1.0f; /* rank 0's clock decides for all */
		float lr = (float)(o_.lr * std::sqrt(gain_));
		if (gpu_)
			gpu_->reduce_update(ckpt_flag, stop_flag, lr, inv,
					    step_ + 1, ctrl, big, comm_s);
		else
			cpu_reduce_update(ckpt_flag, stop_flag, lr, inv, ctrl,
					  big, comm_s);
		if (comm_)
			late_flags(ctrl);
	};
	if (pacer_) {
		double t1, t2, t3;
		pacer_->stage(0, data);
		t1 = now_s();
		pacer_->stage(1, compute);
		t2 = now_s();
		pacer_->stage(2, sync);
		t3 = now_s();
		st_[0] += t1 - t0;
		st_[1] += t2 - t1;
		st_[2] += t3 - t2;
	} else {
		data();
		double t1 = now_s();
		compute();
		sync();
		double t4 = now_s();
		double iter_s = pack_ ? iter_s_ / pack_->speed() : iter_s_;
		if (iter_s > 0) {
			/* Paced by a clock: step N of this run is due at its
			 * start + N steps, so that a step the machine made late
			 * is made up by the next ones (up to kPaceCatchUp s:
			 * a longer stall is not run off in a burst). */
			if (pace_due_ <= 0)
				pace_due_ = t0;
			pace_due_ = std::max(pace_due_, t4 - kPaceCatchUp) +
				    iter_s;
			if (t4 < pace_due_) {
				std::this_thread::sleep_for(
					std::chrono::duration<double>(pace_due_ -
								      t4));
				t4 = now_s();
			}
		}
		st_[0] += t1 - t0;
		st_[1] += (t4 - t1) - comm_s;
		st_[2] += comm_s;
	}
	step_++;
	samples_ += batch_;
	ckpt = ctrl[kCkpt] > 0 || (o_.ckpt_every && step_ % o_.ckpt_every == 0);
	stop = ctrl[kStop] > 0;
	if (e_.world > 1) {
		/* McCandlish et al.: |G|^2 and tr(Sigma) from the small
		 * (per-rank) and big (global) batch gradient norms. */
		double bs = (double)batch_ / e_.world;
		double bb = (double)batch_;
		big *= inv * inv;
		double small = ctrl[kLocalNorm2] / e_.world;
		observe_noise((bb * big - bs * small) / (bb - bs),
			      (small - big) / (1 / bs - 1 / bb));
	}
	/* This step counts its gain; the next one learns at the new one. */
	gain_ = gain();
	progress_ += gain_;
	double sqr = grad_sqr();
	gns = sqr > 0 ? grad_var() * (double)o_.global_batch / sqr : NAN;
	return ctrl[kLoss] * inv;
}

/* Rank 0 writes; the tensors are moved into the state and back, so a
 * checkpoint needs no second copy of the model. */
void Loop::checkpoint()
{
	last_ckpt_t_ = now_s();
	if (e_.rank != 0)
		return;
	if (gpu_) /* the host tensors are the checkpoint's staging area */
		gpu_->download(params_.data(), m_.data(), v_.data());
	if (e_.ckpt_dir.empty()) {
		fprintf(stderr, "tidal-train: TIDAL_CKPT_DIR is unset: no "
			"checkpoint at step %" PRIu64 "\n", step_);
		return;
	}
	ckpt::State s;
	s.step = step_;
	s.samples = samples_;
	s.global_batch = batch_;
	s.world = (uint32_t)e_.world;
	s.model = o_.shape.name();
	s.rng = {o_.seed};
	s.lr = o_.lr;
	std::string tail;
	for (double l : loss_tail_)
		tail += (tail.empty() ? "" : ",") + num(l);
	s.meta_json = "{\"loss_tail\":[" + tail + "],\"progress\":" +
		      num(progress_, 17) + ",\"init_batch\":" +
		      std::to_string(o_.global_batch) + ",\"grad_w\":" +
		      num(ema_w_, 17) + ",\"grad_sqr\":" +
		      num(ema_w_ > 0 ? ema_sqr_ / ema_w_ : 0, 17) +
		      ",\"grad_tr\":" +
		      num(ema_w_ > 0 ? ema_tr_ / ema_w_ : 0, 17) + "}";
	s.tensors.emplace_back("params", std::move(params_));
	s.tensors.emplace_back("adam.m", std::move(m_));
	s.tensors.emplace_back("adam.v", std::move(v_));
	double t0 = now_s();
	std::string path, err;
	try {
		path = ckpt::write(e_.ckpt_dir, s);
	} catch (const std::exception &ex) {
		err = ex.what();
	}
	double ms = (now_s() - t0) * 1000;
	params_ = std::move(s.tensors[0].second);
	m_ = std::move(s.tensors[1].second);
	v_ = std::move(s.tensors[2].second);
	if (!err.empty()) {
		/* A full or failing disk: say so, keep training; the older
		 * checkpoints are untouched (ckpt::write removed its
		 * temporary file) and the next interval tries again. */
		fprintf(stderr, "tidal-train: rank %d: checkpoint at step %"
			PRIu64 " failed: %s; training goes on\n", e_.rank,
			step_, err.c_str());
		emit("{\"ev\":\"ckpt_error\",\"step\":" +
		     std::to_string(step_) + ",\"error\":" + jstr(err) + "}");
		return;
	}
	struct stat st;
	double bytes = ::stat(path.c_str(), &st) == 0 ? (double)st.st_size : 0;
	emit("{\"ev\":\"ckpt\",\"step\":" + std::to_string(step_) +
	     ",\"path\":" + jstr(path) + ",\"bytes\":" + num(bytes) +
	     ",\"ms\":" + num(ms) + ",\"mb_s\":" + num(bytes / 1e6 / (ms / 1000)) +
	     "}");
}

void Loop::log_step(double loss, double gns, bool last)
{
	win_steps_++;
	if (e_.rank != 0 || !o_.log_every ||
	    (step_ % o_.log_every != 0 && !last))
		return;
	double t = now_s(), it_s = win_steps_ / (t - win_t0_);
	double k = 1000.0 / win_steps_;
	emit("{\"ev\":\"step\",\"step\":" + std::to_string(step_) +
	     ",\"loss\":" + num(loss) + ",\"it_s\":" + num(it_s) +
	     ",\"samples_s\":" + num(it_s * batch_) + ",\"stages\":{\"data\":" +
	     num(st_[0] * k) + ",\"compute\":" + num(st_[1] * k) +
	     ",\"comm\":" + num(st_[2] * k) + "}" + group_json() + pack_json() + gpu_json() +
	     ",\"gns\":" + num(gns) + ",\"batch\":" + std::to_string(batch_) +
	     ",\"gain\":" + num(gain_) + ",\"progress\":" + num(progress_) +
	     grad_json() + "}");
	win_t0_ = t;
	win_steps_ = 0;
	st_[0] = st_[1] = st_[2] = 0;
}

/* CUDA when built, asked for (auto or cuda) and every rank has a working
 * device and NCCL; any CUDA or NCCL error at start-up: one line, and the
 * whole world trains on CPU + Gloo (make_gpu_trainer agrees on it). */
void Loop::pick_backend()
{
	if (o_.backend == "cpu")
		return;
	if (!gpu_built()) {
		if (o_.backend == "cuda")
			fprintf(stderr, "tidal-train: rank %d: no GPU (built "
				"without CUDA): using CPU + Gloo\n", e_.rank);
		return;
	}
	GpuSetup s;
	s.shape = o_.shape;
	s.max_batch = share(0);
	s.local_rank = e_.local_rank;
	s.rank = e_.rank;
	s.world = e_.world;
	s.store = e_.store;
	s.prefix = e_.prefix;
	s.timeout_s = o_.timeout_s;
	s.params = params_.data();
	s.m = m_.data();
	s.v = v_.data();
	s.asked = o_.backend == "cuda";
	std::string why;
	gpu_ = make_gpu_trainer(s, why);
	if (gpu_)
		fprintf(stderr, "tidal-train: rank %d: GPU %s: CUDA + cuBLAS%s\n",
			e_.rank, gpu_->device().c_str(),
			e_.world > 1 ? " + NCCL" : "");
	else
		fprintf(stderr, "tidal-train: rank %d: no GPU (%s): using "
			"CPU + Gloo\n", e_.rank, why.c_str());
}

int Loop::run()
{
	std::string err;
	if (!setup(err)) {
		fprintf(stderr, "tidal-train: rank %d: %s\n", e_.rank, err.c_str());
		return 1;
	}
	emit("{\"ev\":\"start\",\"rank\":" + std::to_string(e_.rank) +
	     ",\"world\":" + std::to_string(e_.world) + ",\"step\":" +
	     std::to_string(step_) + ",\"batch\":" + std::to_string(batch_) +
	     ",\"progress\":" + num(progress_) + ",\"backend\":\"" +
	     (gpu_ ? "cuda-nccl" : "cpu-gloo") + "\",\"resumed\":" +
	     (e_.resume.empty() ? "null" : jstr(e_.resume)) + ",\"model\":" +
	     jstr(o_.shape.name()) + ",\"params\":" +
	     std::to_string(mlp_.size()) + "}");
	last_ckpt_t_ = win_t0_ = now_s();
	double loss = NAN;
	try {
		while (progress_ < (double)o_.iters) {
			bool ckpt = false, stop = false;
			double gns;
			loss = step_once(ckpt, stop, gns);
			loss_tail_.push_back(loss);
			if (loss_tail_.size() > 16)
				loss_tail_.pop_front();
			log_step(loss, gns, progress_ >= (double)o_.iters);
			if (ckpt || stop)
				checkpoint();
			if (stop) {
				if (comm_)
					comm_->finish();
				emit("{\"ev\":\"stopped\",\"step\":" +
				     std::to_string(step_) + "}");
				return 0;
			}
		}
		if (comm_)
			comm_->finish();
	} catch (const std::exception &ex) {
		fprintf(stderr, "tidal-train: rank %d: step %" PRIu64 ": %s\n",
			e_.rank, step_ + 1, ex.what());
		return 1;
	}
	if (e_.rank == 0) {
		char crc[16];
		try {
			if (gpu_)
				gpu_->download(params_.data(), m_.data(),
					       v_.data());
		} catch (const std::exception &ex) {
			fprintf(stderr, "tidal-train: rank 0: %s\n", ex.what());
			return 1;
		}
		snprintf(crc, sizeof crc, "%08x",
			 ckpt::crc32c(0, params_.data(), params_.size() * 4));
		emit("{\"ev\":\"done\",\"step\":" + std::to_string(step_) +
		     ",\"progress\":" + num(progress_) + ",\"loss\":" +
		     num(loss) + ",\"params_crc32c\":\"" + crc + "\"}");
	}
	return 0;
}

bool env_int(const char *name, int &v, int lo, std::string &err)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return true;
	char *end;
	long x = strtol(s, &end, 10);
	if (*end || x < lo || x > 1 << 20) {
		err = std::string(name) + "=" + s + ": expected an integer >= " +
		      std::to_string(lo);
		return false;
	}
	v = (int)x;
	return true;
}

} /* namespace */

bool read_env(Env &env, std::string &err)
{
	auto str = [](const char *n, std::string &v) {
		if (const char *s = getenv(n); s && *s)
			v = s;
	};
	if (!env_int("TIDAL_RANK", env.rank, 0, err) ||
	    !env_int("TIDAL_WORLD", env.world, 1, err) ||
	    !env_int("TIDAL_LOCAL_RANK", env.local_rank, 0, err) ||
	    !env_int("TIDAL_EVENT_FD", env.event_fd, 0, err))
		return false;
	if (const char *b = getenv("TIDAL_BATCH"); b && *b) {
		char *end;
		errno = 0;
		unsigned long long x = strtoull(b, &end, 10);
		if (*end || errno || !isdigit((unsigned char)*b) || x < 1 ||
		    x > 1000000000ULL) {
			err = std::string("TIDAL_BATCH=") + b +
			      ": expected the global batch, an integer in "
			      "[1, 1e9]";
			return false;
		}
		env.batch = x;
	}
	if (env.rank >= env.world) {
		err = "TIDAL_RANK=" + std::to_string(env.rank) +
		      ": must be below TIDAL_WORLD=" + std::to_string(env.world);
		return false;
	}
	str("TIDAL_STORE", env.store);
	str("TIDAL_STORE_PREFIX", env.prefix);
	str("TIDAL_CKPT_DIR", env.ckpt_dir);
	str("TIDAL_RESUME", env.resume);
	return true;
}

void install_signal_handlers()
{
	struct sigaction sa = {};
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (int s : {SIGUSR1, SIGUSR2, SIGTERM})
		sigaction(s, &sa, nullptr);
}

int run_training(const Options &opt, const Env &env)
{
	Loop loop(opt, env);
	return loop.run();
}

} /* namespace tidal::train */
