/*
 * fuzz_state.cc - libFuzzer target for sched/tidal's state file
 * (plugin/sched/state.c): its header and completion marker, and the lines
 * of resize.c (requeue, resize), agents/persist.cc (agentseq, ckpt, agentcmd)
 * and engine.cc (seq, memo, and the policy's own: policy NAME ...), over
 * tests/emu's emulated slurmctld (the plugin's Slurm-side files linked
 * unchanged, as tidal-emu does).
 *
 * Input: byte 0 is a mode, the rest the file.  With mode bit 0 the rest
 * is the body only, and the header and an end line with the right count
 * and checksum are put around it, so that the fuzzer reaches the lines.
 * Mode bits 1-3 choose the policy in force (kConfs), so that the round
 * policies' state lines (round_policy.cc, gavel_rounds.cc, the FTF and
 * AlloX allocators'), Pollux's (pollux_live.cc) and Lucid's profiles
 * (lucid.cc) are read and written back.
 *
 * Each input is a slurmctld restart: the engine and agents forget, the
 * file is loaded, then saved (A), then the restart is done again from A
 * and saved (B).  A refused file is a normal outcome.  A must hold what
 * is in memory (its body ends with the agents' and the engine's lines),
 * and B must equal A: what the plugin saves, it loads back the same.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

extern "C" {
#include "tests/emu/emu.h"
void tidal_state_load(void);
void tidal_state_save(void);
}
#include "plugin/sched/bridge.h"

static const char *const kConfs[] = {
	"Policy=fifo\n",
	"Policy=max-min-fairness\n",
	"Policy=finish-time-fairness\n",
	"Policy=allox\n",
	"Policy=shockwave\n",
	"Policy=pollux\n",
	"Policy=lucid\n",
};
static const char *conf = kConfs[0];
static std::string dir, file;

/* The previous good file and a bad one set aside (state.c): gone before
 * each input, so that no input sees another's. */
static void forget_others()
{
	unlink((file + ".new").c_str());
	unlink((file + ".prev").c_str());
	unlink((file + ".bad").c_str());
}

static void cleanup()
{
	forget_others();
	unlink(file.c_str());
	rmdir(dir.c_str());
}

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
	/* tmpfs where there is one: every save fsyncs. */
	std::string tmpl = access("/dev/shm", W_OK) == 0
				   ? "/dev/shm/tidal-fuzz-state.XXXXXX"
				   : "/tmp/tidal-fuzz-state.XXXXXX";
	if (!mkdtemp(tmpl.data()))
		std::abort();
	dir = tmpl;
	file = dir + "/tidal_state";
	emu_init(conf, dir.c_str(), false);
	emu_quiet();
	std::atexit(cleanup);
	return 0;
}

static uint32_t fnv1a(const std::string &s)
{
	uint32_t h = 2166136261u;
	for (unsigned char c : s) {
		h ^= c;
		h *= 16777619u;
	}
	return h;
}

static void put(const std::string &text)
{
	std::ofstream out(file, std::ios::binary | std::ios::trunc);
	out << text;
	if (!out)
		std::abort();
}

static std::string get()
{
	std::ifstream in(file, std::ios::binary);
	std::stringstream s;
	s << in.rdbuf();
	return s.str();
}

/* A slurmctld restart, as emu_restart() does it. */
static void restart()
{
	char *msg = nullptr;
	tidal_engine_shutdown();
	tidal_agent_clear();
	if (tidal_engine_configure(conf, "tidal.conf", &msg))
		std::abort();
	std::free(msg);
	tidal_state_load();
}

static std::string take(char *s)
{
	std::string out = s ? s : "";
	std::free(s);
	return out;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
				      std::size_t size)
{
	if (size < 1)
		return 0;
	std::string text(reinterpret_cast<const char *>(data) + 1, size - 1);
	conf = kConfs[(data[0] >> 1) % (sizeof(kConfs) / sizeof(kConfs[0]))];
	if (data[0] & 1) {
		int lines = 0;
		for (char c : text)
			lines += c == '\n';
		char end[64];
		std::snprintf(end, sizeof end, "end %d %08x\n", lines,
			      fnv1a(text));
		text = "TIDAL-STATE 1\n" + text + end;
	}
	forget_others();
	put(text);
	restart();
	tidal_state_save();
	std::string a = get();
	/* The file holds what is in memory: the agents' lines, then the
	 * engine's, before the end line. */
	std::string mem = take(tidal_agent_state_dump()) +
			  take(tidal_engine_state_dump(1));
	size_t end = a.rfind("end ");
	if (a.compare(0, 14, "TIDAL-STATE 1\n") || end == std::string::npos ||
	    end < mem.size() || a.compare(end - mem.size(), mem.size(), mem))
		std::abort();
	restart();
	tidal_state_save();
	if (get() != a)
		std::abort();
	return 0;
}
