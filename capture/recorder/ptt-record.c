/*
 * ptt-record - run a program with libptt.so preloaded, drain its rings to
 * a trace file while it runs, and exit with the program's status.
 */

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../formats/ptt_trace.h"
#include "drain.h"
#include "flight.h"
#include "keeper.h"
#include "namer.h"
#include "pace.h"
#include "record_opts.h"
#include "../shm.h"

static volatile sig_atomic_t pending_signal, child_done, snapshot_asked, stop_asked;
static uint32_t *wake_word; /* the shared futex the main loop sleeps on */

/* The program ended: wake the main loop now rather than at its next pass.
 * The flag covers a SIGCHLD that comes before the loop reads the futex word,
 * the increment one that comes between that read and the wait. */
static void on_sigchld(int sig)
{
	(void)sig;
	child_done = 1;
	if (wake_word) {
		__atomic_fetch_add(wake_word, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, wake_word, FUTEX_WAKE, 1, NULL, NULL, 0);
	}
}

/* Forward what was sent to us alone; a terminal's ^C already reached the
 * whole foreground group, the program included. */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig == SIGUSR1) /* --flight: a snapshot, nothing for the program */
		snapshot_asked = 1;
	else if (si->si_code <= 0)
		pending_signal = sig;
	else
		stop_asked = 1; /* matters once the program is gone and its daemons live on */
}

#define PTT_DAEMONS_SHOWN 8

/*
 * ptt-record is the programs' subreaper (PR_SET_CHILD_SUBREAPER, set before
 * the fork): a process the program leaves behind (a daemon that forked away,
 * its parent gone) becomes ptt-record's child, so that waitpid tells for
 * sure whether any is left, with no race against a process that has not
 * recorded anything yet.  Reap every child that ended: the program (its
 * status in *status, *gone set) and the processes it left.  Returns 1 when
 * no child is left at all.
 */
static int reap(pid_t child, int *status, int *gone)
{
	int st;
	pid_t p;
	while ((p = waitpid(-1, &st, WNOHANG)) > 0)
		if (p == child) {
			*status = st;
			*gone = 1;
		}
	return p < 0 && errno == ECHILD;
}

/* Our children now (the processes the program left): up to max pids, and how many. */
static unsigned children(pid_t *pids, unsigned max)
{
	unsigned n = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t me = getpid();
	while (d && (e = readdir(d))) {
		char path[300], buf[512];
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t len = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
		if (fd >= 0)
			close(fd);
		if (len <= 0)
			continue;
		buf[len] = 0;
		char *c = strrchr(buf, ')'); /* "pid (comm) S ppid ...": after the last ')' */
		int ppid = 0;
		char state = 0;
		if (!c || sscanf(c + 1, " %c %d", &state, &ppid) != 2 || ppid != me || state == 'Z')
			continue;
		if (n < max)
			pids[n] = (pid_t)atoi(e->d_name);
		n++;
	}
	if (d)
		closedir(d);
	return n;
}

/* "12, 13 and 2 more" */
static void pid_list(char *out, size_t size, const pid_t *pids, unsigned n)
{
	size_t at = 0;
	out[0] = 0;
	for (unsigned k = 0; k < n && k < PTT_DAEMONS_SHOWN && at < size; k++)
		at += (size_t)snprintf(out + at, size - at, "%s%d", k ? ", " : "", (int)pids[k]);
	if (n > PTT_DAEMONS_SHOWN && at < size)
		snprintf(out + at, size - at, " and %u more", n - PTT_DAEMONS_SHOWN);
}

/*
 * The program ptt-record started has exited (none_left: and no process it
 * left lives): decide whether to go on.  Recording goes on while a process
 * it left lives (a daemon that forked away); a signal sent to ptt-record
 * goes to those processes, a terminal's (they are in a session of their
 * own) stops the recording and leaves them running.  Returns 1 when
 * recording is over.
 */
static int after_program(const struct record_opts *o, int none_left, const char *prog, int *told)
{
	if (none_left)
		return 1;
	pid_t pids[PTT_DAEMONS_SHOWN];
	unsigned n = 0;
	if (pending_signal || stop_asked || !*told)
		n = children(pids, PTT_DAEMONS_SHOWN);
	char list[160];
	pid_list(list, sizeof list, pids, n);
	if (pending_signal) {
		for (unsigned k = 0; k < n && k < PTT_DAEMONS_SHOWN; k++)
			kill(pids[k], pending_signal);
		pending_signal = 0;
	}
	if (stop_asked) {
		fprintf(stderr, "ptt-record: %s: stopped; %u process%s it left run%s on untraced (pid %s)\n",
			prog, n, n == 1 ? "" : "es", n == 1 ? "s" : "", list);
		return 1;
	}
	if (n && !*told && !o->quiet)
		fprintf(stderr, "ptt-record: %s exited; recording goes on until the %s it left (pid %s) exit%s\n",
			prog, n == 1 ? "process" : "processes", list, n == 1 ? "s" : "");
	*told |= n != 0;
	return 0;
}

static uint64_t mono_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Ticks per second of the TSC, against CLOCK_MONOTONIC_RAW over at least
 * 10 ms since (m0, t0).  The program is started in between, so the
 * calibration overlaps its start-up instead of delaying it (its first events
 * wait in the rings until the header is written).
 */
static uint64_t calibrate_tsc(uint64_t m0, uint64_t t0)
{
	uint64_t m1;
	while ((m1 = mono_ns(CLOCK_MONOTONIC_RAW)) - m0 < 10000000u) {
		struct timespec ts = { 0, (long)(10000000u - (m1 - m0)) };
		nanosleep(&ts, NULL); /* EINTR (SIGCHLD): the loop sleeps the rest */
	}
	uint64_t t1 = ptt_rdtsc();
	m1 = mono_ns(CLOCK_MONOTONIC_RAW);
	if (m1 <= m0 || t1 <= t0)
		return 0;
	return (uint64_t)((unsigned __int128)(t1 - t0) * 1000000000u / (m1 - m0));
}

static int use_tsc(void)
{
#if PTT_HAVE_TSC
	if (getenv("PTT_CLOCK") && strcmp(getenv("PTT_CLOCK"), "monotonic") == 0)
		return 0;
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	int ok = 0;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "flags", 5) == 0) {
			ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
			break;
		}
	if (f)
		fclose(f);
	return ok;
#else
	return 0;
#endif
}

/*
 * The control page, the descriptors of every ring up to the cap, and the
 * first segment of rings, in a memfd sized for the cap (sparse: memory is
 * used only where written); the rings' users map further segments as they
 * need them (shm.h).
 */
static struct ptt_shm *make_shm(const struct record_opts *o, int *fdp)
{
	uint64_t ring_off;
	uint32_t words = (uint32_t)(o->ring_bytes / 4);
	uint32_t seg = o->nrings < PTT_SEG_RINGS ? o->nrings : PTT_SEG_RINGS;
	uint64_t size = ptt_shm_bytes(o->nrings, seg, words, &ring_off);
	uint64_t file = ring_off + (uint64_t)(o->nrings + seg - 1) / seg * seg * words * 4;
	int fd = memfd_create("ptt-ring", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)file) != 0) {
		fprintf(stderr, "ptt-record: cannot create the shared ring (%" PRIu64 " bytes): %s\n", file, strerror(errno));
		return NULL;
	}
	struct ptt_shm *s = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (s == MAP_FAILED) {
		fprintf(stderr, "ptt-record: cannot map the shared ring: %s\n", strerror(errno));
		return NULL;
	}
	s->magic = PTT_SHM_MAGIC;
	s->version = PTT_SHM_VERSION;
	s->size = size;
	s->nrings = seg;
	s->max_rings = o->nrings;
	s->seg_rings = seg;
	s->ring_words = words;
	s->ring_offset = ring_off;
	s->flags = (o->discard ? PTT_SHM_DISCARD : 0) | (o->flight ? PTT_SHM_FLIGHT : 0);
	s->level = (uint32_t)o->level;
	s->class_mask = o->class_mask;
	s->stacks = (uint32_t)o->stacks;
	s->recorder_pid = (uint32_t)getpid();
	ptt_shm_fd = fd;
	*fdp = fd;
	return s;
}

/* The file execvp will run for cmd (a PATH search when it has no '/'), its links resolved as
 * /proc/PID/exe shows it; 0 when none is found (exec then fails and says why). */
static int program_path(const char *cmd, char *out)
{
	if (strchr(cmd, '/'))
		return realpath(cmd, out) != NULL;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		char try[PATH_MAX];
		if (snprintf(try, sizeof try, "%.*s/%s", (int)len, len ? path : ".", cmd) < (int)sizeof try &&
		    access(try, X_OK) == 0 && realpath(try, out))
			return 1;
		path += len + (path[len] == ':');
	}
	return 0;
}

/* The child: preload the runtime, hand over the ring, exec. */
static void run_child(const struct record_opts *o, int shm_fd, int report_fd, char **argv)
{
	char buf[PATH_MAX + 4096];
	int fd = fcntl(shm_fd, F_DUPFD, 990); /* a high descriptor, without close-on-exec */
	if (fd < 0)
		fd = dup(shm_fd);
	snprintf(buf, sizeof buf, "%d", fd);
	setenv(PTT_SHM_ENV, buf, 1);
	const char *old = getenv("LD_PRELOAD");
	if (old && *old)
		snprintf(buf, sizeof buf, "%s:%s", old, o->libptt);
	else
		snprintf(buf, sizeof buf, "%s", o->libptt);
	setenv("LD_PRELOAD", buf, 1);
	if (strcmp(o->output, "-") == 0)
		dup2(2, 1); /* stdout carries the trace: the program's output goes to stderr */
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	execvp(argv[0], argv);
	int err = errno;
	ssize_t rc = write(report_fd, &err, sizeof err);
	(void)rc;
	_exit(err == ENOENT ? 127 : 126);
}

/* Room for header_lines: the type lines and the rest, and the command line quoted whole (a byte takes
 * at most 4 quoted, \xNN), however long. */
static size_t header_size(char **argv)
{
	size_t size = 256 * 1024;
	for (int i = 0; argv[i]; i++)
		size += 4 * strlen(argv[i]) + 4;
	return size;
}

static void header_lines(char *buf, size_t size, const struct record_opts *o, const struct ptt_shm *s,
			 uint64_t hz, uint64_t realtime, pid_t child, char **argv)
{
	size_t n = 0;
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	n += (size_t)snprintf(buf + n, size - n,
		"clock %s\nclock_hz %" PRIu64 "\nstart_ticks %" PRIu64 "\nrealtime_ns %" PRIu64 "\n"
		"pid %d\nhostname %s\nrecorder ptt-record %s\nring_bytes %" PRIu64 "\nmode %s\nlevel %d\nclasses %s\ncmdline",
		s->use_tsc ? "tsc" : "monotonic", hz, s->start_ticks, realtime, (int)child, host, PTT_VERSION,
		o->ring_bytes, o->flight ? "flight" : o->discard ? "discard" : "lossless", o->level, o->classes);

	for (int i = 0; argv[i] && n + 1 < size; i++) { /* whole: the buffer is sized for it (header_size) */
		buf[n++] = ' ';
		size_t q = ptt_text_quote(argv[i], buf + n, size - n);
		n = n + q < size ? n + q : size - 1;
	}
	n += (size_t)snprintf(buf + n, size - n, "\n");
	if (o->flight) /* a flight recording: each thread's last ring_bytes of events, starting mid-run */
		n += (size_t)snprintf(buf + n, size - n, "flight %" PRIu64 "\n", o->ring_bytes);
	for (unsigned id = 0; id < PTT_EV_BUILTIN_COUNT && n < size - 512; id++) {
		n += ptt_text_format_type(ptt_builtin_type(id), buf + n, size - n);
		buf[n++] = '\n';
		buf[n] = 0;
	}
}

/* The header and every type line so far: repeated at the start of each rotated file. */
static char *meta_all;
static size_t meta_len, meta_cap;

static int keep_meta(const char *text, size_t len)
{
	if (meta_len + len + 1 > meta_cap) {
		size_t cap = (meta_len + len + 1) * 2;
		char *n = realloc(meta_all, cap);
		if (!n)
			return PTT_E_NOMEM;
		meta_all = n;
		meta_cap = cap;
	}
	memcpy(meta_all + meta_len, text, len);
	meta_len += len;
	meta_all[meta_len] = 0;
	return 0;
}

/* Announce user types registered since the last call, before their events. */
static int sync_user_types(struct ptt_shm *s, struct ptt_writer *w, uint32_t *seen)
{
	uint32_t n = __atomic_load_n(&s->ntypes, __ATOMIC_ACQUIRE);
	if (n > PTT_MAX_USER_TYPES)
		n = PTT_MAX_USER_TYPES;
	char buf[512 * 8];
	size_t len = 0;
	while (*seen < n && __atomic_load_n(&s->types[*seen].ready, __ATOMIC_ACQUIRE)) {
		const struct ptt_shm_type *st = &s->types[*seen];
		struct ptt_type t;
		memset(&t, 0, sizeof t);
		t.id = st->id;
		t.cls = PTT_CLASS_USER;
		t.level = st->level;
		t.source = PTT_SRC_PROGRAM;
		snprintf(t.name, sizeof t.name, "%.47s", st->name);
		if (ptt_type_parse_args(&t, st->args) == 0) {
			len += ptt_text_format_type(&t, buf + len, sizeof buf - len);
			buf[len++] = '\n';
		}
		(*seen)++;
		if (len > sizeof buf - 512)
			break;
	}
	if (len && keep_meta(buf, len))
		return PTT_E_NOMEM;
	return len ? ptt_writer_meta(w, buf, len) : 0;
}

/* Called before each record is written.  A user type registered after this
 * pass's sync_user_types may already have events in a ring the pass reads
 * (registration happens before the type's first event, whose commit the pass
 * has seen): its line is written first, so no reader meets an event before
 * its type.  Then the namer, which names objects before their first use. */
struct before_record {
	struct ptt_shm *shm;
	uint32_t *types_seen;
	struct namer *namer;
	struct keeper *keeper; /* -m: the names a later file repeats at its head */
	uint64_t last_ticks;   /* of the last record written (-m): the head of the next file is stamped with it */
};

static __attribute__((noinline)) int announce_types(struct before_record *b, unsigned id, struct ptt_writer *w)
{
	while (id - PTT_USER_ID_BASE >= *b->types_seen) {
		uint32_t had = *b->types_seen;
		int rc = sync_user_types(b->shm, w, b->types_seen); /* a few types per call */
		if (rc)
			return rc;
		if (*b->types_seen == had)
			break; /* not announced by the program: the reader reports it */
	}
	return 0;
}

/* Once per record written: the common case is a compare and a tail call. */
static int before_record(void *ctx, const uint32_t *rec, struct ptt_writer *w)
{
	struct before_record *b = ctx;
	unsigned id = ptt_rec_id(rec[0]);
	if (__builtin_expect(id >= PTT_USER_ID_BASE && id - PTT_USER_ID_BASE >= *b->types_seen, 0)) {
		int rc = announce_types(b, id, w);
		if (rc)
			return rc;
	}
	if (b->keeper) {
		keeper_see(b->keeper, rec);
		b->last_ticks = (uint64_t)rec[2] << 32 | rec[1];
	}
	return b->namer ? namer_before(b->namer, rec, w) : 0;
}

static void part_name(char *buf, size_t size, const char *output, uint32_t part)
{
	snprintf(buf, size, "%s.%04u", output, part);
}

/* bytes written to the files before the current one (-m) */
static uint64_t rotated_bytes;
/* events and lost events written to the files before each part began: part p's are [p - 1] (-m) */
static uint64_t *part_events, *part_lost;
static uint32_t part_cap;

static void note_part_start(uint32_t part, uint64_t events, uint64_t lost)
{
	if (part > part_cap) {
		uint32_t cap = part * 2 + 8;
		uint64_t *e = realloc(part_events, cap * sizeof *e), *l = e ? realloc(part_lost, cap * sizeof *l) : NULL;
		if (e)
			part_events = e;
		if (!l)
			return;
		part_lost = l;
		part_cap = cap;
	}
	part_events[part - 1] = events;
	part_lost[part - 1] = lost;
}

/*
 * -m: continue in the next file once this one is big enough; -f: drop the
 * oldest.  The file ends with a "continued" line (it is not cut short: the
 * next part follows), and the next one begins with the header, its part
 * number, and the names in force (keeper.h) as its first events, "head N"
 * of them, which a reader of the parts in order skips (ptt-trace(5)).
 */
static int maybe_rotate(const struct record_opts *o, struct ptt_writer *w, int *out_fd, uint32_t *part,
			struct before_record *br, const struct drain_stats *st)
{
	if (!o->max_size || ptt_writer_bytes(w) < o->max_size)
		return 0;
	char name[PATH_MAX + 16];
	part_name(name, sizeof name, o->output, *part + 1);
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "ptt-record: %s: %s\n", name, strerror(errno));
		return -errno;
	}
	char line[PATH_MAX + 64];
	snprintf(line, sizeof line, "continued %s\n", name);
	int rc = ptt_writer_meta(w, line, strlen(line)); /* its bytes counted before the switch resets the count */
	if (!rc)
		rc = ptt_writer_sync(w);
	rotated_bytes += ptt_writer_bytes(w);
	if (!rc)
		rc = ptt_writer_switch(w, fd);
	close(*out_fd);
	*out_fd = fd;
	(*part)++;
	note_part_start(*part, st->events, st->lost);
	if (o->max_files && *part > o->max_files) {
		part_name(name, sizeof name, o->output, *part - o->max_files);
		unlink(name);
	}
	if (!rc)
		rc = ptt_writer_meta(w, meta_all, meta_len);
	long head = keeper_write(br->keeper, NULL, 0, NULL, NULL);
	snprintf(line, sizeof line, "part %u\nhead %ld\n", *part, head); /* a file after the first starts mid-run */
	if (!rc)
		rc = ptt_writer_meta(w, line, strlen(line));
	if (!rc && head > 0) {
		long n = keeper_write(br->keeper, w, br->last_ticks, NULL, NULL);
		rc = n < 0 ? (int)n : 0;
	}
	return rc;
}

/*
 * The end-of-run summary on stderr: what was written where, then the most
 * contended locks, which ptt-stat (the one place that accounts for them)
 * computes from the finished files: ptt-stat --brief, found beside us.
 */
static void summary(const struct record_opts *o, const struct drain_stats *st, uint64_t bytes, uint32_t part)
{
	uint32_t first = o->max_files && part > o->max_files ? part - o->max_files + 1 : 1;
	char a[PATH_MAX + 16], b[PATH_MAX + 16];
	if (o->max_size) {
		part_name(a, sizeof a, o->output, first);
		part_name(b, sizeof b, o->output, part);
		fprintf(stderr, "ptt-record: %s%s%s (%u file%s", a, part > first ? " to " : "", part > first ? b : "",
			part - first + 1, part > first ? "s" : "");
		if (first > 1)
			fprintf(stderr, "; %u older removed, as -f asks", first - 1);
		fprintf(stderr, "): ");
	} else {
		fprintf(stderr, "ptt-record: %s: ", strcmp(o->output, "-") ? o->output : "stdout");
	}
	if (first > 1 && first <= part_cap) /* the figures of the kept files, apart from the run's */
		fprintf(stderr, "%" PRIu64 " events and %" PRIu64 " lost in the kept files; in the whole run ",
			st->events - part_events[first - 1], st->lost - part_lost[first - 1]);
	fprintf(stderr, "%" PRIu64 " events, %" PRIu64 " lost, %" PRIu64 " ring waits, %" PRIu64 " bytes written\n",
		st->events, st->lost, st->waits, bytes);
	if (!o->out_is_file || bytes > (512ull << 20)) { /* no ptt-stat to say the limits met: say them here */
		char line[256];
		for (unsigned i = 0; ptt_limits_sentence(&st->limits, i, line, sizeof line); i++)
			fprintf(stderr, "ptt-record: limit: %s\n", line);
	}
	if (!o->out_is_file)
		return; /* gone down a pipe (-o -, a fifo, >(...)): nothing to read back */
	if (bytes > (512ull << 20)) {
		fprintf(stderr, "ptt-record: contended locks: ptt-stat %s%s\n", o->output, o->max_size ? ".*" : "");
		return;
	}
	char tool[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", tool, sizeof tool - 16);
	if (n <= 0)
		return;
	tool[n] = 0;
	char *slash = strrchr(tool, '/');
	if (!slash)
		return;
	snprintf(slash, 16, "/ptt-stat");
	if (access(tool, X_OK) != 0)
		return;
	uint32_t nfiles = part - first + 1;
	char **argv = calloc(nfiles + 4, sizeof *argv);
	char *names = calloc(nfiles, PATH_MAX + 16);
	pid_t pid = argv && names ? fork() : -1;
	if (pid == 0) {
		argv[0] = "ptt-stat";
		argv[1] = "--brief";
		argv[2] = "--top=3";
		for (uint32_t i = 0; i < nfiles; i++) {
			argv[3 + i] = names + (size_t)i * (PATH_MAX + 16);
			if (o->max_size)
				part_name(argv[3 + i], PATH_MAX + 16, o->output, first + i);
			else
				snprintf(argv[3 + i], PATH_MAX + 16, "%s", o->output);
		}
		dup2(2, 1);
		execv(tool, argv);
		_exit(127);
	}
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	free(argv);
	free(names);
}

/* keeper_from_log's look at each naming record: the namer learns modules (and names given). */
static int names_learn(void *nm, const uint32_t *rec)
{
	return nm ? namer_before(nm, rec, NULL) : 0;
}

/*
 * Write a flight recording to fd: the header, the user types, every ring's
 * records in time order, the end.  0, or a negative error of the writer.
 */
static int write_flight(const struct record_opts *o, struct ptt_shm *s, struct flight *f, const struct ptt_clock *clk,
			pid_t child, char **cmd, int fd, uint64_t realtime, int code, uint64_t *events)
{
	struct ptt_writer *w;
	int rc = ptt_writer_open(&w, fd, o->zlevel);
	if (rc)
		return rc;
	ptt_writer_set_compressor(w, o->compressor);
	ptt_writer_set_compact(w, !o->zlevel); /* -z: compressed blocks, plain */
	size_t hsize = header_size(cmd);
	char *hdr = malloc(hsize);
	if (!hdr) {
		ptt_writer_close(w);
		return PTT_E_NOMEM;
	}
	header_lines(hdr, hsize, o, s, clk->hz, realtime, child, cmd);
	rc = ptt_writer_meta(w, hdr, strlen(hdr));
	free(hdr);
	uint32_t types_seen = 0;
	if (!rc)
		rc = sync_user_types(s, w, &types_seen);
	struct namer *nm = namer_new(); /* a fresh one: each file names its objects anew */
	uint64_t torn = 0;
	struct before_record br = { s, &types_seen, nm, NULL, 0 };
	/* the names in force, from the names log (the rings may have turned over since): the namer learns the modules */
	struct keeper *names = keeper_new();
	uint64_t names_lost = names ? keeper_from_log(names, s, names_learn, nm) : 0;
	if (!rc && names_lost) {
		char line[64];
		snprintf(line, sizeof line, "names_lost %" PRIu64 "\n", names_lost);
		rc = ptt_writer_meta(w, line, strlen(line));
	}
	long n = rc ? 0 : flight_write(f, w, clk, code < 0, before_record, &br, names, &torn);
	namer_free(nm);
	keeper_free(names);
	if (n < 0)
		rc = (int)n;
	*events = ptt_writer_events(w);
	char end[512];
	uint64_t end_ticks = s->use_tsc ? ptt_rdtsc() : mono_ns(CLOCK_MONOTONIC);
	int len = snprintf(end, sizeof end, "end_ticks %" PRIu64 "\nevents %" PRIu64 "\nlost 0\ntorn %" PRIu64 "\nprocesses %u\n",
			   end_ticks, *events, torn, s->attached);
	if (code >= 0) /* the end, not a snapshot */
		snprintf(end + len, sizeof end - (size_t)len, "exit_status %d\n", code);
	if (!rc)
		rc = ptt_writer_end(w, end, strlen(end));
	int rc2 = ptt_writer_close(w);
	return rc ? rc : rc2;
}

/* A SIGUSR1 snapshot: FILE.N, complete before it appears under that name. */
static void flight_snapshot(const struct record_opts *o, struct ptt_shm *s, struct flight *f,
			    const struct ptt_clock *clk, pid_t child, char **cmd, uint64_t realtime, unsigned k)
{
	char name[PATH_MAX + 32], tmp[PATH_MAX + 40];
	snprintf(name, sizeof name, "%s.%u", o->output, k);
	snprintf(tmp, sizeof tmp, "%s.tmp", name);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	uint64_t events = 0;
	int rc = fd < 0 ? -errno : write_flight(o, s, f, clk, child, cmd, fd, realtime, -1, &events);
	if (fd >= 0 && close(fd) != 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, name) != 0)
		rc = -errno;
	if (rc) {
		fprintf(stderr, "ptt-record: %s: %s\n", name, rc == -errno ? strerror(errno) : ptt_strerror(rc));
		unlink(tmp);
	} else if (!o->quiet) {
		fprintf(stderr, "ptt-record: %s: flight snapshot, %" PRIu64 " events\n", name, events);
	}
}

/*
 * --flight: nothing is written while the program runs.  The loop forwards
 * signals, takes snapshots on SIGUSR1, gives back the rings of ended
 * threads, and at the end (exit, crash, kill) writes the rings to the
 * output.  Returns the exit code.
 */
static int record_flight(const struct record_opts *o, struct ptt_shm *s, const struct ptt_clock *clk, pid_t child,
			 char **cmd, int out_fd, uint64_t realtime)
{
	struct flight *f = flight_new(s);
	if (!f)
		return 1;
	int status = 0, gone = 0, told = 0;
	unsigned snaps = 0;
	for (;;) {
		if (pending_signal && !gone) {
			kill(child, pending_signal);
			pending_signal = 0;
		}
		child_done = 0;
		int none_left = reap(child, &status, &gone);
		if (gone && after_program(o, none_left, cmd[0], &told))
			break;
		if (snapshot_asked) {
			snapshot_asked = 0;
			flight_snapshot(o, s, f, clk, child, cmd, realtime, ++snaps);
		}
		flight_trim(f);
		__atomic_store_n(&s->heartbeat, s->heartbeat + 1, __ATOMIC_RELEASE);
		struct timespec ts = { 0, 20000000 }; /* a thread waiting for a ring at the cap wakes us */
		uint32_t seen = __atomic_load_n(&s->wake, __ATOMIC_ACQUIRE);
		if (!child_done && !snapshot_asked)
			syscall(SYS_futex, &s->wake, FUTEX_WAIT, seen, &ts, NULL, 0);
	}
	__atomic_store_n(&s->stopping, 1, __ATOMIC_RELEASE);
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
	uint64_t events = 0;
	int rc = write_flight(o, s, f, clk, child, cmd, out_fd, realtime, code, &events);
	if (rc)
		fprintf(stderr, "ptt-record: %s: %s; the trace is incomplete\n", o->output, ptt_strerror(rc));
	else if (!o->quiet)
		fprintf(stderr, "ptt-record: %s: flight recording, %" PRIu64 " events\n", o->output, events);
	flight_free(f);
	if (close(out_fd) != 0 && !rc)
		fprintf(stderr, "ptt-record: %s: %s\n", o->output, strerror(errno));
	return code;
}

int main(int argc, char **argv)
{
	struct record_opts o;
	int first = record_parse_opts(&o, argc, argv);
	if (first < 0)
		return first == -1 ? 0 : 2;
	char **cmd = argv + first;
	record_preflight(&o, cmd[0]);

	char first_name[PATH_MAX + 16];
	uint32_t part = 1;
	if (o.max_size)
		part_name(first_name, sizeof first_name, o.output, part);
	else
		snprintf(first_name, sizeof first_name, "%s", o.output);
	int out_fd = strcmp(o.output, "-") == 0 ? 1 : open(first_name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out_fd < 0) {
		fprintf(stderr, "ptt-record: %s: %s\n", first_name, strerror(errno));
		return 1;
	}
	struct stat out_st;
	o.out_is_file = fstat(out_fd, &out_st) == 0 && S_ISREG(out_st.st_mode);
	int shm_fd;
	struct ptt_shm *s = make_shm(&o, &shm_fd);
	if (!s)
		return 1;
	s->use_tsc = (uint32_t)use_tsc();
	uint64_t cal_mono = mono_ns(CLOCK_MONOTONIC_RAW), cal_tsc = s->use_tsc ? ptt_rdtsc() : 0;
	uint64_t realtime = mono_ns(CLOCK_REALTIME);
	s->start_ticks = s->use_tsc ? ptt_rdtsc() : mono_ns(CLOCK_MONOTONIC);

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (o.flight)
		sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	wake_word = &s->wake;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigchld;
	sa.sa_flags = SA_NOCLDSTOP; /* no SA_RESTART: a sleep ends at once */
	sigaction(SIGCHLD, &sa, NULL);

	/* the processes the program leaves behind (daemons) become ours: see reap() */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	int report[2];
	if (pipe2(report, O_CLOEXEC) != 0) {
		perror("ptt-record: pipe");
		return 1;
	}
	pid_t child = fork();
	if (child < 0) {
		perror("ptt-record: fork");
		return 1;
	}
	if (child == 0)
		run_child(&o, shm_fd, report[1], cmd);
	close(report[1]);
	int exec_err = 0;
	ssize_t got;
	while ((got = read(report[0], &exec_err, sizeof exec_err)) < 0 && errno == EINTR)
		; /* SIGCHLD from a child whose exec failed */
	close(report[0]);
	if (got == (ssize_t)sizeof exec_err) {
		fprintf(stderr, "ptt-record: %s: %s\n", cmd[0], strerror(exec_err));
		waitpid(child, NULL, 0);
		if (out_fd != 1)
			unlink(first_name);
		return exec_err == ENOENT ? 127 : 126;
	}
	/* the program's symbols (its static mutexes' names) load on a thread while it starts: after
	 * the fork, which must not copy a thread that may hold the allocator's lock into the child */
	struct namer *nm = NULL;
	char exe[PATH_MAX];
	if (!o.flight && (nm = namer_new()) && program_path(cmd[0], exe))
		namer_preload(nm, exe);

	uint64_t hz = s->use_tsc ? calibrate_tsc(cal_mono, cal_tsc) : 1000000000u;
	for (int again = 0; !hz && again < 3; again++) /* the clocks did not move apart: measure anew */
		hz = calibrate_tsc(mono_ns(CLOCK_MONOTONIC_RAW), ptt_rdtsc());
	if (!hz) {
		fprintf(stderr, "ptt-record: cannot measure the time-stamp counter's rate; times are in ticks\n");
		hz = 1000000000u;
	}
	struct ptt_clock clk;
	ptt_clock_init(&clk, s->start_ticks, hz);
	if (o.flight)
		return record_flight(&o, s, &clk, child, cmd, out_fd, realtime);

	struct ptt_writer *w;
	if (ptt_writer_open(&w, out_fd, o.zlevel) != 0)
		return 1;
	ptt_writer_set_compressor(w, o.compressor);
	ptt_writer_set_compact(w, !o.zlevel); /* -z: compressed blocks, plain */
	if (o.zlevel)
		ptt_writer_async(w); /* compression off the drain's path: rings are emptied while a block compresses */
	size_t hsize = header_size(cmd);
	char *hdr = malloc(hsize);
	if (!hdr)
		return 1;
	header_lines(hdr, hsize, &o, s, hz, realtime, child, cmd);
	int werr = ptt_writer_meta(w, hdr, strlen(hdr));
	if (!werr)
		werr = keep_meta(hdr, strlen(hdr));
	free(hdr);
	struct drain *d = drain_new(s, w, &clk);
	if (!d)
		return 1;
	uint32_t types_seen = 0;
	struct keeper *keeper = o.max_size ? keeper_new() : NULL;
	namer_set_keeper(nm, keeper);
	struct before_record br = { s, &types_seen, nm, keeper, 0 };
	drain_set_hook(d, before_record, &br);
	uint32_t a[3] = { (uint32_t)child };
	ptt_put64(a + 1, o.ring_bytes);
	drain_note(d, PTT_EV_REC_START, a, 3);

	int status = 0, exited = 0, warned = 0, gone = 0, told = 0;
	struct pace pace = { 0, 0 }; /* the rings hold nothing older than the trace's start */
	o.out_is_pipe = out_fd == 1;
	uint64_t t_start = mono_ns(CLOCK_MONOTONIC), last_flush = t_start;
	while (!exited) {
		if (pending_signal && !gone) {
			uint32_t b[2] = { (uint32_t)pending_signal, (uint32_t)child };
			drain_note(d, PTT_EV_REC_SIGNAL, b, 2);
			kill(child, pending_signal);
			pending_signal = 0;
		}
		child_done = 0; /* read before reap: a SIGCHLD after it wakes the next pass */
		int none_left = reap(child, &status, &gone);
		if (gone)
			exited = after_program(&o, none_left, cmd[0], &told);
		if (!werr)
			werr = sync_user_types(s, w, &types_seen);
		long n = werr ? 0 : drain_pass(d, 0);
		if (n < 0)
			werr = (int)n;
		uint64_t now = mono_ns(CLOCK_MONOTONIC);
		if (!werr && (out_fd == 1 || now - last_flush > 100000000u)) {
			werr = ptt_writer_flush(w);
			last_flush = now;
		}
		if (!werr)
			werr = maybe_rotate(&o, w, &out_fd, &part, &br, drain_stats(d));
		if (!warned && !s->handshake && (exited || now - t_start > 3000000000u)) {
			warned = 1;
			if (!o.quiet || exited)
				fprintf(stderr, "ptt-record: %s: the tracing runtime did not load in the program "
					"(static or setuid binary, or LD_PRELOAD removed?); the trace holds no program events\n", cmd[0]);
		}
		if (werr) {
			/* the output is gone (full disk, closed pipe): stop making the program wait */
			__atomic_store_n(&s->stopping, 1, __ATOMIC_RELEASE);
		}
		if (!exited) {
			uint64_t pause = pace_next(&pace, n, drain_stats(d)->upto_ns, o.ring_bytes / 36, o.out_is_pipe ? 20000000u : 50000000u);
			if (werr)
				pause = 1000000;
			if (pause) { /* sleep, unless a writer with a full ring wakes us first */
				struct timespec ts = { 0, (long)pause };
				uint32_t seen = __atomic_load_n(&s->wake, __ATOMIC_ACQUIRE);
				if (!child_done)
					syscall(SYS_futex, &s->wake, FUTEX_WAIT, seen, &ts, NULL, 0);
			}
		}
	}
	__atomic_store_n(&s->stopping, 1, __ATOMIC_RELEASE);
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
	uint32_t b[2] = { WIFEXITED(status) ? (uint32_t)WEXITSTATUS(status) : 0, WIFSIGNALED(status) ? (uint32_t)WTERMSIG(status) : 0 };
	if (!werr) {
		drain_pass(d, 0);
		werr = sync_user_types(s, w, &types_seen);
		drain_note(d, PTT_EV_REC_STOP, b, 2);
		long n = drain_pass(d, 1);
		if (n < 0)
			werr = (int)n;
	}
	const struct drain_stats *st = drain_stats(d), stats = *st;
	char end[1024];
	uint64_t end_ticks = s->use_tsc ? ptt_rdtsc() : mono_ns(CLOCK_MONOTONIC);
	int elen = snprintf(end, sizeof end, "end_ticks %" PRIu64 "\nevents %" PRIu64 "\nlost %" PRIu64 "\nwaits %" PRIu64
			    "\nlate %" PRIu64 "\nsalvaged %" PRIu64 "\nexit_status %d\nprocesses %u\n",
			    end_ticks, st->events, st->lost, st->waits, st->late, st->salvaged, code, s->attached);
	uint64_t blocks = 0, behind = 0;
	if (o.zlevel) { /* every file's, once the queue is written out: the END lines count them all */
		if (!werr)
			werr = ptt_writer_settle(w);
		ptt_writer_block_counts(w, &blocks, &behind);
		snprintf(end + elen, sizeof end - (size_t)elen, "compressor %s\nblocks %" PRIu64 "\nblocks_raw_behind %" PRIu64 "\n",
			 o.compressor == PTT_COMP_ZLIB ? "zlib" : "zstd", blocks, behind);
	}
	if (!werr)
		werr = ptt_writer_end(w, end, strlen(end));
	if (werr)
		fprintf(stderr, "ptt-record: %s: %s; the trace is incomplete\n", o.output, ptt_strerror(werr));
	uint64_t bytes = rotated_bytes + ptt_writer_bytes(w);
	ptt_writer_close(w);
	drain_free(d);
	namer_free(nm);
	keeper_free(keeper);
	if (out_fd != 1 && close(out_fd) != 0 && !werr) {
		fprintf(stderr, "ptt-record: %s: %s\n", o.output, strerror(errno));
		werr = 1;
	}
	if (!werr && !o.quiet && behind)
		fprintf(stderr, "ptt-record: %" PRIu64 " of %" PRIu64 " blocks written raw: the compressor was behind\n",
			behind, blocks);
	if (!werr && !o.quiet)
		summary(&o, &stats, bytes, part);
	return code;
}
