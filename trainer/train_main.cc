/*
 * train_main.cc - tidal-train's command line: options, the environment the
 * launcher sets, and the --store-server test helper.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <getopt.h>
#include <unistd.h>

#include "core/profiles/colocate.h"
#include "core/version.h"
#include "node/checkpoint.h"
#include "node/store.h"
#include "trainer/train.h"

using namespace tidal;
using namespace tidal::train;

namespace {

const char kUsage[] =
	"Usage: tidal-train [OPTIONS]\n"
	"Data-parallel training of an MLP (one process per rank; rank, world,\n"
	"store and checkpoint directory come from TIDAL_* variables).\n"
	"\n"
	"  --model mlp            the model (only mlp)\n"
	"  --in N --out N         input features / outputs (64 / 16)\n"
	"  --hidden N             hidden width (256)\n"
	"  --layers N             hidden layers (2)\n"
	"  --global-batch N       samples per step over all ranks (64); the\n"
	"                         initial batch when TIDAL_BATCH sets another\n"
	"  --iters N              steps of the initial batch to train (100)\n"
	"  --lr X                 Adam learning rate (0.001), kept at any world size\n"
	"  --seed N               data, teacher and initialisation seed (1)\n"
	"  --ckpt-every N         checkpoint every N steps (0 = off)\n"
	"  --ckpt-every-s S       checkpoint every S seconds (0 = off)\n"
	"  --log-every N          step event every N steps (10)\n"
	"  --profile CSV --profile-model NAME\n"
	"                         each step takes 1/throughput(NAME, batch, world) s\n"
	"  --stage-profile CSV --profile-model NAME\n"
	"                         each step's data, compute and sync stages take\n"
	"                         NAME's seconds (model,data,compute,comm), in the\n"
	"                         turns of the group TIDAL_GROUP names\n"
	"  --gpu-mem MB           GPU memory the job takes per GPU, as reported\n"
	"                         to packing policies (default: its model, Adam\n"
	"                         state and one batch's activations)\n"
	"  --workload MODEL/DATASET/BATCH/AMP\n"
	"                         what this job runs, told to the jobs packed\n"
	"                         beside it on a shared GPU (TIDAL_PACK)\n"
	"  --colocate CSV         packed, run at the speed Lucid's\n"
	"                         colocate_info.csv gives --workload beside its\n"
	"                         partners' (fake GPUs)\n"
	"  --backend auto|cpu|cuda  (auto: CUDA when built and a GPU works)\n"
	"  --timeout S            rendezvous and collective timeout (120)\n"
	"  --store-server ADDR:PORT  run a rendezvous store (tests; port 0 =\n"
	"                         ephemeral; prints 'store: listening on ADDR:PORT')\n"
	"  --find-checkpoint DIR  print the newest complete checkpoint in DIR that\n"
	"                         verifies (what a launcher resumes from)\n"
	"  --help, --version\n"
	"\n"
	"Signals: USR1 checkpoint at the next step; USR2/TERM checkpoint and stop.\n"
	"See tidal-train(1).\n";

bool parse_u64(const char *opt, const char *s, uint64_t lo, uint64_t &v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end || !*s || x < lo || s[0] == '-') {
		fprintf(stderr, "tidal-train: --%s %s: expected an integer >= %llu\n",
			opt, s, (unsigned long long)lo);
		return false;
	}
	v = x;
	return true;
}

bool parse_double(const char *opt, const char *s, double &v)
{
	char *end;
	v = strtod(s, &end);
	if (*end || !*s || !std::isfinite(v) || v < 0) {
		fprintf(stderr, "tidal-train: --%s %s: expected a number >= 0\n",
			opt, s);
		return false;
	}
	return true;
}

volatile sig_atomic_t g_quit = 0;
void on_quit(int) { g_quit = 1; }

int store_server(const std::string &hostport)
{
	std::string host, err;
	int port;
	store::Server srv;
	if (!store::split_hostport(hostport, host, port, err) ||
	    !srv.start(host, port, err)) {
		fprintf(stderr, "tidal-train: %s\n", err.c_str());
		return 1;
	}
	signal(SIGTERM, on_quit);
	signal(SIGINT, on_quit);
	printf("store: listening on %s:%d\n", host.c_str(), srv.port());
	fflush(stdout);
	while (!g_quit)
		pause();
	srv.stop();
	return 0;
}

enum { O_IN = 256, O_OUT, O_HIDDEN, O_LAYERS, O_BATCH, O_ITERS, O_LR, O_SEED,
       O_CKE, O_CKS, O_LOG, O_PROF, O_PMODEL, O_BACKEND, O_TIMEOUT, O_STORE,
       O_MODEL, O_HELP, O_VERSION, O_BENCH, O_FIND, O_STAGES, O_GMEM,
       O_WORKLOAD, O_COLOCATE };

const struct option kOpts[] = {
	{"model", 1, 0, O_MODEL}, {"in", 1, 0, O_IN}, {"out", 1, 0, O_OUT},
	{"hidden", 1, 0, O_HIDDEN}, {"layers", 1, 0, O_LAYERS},
	{"global-batch", 1, 0, O_BATCH}, {"iters", 1, 0, O_ITERS},
	{"lr", 1, 0, O_LR}, {"seed", 1, 0, O_SEED},
	{"ckpt-every", 1, 0, O_CKE}, {"ckpt-every-s", 1, 0, O_CKS},
	{"log-every", 1, 0, O_LOG}, {"profile", 1, 0, O_PROF},
	{"profile-model", 1, 0, O_PMODEL}, {"backend", 1, 0, O_BACKEND},
	{"stage-profile", 1, 0, O_STAGES}, {"gpu-mem", 1, 0, O_GMEM},
	{"workload", 1, 0, O_WORKLOAD}, {"colocate", 1, 0, O_COLOCATE},
	{"timeout", 1, 0, O_TIMEOUT}, {"store-server", 1, 0, O_STORE},
	{"help", 0, 0, O_HELP}, {"version", 0, 0, O_VERSION},
	{"bench-gemm", 0, 0, O_BENCH}, {"find-checkpoint", 1, 0, O_FIND},
	{0, 0, 0, 0}};

/* RET -1 to go on, else the exit code. */
int parse(int argc, char **argv, Options &o, std::string &store, bool &bench,
	  std::string &find)
{
	int c;
	uint64_t v;
	while ((c = getopt_long(argc, argv, "", kOpts, nullptr)) != -1) {
		const char *name = kOpts[0].name;
		for (const option *p = kOpts; p->name; p++)
			if (p->val == c)
				name = p->name;
		bool ok = true;
		switch (c) {
		case O_MODEL:
			ok = strcmp(optarg, "mlp") == 0;
			if (!ok)
				fprintf(stderr, "tidal-train: --model %s: only 'mlp' is known\n", optarg);
			break;
		case O_IN: case O_OUT: case O_HIDDEN: case O_LAYERS: case O_TIMEOUT:
			ok = parse_u64(name, optarg, 1, v) && v < (1u << 20);
			if (ok)
				(c == O_IN ? o.shape.in : c == O_OUT ? o.shape.out :
				 c == O_HIDDEN ? o.shape.hidden : c == O_LAYERS ?
				 o.shape.layers : o.timeout_s) = (int)v;
			break;
		case O_BATCH: ok = parse_u64(name, optarg, 1, o.global_batch); break;
		case O_ITERS: ok = parse_u64(name, optarg, 0, o.iters); break;
		case O_SEED: ok = parse_u64(name, optarg, 0, o.seed); break;
		case O_CKE: ok = parse_u64(name, optarg, 0, o.ckpt_every); break;
		case O_LOG: ok = parse_u64(name, optarg, 0, o.log_every); break;
		case O_LR: ok = parse_double(name, optarg, o.lr); break;
		case O_CKS: ok = parse_double(name, optarg, o.ckpt_every_s); break;
		case O_GMEM: ok = parse_double(name, optarg, o.gpu_mem_mb); break;
		case O_PROF: o.profile = optarg; break;
		case O_PMODEL: o.profile_model = optarg; break;
		case O_STAGES: o.stage_profile = optarg; break;
		case O_WORKLOAD: {
			WorkloadKey k;
			std::string err;
			o.workload = optarg;
			ok = parse_workload(o.workload, &k, &err);
			if (!ok)
				fprintf(stderr, "tidal-train: --workload %s\n", err.c_str());
			break;
		}
		case O_COLOCATE: o.colocate = optarg; break;
		case O_BACKEND:
			o.backend = optarg;
			ok = o.backend == "auto" || o.backend == "cpu" || o.backend == "cuda";
			if (!ok)
				fprintf(stderr, "tidal-train: --backend %s: expected auto, cpu or cuda\n", optarg);
			break;
		case O_STORE: store = optarg; break;
		case O_BENCH: bench = true; break;
		case O_FIND: find = optarg; break;
		case O_HELP: fputs(kUsage, stdout); return 0;
		case O_VERSION: printf("tidal-train %s\n", TIDAL_VERSION); return 0;
		default: ok = false;
		}
		if (!ok) {
			fprintf(stderr, "Try 'tidal-train --help'.\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tidal-train: unexpected argument '%s'\nTry 'tidal-train --help'.\n",
			argv[optind]);
		return 2;
	}
	if (!o.profile.empty() && !o.stage_profile.empty()) {
		fprintf(stderr, "tidal-train: --profile and --stage-profile both pace "
			"steps: give one\n");
		return 2;
	}
	if (!o.colocate.empty() && o.workload.empty()) {
		fprintf(stderr, "tidal-train: --colocate %s: the table's speeds "
			"are looked up by this job's --workload: give it\n",
			o.colocate.c_str());
		return 2;
	}
	if ((o.profile.empty() && o.stage_profile.empty()) !=
	    o.profile_model.empty()) {
		fprintf(stderr, "tidal-train: --profile-model goes with --profile or "
			"--stage-profile\n");
		return 2;
	}
	return -1;
}

/* Corrupt or incomplete newer checkpoints are reported on stderr. */
int find_checkpoint(const std::string &dir)
{
	std::vector<std::string> warnings;
	auto found = ckpt::newest(dir, warnings);
	for (const std::string &w : warnings)
		fprintf(stderr, "tidal-train: warning: %s\n", w.c_str());
	if (!found) {
		fprintf(stderr, "tidal-train: %s: no complete checkpoint\n",
			dir.c_str());
		return 1;
	}
	printf("%s\n", found->path.c_str());
	return 0;
}

} /* namespace */

int bench_gemm(const Options &o); /* bench_gpu.cc or below */

int main(int argc, char **argv)
{
	Options o;
	std::string store, err, find;
	bool bench = false;
	int rc = parse(argc, argv, o, store, bench, find);
	if (rc >= 0)
		return rc;
	if (!find.empty())
		return find_checkpoint(find);
	if (!store.empty())
		return store_server(store);
	if (bench)
		return bench_gemm(o);
	Env env;
	if (!read_env(env, err)) {
		fprintf(stderr, "tidal-train: %s\n", err.c_str());
		return 2;
	}
	if (env.event_fd == 1)
		setvbuf(stdout, nullptr, _IOLBF, 0);
	install_signal_handlers();
	return run_training(o, env);
}
