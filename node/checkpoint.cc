/*
 * checkpoint.cc - writing, verifying and finding checkpoint files (format in
 * checkpoint.h).
 *
 * Tensor data goes from the caller's vectors straight to write(2) in large
 * chunks, and the CRC is computed on the way, so a checkpoint costs one pass
 * over the state plus the disk: the write rate should be close to the disk's
 * own sequential rate (bench/ckpt.sh measures both).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "node/checkpoint.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <stdexcept>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

static_assert(std::endian::native == std::endian::little,
	      "the checkpoint format is little-endian; add byte swapping");

namespace tidal::ckpt {

namespace {

constexpr char kMagic[8] = {'T', 'I', 'D', 'A', 'L', 'C', 'K', '1'};
constexpr char kEndMagic[8] = {'T', 'I', 'D', 'A', 'L', 'E', 'N', 'D'};
constexpr uint32_t kHeaderBytes = 32;
constexpr uint32_t kTrailerBytes = 16;
constexpr size_t kChunk = 8u << 20; /* one write(2)/read(2) */

/* ---------------------------------------------------------------- CRC32C */

uint32_t crc_table[8][256];

void init_crc_table()
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^
					  crc_table[0][crc_table[t - 1][i] & 0xff];
}

uint32_t crc_soft(uint32_t c, const uint8_t *p, size_t n)
{
	static bool ready = (init_crc_table(), true);
	(void)ready;
	while (n >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		v ^= c;
		c = crc_table[7][v & 0xff] ^ crc_table[6][(v >> 8) & 0xff] ^
		    crc_table[5][(v >> 16) & 0xff] ^
		    crc_table[4][(v >> 24) & 0xff] ^
		    crc_table[3][(v >> 32) & 0xff] ^
		    crc_table[2][(v >> 40) & 0xff] ^
		    crc_table[1][(v >> 48) & 0xff] ^ crc_table[0][v >> 56];
		p += 8;
		n -= 8;
	}
	while (n--)
		c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xff];
	return c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t crc_hw(uint32_t c,
						    const uint8_t *p, size_t n)
{
	uint64_t c64 = c;
	while (n >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c64 = _mm_crc32_u64(c64, v);
		p += 8;
		n -= 8;
	}
	c = (uint32_t)c64;
	while (n--)
		c = _mm_crc32_u8(c, *p++);
	return c;
}
#endif

/* ---------------------------------------------------------------- writing */

std::string errno_text(int e) { return std::strerror(e); }

[[noreturn]] void fail(const std::string &path, const std::string &what,
		       int e)
{
	throw std::runtime_error(path + ": " + what + ": " + errno_text(e));
}

/* Buffers small fields, passes large blocks straight through, and keeps the
 * running CRC of everything. */
class Out {
public:
	Out(int fd, const std::string &path) : fd_(fd), path_(path) {}

	void raw(const void *p, size_t n)
	{
		crc_ = crc32c(crc_, p, n);
		bytes_ += n;
		if (n >= kChunk / 4) {
			flush();
			put(p, n);
			return;
		}
		buf_.append((const char *)p, n);
		if (buf_.size() >= kChunk)
			flush();
	}
	template <class T> void pod(T v) { raw(&v, sizeof v); }
	void str(const std::string &s)
	{
		pod<uint32_t>((uint32_t)s.size());
		raw(s.data(), s.size());
	}
	void flush()
	{
		put(buf_.data(), buf_.size());
		buf_.clear();
	}
	uint32_t crc() const { return crc_; }
	uint64_t bytes() const { return bytes_; }

private:
	void put(const void *p, size_t n)
	{
		const char *c = (const char *)p;
		while (n > 0) {
			ssize_t w = ::write(fd_, c, std::min(n, kChunk));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				fail(path_, "write", errno);
			c += w;
			n -= (size_t)w;
		}
	}

	int fd_;
	const std::string &path_;
	std::string buf_;
	uint32_t crc_ = 0;
	uint64_t bytes_ = 0;
};

uint64_t payload_bytes(const State &s)
{
	uint64_t n = 8 * 3 + 4 + 8 + 4 + s.model.size() + 4 +
		     8 * s.rng.size() + 4 + s.meta_json.size() + 4;
	for (const auto &[name, v] : s.tensors)
		n += 4 + name.size() + 8 + 4 * (uint64_t)v.size();
	return n;
}

void write_body(Out &o, const State &s)
{
	o.raw(kMagic, 8);
	o.pod<uint32_t>(kVersion);
	o.pod<uint32_t>(kHeaderBytes);
	o.pod<uint64_t>(payload_bytes(s));
	o.pod<uint64_t>(0);
	o.pod(s.step);
	o.pod(s.samples);
	o.pod(s.global_batch);
	o.pod(s.world);
	o.pod(s.lr);
	o.str(s.model);
	o.pod<uint32_t>((uint32_t)s.rng.size());
	o.raw(s.rng.data(), 8 * s.rng.size());
	o.str(s.meta_json);
	o.pod<uint32_t>((uint32_t)s.tensors.size());
	for (const auto &[name, v] : s.tensors) {
		o.str(name);
		o.pod<uint64_t>(v.size());
		o.raw(v.data(), 4 * v.size());
	}
}

void fsync_path(const std::string &path, int flags)
{
	int fd = ::open(path.c_str(), flags | O_CLOEXEC);
	if (fd < 0)
		fail(path, "open for fsync", errno);
	if (::fsync(fd) < 0) {
		int e = errno;
		::close(fd);
		fail(path, "fsync", e);
	}
	::close(fd);
}

void make_dirs(const std::string &dir)
{
	for (size_t i = 1; i <= dir.size(); i++) {
		if (i < dir.size() && dir[i] != '/')
			continue;
		std::string d = dir.substr(0, i);
		if (::mkdir(d.c_str(), 0755) < 0 && errno != EEXIST)
			fail(d, "mkdir", errno);
	}
}

/* Write the whole file to TMP; RET the CRC. */
uint32_t write_tmp(const std::string &tmp, const State &s)
{
	int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			0644);
	if (fd < 0)
		fail(tmp, "create", errno);
	try {
		Out o(fd, tmp);
		write_body(o, s);
		uint32_t crc = o.crc();
		o.raw(kEndMagic, 8);
		o.pod<uint64_t>(crc);
		o.flush();
		if (::fsync(fd) < 0)
			fail(tmp, "fsync", errno);
		if (::close(fd) < 0)
			fail(tmp, "close", errno);
		return crc;
	} catch (...) {
		::close(fd);
		::unlink(tmp.c_str());
		throw;
	}
}

void write_marker(const std::string &path, const State &s, uint32_t crc)
{
	char text[160];
	int n = snprintf(text, sizeof text,
			 "TIDALCK1 step=%" PRIu64 " crc32c=%08x\n", s.step, crc);
	int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			0644);
	if (fd < 0)
		fail(path, "create", errno);
	if (::write(fd, text, (size_t)n) != n || ::fsync(fd) < 0) {
		int e = errno;
		::close(fd);
		fail(path, "write", e);
	}
	::close(fd);
}

/* ---------------------------------------------------------------- listing */

/* Steps of "ckpt-<12 digits>.tck" files in DIR, newest first. */
/* Steps named PREFIX<12 digits>SUFFIX in DIR, newest first. */
std::vector<uint64_t> list_named(const std::string &dir, const char *prefix,
				 const char *suffix)
{
	std::vector<uint64_t> steps;
	DIR *d = ::opendir(dir.c_str());
	if (!d)
		return steps;
	size_t pl = strlen(prefix), sl = strlen(suffix);
	while (struct dirent *e = ::readdir(d)) {
		const char *n = e->d_name;
		if (strlen(n) != pl + 12 + sl || strncmp(n, prefix, pl) ||
		    strcmp(n + pl + 12, suffix))
			continue;
		uint64_t step = 0;
		bool digits = true;
		for (size_t i = pl; i < pl + 12; i++) {
			digits = digits && n[i] >= '0' && n[i] <= '9';
			step = step * 10 + (uint64_t)(n[i] - '0');
		}
		if (digits)
			steps.push_back(step);
	}
	::closedir(d);
	std::sort(steps.rbegin(), steps.rend());
	return steps;
}

std::vector<uint64_t> list_steps(const std::string &dir)
{
	return list_named(dir, "ckpt-", ".tck");
}

std::string pin_name(const std::string &dir, uint64_t step)
{
	char name[32];
	snprintf(name, sizeof name, "keep-%012" PRIu64, step);
	return dir + "/" + name;
}

bool exists(const std::string &path)
{
	struct stat st;
	return ::stat(path.c_str(), &st) == 0;
}

/* Keep the newest kKeep complete checkpoints and every pinned one; delete
 * older complete ones (marker first, so a crash never leaves a marker
 * without data) and incomplete ones older than the newest complete one
 * (crashed writes). */
void prune(const std::string &dir)
{
	int complete = 0;
	std::vector<uint64_t> pins = list_named(dir, "keep-", "");
	for (uint64_t step : list_steps(dir)) {
		std::string tck = file_name(dir, step, ".tck");
		std::string done = file_name(dir, step, ".done");
		bool is_complete = exists(done);
		if (is_complete && ++complete <= kKeep)
			continue;
		if (!is_complete && complete == 0)
			continue; /* newer than every complete one */
		if (std::find(pins.begin(), pins.end(), step) != pins.end())
			continue; /* the plugin's record, or a resize's */
		::unlink(done.c_str());
		::unlink(tck.c_str());
	}
}

/* ---------------------------------------------------------------- reading */

/* Reads the file in order with the running CRC; every read is bounded by
 * the bytes the header promised, so a damaged length field fails cleanly
 * instead of allocating or reading past the end. */
class In {
public:
	In(int fd, uint64_t limit) : fd_(fd), left_(limit) {}

	void raw(void *dst, size_t n)
	{
		if (n > left_)
			throw std::runtime_error(
				"truncated or corrupt: a field needs " +
				std::to_string(n) + " bytes, " +
				std::to_string(left_) + " are left");
		left_ -= n;
		char *d = (char *)dst;
		size_t from_buf = std::min(n, buf_.size() - pos_);
		if (from_buf) /* an empty buffer's data() may be null */
			memcpy(d, buf_.data() + pos_, from_buf);
		pos_ += from_buf;
		d += from_buf;
		n -= from_buf;
		if (n >= kChunk / 4) {
			get(d, n);
			crc_ = crc32c(crc_, dst, (size_t)(d - (char *)dst) + n);
			return;
		}
		if (n > 0) {
			refill(n);
			memcpy(d, buf_.data(), n);
			pos_ = n;
		}
		crc_ = crc32c(crc_, dst, (size_t)(d - (char *)dst) + n);
	}
	template <class T> T pod()
	{
		T v;
		raw(&v, sizeof v);
		return v;
	}
	std::string str()
	{
		uint32_t n = pod<uint32_t>();
		if (n > left_)
			throw std::runtime_error("string length " +
						 std::to_string(n) +
						 " exceeds the file (corrupt)");
		std::string s(n, '\0');
		raw(s.data(), n);
		return s;
	}
	/* Checksum N bytes without keeping them. */
	void skip(uint64_t n)
	{
		std::vector<char> scratch(std::min<uint64_t>(n, kChunk));
		while (n > 0) {
			size_t k = (size_t)std::min<uint64_t>(n, scratch.size());
			raw(scratch.data(), k);
			n -= k;
		}
	}
	uint64_t left() const { return left_; }
	uint32_t crc() const { return crc_; }
	/* The bytes after the limit (the trailer), outside the CRC. */
	void tail(void *dst, size_t n)
	{
		size_t from_buf = std::min(n, buf_.size() - pos_);
		if (from_buf)
			memcpy(dst, buf_.data() + pos_, from_buf);
		pos_ += from_buf;
		get((char *)dst + from_buf, n - from_buf);
	}

private:
	void get(char *d, size_t n)
	{
		while (n > 0) {
			ssize_t r = ::read(fd_, d, std::min(n, kChunk));
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				throw std::runtime_error(std::string("read: ") +
							 errno_text(errno));
			if (r == 0)
				throw std::runtime_error("unexpected end of file");
			d += r;
			n -= (size_t)r;
		}
	}
	void refill(size_t n)
	{
		buf_.resize((size_t)std::min<uint64_t>(
			std::max<uint64_t>(n, 65536), left_ + n));
		get(buf_.data(), buf_.size());
	}

	int fd_;
	uint64_t left_;
	std::vector<char> buf_;
	size_t pos_ = 0;
	uint32_t crc_ = 0;
};

/* Parse header and payload; OUT may be null (verify: skip tensor data). */
void read_body(In &in, uint64_t file_bytes, State *out, uint64_t *step)
{
	char magic[8];
	in.raw(magic, 8);
	if (memcmp(magic, kMagic, 8))
		throw std::runtime_error("not a Tidal checkpoint (bad magic)");
	uint32_t version = in.pod<uint32_t>();
	if (version != kVersion)
		throw std::runtime_error("format version " +
					 std::to_string(version) +
					 ", this build reads " +
					 std::to_string(kVersion));
	if (in.pod<uint32_t>() != kHeaderBytes)
		throw std::runtime_error("bad header size (corrupt)");
	uint64_t payload = in.pod<uint64_t>();
	if (payload != file_bytes - kHeaderBytes - kTrailerBytes)
		throw std::runtime_error(
			"truncated: header says " + std::to_string(payload) +
			" payload bytes, the file holds " +
			std::to_string(file_bytes - kHeaderBytes -
				       kTrailerBytes));
	in.pod<uint64_t>();
	State s;
	s.step = in.pod<uint64_t>();
	s.samples = in.pod<uint64_t>();
	s.global_batch = in.pod<uint64_t>();
	s.world = in.pod<uint32_t>();
	s.lr = in.pod<double>();
	s.model = in.str();
	uint32_t nrng = in.pod<uint32_t>();
	if (8ull * nrng > in.left())
		throw std::runtime_error("RNG state size exceeds the file (corrupt)");
	s.rng.resize(nrng);
	in.raw(s.rng.data(), 8ull * nrng);
	s.meta_json = in.str();
	uint32_t ntensors = in.pod<uint32_t>();
	for (uint32_t i = 0; i < ntensors; i++) {
		std::string name = in.str();
		uint64_t n = in.pod<uint64_t>();
		if (n > in.left() / 4)
			throw std::runtime_error("tensor '" + name + "': " +
						 std::to_string(n) +
						 " floats exceed the file (corrupt)");
		if (!out) {
			in.skip(4 * n);
			continue;
		}
		std::vector<float> v(n);
		in.raw(v.data(), 4 * n);
		s.tensors.emplace_back(std::move(name), std::move(v));
	}
	if (in.left() != 0)
		throw std::runtime_error(std::to_string(in.left()) +
					 " stray bytes after the tensors (corrupt)");
	if (step)
		*step = s.step;
	if (out)
		*out = std::move(s);
}

bool read_file(const std::string &path, State *out, uint64_t *step,
	       std::string &err)
{
	int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = path + ": " + errno_text(errno);
		return false;
	}
	try {
		struct stat st;
		if (::fstat(fd, &st) < 0)
			throw std::runtime_error(std::string("fstat: ") +
						 errno_text(errno));
		uint64_t size = (uint64_t)st.st_size;
		if (size < kHeaderBytes + kTrailerBytes)
			throw std::runtime_error(
				"truncated: " + std::to_string(size) +
				" bytes, shorter than header and trailer");
		In in(fd, size - kTrailerBytes);
		State s;
		read_body(in, size, out ? &s : nullptr, step);
		char end[8];
		uint64_t stored = 0;
		in.tail(end, 8);
		in.tail(&stored, 8);
		if (memcmp(end, kEndMagic, 8))
			throw std::runtime_error("bad trailer (truncated or corrupt)");
		if (stored != in.crc()) {
			char m[96];
			snprintf(m, sizeof m,
				 "checksum mismatch (stored %08" PRIx64
				 ", computed %08x): corrupt",
				 stored, in.crc());
			throw std::runtime_error(m);
		}
		if (out)
			*out = std::move(s);
	} catch (const std::exception &e) {
		::close(fd);
		err = path + ": " + e.what();
		return false;
	}
	::close(fd);
	return true;
}

} /* namespace */

uint32_t crc32c(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = (const uint8_t *)data;
	crc = ~crc;
#if defined(__x86_64__)
	static const bool hw = __builtin_cpu_supports("sse4.2");
	if (hw)
		return ~crc_hw(crc, p, len);
#endif
	return ~crc_soft(crc, p, len);
}

std::string file_name(const std::string &dir, uint64_t step,
		      const char *suffix)
{
	char name[48];
	snprintf(name, sizeof name, "ckpt-%012" PRIu64 "%s", step, suffix);
	return dir + "/" + name;
}

std::string write(const std::string &dir, const State &s)
{
	make_dirs(dir);
	std::string tck = file_name(dir, s.step, ".tck");
	std::string tmp = dir + "/.ckpt-tmp-" + std::to_string(::getpid()) +
			  ".tck";
	/* A marker left from an older run at the same step must not vouch
	 * for the new data while it is being replaced. */
	::unlink(file_name(dir, s.step, ".done").c_str());
	uint32_t crc = write_tmp(tmp, s);
	if (::rename(tmp.c_str(), tck.c_str()) < 0) {
		int e = errno;
		::unlink(tmp.c_str());
		fail(tck, "rename from " + tmp, e);
	}
	fsync_path(dir, O_RDONLY | O_DIRECTORY);
	write_marker(file_name(dir, s.step, ".done"), s, crc);
	fsync_path(dir, O_RDONLY | O_DIRECTORY);
	prune(dir);
	return tck;
}

bool read(const std::string &path, State &out, std::string &err)
{
	return read_file(path, &out, nullptr, err);
}

bool verify(const std::string &path, uint64_t *step, std::string &err)
{
	return read_file(path, nullptr, step, err);
}

bool pin(const std::string &dir, uint64_t step, std::string &err)
{
	struct stat st;
	if (::stat(dir.c_str(), &st) || !S_ISDIR(st.st_mode))
		return true; /* no checkpoint here to keep */
	std::string keep = pin_name(dir, step);
	int fd = ::open(keep.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
			0644);
	if (fd < 0) {
		err = keep + ": cannot pin the checkpoint: " + errno_text(errno);
		return false;
	}
	::close(fd);
	return true;
}

void unpin(const std::string &dir, uint64_t step)
{
	if (::unlink(pin_name(dir, step).c_str()) == 0)
		prune(dir); /* the next write may never come: the job ended */
}

std::vector<uint64_t> pins(const std::string &dir)
{
	return list_named(dir, "keep-", "");
}

std::optional<Found> newest_marked(const std::string &dir)
{
	for (uint64_t step : list_steps(dir))
		if (exists(file_name(dir, step, ".done")))
			return Found{file_name(dir, step, ".tck"), step};
	return std::nullopt;
}

std::optional<Found> newest(const std::string &dir,
			    std::vector<std::string> &warnings)
{
	for (uint64_t step : list_steps(dir)) {
		std::string tck = file_name(dir, step, ".tck");
		std::string err;
		uint64_t got = 0;
		if (!exists(file_name(dir, step, ".done")))
			err = tck + ": incomplete (no .done marker)";
		else if (!verify(tck, &got, err))
			;
		else if (got != step)
			err = tck + ": holds step " + std::to_string(got) +
			      ", not the step its name says";
		else
			return Found{tck, step};
		warnings.push_back(err + "; using the previous one");
	}
	return std::nullopt;
}

} /* namespace tidal::ckpt */
