/* keeper.c - ptt-record --streams -m: each part's state in force, appended at its end (keeper.h). */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../formats/inforce.h"
#include "../../formats/ptt_trace.h"
#include "keeper.h"
#include "rotate.h"

struct keeper {
	char *output;         /* FILE: the parts are FILE.0001, ... (rotate_part_name) */
	uint32_t moved;       /* futex word, the drain's: the writer is past the parts up to it */
	uint32_t last;        /* the drain's: the last part, once the run is over (0 before) */
	uint32_t kept;        /* the keeper's: the parts read, UINT32_MAX once it stopped */
	pthread_t thread;
	/* the keeper thread's own until keeper_finish has joined it */
	struct ptt_inforce *inf;
	uint64_t ticks;       /* the latest record read: what a head is stamped with */
	const char *why;      /* why it stopped early, about part why_part */
	uint32_t why_part;
	char why_buf[160];
	uint64_t cpu_ns;
};

static void stop_why(struct keeper *k, uint32_t part, const char *what, int err)
{
	if (k->why)
		return;
	snprintf(k->why_buf, sizeof k->why_buf, "%s%s%s", what, err ? ": " : "", err ? ptt_strerror(err) : "");
	k->why = k->why_buf;
	k->why_part = part;
}

/* Wait until the writer is past part: 1, or 0 when the run ended before it. */
static int wait_moved(struct keeper *k, uint32_t part)
{
	for (;;) {
		uint32_t seen = __atomic_load_n(&k->moved, __ATOMIC_ACQUIRE);
		if (seen >= part)
			return 1;
		uint32_t last = __atomic_load_n(&k->last, __ATOMIC_ACQUIRE);
		if (last && last < part)
			return 0;
		struct timespec ts = { 1, 0 };
		syscall(SYS_futex, &k->moved, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
	}
}

static int put(void *ctx, const uint32_t *rec, uint32_t n)
{
	struct ptt_writer *w = ctx;
	return ptt_writer_snapshot_add(w, PTT_SNAP_CONTEXT, 0, rec, n);
}

/*
 * The earliest record of part (the least first timestamp of its EVENTS blocks, by their headers):
 * its head is stamped no later, so that the part read alone goes forward in time (a stream's
 * records in it may be older than another's at the end of the part before).  UINT64_MAX: none.
 */
static uint64_t part_first_ticks(int fd)
{
	uint64_t first = UINT64_MAX, at = sizeof(struct ptt_file_header);
	struct ptt_block_header h;
	while (pread(fd, &h, sizeof h, (off_t)at) == (ssize_t)sizeof h && h.magic == PTT_BLOCK_MAGIC) {
		if (h.kind == PTT_BLOCK_EVENTS && h.count && !(h.flags & PTT_BLOCK_SNAPSHOT) && h.first_ticks < first)
			first = h.first_ticks;
		at += sizeof h + h.payload_len;
	}
	return first;
}

/* The state in force now, at the end of part: a snapshot block and its index (ptt_writer_head_end).  0 or an error. */
static int append_head(struct keeper *k, uint32_t part)
{
	char name[PATH_MAX + 16];
	rotate_part_name(k->output, part, name, sizeof name);
	int fd = open(name, O_RDWR | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	char magic[8];
	int rc = fstat(fd, &st) != 0 ? -errno : !S_ISREG(st.st_mode) ? -EINVAL : 0;
	if (!rc && (pread(fd, magic, sizeof magic, 0) != (ssize_t)sizeof magic || memcmp(magic, PTT_FILE_MAGIC, 8) != 0))
		rc = PTT_E_BADMAGIC; /* no longer the part written: left alone */
	off_t end = rc ? -1 : lseek(fd, 0, SEEK_END);
	if (!rc && end < 0)
		rc = -errno;
	struct ptt_writer *w = NULL;
	uint64_t first = rc ? 0 : part_first_ticks(fd), ticks = first < k->ticks ? first : k->ticks;
	if (!rc)
		rc = ptt_writer_open_end(&w, fd, (uint64_t)end);
	if (!rc)
		rc = ptt_writer_head_begin(w, ticks, k->ticks);
	if (!rc) {
		long n = ptt_inforce_tell(k->inf, ticks, put, w);
		rc = n < 0 ? (int)n : ptt_writer_head_end(w);
	}
	int crc = ptt_writer_close(w);
	if (!rc)
		rc = crc;
	if (close(fd) != 0 && !rc)
		rc = -errno;
	return rc;
}

/*
 * Read part as any reader of it alone does, its own head (the first "head K" records: this state
 * already) left out, every other record seen.  0, or an error (said).
 */
static int read_part(struct keeper *k, uint32_t part, struct ptt_event *ev)
{
	char name[PATH_MAX + 16];
	rotate_part_name(k->output, part, name, sizeof name);
	struct ptt_reader *r = NULL;
	int fd = open(name, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	int rc = fd < 0 ? -errno : ptt_reader_open(&r, fd, name);
	uint64_t head = UINT64_MAX; /* known once the META blocks are read: at the first record */
	while (!rc && (rc = ptt_reader_next(r, ev)) != 0) {
		if (rc == 1) {
			if (head == UINT64_MAX) {
				const char *h = ptt_reader_meta(r, "head");
				head = h ? strtoull(h, NULL, 10) : 0;
			}
			if (ev->pos >= head) {
				ptt_inforce_see(k->inf, ev->words, ev->pos);
				k->ticks = ev->ticks > k->ticks ? ev->ticks : k->ticks;
			}
		} else if (rc == PTT_E_NOMEM) {
			break;
		}
		rc = rc == PTT_E_NOMEM ? rc : 0; /* damage: read on, as any reader (a reader of the part says it) */
	}
	ptt_reader_close(r);
	if (fd >= 0)
		close(fd);
	if (rc)
		stop_why(k, part + 1, "its state in force could not be written: the part before cannot be read back", rc);
	return rc;
}

static void *keeper_main(void *arg)
{
	struct keeper *k = arg;
	/* only processor time nobody else wants: the program and the drain never wait for it */
	struct sched_param idle = { 0 };
	if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle) != 0)
		setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	pthread_setname_np(pthread_self(), "ptt-keeper");
	struct ptt_event *ev = malloc(sizeof *ev);
	if (!ev || !k->inf)
		stop_why(k, 2, "its state in force could not be written at its end", PTT_E_NOMEM);
	/* part p is read once the writer is past it, and part p + 1 completed once past that */
	for (uint32_t p = 1; ev && k->inf && wait_moved(k, p) && __atomic_load_n(&k->last, __ATOMIC_ACQUIRE) != p; p++) {
		if (read_part(k, p, ev) != 0)
			break;
		__atomic_store_n(&k->kept, p, __ATOMIC_RELEASE); /* -f may remove it now */
		if (!wait_moved(k, p + 1))
			break;
		int rc = append_head(k, p + 1);
		if (rc) {
			stop_why(k, p + 1, "its state in force could not be written at its end", rc);
			break;
		}
	}
	free(ev);
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
		k->cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	__atomic_store_n(&k->kept, UINT32_MAX, __ATOMIC_RELEASE);
	return NULL;
}

struct keeper *keeper_start(const char *output)
{
	struct keeper *k = calloc(1, sizeof *k);
	if (!k)
		return NULL;
	k->output = strdup(output);
	k->inf = ptt_inforce_new();
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the signals are the main thread's (its doze wakes on SIGCHLD) */
	int made = k->output && pthread_create(&k->thread, NULL, keeper_main, k) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!made) {
		free(k->output);
		ptt_inforce_free(k->inf);
		free(k);
		return NULL;
	}
	return k;
}

void keeper_moved(struct keeper *k, uint32_t part)
{
	if (!k || __atomic_load_n(&k->moved, __ATOMIC_RELAXED) >= part)
		return;
	__atomic_store_n(&k->moved, part, __ATOMIC_RELEASE);
	syscall(SYS_futex, &k->moved, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

const uint32_t *keeper_kept(const struct keeper *k) { return k ? &k->kept : NULL; }

void keeper_finish(struct keeper *k, uint32_t last, const char **why, uint32_t *part, uint64_t *cpu_ns,
		   uint64_t *wait_ns)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* the program is gone: its idle priority spares nobody now, and the run's end waits for it
	 * (on a machine kept busy it got no processor time while the program ran) */
	struct sched_param normal = { 0 };
	pthread_setschedparam(k->thread, SCHED_OTHER, &normal);
	__atomic_store_n(&k->last, last ? last : 1, __ATOMIC_RELEASE);
	keeper_moved(k, last ? last : 1);
	pthread_join(k->thread, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*wait_ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec;
	*why = k->why;
	*part = k->why_part;
	*cpu_ns = k->cpu_ns;
	k->thread = 0;
}

void keeper_free(struct keeper *k)
{
	if (!k)
		return;
	if (k->thread) { /* never finished (the program could not be run): told there is nothing to keep */
		__atomic_store_n(&k->last, 1, __ATOMIC_RELEASE);
		keeper_moved(k, 1);
		pthread_join(k->thread, NULL);
	}
	ptt_inforce_free(k->inf);
	free(k->output);
	free(k);
}
