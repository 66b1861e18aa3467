/*
 * ptt-top - a live view of the locks of a running recording: follows the
 * trace ptt-record is writing (like tail -f: what is written is read, a
 * block half-written is waited for) through the one reading pipeline
 * (pass.h), and every interval shows ptt-stat's accounts (stat_table.h) of
 * the locks most waited for, with each one's holder and waiters now (model.h) and the threads
 * that waited on it most in the interval (waited_add),
 * named at their first frame past the lock layer (lockframes.h).  It only
 * reads the file: the recording is the same with or without it.  A rotated
 * recording is followed from file to file (next_file); a flight recording's
 * rings are read in place (flightview.h), into a trace the pass follows.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "lib/cli.h"
#include "lib/flightview.h"
#include "lib/lockframes.h"
#include "lib/model.h"
#include "lib/pass.h"
#include "lib/stat_table.h"
#include "lib/symbols.h"

/* Exit statuses beyond the filters' 0, 1 and 2. */
#define TOP_CANNOT 3 /* a recording ptt-top cannot follow: a trace written to a pipe, flight rings it cannot read */

static void usage(void)
{
	printf("Usage: ptt-top [OPTION]... PID|TRACE|-\n"
	       "A live view of the locks of a running ptt recording: PID is ptt-record's or the traced\n"
	       "program's process, TRACE the file ptt-record is writing (followed as it grows, and a\n"
	       "rotated recording's next files in turn), - a recording piped in (ptt-record -o - ...).\n"
	       "Under each lock: its holder and waiters now, and the threads that waited on it most\n"
	       "in the last interval.\n"
	       "\n"
	       "  -a, --from-start     replay a live recording from its start, a rotated one from its\n"
	       "                       earliest file kept (default: from 1 s before its live end, what\n"
	       "                       was in force before that unknown)\n"
	       "  -d, --delay=SECONDS  the interval between frames (default 1)\n"
	       "  -b, --batch          a plain-text frame per interval on stdout, for scripts (also\n"
	       "                       when stdout is not a terminal)\n"
	       "  -n, --frames=N       stop after N frames (default: when the recording ends)\n"
	       "  -s, --sort=KEY       order locks by wait (the interval's wait time, default), total\n"
	       "                       (wait time since the start), hold (hold time since the start)\n"
	       "                       or count (waits in the interval)\n"
	       "  -t, --top=N          show the first N locks (default 10)\n"
	       CLI_SKIP_FRAMES_HELP
	       "  -h, --help           show this help and exit\n"
	       "      --version        show the version and exit\n"
	       "\n"
	       "Keys in a terminal: s next sort order, 1-9 the stacks of that lock's holder and waiters,\n"
	       "0 back to the list, q quit.\n"
	       "\n"
	       "Exit status: 0 the recording ended or the frames were shown, 1 damaged trace or a\n"
	       "rotated recording's next file gone,\n"
	       "2 usage error, no such process or file, not a trace, not a recording,\n"
	       "3 a recording ptt-top cannot follow (a pid whose trace goes to a pipe: pipe it into ptt-top -; flight rings it cannot read).\n");
}

enum top_sort { SORT_WAIT, SORT_TOTAL, SORT_HOLD, SORT_COUNT, SORT_N };
static const char *const sort_name[SORT_N] = { "wait", "total", "hold", "count" };

/* A thread's waits on a lock ended in the interval: their time, and the latest one's frame. */
struct waited {
	uint32_t pid, tid;
	uint64_t obj;
	uint8_t cls;
	uint64_t ns, n;
	struct mframe f;
	int next;               /* the hash chain: index + 1, 0 none */
};

struct top {
	/* options */
	double delay;
	int batch;
	long frames;
	enum top_sort sort;
	unsigned top;
	/* what is followed */
	char path[2 * PATH_MAX + 2]; /* the trace file */
	pid_t writer;           /* the process writing it (0: none, the file is complete) */
	int pipe;               /* "-": a recording piped in (ptt-record -o - | ptt-top -), read as it comes */
	pid_t flight;           /* a flight recording: ptt-record's pid, its rings read in place (fv) */
	struct flightview *fv;
	char input[64];         /* with it, the view's trace the pass reads (flightview.h) */
	double next_sweep;
	int writer_gone;        /* seen gone: one more read, then the end */
	unsigned files;         /* the files of a rotated recording followed so far (1: the first only) */
	unsigned long from_head; /* the first file read is a later part (this one), read from its head: attach_ns
				    its start */
	uint64_t bytes_before;  /* the reader's bytes in the files before t->path */
	uint64_t head_left;     /* the first file is a later part: its head's events still to come (attach) */
	unsigned long head_part; /* that part, attached to after its start: its head's names learnt */
	/* the pass */
	struct pass *p;
	struct stat_table *st;
	uint64_t lost;          /* events the recorder said it lost (rec_lost) */
	uint64_t events, events_then;
	uint64_t then_ns;       /* the trace time of the previous frame */
	int from_start;         /* -a: replay the trace from its start, not from near its live end */
	int attached;           /* the first event seen: the attach point decided */
	uint64_t attach_ns;     /* events before this trace time were skipped (0: none) */
	uint64_t realtime_ns;   /* the trace's time zero on the wall clock (meta realtime_ns; 0: unknown) */
	struct stat_row *prev;  /* the rows at the previous frame, by index */
	size_t nprev, cap_prev;
	/* frames */
	double next_frame;
	long shown;
	int quit, ended;
	int left;               /* quit before the end, when problems_then damaged stretches had been read */
	unsigned long problems_then;
	unsigned detail;        /* 1-9: the stacks of that row; 0 the list */
	struct waited *wd;      /* the waits ended in the interval, by lock and thread (waited_add) */
	size_t nwd, cap_wd;
	int wd_head[1024];      /* hash of (pid, lock, tid): index + 1 into wd, 0 none */
	int tty;                /* /dev/tty in raw mode, for keys (-1: none) */
	struct termios saved;
};

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- finding the trace ---- */

/* The NUL-separated arguments of process pid into buf; their length, or -1 (errno). */
static ssize_t proc_cmdline(pid_t pid, char *buf, size_t size)
{
	char f[64];
	snprintf(f, sizeof f, "/proc/%d/cmdline", (int)pid);
	int fd = open(f, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n >= 0)
		buf[n] = 0;
	return n;
}

static int is_recorder(pid_t pid)
{
	char cmd[4096];
	ssize_t n = proc_cmdline(pid, cmd, sizeof cmd);
	if (n <= 0)
		return 0;
	const char *base = strrchr(cmd, '/');
	return !strcmp(base ? base + 1 : cmd, "ptt-record");
}

static pid_t parent_of(pid_t pid)
{
	char f[64], buf[512];
	snprintf(f, sizeof f, "/proc/%d/stat", (int)pid);
	FILE *fp = fopen(f, "re");
	if (!fp)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, fp);
	fclose(fp);
	buf[n] = 0;
	char *close_paren = strrchr(buf, ')');
	int ppid = 0;
	char state;
	if (!close_paren || sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2)
		return 0;
	return (pid_t)ppid;
}

/* Is fd n of process pid open for writing (its fdinfo flags)? */
static int fd_writes(pid_t pid, const char *n)
{
	char f[300], line[128];
	snprintf(f, sizeof f, "/proc/%d/fdinfo/%s", (int)pid, n);
	FILE *fp = fopen(f, "re");
	int w = 0;
	while (fp && fgets(line, sizeof line, fp)) {
		unsigned long flags;
		if (sscanf(line, "flags: %lo", &flags) == 1)
			w = (flags & O_ACCMODE) != O_RDONLY;
	}
	if (fp)
		fclose(fp);
	return w;
}

/* Does the file start as a binary trace (or is it still empty, its header not written yet)? */
static int looks_like_trace(const char *path, int empty_too)
{
	char magic[8];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, magic, sizeof magic);
	close(fd);
	return (n == 0 && empty_too) || (n == 8 && !memcmp(magic, PTT_FILE_MAGIC, 8));
}

/*
 * The trace ptt-record pid writes: a regular file it has open for writing that
 * is a trace; its path into t->path.  0, or the exit status after a message.
 */
static int recorder_file(struct top *t, pid_t pid, const char *arg)
{
	char cmd[4096];
	ssize_t n = proc_cmdline(pid, cmd, sizeof cmd);
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(cmd + i) + 1)
		if (!strncmp(cmd + i, "--fl", 4)) { /* its rings are read in place (flightview.h) */
			t->flight = pid;
			snprintf(t->path, sizeof t->path, "the flight rings of ptt-record %d", (int)pid);
			return 0;
		}
	/* its -o FILE (ptt-record(1): default trace.ptt), up to the program's command */
	const char *out = "trace.ptt";
	for (ssize_t i = (ssize_t)strlen(cmd) + 1; i < n; i += (ssize_t)strlen(cmd + i) + 1) {
		const char *a = cmd + i, *next = i + (ssize_t)strlen(a) + 1 < n ? a + strlen(a) + 1 : NULL;
		if (!strcmp(a, "--"))
			break;
		if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && next)
			out = next;
		else if (!strncmp(a, "--output=", 9))
			out = a + 9;
		else if (a[0] == '-' && a[1] == 'o' && a[2])
			out = a + 2;
	}
	if (!strcmp(out, "-")) {
		fprintf(stderr, "ptt-top: %s: ptt-record writes its trace to a pipe or terminal (-o -), not to a file: "
			"pipe it into ptt-top - instead (ptt-record -o - -- PROGRAM | ptt-top -)\n", arg);
		return TOP_CANNOT;
	}
	char want[2 * PATH_MAX + 2], cwd[PATH_MAX], link0[64];
	snprintf(link0, sizeof link0, "/proc/%d/cwd", (int)pid);
	ssize_t c = out[0] == '/' ? 0 : readlink(link0, cwd, sizeof cwd - 1);
	cwd[c > 0 ? c : 0] = 0;
	snprintf(want, sizeof want, "%s%s%s", cwd, *cwd ? "/" : "", out);
	struct stat ws;
	int have_want = stat(want, &ws) == 0;
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "ptt-top: %s: %s: %s\n", arg, dir, strerror(errno));
		return 2;
	}
	struct dirent *de;
	int found = 0;
	while (found != 1 && (de = readdir(d))) {
		char link[PATH_MAX], target[PATH_MAX];
		struct stat sb;
		snprintf(link, sizeof link, "%s/%s", dir, de->d_name);
		ssize_t k = readlink(link, target, sizeof target - 1);
		if (atoi(de->d_name) <= 2 || k <= 0 || stat(link, &sb) != 0 || !S_ISREG(sb.st_mode) ||
		    !fd_writes(pid, de->d_name)) /* not its standard streams: -o - is a pipe's, or a terminal's */
			continue;
		target[k] = 0;
		if (have_want && sb.st_dev == ws.st_dev && sb.st_ino == ws.st_ino) { /* its -o FILE */
			snprintf(t->path, sizeof t->path, "%s", want);
			found = 1;
		} else if (target[0] == '/' && !strstr(target, " (deleted)") && looks_like_trace(link, 0)) {
			snprintf(t->path, sizeof t->path, "%s", target); /* a trace it writes: the next part of -m */
			found = 2;
		}
	}
	closedir(d);
	if (found)
		return 0;
	fprintf(stderr, "ptt-top: %s: ptt-record has no trace file open (%s)\n", arg, want);
	return TOP_CANNOT;
}

/* The process that has path open for writing (0: none, the file is complete), as fuser finds it. */
static pid_t writer_of(const char *path)
{
	struct stat want;
	if (stat(path, &want) != 0)
		return 0;
	DIR *proc = opendir("/proc");
	struct dirent *pe;
	pid_t found = 0;
	while (proc && !found && (pe = readdir(proc))) {
		if (!isdigit((unsigned char)pe->d_name[0]) || atoi(pe->d_name) == getpid())
			continue;
		char dir[300];
		snprintf(dir, sizeof dir, "/proc/%s/fd", pe->d_name);
		DIR *d = opendir(dir);
		struct dirent *de;
		while (d && !found && (de = readdir(d))) {
			char link[600];
			struct stat sb;
			snprintf(link, sizeof link, "%s/%s", dir, de->d_name);
			if (stat(link, &sb) == 0 && sb.st_dev == want.st_dev && sb.st_ino == want.st_ino &&
			    fd_writes(atoi(pe->d_name), de->d_name))
				found = atoi(pe->d_name);
		}
		if (d)
			closedir(d);
	}
	if (proc)
		closedir(proc);
	return found;
}

/*
 * -a on a later part of a rotated recording (FILE.NNNN, ptt-record -m): the earliest part still on
 * disk (-f removes the oldest) into t->path, to be read in order from there.
 */
static void earliest_part(struct top *t)
{
	char *dot = strrchr(t->path, '.'), *end;
	if (!dot || strlen(dot + 1) < 4 || !isdigit((unsigned char)dot[1]))
		return;
	unsigned long n = strtoul(dot + 1, &end, 10);
	if (*end || n < 2 || n > 99999999)
		return;
	char cand[sizeof t->path];
	for (unsigned long k = 1; k < n; k++) {
		snprintf(cand, sizeof cand, "%.*s.%04lu", (int)(dot - t->path), t->path, k);
		if (looks_like_trace(cand, 0)) {
			snprintf(t->path, sizeof t->path, "%s", cand);
			return;
		}
	}
}

/* PID or TRACE into t->path and t->writer: 0, or the exit status after a message. */
static int find_trace(struct top *t, const char *arg)
{
	char *end;
	if (!strcmp(arg, "-")) { /* ptt-record -o - -- PROG | ptt-top -: a pipe, read as the recorder writes it */
		struct stat sb;
		if (fstat(STDIN_FILENO, &sb) != 0 || isatty(STDIN_FILENO)) {
			fprintf(stderr, "ptt-top: -: standard input is a terminal: pipe a recording in (ptt-record -o - -- PROGRAM | ptt-top -)\n");
			return 2;
		}
		snprintf(t->path, sizeof t->path, "-");
		t->pipe = S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode); /* else a complete file, read whole */
		t->from_start = 1; /* what the pipe holds is all there is: nothing is passed over */
		return 0;
	}
	long v = strtol(arg, &end, 10);
	if (*arg && !*end && v > 0 && v <= INT32_MAX) {
		pid_t pid = (pid_t)v;
		char f[64];
		snprintf(f, sizeof f, "/proc/%d", (int)pid);
		if (access(f, F_OK) != 0) {
			fprintf(stderr, "ptt-top: %s: no such process\n", arg);
			return 2;
		}
		pid_t rec = is_recorder(pid) ? pid : is_recorder(parent_of(pid)) ? parent_of(pid) : 0;
		if (!rec) {
			fprintf(stderr, "ptt-top: %s: not a ptt recording (neither ptt-record nor a program it traces)\n", arg);
			return 2;
		}
		t->writer = rec;
		return recorder_file(t, rec, arg);
	}
	struct stat sb;
	if (stat(arg, &sb) != 0) {
		fprintf(stderr, "ptt-top: %s: %s\n", arg, strerror(errno));
		return 2;
	}
	if (!S_ISREG(sb.st_mode)) {
		fprintf(stderr, "ptt-top: %s: not a regular file: ptt-top follows a trace file or a process\n", arg);
		return 2;
	}
	if (!looks_like_trace(arg, 1)) {
		fprintf(stderr, "ptt-top: %s: not a ptt trace (a binary trace, as ptt-record writes, is followed)\n", arg);
		return 2;
	}
	snprintf(t->path, sizeof t->path, "%s", arg);
	t->writer = writer_of(arg);
	return 0;
}

/* ---- the frame ---- */

/* A thread's open frame on a shown lock: its holder or one of its waiters. */
struct who {
	uint32_t pid, tid;
	uint64_t obj, since;
	uint32_t stack;
	int hold;
	struct mframe f;
};
struct whos {
	struct who *w;
	size_t n, cap;
};

static int collect(void *ctx, struct mthread *t, const struct mframe *f)
{
	struct whos *ws = ctx;
	if (!mstate_is_hold(f->state) && !mstate_is_wait(f->state))
		return 0;
	if (PTT_GROW(ws->w, &ws->cap, ws->n + 1) != 0)
		return 1;
	ws->w[ws->n++] = (struct who){ t->pid, t->tid, f->obj, f->begin_ns, f->stack, mstate_is_hold(f->state), *f };
	return 0;
}

/* An interval's row: the figures now, and the interval's part of them. */
struct line {
	struct stat_row *now;
	uint64_t waits, wait_ns, acq;       /* in the interval: contended waits, their time, acquisitions */
	uint64_t p50, p99, hp50, hp99;      /* in the interval: of every acquisition's wait, of the holds */
};

static int by_sort;
static int line_cmp(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	uint64_t kx, ky;
	switch (by_sort) {
	case SORT_TOTAL: kx = x->now->wait_total; ky = y->now->wait_total; break;
	case SORT_HOLD: kx = x->now->hold_total; ky = y->now->hold_total; break;
	case SORT_COUNT: kx = x->waits; ky = y->waits; break;
	default: kx = x->wait_ns; ky = y->wait_ns;
		if (kx == ky) { kx = x->now->wait_total; ky = y->now->wait_total; }
	}
	return kx < ky ? 1 : kx > ky ? -1 : x->now->addr < y->now->addr ? -1 : x->now->addr > y->now->addr;
}

static double us(uint64_t ns) { return (double)ns / 1e3; }

/* Where a thread's frame was opened: the first frame past the lock layer, by name. */
static const char *site_name(struct pass *p, const struct who *w, char *buf, size_t size)
{
	uint64_t site = lockframes_frame_site(p->syms, model_stacks(p->model), w->pid, &w->f);
	if (!site)
		return snprintf(buf, size, "[no site]"), buf;
	return lockframes_name(p->syms, w->pid, site, buf, size);
}

static void print_who(struct top *t, FILE *out, const struct who *w, int stacks)
{
	char tn[64], site[160];
	const char *name = ptt_syms_thread_name(t->p->syms, w->pid, w->tid, tn, sizeof tn);
	uint64_t for_ns = t->p->last_ns > w->since ? t->p->last_ns - w->since : 0;
	fprintf(out, "    %-7s %" PRIu32 "%s%s%s for %.3f ms at %s\n", w->hold ? "holder" : "waiter", w->tid,
		name && *name ? " (" : "", name && *name ? name : "", name && *name ? ")" : "", (double)for_ns / 1e6,
		site_name(t->p, w, site, sizeof site));
	if (stacks) {
		char frames[1024];
		if (lockframes_past(t->p->syms, model_stacks(t->p->model), w->pid, w->stack, 12, frames, sizeof frames))
			fprintf(out, "            %s\n", frames);
		else
			fprintf(out, "            (no stack: ptt-record -S records them)\n");
	}
}

/*
 * Under a lock's row: the threads that waited on it most in the interval (of the waits ended in it,
 * counted whole, as the row's WAIT is), where the latest one was opened.
 */
static void print_waited(struct top *t, FILE *out, const struct stat_row *r)
{
	enum { TOPW = 3 };
	const struct waited *best[TOPW] = { 0 };
	for (size_t k = 0; k < t->nwd; k++) {
		const struct waited *w = &t->wd[k];
		if ((w->pid != r->pid && !PTT_IS_SHARED(r->addr)) || w->obj != r->addr || /* shared: any process's */
		    !(w->cls == r->cls || r->cls == PTT_CLASS_FUTEX || w->cls == PTT_CLASS_MUTEX))
			continue;
		for (int b = 0; b < TOPW; b++)
			if (!best[b] || w->ns > best[b]->ns || (w->ns == best[b]->ns && w->n > best[b]->n)) {
				memmove(&best[b + 1], &best[b], (size_t)(TOPW - 1 - b) * sizeof *best);
				best[b] = w;
				break;
			}
	}
	for (int b = 0; b < TOPW && best[b]; b++) {
		char tn[64], site[160];
		const struct waited *w = best[b];
		const char *name = ptt_syms_thread_name(t->p->syms, w->pid, w->tid, tn, sizeof tn);
		struct who x = { w->pid, w->tid, w->obj, w->f.begin_ns, w->f.stack, 0, w->f };
		fprintf(out, "    waited  %" PRIu32 "%s%s%s %.3f ms in %" PRIu64 " wait%s ended in the last interval, at %s\n", w->tid,
			name && *name ? " (" : "", name && *name ? name : "", name && *name ? ")" : "", (double)w->ns / 1e6,
			w->n, w->n == 1 ? "" : "s", site_name(t->p, &x, site, sizeof site));
	}
}

/* The trace time now, on the wall clock from the trace's start (0: its start is not known). */
static uint64_t live_ns(const struct top *t)
{
	struct timespec ts;
	if (!t->realtime_ns || clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return 0;
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return now > t->realtime_ns ? now - t->realtime_ns : 0;
}

/* One frame: the interval's and the whole run's figures of the locks, their holders and waiters. */
static void frame(struct top *t, FILE *out, int advance)
{
	struct pass *p = t->p;
	size_t n = stat_count(t->st);
	struct stat_row *rows = calloc(n ? n : 1, sizeof *rows);
	struct line *lines = calloc(n ? n : 1, sizeof *lines);
	struct whos ws = { 0 };
	if (!rows || !lines) {
		free(rows);
		free(lines);
		return;
	}
	size_t nl = 0;
	for (size_t i = 0; i < n; i++) {
		stat_row(t->st, i, &rows[i]);
		if (!rows[i].lock)
			continue;
		struct line *l = &lines[nl++];
		static const struct stat_row zero;
		const struct stat_row *was = i < t->nprev ? &t->prev[i] : &zero, *r = &rows[i];
		uint32_t wh[STAT_HIST], hh[STAT_HIST];
		for (unsigned b = 0; b < STAT_HIST; b++) {
			wh[b] = r->wait_hist[b] - was->wait_hist[b];
			hh[b] = r->hold_hist[b] - was->hold_hist[b];
		}
		l->now = &rows[i];
		l->waits = r->contended - was->contended;
		l->wait_ns = r->wait_total - was->wait_total;
		l->acq = r->waits - was->waits;
		l->p50 = stat_hist_percentile(wh, l->acq, r->wait_max, 0.5);
		l->p99 = stat_hist_percentile(wh, l->acq, r->wait_max, 0.99);
		l->hp50 = stat_hist_percentile(hh, r->holds - was->holds, r->hold_max, 0.5);
		l->hp99 = stat_hist_percentile(hh, r->holds - was->holds, r->hold_max, 0.99);
	}
	by_sort = t->sort;
	qsort(lines, nl, sizeof *lines, line_cmp);
	model_foreach_open(p->model, collect, &ws);

	uint64_t stalls, stall_ns, stalled_ns;
	stat_stalls(t->st, &stalls, &stall_ns, &stalled_ns);
	struct stat sb;
	uint64_t read = ptt_reader_bytes(p->in.r), in_file = read - t->bytes_before;
	uint64_t size = stat(t->path, &sb) == 0 ? (uint64_t)sb.st_size : in_file;
	char files[48] = "";
	const char *part = ptt_reader_meta(p->in.r, "part");
	if (part || t->files > 1)
		snprintf(files, sizeof files, " (part %s of a rotated recording)", part ? part : "1");
	fprintf(out, "ptt-top %s%s  %s%s\n", t->path, files,
		t->ended ? "recording ended" : t->writer || t->pipe ? "recording" : "complete file", t->quit && !t->ended ? " (left)" : "");
	fprintf(out, "trace %.3f s, %" PRIu64 " events (%" PRIu64 " in the interval %.3f-%.3f s), %.1f MB %s, %.1f MB behind\n",
		(double)p->last_ns / 1e9, t->events, t->events - t->events_then, (double)t->then_ns / 1e9,
		(double)p->last_ns / 1e9, (double)read / 1e6, t->attach_ns && !t->from_head && !t->fv ? "passed over or read" : "read",
		size > in_file ? (double)(size - in_file) / 1e6 : 0.0);
	uint64_t live = (t->writer || t->pipe) && !t->ended ? live_ns(t) : 0;
	if (live)
		fprintf(out, "live end %.3f s: %.3f s behind it\n", (double)live / 1e9,
			live > p->last_ns ? (double)(live - p->last_ns) / 1e9 : 0.0);
	if (t->from_head)
		fprintf(out, "read from the start of part %lu of a rotated recording at %.3f s: the names, holds and waits "
			"in force then are known from its head, the events before are not read\n",
			t->from_head, (double)t->attach_ns / 1e9);
	else if (t->fv) {
		const struct flightview_counts *c = flightview_counts(t->fv);
		fprintf(out, "flight rings read in place from %.3f s: %" PRIu64 " records; not seen: %" PRIu64 " words "
			"overwritten before ptt-top read them, %" PRIu64 " torn, %" PRIu64 " late\n", (double)c->from_ns / 1e9,
			c->records, c->overwritten, c->torn, c->late);
	} else if (t->attach_ns && t->head_part)
		fprintf(out, "attached at %.3f s: the events before are not read (a hold or wait begun before is seen "
			"from its end on; names are those in force at the start of part %lu, from its head)\n",
			(double)t->attach_ns / 1e9, t->head_part);
	else if (t->attach_ns)
		fprintf(out, "attached at %.3f s: the events before are not read (a hold or wait begun before is seen "
			"from its end on; names given before are unknown)\n", (double)t->attach_ns / 1e9);
	fprintf(out, "tracer stalls %" PRIu64 " (%.3f ms; waits lengthened %.3f ms), lost events %" PRIu64
		", damaged stretches %lu\n", stalls, (double)stall_ns / 1e6, (double)stalled_ns / 1e6, t->lost, p->in.problems);
	char sorted[32];
	snprintf(sorted, sizeof sorted, "(sort: %s)", sort_name[t->sort]);
	fprintf(out, "\n%-24s %-6s %7s %9s %8s %8s %8s %8s | %8s %10s %8s %8s %10s\n", "LOCK", "KIND", "WAITS",
		"WAIT(ms)", "P50(us)", "P99(us)", "HP50(us)", "HP99(us)", "WAITS", "WAIT(ms)", "P50(us)", "P99(us)", "HOLD(ms)");
	char since[40] = "-- since the start --";
	if (t->attach_ns)
		snprintf(since, sizeof since, "-- since %.3f s --", (double)t->attach_ns / 1e9);
	fprintf(out, "%-31s %-52s | %s\n", sorted, "-- last interval --", since);
	unsigned shown = 0;
	for (size_t i = 0; i < nl && shown < t->top; i++) {
		const struct line *l = &lines[i];
		const struct stat_row *r = l->now;
		if (!r->contended && t->sort != SORT_HOLD)
			continue; /* never waited for: no row in a view of waits */
		shown++;
		if (t->detail && t->detail != shown)
			continue;
		fprintf(out, "%u %-22.22s %-6.6s %7" PRIu64 " %9.3f %8.1f %8.1f %8.1f %8.1f | %8" PRIu64 " %10.3f %8.1f %8.1f %10.3f\n",
			shown, r->name, r->kind, l->waits, (double)l->wait_ns / 1e6, us(l->p50), us(l->p99), us(l->hp50),
			us(l->hp99), r->contended, (double)r->wait_total / 1e6,
			us(stat_hist_percentile(r->wait_hist, r->waits, r->wait_max, 0.5)),
			us(stat_hist_percentile(r->wait_hist, r->waits, r->wait_max, 0.99)), (double)r->hold_total / 1e6);
		unsigned told = 0;
		for (int hold = 1; hold >= 0; hold--)
			for (size_t k = 0; k < ws.n; k++)
				if ((ws.w[k].pid == r->pid || PTT_IS_SHARED(r->addr)) && ws.w[k].obj == r->addr && ws.w[k].hold == hold &&
				    (hold || mstate_class(ws.w[k].f.state) == r->cls || r->cls == PTT_CLASS_FUTEX ||
				     mstate_class(ws.w[k].f.state) == PTT_CLASS_MUTEX)) {
					print_who(t, out, &ws.w[k], t->detail != 0);
					told++;
				}
		if (t->detail && !told)
			fprintf(out, "    (no holder seen and no waiter now)\n");
		print_waited(t, out, r);
	}
	if (!shown)
		fprintf(out, "  (no lock waited for yet)\n");
	fflush(out);
	free(ws.w);
	free(lines);
	if (!advance) { /* redrawn for a key: the interval goes on */
		free(rows);
		return;
	}
	t->nwd = 0; /* the next interval's waits */
	memset(t->wd_head, 0, sizeof t->wd_head);
	free(t->prev); /* the rows now are the next interval's start */
	t->prev = rows;
	t->nprev = n;
	t->events_then = t->events;
	t->then_ns = p->last_ns;
	t->shown++;
}

/* ---- the terminal ---- */

static struct top *restore_of;
static void restore_tty(void)
{
	if (restore_of && restore_of->tty >= 0) {
		tcsetattr(restore_of->tty, TCSANOW, &restore_of->saved);
		fputs("\033[?25h\n", stdout);
		fflush(stdout);
	}
}

static void tty_open(struct top *t)
{
	t->tty = -1;
	if (t->batch || (t->tty = open("/dev/tty", O_RDONLY | O_CLOEXEC)) < 0)
		return;
	struct termios raw;
	if (tcgetattr(t->tty, &t->saved) != 0) {
		close(t->tty);
		t->tty = -1;
		return;
	}
	raw = t->saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	tcsetattr(t->tty, TCSANOW, &raw);
	restore_of = t;
	atexit(restore_tty);
	fputs("\033[?25l", stdout);
}

/* A frame; advance 0: the same interval redrawn (a key changed the view). */
static void show(struct top *t, int advance)
{
	if (t->batch) {
		if (t->shown)
			putchar('\n');
		frame(t, stdout, advance);
		return;
	}
	fputs("\033[H\033[2J", stdout);
	frame(t, stdout, advance);
	printf("\nkeys: s sort (%s), 1-9 stacks of that lock, 0 the list, q quit\n", sort_name[t->sort]);
	fflush(stdout);
}

/* The keys typed since: 1 when the view changed. */
static int keys(struct top *t)
{
	char c;
	int changed = 0;
	while (t->tty >= 0 && read(t->tty, &c, 1) == 1) {
		if (c == 'q' || c == 'Q')
			t->quit = 1;
		else if (c == 's')
			t->sort = (t->sort + 1) % SORT_N;
		else if (c >= '0' && c <= '9')
			t->detail = (unsigned)(c - '0');
		else
			continue;
		changed = 1;
	}
	return changed;
}

/* A frame when one is due; keys. */
static void tick(struct top *t)
{
	if (stop)
		t->quit = 1;
	int changed = keys(t);
	if (t->quit && !t->left) {
		t->left = 1;
		t->problems_then = t->p->in.problems;
	}
	double now = now_s();
	if (changed && !t->quit && now < t->next_frame)
		show(t, 0);
	else if (now >= t->next_frame) {
		show(t, 1);
		t->next_frame = now + t->delay;
		if (t->frames > 0 && t->shown >= t->frames)
			t->quit = 1;
	}
}

/* ---- the pass's hooks ---- */

/*
 * A flight view's sweep when one is due (every 10 ms: a ring of 64 KiB holds some 25 ms of a busy
 * memcached worker's events): the rings' records since the last one appended to the view's trace.
 * 1 when some were, 0 if none or not due, negative on a write error.
 */
static int flight_sweep(struct top *t)
{
	double now = now_s();
	if (now < t->next_sweep)
		return 0;
	off_t at = lseek(t->p->in.fd, 0, SEEK_CUR);
	flightview_read_to(t->fv, at > 0 ? (uint64_t)at : 0);
	t->next_sweep = now + 0.01;
	return flightview_sweep(t->fv, 0);
}

/* The reader found the file's end: wait for more while its writer lives (ptt_reader_set_wait). */
static int wait_more(void *arg)
{
	struct top *t = arg;
	struct pass *p = t->p;
	for (;;) {
		tick(t);
		if (t->quit) { /* left: what is unread (a block half-read too) is no damage of the trace's */
			int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
			if (null >= 0) {
				dup2(null, STDERR_FILENO);
				close(null);
			}
			return -1;
		}
		if (t->pipe) { /* more to read, or the recorder closed the pipe: the end */
			struct pollfd pf[2] = { { p->in.fd, POLLIN, 0 }, { t->tty, POLLIN, 0 } };
			int ms = (int)((t->next_frame - now_s()) * 1000);
			if (poll(pf, t->tty >= 0 ? 2 : 1, ms < 0 ? 0 : ms > 50 ? 50 : ms) > 0 && pf[0].revents)
				return (pf[0].revents & POLLIN) ? 1 : 0;
			continue;
		}
		if (!t->writer || ptt_reader_saw_end(p->in.r) || ptt_reader_continued(p->in.r))
			return 0; /* the end; or the recorder went on in the next file (next_file) */
		if (t->writer_gone)
			return 0;
		char f[64];
		snprintf(f, sizeof f, "/proc/%d", (int)t->writer);
		if (access(f, F_OK) != 0) { /* gone: what it wrote last is read once more */
			t->writer_gone = 1;
			if (t->fv) /* the rings as the program left them (our mapping keeps them), and the view's end */
				flightview_sweep(t->fv, 1);
			return 1;
		}
		struct pollfd pf = { t->tty, POLLIN, 0 };
		int ms = (int)((t->next_frame - now_s()) * 1000);
		poll(&pf, t->tty >= 0 ? 1 : 0, ms < 0 ? 0 : ms > 50 ? 50 : ms);
		struct stat sb;
		off_t at = lseek(p->in.fd, 0, SEEK_CUR);
		if (t->fv && flight_sweep(t) < 0)
			return 0;
		if (fstat(p->in.fd, &sb) == 0 && at >= 0 && sb.st_size > at)
			return 1;
	}
}

/*
 * The file read said the recording goes on in the next one ("continued FILE", ptt-record -m): the
 * next file, named as the recorder wrote it, found beside the one read (the recorder's working
 * directory need not be ours).  Reading goes on there; the reader skips its head (the names and
 * the holds and waits in force, known already) and carries the states on.  Its fd, or -1.
 */
static int next_file(void *arg)
{
	struct top *t = arg;
	struct pass *p = t->p;
	const char *next = ptt_reader_continued(p->in.r);
	if (!next)
		return -1;
	const char *base = strrchr(next, '/'), *slash = strrchr(t->path, '/');
	char path[sizeof t->path];
	snprintf(path, sizeof path, "%.*s%s", slash ? (int)(slash - t->path + 1) : 0, t->path, base ? base + 1 : next);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) { /* ptt-record -f removed it before it was read: the view cannot go on */
		fprintf(stderr, "ptt-top: %s: the recording's next file: %s; the view ends at the end of %s\n", path,
			strerror(errno), t->path);
		p->in.problems++;
		return -1;
	}
	if (p->in.fd > 0)
		close(p->in.fd);
	t->bytes_before = ptt_reader_bytes(p->in.r);
	snprintf(t->path, sizeof t->path, "%s", path);
	p->in.fd = fd;
	p->in.name = t->path;
	t->files++;
	if (!t->writer)
		t->writer = writer_of(t->path); /* a complete part given: the part being written is followed */
	return fd;
}

/* A wait on o ended at ev: added to (pid, lock, tid)'s waits ended in the interval. */
static void waited_add(struct top *t, struct mthread *th, struct mobject *o, const struct mframe *wait, const struct ptt_event *ev)
{
	if (!o || ev->ns < t->attach_ns)
		return; /* o: none for a join */
	unsigned h = (unsigned)((o->addr >> 3) ^ (o->addr >> 13) ^ th->tid * 2654435761u ^ th->pid) % 1024;
	int i = t->wd_head[h];
	while (i && !(t->wd[i - 1].tid == th->tid && t->wd[i - 1].obj == o->addr && t->wd[i - 1].pid == th->pid &&
		      t->wd[i - 1].cls == ev->type->cls))
		i = t->wd[i - 1].next;
	if (!i) {
		if (PTT_GROW(t->wd, &t->cap_wd, t->nwd + 1) != 0)
			return;
		t->wd[t->nwd] = (struct waited){ th->pid, th->tid, o->addr, ev->type->cls, 0, 0, *wait, t->wd_head[h] };
		i = t->wd_head[h] = (int)++t->nwd;
	}
	struct waited *w = &t->wd[i - 1];
	w->ns += ev->ns > wait->begin_ns ? ev->ns - wait->begin_ns : 0; /* its whole time, as the row's WAIT */
	w->n++;
	w->f = *wait;
}

static void on_acquire(void *ctx, struct mthread *th, struct mobject *o, const struct mframe *hold, const struct mframe *wait,
		       const struct ptt_event *ev)
{
	(void)hold;
	if (wait && ev->type->role != PTT_ROLE_WAIT_END) /* a cond wait's re-lock is the cond's wait */
		waited_add(ctx, th, o, wait, ev);
}

static void on_wait_end(void *ctx, struct mthread *th, struct mobject *o, const struct mframe *wait, int ok,
			const struct ptt_event *ev)
{
	(void)ok;
	if (wait)
		waited_add(ctx, th, o, wait, ev);
}

static int start(void *ctx, struct pass *p)
{
	struct top *t = ctx;
	t->p = p;
	p->in.progress = 0;
	if (!(t->st = stat_new(p->syms, p->model)))
		return PASS_FAIL;
	struct model_ops ops = { .ctx = t, .acquire = on_acquire, .wait_end = on_wait_end };
	if (model_observe_also(p->model, &ops) != 0)
		return PASS_FAIL;
	ptt_reader_set_wait(p->in.r, wait_more, t);
	/* a pipe is read without blocking from here on (its header read), so that frames come while the
	 * recorder is quiet: wait_more polls it */
	if (t->pipe && fcntl(p->in.fd, F_SETFL, fcntl(p->in.fd, F_GETFL) | O_NONBLOCK) != 0) {
		fprintf(stderr, "ptt-top: -: %s\n", strerror(errno));
		return PASS_FAIL;
	}
	ptt_reader_set_next(p->in.r, next_file, t);
	t->next_frame = now_s() + t->delay;
	return PASS_GO;
}

/*
 * At the first event: attach 1 s before the live end of a recording being written.  The reader
 * passes over the EVENTS blocks before that, reading only their records that name (modules, names,
 * interned stacks, threads' starts: ptt_reader_skip_names), and the model is told the trace starts
 * mid-run there: a hold or wait begun before is known from its end on.
 */
/* The events up to the attach point passed over, their names (modules, names, interned stacks, threads'
 * starts) still read from the first 32 MiB of them (a few 0.1 s): ptt_reader_skip_names. */
static void pass_over(struct top *t, struct pass *p)
{
	ptt_reader_skip_names(p->in.r, t->attach_ns, (uint64_t)32 << 20);
}

static void attach(struct top *t, struct pass *p, const struct ptt_event *ev)
{
	const char *rt = ptt_reader_meta(p->in.r, "realtime_ns");
	t->attached = 1;
	t->realtime_ns = rt ? strtoull(rt, NULL, 10) : 0;
	if (t->fv) { /* the view starts where flightview_open began reading the rings */
		t->attach_ns = t->then_ns = flightview_counts(t->fv)->from_ns;
		if (!p->mid_run) {
			p->mid_run = 1;
			model_starts_mid_run(p->model, p->in.r);
		}
		return;
	}
	uint64_t live = live_ns(t);
	const char *part = ptt_reader_meta(p->in.r, "part");
	if (t->from_start || !t->writer || live < 1000000000u + ev->ns) {
		if (part && strtoul(part, NULL, 10) > 1) { /* a later part, read whole: from its start on */
			t->attach_ns = t->then_ns = ev->ns;
			t->from_head = strtoul(part, NULL, 10);
		}
		return;
	}
	t->attach_ns = t->then_ns = live - 1000000000u;
	/* a later part of a rotated recording: its head (the names in force at its start) is read
	 * first, so that its names are known; the holds and waits in it are not taken (their ends
	 * before the attach point are not read) */
	const char *head = ptt_reader_meta(p->in.r, "head");
	t->head_left = head ? strtoull(head, NULL, 10) : 0;
	t->head_part = t->head_left && part ? strtoul(part, NULL, 10) : 0;
	if (!t->head_left)
		pass_over(t, p);
	if (!p->mid_run) {
		p->mid_run = 1;
		p->mid_run_why = "ptt-top attached: the events before are not read";
		model_starts_mid_run(p->model, p->in.r);
	}
}

static int event(void *ctx, struct pass *p, struct ptt_event *ev)
{
	struct top *t = ctx;
	if (!t->attached)
		attach(t, p, ev);
	if (t->head_left && !--t->head_left)
		pass_over(t, p); /* the head's names learnt (pass.h: before this hook) */
	if (ev->ns < t->attach_ns) /* before the attach point: its names and interned stacks kept, the rest not */
		return ev->type && ev->type->role != PTT_ROLE_LIFE && ptt_record_tells_names(ev->id, ev->type->role) ? PASS_GO
														 : PASS_SKIP;
	if (ev->id == PTT_EV_REC_LOST && ev->nargs >= 2)
		t->lost += ev->arg[1];
	stat_event(t->st, ev);
	return PASS_GO;
}

static int after(void *ctx, struct pass *p, struct ptt_event *ev)
{
	struct top *t = ctx;
	(void)p;
	(void)ev;
	if ((++t->events & 1023) == 0) {
		tick(t);
		if (t->fv) /* while the view is read, its rings go on turning over */
			flight_sweep(t);
	}
	return t->quit ? PASS_STOP : PASS_GO;
}

/* The input read (the recording ended, or ptt-top was left): the last frame, the model as at the end. */
static int end(void *ctx, struct pass *p)
{
	struct top *t = ctx;
	(void)p;
	if (t->quit)
		return PASS_GO;
	t->ended = 1;
	if (t->frames <= 0 || t->shown < t->frames)
		show(t, 1);
	while (t->tty >= 0 && !t->quit && !stop) { /* the last view stays until q */
		struct pollfd pf = { t->tty, POLLIN, 0 };
		poll(&pf, 1, 200);
		if (keys(t) && !t->quit)
			show(t, 0);
	}
	return PASS_GO;
}

static int options(struct top *t, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "batch", no_argument, 0, 'b' }, { "delay", required_argument, 0, 'd' },
		{ "frames", required_argument, 0, 'n' }, { "from-start", no_argument, 0, 'a' },
		{ "help", no_argument, 0, 'h' },
		CLI_SKIP_FRAMES_LONGOPT, { "sort", required_argument, 0, 's' }, { "top", required_argument, 0, 't' },
		{ "version", no_argument, 0, 'V' }, { 0, 0, 0, 0 },
	};
	int c;
	while ((c = getopt_long(argc, argv, "abd:n:s:t:h", longopts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'a': t->from_start = 1; break;
		case 'b': t->batch = 1; break;
		case 'd':
			t->delay = strtod(optarg, &end);
			if (*end || !*optarg || !(t->delay >= 0.1 && t->delay <= 3600)) {
				fprintf(stderr, "ptt-top: --delay: seconds from 0.1 to 3600: '%s'\n", optarg);
				return cli_usage_error("ptt-top");
			}
			break;
		case 'n':
		case 't': {
			long v = strtol(optarg, &end, 10);
			if (*end || !*optarg || v < 1 || v > 1000000) {
				fprintf(stderr, "ptt-top: --%s: not a count: '%s'\n", c == 'n' ? "frames" : "top", optarg);
				return cli_usage_error("ptt-top");
			}
			if (c == 'n')
				t->frames = v;
			else
				t->top = (unsigned)v;
			break;
		}
		case 's': {
			int k = 0;
			while (k < SORT_N && strcmp(optarg, sort_name[k]))
				k++;
			if (k == SORT_N) {
				fprintf(stderr, "ptt-top: --sort: one of wait, total, hold, count: '%s'\n", optarg);
				return cli_usage_error("ptt-top");
			}
			t->sort = (enum top_sort)k;
			break;
		}
		case CLI_OPT_SKIP_FRAMES:
			if (cli_skip_frames("ptt-top", optarg))
				return 2;
			break;
		case 'h': usage(); return -1;
		case 'V': cli_print_version("ptt-top"); return -1;
		default: return cli_usage_error("ptt-top");
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "ptt-top: one PID or TRACE\n");
		return cli_usage_error("ptt-top");
	}
	if (!isatty(STDOUT_FILENO))
		t->batch = 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct top t = { .delay = 1, .top = 10, .tty = -1, .files = 1 };
	int rc = options(&t, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	if ((rc = find_trace(&t, argv[optind])) != 0)
		return rc;
	if (t.from_start)
		earliest_part(&t);
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (t.flight) {
		char err[512];
		if (!(t.fv = flightview_open(t.flight, t.from_start, 1000000000u, t.input, sizeof t.input, err, sizeof err))) {
			fprintf(stderr, "ptt-top: %s: %s\n", argv[optind], err);
			return TOP_CANNOT;
		}
		t.next_sweep = now_s() + 0.01;
	}
	/* the file may be just made: its header is 16 bytes, written first */
	for (int i = 0; i < 100 && t.writer && !t.fv; i++) {
		struct stat sb;
		if (stat(t.path, &sb) == 0 && sb.st_size >= 16)
			break;
		usleep(20000);
	}
	tty_open(&t);
	char *paths[] = { t.fv ? t.input : t.path, NULL };
	const struct pass_tool tool = { .prog = "ptt-top", .ctx = &t, .start = start, .event = event, .after = after,
					.end = end, .need = PASS_SHARED | PASS_SYMS | PASS_MODEL | PASS_ORDERED | PASS_LOSS };
	struct pass p;
	rc = pass_run(&p, &tool, 1, paths);
	if (t.left && rc == 1 && !p.write_error && !p.failed && !t.problems_then)
		rc = 0; /* left before the end: the part not read is not damage */
	stat_free(t.st);
	flightview_close(t.fv);
	free(t.prev);
	free(t.wd);
	return rc;
}
