/*
 * test_checkpoint.cc - the checkpoint format: round trip, atomic write with
 * the marker last, damage detection naming the file, fallback to the
 * previous checkpoint, and keep-3 pruning.
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "node/checkpoint.h"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include <sys/resource.h>
#include <unistd.h>

#include "tests/unit/unit.h"

namespace fs = std::filesystem;
using namespace tidal;

static std::string tmpdir()
{
	char t[] = "/tmp/tidal-ckpt-test-XXXXXX";
	assert_non_null(mkdtemp(t));
	return t;
}

static ckpt::State state(uint64_t step, size_t floats)
{
	ckpt::State s;
	s.step = step;
	s.samples = step * 64;
	s.global_batch = 64;
	s.world = 2;
	s.model = "mlp:in=16,hidden=32,layers=2,out=4";
	s.rng = {0x1234, step, 0xdeadbeefcafef00dull};
	s.lr = 0.01;
	std::vector<float> w(floats), m(floats / 2 + 1);
	for (size_t i = 0; i < floats; i++)
		w[i] = (float)i * 0.5f + (float)step;
	s.tensors = {{"w", w}, {"adam.m", m}, {"empty", {}}};
	s.meta_json = "{\"loss\":[1.5,1.25]}";
	return s;
}

static void flip_byte(const std::string &path, long off)
{
	FILE *f = fopen(path.c_str(), "r+b");
	assert_non_null(f);
	if (off < 0) {
		fseek(f, 0, SEEK_END);
		off = ftell(f) + off;
	}
	fseek(f, off, SEEK_SET);
	int c = fgetc(f);
	fseek(f, off, SEEK_SET);
	fputc(c ^ 0x40, f);
	fclose(f);
}

static bool contains(const std::string &s, const std::string &what)
{
	return s.find(what) != std::string::npos;
}

static void test_crc32c_vector(void **)
{
	/* The standard check value of CRC-32C. */
	assert_int_equal(ckpt::crc32c(0, "123456789", 9), 0xe3069283u);
	uint32_t part = ckpt::crc32c(0, "1234", 4);
	assert_int_equal(ckpt::crc32c(part, "56789", 5), 0xe3069283u);
}

static void test_round_trip(void **)
{
	std::string dir = tmpdir() + "/job/42"; /* created by write() */
	ckpt::State s = state(1200, 100000), r;
	std::string path = ckpt::write(dir, s);
	assert_string_equal(path.c_str(),
			    (dir + "/ckpt-000000001200.tck").c_str());
	assert_true(fs::exists(dir + "/ckpt-000000001200.done"));
	std::string err;
	assert_true(ckpt::read(path, r, err));
	assert_true(r.step == s.step && r.samples == s.samples);
	assert_true(r.global_batch == 64 && r.world == 2 && r.lr == 0.01);
	assert_true(r.model == s.model && r.rng == s.rng);
	assert_true(r.meta_json == s.meta_json);
	assert_true(r.tensors == s.tensors);
	uint64_t step = 0;
	assert_true(ckpt::verify(path, &step, err));
	assert_int_equal(step, 1200);
	/* No temporary file is left behind. */
	int files = 0;
	for (auto &e : fs::directory_iterator(dir))
		files += e.path().filename().string()[0] != '.' ? 1 : 100;
	assert_int_equal(files, 2);
	fs::remove_all(fs::path(dir).parent_path().parent_path());
}

/* A failed write (file size limit hit mid-data) leaves neither a .tck nor a
 * temp file, and the previous checkpoint stays the newest. */
static void test_atomic_failed_write(void **)
{
	std::string dir = tmpdir();
	ckpt::write(dir, state(10, 1000));
	struct rlimit old, lim = {1 << 20, 1 << 20};
	getrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, SIG_IGN);
	setrlimit(RLIMIT_FSIZE, &lim);
	bool threw = false;
	try {
		ckpt::write(dir, state(20, 1 << 20));
	} catch (const std::runtime_error &e) {
		threw = contains(e.what(), dir + "/") &&
			contains(e.what(), "File too large");
	}
	setrlimit(RLIMIT_FSIZE, &old);
	assert_true(threw);
	int files = 0;
	for (auto &e : fs::directory_iterator(dir))
		files++, assert_false(contains(e.path().string(), "000020"));
	assert_int_equal(files, 2);
	std::vector<std::string> warn;
	auto f = ckpt::newest(dir, warn);
	assert_true(f && f->step == 10 && warn.empty());
	fs::remove_all(dir);
}

/* The marker comes last: when it cannot be created, the data file is
 * complete and verifies, yet newest() treats the step as incomplete. */
static void test_marker_last(void **)
{
	std::string dir = tmpdir();
	ckpt::write(dir, state(1, 100));
	fs::create_directory(ckpt::file_name(dir, 2, ".done")); /* blocks it */
	bool threw = false;
	try {
		ckpt::write(dir, state(2, 100));
	} catch (const std::runtime_error &e) {
		threw = contains(e.what(), ckpt::file_name(dir, 2, ".done"));
	}
	assert_true(threw);
	std::string err;
	assert_true(ckpt::verify(ckpt::file_name(dir, 2, ".tck"), nullptr, err));
	fs::remove(ckpt::file_name(dir, 2, ".done"));
	std::vector<std::string> warn;
	auto f = ckpt::newest(dir, warn);
	assert_true(f && f->step == 1);
	assert_int_equal(warn.size(), 1);
	assert_true(contains(warn[0], ckpt::file_name(dir, 2, ".tck") +
					      ": incomplete"));
	assert_true(contains(warn[0], "using the previous one"));
	fs::remove_all(dir);
}

static void test_corrupt_byte(void **)
{
	std::string dir = tmpdir();
	std::string path = ckpt::write(dir, state(5, 50000));
	ckpt::State r;
	std::string err;
	flip_byte(path, 100000); /* inside tensor data */
	assert_false(ckpt::read(path, r, err));
	assert_true(contains(err, path + ": checksum mismatch"));
	err.clear();
	assert_false(ckpt::verify(path, nullptr, err));
	assert_true(contains(err, path + ": checksum mismatch"));
	flip_byte(path, 100000);
	flip_byte(path, 2); /* magic */
	assert_false(ckpt::read(path, r, err));
	assert_true(contains(err, path + ": not a Tidal checkpoint"));
	flip_byte(path, 2);
	flip_byte(path, -3); /* stored checksum */
	assert_false(ckpt::read(path, r, err));
	assert_true(contains(err, path + ": checksum mismatch"));
	flip_byte(path, -3);
	assert_true(ckpt::read(path, r, err));
	fs::remove_all(dir);
}

static void test_truncated(void **)
{
	std::string dir = tmpdir();
	std::string path = ckpt::write(dir, state(5, 50000));
	ckpt::State r;
	std::string err;
	for (uintmax_t size : {150000u, 20u, 0u}) {
		fs::resize_file(path, size);
		assert_false(ckpt::read(path, r, err));
		assert_true(contains(err, path + ": truncated"));
		assert_false(ckpt::verify(path, nullptr, err));
	}
	assert_false(ckpt::read(dir + "/nonexistent.tck", r, err));
	assert_true(contains(err, dir + "/nonexistent.tck: No such file"));
	fs::remove_all(dir);
}

static void test_newest_falls_back(void **)
{
	std::string dir = tmpdir();
	std::vector<std::string> warn;
	assert_false(ckpt::newest(dir + "/missing", warn).has_value());
	assert_true(warn.empty());
	ckpt::write(dir, state(10, 1000));
	std::string p20 = ckpt::write(dir, state(20, 1000));
	std::string p30 = ckpt::write(dir, state(30, 1000));
	flip_byte(p30, 500);
	fs::remove(ckpt::file_name(dir, 20, ".done"));
	auto f = ckpt::newest(dir, warn);
	assert_true(f && f->step == 10);
	assert_string_equal(f->path.c_str(), (dir + "/ckpt-000000000010.tck").c_str());
	assert_int_equal(warn.size(), 2);
	assert_true(contains(warn[0], p30 + ": checksum mismatch"));
	assert_true(contains(warn[0], "; using the previous one"));
	assert_true(contains(warn[1], p20 + ": incomplete (no .done marker)"));
	fs::remove_all(dir);
}

static void test_keep_three(void **)
{
	std::string dir = tmpdir();
	for (uint64_t step = 1; step <= 5; step++)
		ckpt::write(dir, state(step * 100, 10));
	for (uint64_t step = 1; step <= 5; step++) {
		bool kept = step >= 3;
		assert_int_equal(fs::exists(ckpt::file_name(dir, step * 100, ".tck")), kept);
		assert_int_equal(fs::exists(ckpt::file_name(dir, step * 100, ".done")), kept);
	}
	/* An incomplete newer one is not counted and not deleted. */
	fs::copy_file(ckpt::file_name(dir, 500, ".tck"),
		      ckpt::file_name(dir, 900, ".tck"));
	ckpt::write(dir, state(600, 10));
	assert_false(fs::exists(ckpt::file_name(dir, 300, ".tck")));
	assert_true(fs::exists(ckpt::file_name(dir, 400, ".tck")));
	assert_true(fs::exists(ckpt::file_name(dir, 900, ".tck")));
	fs::remove_all(dir);
}

/* A pinned step outlives rotation however many checkpoints follow it;
 * unpinned, rotation takes it, and the newest kKeep always stay. */
static void test_pin_survives_rotation(void **)
{
	std::string dir = tmpdir(), err;
	ckpt::write(dir, state(100, 10));
	assert_true(ckpt::pin(dir, 100, err));
	for (uint64_t step = 2; step <= 20; step++)
		ckpt::write(dir, state(step * 100, 10));
	assert_true(fs::exists(ckpt::file_name(dir, 100, ".tck")));
	assert_true(fs::exists(ckpt::file_name(dir, 100, ".done")));
	assert_false(fs::exists(ckpt::file_name(dir, 200, ".tck")));
	for (uint64_t step = 18; step <= 20; step++)
		assert_true(fs::exists(ckpt::file_name(dir, step * 100, ".done")));
	std::vector<std::string> warn;
	auto f = ckpt::newest(dir, warn);
	assert_true(f && f->step == 2000);
	auto m = ckpt::newest_marked(dir);
	assert_true(m && m->step == 2000 &&
		    m->path == ckpt::file_name(dir, 2000, ".tck"));

	/* Two pins at once (a report in flight and the plugin's record). */
	assert_true(ckpt::pin(dir, 1800, err));
	assert_true(ckpt::pins(dir) == std::vector<uint64_t>({1800, 100}));
	ckpt::unpin(dir, 100);
	/* Rotation passed it long ago: it goes with its pin, not at the
	 * next write (a job that ended writes none). */
	assert_false(fs::exists(ckpt::file_name(dir, 100, ".tck")));
	assert_false(fs::exists(ckpt::file_name(dir, 100, ".done")));
	assert_true(fs::exists(ckpt::file_name(dir, 1800, ".done")));
	ckpt::write(dir, state(2100, 10));
	ckpt::write(dir, state(2200, 10));
	assert_false(fs::exists(ckpt::file_name(dir, 100, ".tck")));
	assert_true(fs::exists(ckpt::file_name(dir, 1800, ".done")));
	assert_false(fs::exists(ckpt::file_name(dir, 1900, ".tck")));
	assert_true(ckpt::pins(dir) == std::vector<uint64_t>({1800}));
	/* Unpinned among the newest kKeep, it stays. */
	assert_true(ckpt::pin(dir, 2200, err));
	ckpt::unpin(dir, 2200);
	assert_true(fs::exists(ckpt::file_name(dir, 2200, ".done")));
	ckpt::unpin(dir, 1800);
	assert_false(fs::exists(ckpt::file_name(dir, 1800, ".tck")));
	assert_true(fs::exists(ckpt::file_name(dir, 2000, ".done")));

	/* No directory: nothing to pin, no error, nothing created. */
	assert_true(ckpt::pin(dir + "/none", 5, err));
	assert_false(fs::exists(dir + "/none"));
	assert_false(ckpt::newest_marked(dir + "/none").has_value());
	fs::remove_all(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c_vector),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_atomic_failed_write),
		cmocka_unit_test(test_marker_last),
		cmocka_unit_test(test_corrupt_byte),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_newest_falls_back),
		cmocka_unit_test(test_keep_three),
		cmocka_unit_test(test_pin_survives_rotation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
