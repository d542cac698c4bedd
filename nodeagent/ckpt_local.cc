/*
 * ckpt_local.cc - checkpoint files on this node (see ckpt_local.h).
 *
 * The format and its checks belong to trainer/checkpoint.{h,cc}: this file
 * only adds what the agent does on top (free space, receiving).
 *
 * Copyright (C) 2026 The Tidal authors.  GPL-2.0-or-later.
 */
#include "nodeagent/ckpt_local.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "node/checkpoint.h"

namespace tidal::agent
{

std::string job_dir(const std::string &root, uint64_t job)
{
	return root + "/" + std::to_string(job);
}

std::string ckpt_file(const std::string &root, uint64_t job, uint64_t step,
		      const char *suffix)
{
	char name[64];
	std::snprintf(name, sizeof(name), "/ckpt-%012llu%s",
		      (unsigned long long)step, suffix);
	return job_dir(root, job) + name;
}

bool verify_ckpt(const std::string &path, uint64_t *step, std::string *err)
{
	return ckpt::verify(path, step, *err);
}

std::optional<LocalCkpt> newest_local(const std::string &root, uint64_t job,
				      std::vector<std::string> &warnings)
{
	if (auto f = ckpt::newest(job_dir(root, job), warnings))
		return LocalCkpt{ f->path, f->step };
	return std::nullopt;
}

uint64_t free_bytes(const std::string &root)
{
	struct statvfs v;
	if (statvfs(root.c_str(), &v))
		return 0;
	return (uint64_t)v.f_bavail * v.f_frsize;
}

static void fsync_dir(const std::string &dir)
{
	int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
}

/* Copy BYTES from R into FD; RET false with *ERR. */
static bool copy_body(wire::Reader &r, int fd, uint64_t bytes,
		      const std::string &tmp, std::string *err)
{
	std::vector<char> buf(1 << 20);
	uint64_t left = bytes;
	while (left > 0) {
		ssize_t n = r.some(buf.data(),
				   std::min<uint64_t>(left, buf.size()), 30000);
		if (n <= 0) {
			*err = "peer closed after " +
			       std::to_string(bytes - left) + " of " +
			       std::to_string(bytes) + " bytes";
			return false;
		}
		if (!wire::write_all(fd, buf.data(), (size_t)n)) {
			*err = tmp + ": write: " + std::strerror(errno);
			return false;
		}
		left -= (uint64_t)n;
	}
	if (fsync(fd)) {
		*err = tmp + ": fsync: " + std::strerror(errno);
		return false;
	}
	return true;
}

/* Give what FD (or PATH, when FD < 0) names to OWNER, unless OWNER is
 * -1: the job's trainer, running as its user, must be able to rotate
 * and replace what tidald fetched for it.  RET false with *ERR. */
static bool give_to(uid_t owner, int fd, const std::string &path,
		    std::string *err)
{
	if (owner == (uid_t)-1)
		return true;
	int rc = fd >= 0 ? fchown(fd, owner, (gid_t)-1)
			 : chown(path.c_str(), owner, (gid_t)-1);
	if (rc == 0)
		return true;
	*err = path + ": cannot give it to uid " + std::to_string(owner) +
	       ", the job's user: " + std::strerror(errno);
	return false;
}

static bool write_marker(const std::string &path, uint64_t step,
			 const std::string &from, uid_t owner, std::string *err)
{
	std::string text = "TIDALCK1 step=" + std::to_string(step) +
			   " fetched-from=" + from + "\n";
	int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		      0644);
	bool ok = fd >= 0 && wire::write_all(fd, text) && fsync(fd) == 0;
	if (!ok)
		*err = path + ": " + std::strerror(errno);
	if (fd >= 0) {
		ok = ok && give_to(owner, fd, path, err);
		close(fd);
	}
	return ok;
}

bool receive_ckpt(const std::string &root, uint64_t job, uint64_t step,
		  uint64_t bytes, wire::Reader &r, uid_t owner,
		  const std::string &from, std::string *path, std::string *err)
{
	std::string dir = job_dir(root, job);
	if (mkdir(dir.c_str(), 0755) && errno != EEXIST) {
		*err = dir + ": " + std::strerror(errno);
		return false;
	}
	if (!give_to(owner, -1, dir, err))
		return false;
	/* The temp name never matches ckpt-*.tck: a reader never sees it. */
	char name[96];
	std::snprintf(name, sizeof(name), "/.fetch-%012llu.%d.part",
		      (unsigned long long)step, (int)getpid());
	std::string tmp = dir + name, dst = ckpt_file(root, job, step, ".tck");
	int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		      0644);
	if (fd < 0) {
		*err = tmp + ": " + std::strerror(errno);
		return false;
	}
	bool ok = copy_body(r, fd, bytes, tmp, err) &&
		  give_to(owner, fd, tmp, err);
	close(fd);
	uint64_t got = 0;
	std::string why;
	if (ok && !verify_ckpt(tmp, &got, &why)) {
		*err = "checkpoint from " + from +
		       " is corrupt, discarded: " + why;
		ok = false;
	}
	if (ok && got != step && got != 0) {
		*err = "checkpoint from " + from + " holds step " +
		       std::to_string(got) + ", not " + std::to_string(step) +
		       "; discarded";
		ok = false;
	}
	if (ok && rename(tmp.c_str(), dst.c_str())) {
		*err = dst + ": rename: " + std::strerror(errno);
		ok = false;
	}
	if (!ok) {
		unlink(tmp.c_str());
		return false;
	}
	fsync_dir(dir);
	if (!write_marker(ckpt_file(root, job, step, ".done"), step, from,
			  owner, err))
		return false;
	fsync_dir(dir);
	*path = dst;
	return true;
}

} /* namespace tidal::agent */
