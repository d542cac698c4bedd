/*
 * fuzz_ckpt.cc - libFuzzer target for the checkpoint reader
 * (node/checkpoint.h): read() and verify() of a .tck file, newest()
 * over a job directory holding it, and the pin names (keep-<12 digits>)
 * that pins() parses.
 *
 * Input: byte 0 is a mode, the rest the .tck file.  Mode bit 0 patches
 * the trailer to the right CRC32C and bit 1 the header's payload size, so
 * that the fuzzer gets past them to the payload's fields.  The last 12
 * bytes (when none is '/' or NUL) also name a pin, keep-<those bytes>.
 *
 * A refused file is a normal outcome.  read() and verify() must agree;
 * newest() must return the file exactly when it verifies and holds the
 * step its name says; a state that reads must write (write()) and read
 * back the same.  Files go under /dev/shm where there is one, so that
 * write()'s fsyncs cost nothing.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "node/checkpoint.h"

using namespace tidal;

static std::string dir, job, out;
static constexpr uint64_t kStep = 42;

static void clear(const std::string &d);

static void cleanup()
{
	clear(job);
	clear(out);
	rmdir(dir.c_str());
}

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
	struct stat st;
	std::string base = stat("/dev/shm", &st) == 0 && access("/dev/shm", W_OK) == 0
				   ? "/dev/shm"
				   : "/tmp";
	std::string tmpl = base + "/tidal-fuzz-ckpt.XXXXXX";
	if (!mkdtemp(tmpl.data()))
		std::abort();
	dir = tmpl;
	job = dir + "/job";
	out = dir + "/out";
	std::atexit(cleanup);
	return 0;
}

/* Empty and remove D (its files only: no subdirectories here). */
static void clear(const std::string &d)
{
	if (DIR *h = opendir(d.c_str())) {
		while (struct dirent *e = readdir(h))
			if (std::strcmp(e->d_name, ".") &&
			    std::strcmp(e->d_name, ".."))
				unlink((d + "/" + e->d_name).c_str());
		closedir(h);
	}
	rmdir(d.c_str());
}

static bool same(const ckpt::State &a, const ckpt::State &b)
{
	return a.step == b.step && a.samples == b.samples &&
	       a.global_batch == b.global_batch && a.world == b.world &&
	       a.model == b.model && a.rng == b.rng &&
	       std::memcmp(&a.lr, &b.lr, sizeof a.lr) == 0 &&
	       a.meta_json == b.meta_json && a.tensors.size() == b.tensors.size() &&
	       [&] {
		       for (size_t i = 0; i < a.tensors.size(); i++)
			       if (a.tensors[i].first != b.tensors[i].first ||
				   a.tensors[i].second.size() !=
					   b.tensors[i].second.size() ||
				   (!a.tensors[i].second.empty() && /* bits: NaNs */
				    std::memcmp(a.tensors[i].second.data(),
					       b.tensors[i].second.data(),
					       4 * a.tensors[i].second.size())))
				       return false;
		       return true;
	       }();
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
				      std::size_t size)
{
	if (size < 1)
		return 0;
	int mode = data[0];
	std::string file(reinterpret_cast<const char *>(data) + 1, size - 1);
	if ((mode & 2) && file.size() >= 48) {
		uint64_t payload = file.size() - 48;
		std::memcpy(&file[16], &payload, 8);
	}
	if ((mode & 1) && file.size() >= 16) {
		uint64_t crc = ckpt::crc32c(0, file.data(), file.size() - 16);
		std::memcpy(&file[file.size() - 16], "TIDALEND", 8);
		std::memcpy(&file[file.size() - 8], &crc, 8);
	}
	clear(job);
	mkdir(job.c_str(), 0755);
	std::string tck = ckpt::file_name(job, kStep, ".tck");
	std::ofstream(tck, std::ios::binary) << file;
	std::ofstream(ckpt::file_name(job, kStep, ".done")) << "done\n";
	std::string pin_digits;
	if (file.size() >= 12) {
		pin_digits = file.substr(file.size() - 12);
		if (pin_digits.find_first_of(std::string("/\0", 2)) ==
		    std::string::npos)
			std::ofstream(job + "/keep-" + pin_digits);
		else
			pin_digits.clear();
	}

	ckpt::State s;
	std::string err, verr;
	uint64_t vstep = 0;
	bool ok = ckpt::read(tck, s, err);
	bool vok = ckpt::verify(tck, &vstep, verr);
	if (ok != vok || (ok && vstep != s.step) || (!ok && err.empty()))
		std::abort();

	std::vector<std::string> warn;
	auto n = ckpt::newest(job, warn);
	if ((bool)n != (ok && s.step == kStep) || (n && n->path != tck) ||
	    (!n && warn.empty()))
		std::abort();
	auto m = ckpt::newest_marked(job);
	if (!m || m->step != kStep)
		std::abort();

	std::vector<uint64_t> pins = ckpt::pins(job);
	bool digits = pin_digits.size() == 12 &&
		      pin_digits.find_first_not_of("0123456789") ==
			      std::string::npos;
	if (pins.size() != (digits ? 1u : 0u) ||
	    (digits && pins[0] != std::stoull(pin_digits)))
		std::abort();

	if (ok) {
		clear(out);
		std::string path = ckpt::write(out, s);
		ckpt::State back;
		if (!ckpt::read(path, back, err) || !same(s, back))
			std::abort();
	}
	return 0;
}
