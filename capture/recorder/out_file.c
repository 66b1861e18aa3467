/* out_file.c - ptt-record's output files: nothing truncated early, nothing removed that is not the run's (out_file.h). */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "out_file.h"

/* A FIFO opened without waiting for its reader: back to blocking writes (the writer counts on them). */
static int open_write(const char *name, int flags, int wait_reader)
{
	int fd = open(name, flags | O_WRONLY | O_CLOEXEC | (wait_reader ? 0 : O_NONBLOCK), 0644);
	if (fd >= 0 && !wait_reader) {
		int fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
			int err = errno;
			close(fd);
			errno = err;
			return -1;
		}
	}
	return fd;
}

int out_open(const char *name, int wait_reader, struct out_file *f)
{
	memset(f, 0, sizeof *f);
	for (int tries = 0; tries < 8; tries++) {
		int fd = open_write(name, O_CREAT | O_EXCL, wait_reader);
		struct stat st;
		if (fd >= 0) { /* made here: O_EXCL neither follows a symlink nor opens what is there */
			if (fstat(fd, &st) == 0) {
				f->dev = st.st_dev;
				f->ino = st.st_ino;
				f->ours = f->made = 1;
			}
			return fd;
		}
		if (errno != EEXIST)
			return -1;
		if ((fd = open_write(name, 0, wait_reader)) >= 0 || errno != ENOENT)
			return fd;
		if (lstat(name, &st) == 0 && S_ISLNK(st.st_mode)) /* a symlink to nowhere: make its target, as '>' */
			return open_write(name, O_CREAT, wait_reader);
		/* removed between the two opens: once more */
	}
	errno = EEXIST;
	return -1;
}

int out_claim(int fd, const char *name, struct out_file *f)
{
	struct stat st, at;
	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return 0;
	if (st.st_size > 0 && ftruncate(fd, 0) != 0)
		return -errno;
	if (lstat(name, &at) == 0 && S_ISREG(at.st_mode) && at.st_dev == st.st_dev && at.st_ino == st.st_ino) {
		f->dev = st.st_dev;
		f->ino = st.st_ino;
		f->ours = 1;
	}
	return 0;
}

int out_remove(const char *name, const struct out_file *f)
{
	struct stat st;
	if (!f->ours || lstat(name, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != f->dev || st.st_ino != f->ino)
		return 0;
	return unlink(name) == 0;
}

/* Through a symlink, into a FIFO or a device: the file is theirs, only its content is written. */
static int write_through(const char *name, int (*fill)(int fd, void *ctx), void *ctx)
{
	int fd = open_write(name, 0, 0);
	if (fd < 0)
		return -errno;
	struct out_file f;
	int rc = out_claim(fd, name, &f);
	if (!rc)
		rc = fill(fd, ctx);
	if (close(fd) != 0 && !rc)
		rc = -errno;
	return rc;
}

int out_replace(const char *name, int (*fill)(int fd, void *ctx), void *ctx, char *failed, size_t size)
{
	struct stat st;
	snprintf(failed, size, "%s", name);
	if (lstat(name, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		if (!S_ISREG(st.st_mode))
			return write_through(name, fill, ctx);
	} else if (errno != ENOENT) {
		return -errno;
	}
	char tmp[PATH_MAX + 64];
	int fd = -1;
	for (int i = 0; fd < 0 && i < 100; i++) {
		if (i)
			snprintf(tmp, sizeof tmp, "%s.tmp%d", name, i);
		else
			snprintf(tmp, sizeof tmp, "%s.tmp", name);
		if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		int err = errno;
		snprintf(failed, size, "%s", tmp);
		return -err;
	}
	int rc = fill(fd, ctx);
	if (close(fd) != 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, name) != 0)
		rc = -errno;
	if (rc)
		unlink(tmp); /* made above with O_EXCL: the run's own */
	return rc;
}
