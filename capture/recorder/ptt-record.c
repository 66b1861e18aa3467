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
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../formats/ptt_trace.h"
#include "drain.h"
#include "flight.h"
#include "flight_file.h"
#include "out_file.h"
#include "pace.h"
#include "record_meta.h"
#include "record_opts.h"
#include "keeper.h"
#include "rotate.h"
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
	if (n && !*told && !o->quiet) /* and how to stop it: a daemon may live for days */
		fprintf(stderr, "ptt-record: %s exited; recording goes on until the %s it left (pid %s) exit%s: "
			"kill -INT %d passes SIGINT on to %s, Ctrl-C on this terminal stops the recording and leaves %s running\n",
			prog, n == 1 ? "process" : "processes", list, n == 1 ? "s" : "", (int)getpid(), n == 1 ? "it" : "them",
			n == 1 ? "it" : "them");
	*told |= n != 0;
	return 0;
}

/* A trace larger than this is not read back for the closing summary (ptt-record(1): "past 512 MB"). */
#define SUMMARY_READ_MAX (512ull << 20)

#define CALIBRATE_NS 10000000u /* the time-stamp counter's rate is measured over 10 ms */
/* ... or over the program's whole life when it ended sooner, at least 1 ms: the trace spans no
 * more than that, so its times are as exact (a short command is not kept waiting 10 ms) */
#define CALIBRATE_SHORT_NS 1000000u
/*
 * Ticks per second of the TSC, against CLOCK_MONOTONIC_RAW over at least
 * over_ns since (m0, t0).  The program is started in between, so the
 * calibration overlaps its start-up instead of delaying it (its first events
 * wait in the rings until the header is written).
 */
static uint64_t calibrate_tsc(uint64_t m0, uint64_t t0, uint64_t over_ns)
{
	uint64_t m1;
	while ((m1 = record_clock_ns(CLOCK_MONOTONIC_RAW)) - m0 < over_ns) {
		struct timespec ts = { 0, (long)(over_ns - (m1 - m0)) };
		nanosleep(&ts, NULL); /* EINTR (SIGCHLD): the loop sleeps the rest */
	}
	uint64_t t1 = ptt_rdtsc();
	m1 = record_clock_ns(CLOCK_MONOTONIC_RAW);
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
	s->flags = (o->discard ? PTT_SHM_DISCARD : 0) | (o->flight ? PTT_SHM_FLIGHT : 0) |
		   (o->streams == 2 ? PTT_SHM_CODED : 0);
	s->level = (uint32_t)o->level;
	s->class_mask = o->class_mask;
	s->stacks = (uint32_t)o->stacks;
	s->recorder_pid = (uint32_t)getpid();
	s->recorder_fd = (uint32_t)fd;
	ptt_shm_huge(s, (char *)s + ring_off, size - ring_off);
	ptt_shm_fd = fd;
	*fdp = fd;
	return s;
}

/*
 * The program's environment: ours, with the runtime preloaded (after what LD_PRELOAD held:
 * ASan's runtime must come first) and the ring's descriptor named.  NULL when out of memory.
 */
static char **child_env(const struct record_opts *o, int fd)
{
	extern char **environ;
	size_t n = 0, k = 0;
	while (environ[n])
		n++;
	const char *old = getenv("LD_PRELOAD");
	size_t plen = strlen("LD_PRELOAD=") + (old ? strlen(old) + 1 : 0) + strlen(o->libptt) + 1;
	char **env = malloc((n + 3) * sizeof *env);
	char *pre = malloc(plen), *shm = malloc(sizeof PTT_SHM_ENV + 16);
	if (!env || !pre || !shm) {
		free(env);
		free(pre);
		free(shm);
		return NULL;
	}
	snprintf(pre, plen, "LD_PRELOAD=%s%s%s", old && *old ? old : "", old && *old ? ":" : "", o->libptt);
	snprintf(shm, sizeof PTT_SHM_ENV + 16, "%s=%d", PTT_SHM_ENV, fd);
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 &&
		    !(strncmp(environ[i], PTT_SHM_ENV, sizeof PTT_SHM_ENV - 1) == 0 && environ[i][sizeof PTT_SHM_ENV - 1] == '='))
			env[k++] = environ[i];
	env[k++] = pre;
	env[k++] = shm;
	env[k] = NULL;
	return env;
}

/*
 * Start the program (posix_spawn: no copy of our memory, none of the copy-on-write faults a
 * fork costs both processes): the runtime preloaded, the ring's descriptor inherited, the
 * signals we ignore or catch back to their defaults, stdout to stderr when stdout carries the
 * trace.  A file exec refuses as not a program is run by sh, as execvp does.  0, or the errno.
 */
static int spawn_program(const struct record_opts *o, int shm_fd, char **argv, pid_t *child)
{
	int fd = fcntl(shm_fd, F_DUPFD, 990); /* a high descriptor, without close-on-exec */
	if (fd < 0)
		fd = fcntl(shm_fd, F_DUPFD, 0); /* a descriptor limit under 990 */
	char **env = fd >= 0 ? child_env(o, fd) : NULL;
	if (!env) {
		int err = fd < 0 ? errno : ENOMEM;
		if (fd >= 0)
			close(fd);
		return err;
	}
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t def;
	posix_spawn_file_actions_init(&fa);
	if (strcmp(o->output, "-") == 0)
		posix_spawn_file_actions_adddup2(&fa, 2, 1); /* stdout carries the trace: the program's output goes to stderr */
	posix_spawnattr_init(&at);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGTERM);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF);
	int err = posix_spawnp(child, argv[0], &fa, &at, argv, env);
	char path[PATH_MAX];
	if (err == ENOEXEC && record_find_program(argv[0], path, sizeof path) == 0) {
		size_t n = 0;
		while (argv[n])
			n++;
		char **sh = malloc((n + 2) * sizeof *sh);
		if (sh) {
			sh[0] = "/bin/sh";
			sh[1] = path;
			memcpy(sh + 2, argv + 1, n * sizeof *sh); /* with the NULL */
			err = posix_spawn(child, "/bin/sh", &fa, &at, sh, env);
			free(sh);
		}
	}
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	close(fd);
	size_t k = 0;
	while (env[k])
		k++;
	free(env[k - 1]); /* the two child_env made */
	free(env[k - 2]);
	free(env);
	return err;
}

/*
 * The end-of-run summary's last line: the most contended locks, which
 * ptt-stat (the one place that accounts for them) computes from the
 * finished files, parts first to last: ptt-stat --brief, found beside us.
 */
static void contended_locks(const struct record_opts *o, const struct rotate *rot, uint32_t first, uint32_t last)
{
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
	uint32_t nfiles = last - first + 1;
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
				rotate_name(rot, first + i, argv[3 + i], PATH_MAX + 16);
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

/*
 * The end-of-run summary on stderr: what was written where, the limits
 * met, then the most contended locks (contended_locks).
 */
static void summary(const struct record_opts *o, const struct rotate *rot, const struct drain_stats *st, uint64_t bytes)
{
	uint32_t part = rot->part;
	uint32_t first = o->max_files && part > o->max_files ? part - o->max_files + 1 : 1;
	char a[PATH_MAX + 16], b[PATH_MAX + 16];
	if (o->max_size) {
		rotate_name(rot, first, a, sizeof a);
		rotate_name(rot, part, b, sizeof b);
		fprintf(stderr, "ptt-record: %s%s%s (%u file%s", a, part > first ? " to " : "", part > first ? b : "",
			part - first + 1, part > first ? "s" : "");
		if (first > 1 && rot->spared)
			fprintf(stderr, "; %u older removed, as -f asks, %u left (not regular files of this run)",
				first - 1 - rot->spared, rot->spared);
		else if (first > 1)
			fprintf(stderr, "; %u older removed, as -f asks", first - 1);
		fprintf(stderr, "): ");
	} else {
		fprintf(stderr, "ptt-record: %s: ", strcmp(o->output, "-") ? o->output : "stdout");
	}
	uint64_t events0, lost0;
	if (first > 1 && rotate_counts_at(rot, first, &events0, &lost0)) /* the figures of the kept files, apart from the run's */
		fprintf(stderr, "%" PRIu64 " events and %" PRIu64 " lost in the kept files; in the whole run ",
			st->events - events0, st->lost - lost0);
	fprintf(stderr, "%" PRIu64 " events, %" PRIu64 " lost, %" PRIu64 " ring waits, %" PRIu64 " bytes written\n",
		st->events, st->lost, st->waits, bytes);
	if (!o->out_is_file || bytes > SUMMARY_READ_MAX) { /* no ptt-stat to say the limits met: say them here */
		char line[256];
		for (unsigned i = 0; ptt_limits_sentence(&st->limits, i, line, sizeof line); i++)
			fprintf(stderr, "ptt-record: limit: %s\n", line);
	}
	if (!o->out_is_file)
		return; /* gone down a pipe (-o -, a fifo, >(...)): nothing to read back */
	if (bytes > SUMMARY_READ_MAX)
		fprintf(stderr, "ptt-record: contended locks: ptt-stat %s%s\n", o->output, o->max_size ? ".*" : "");
	else
		contended_locks(o, rot, first, part);
}

/*
 * One recording.  The phases (recorder_setup, _launch, then _drain and
 * _finish, or _fly for --flight) fill it in; recorder_free, the one cleanup
 * path, undoes what was done whichever phase stopped.  Everything that can
 * fail for want of memory or of an output is set up before the program is
 * started: once it runs, a failure only stops the writing (recorder_fail)
 * while ptt-record waits for the program and reaps it.
 */
struct recorder {
	struct record_opts o;
	struct record_info in;   /* what the header tells; in.child is set once the program runs */
	struct ptt_clock clk;
	int out_fd;              /* the trace's file (1: stdout), -1 when not open */
	char out_name[PATH_MAX + 16]; /* the first file: FILE, or FILE.0001 with -m */
	struct out_file out;     /* what the run may do to out_name (out_file.h) */
	int shm_fd;
	uint64_t cal_mono, cal_tsc; /* the start of the TSC's calibration */
	int status, gone, told;  /* the program's wait status once it is gone; the daemons it left told about */
	struct ptt_writer *w;
	struct drain *d;
	struct flight *f;
	struct ptt_inforce *keeper; /* -m: the state in force, seen by the drain (not with --streams) */
	struct keeper *heads;       /* --streams -m: the thread that writes it at each part's end (keeper.h) */
	struct rotate rot;
	uint32_t types_seen;
	struct record_hook hook;
	char *hdr;
	size_t hsize;
	int werr;                /* the first error writing the trace: nothing more is written */
	int early_held;          /* recorder_early drained into bytes held back until the header */
	int over_early;          /* the program was over before the clock's rate was measured */
	int code;                /* ptt-record's exit status */
};

/* The name of the file being written, for messages. */
static void current_name(const struct recorder *r, char *buf, size_t size)
{
	if (r->out_fd == 1)
		snprintf(buf, size, "stdout");
	else if (r->o.max_size)
		rotate_name(&r->rot, r->rot.part, buf, size);
	else
		snprintf(buf, size, "%s", r->o.output);
}

/*
 * The trace cannot be written (a full disk, a closed pipe, a part that
 * cannot be opened): say so once, on one line, and stop writing and making
 * the program wait.  The program runs on to its end, reaped as usual, and
 * its status stays ptt-record's.  Returns r->werr.
 */
static int recorder_fail(struct recorder *r, int rc, const char *file)
{
	if (!rc || r->werr)
		return r->werr;
	r->werr = rc;
	__atomic_store_n(&r->in.shm->stopping, 1, __ATOMIC_RELEASE);
	char name[PATH_MAX + 16];
	if (!file) {
		current_name(r, name, sizeof name);
		file = name;
	}
	if (r->gone)
		fprintf(stderr, "ptt-record: %s: %s; the trace is incomplete\n", file, ptt_strerror(rc));
	else
		fprintf(stderr, "ptt-record: %s: %s; the trace is incomplete, %s (pid %d) runs on untraced to its end\n",
			file, ptt_strerror(rc), r->in.cmd[0], (int)r->in.child);
	return rc;
}

static int exit_code(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

/*
 * Open the output: FILE (FILE.0001 with -m) or stdout.  Nothing is
 * truncated yet: a file already there keeps its bytes until the program
 * runs (claim_output), and is never removed (out_file.h).
 */
static int setup_output(struct recorder *r)
{
	const struct record_opts *o = &r->o;
	rotate_init(&r->rot, o->output, o->max_size, o->max_files);
	if (o->max_size)
		rotate_name(&r->rot, 1, r->out_name, sizeof r->out_name);
	else
		snprintf(r->out_name, sizeof r->out_name, "%s", o->output);
	if (strcmp(o->output, "-") == 0)
		r->out_fd = 1;
	else if ((r->out_fd = out_open(r->out_name, 1, &r->out)) < 0) {
		fprintf(stderr, "ptt-record: %s: %s\n", r->out_name, strerror(errno));
		return -1;
	}
	struct stat st;
	r->o.out_is_file = fstat(r->out_fd, &st) == 0 && S_ISREG(st.st_mode);
	r->o.out_is_pipe = r->out_fd == 1;
	return 0;
}

/* The shared rings, and the clocks read at the trace's start. */
static int setup_rings(struct recorder *r)
{
	struct ptt_shm *s = make_shm(&r->o, &r->shm_fd);
	if (!s)
		return -1;
	r->in.shm = s;
	s->use_tsc = (uint32_t)use_tsc();
	r->cal_mono = record_clock_ns(CLOCK_MONOTONIC_RAW);
	r->cal_tsc = s->use_tsc ? ptt_rdtsc() : 0;
	r->in.realtime = record_clock_ns(CLOCK_REALTIME);
	s->start_ticks = record_ticks(s);
	wake_word = &s->wake;
	return 0;
}

/* -m: the next file once this one has its size, between passes or within one (drain_set_cut). */
static int next_file(void *ctx)
{
	struct recorder *r = ctx;
	const struct drain_stats *st = drain_stats(r->d);
	int rc = rotate_maybe(&r->rot, r->w, &r->out_fd, r->keeper, r->hook.last_ticks, st->events, st->lost);
	keeper_moved(r->heads, r->rot.part - 1);
	return rc;
}

/* Whatever the recording will need, allocated before the program starts; no thread yet (see recorder_launch). */
static int setup_writing(struct recorder *r)
{
	const struct record_opts *o = &r->o;
	if (o->flight)
		return (r->f = flight_new(r->in.shm)) ? 0 : PTT_E_NOMEM;
	int rc = ptt_writer_open(&r->w, r->out_fd, o->zlevel);
	if (rc)
		return rc;
	ptt_writer_set_compressor(r->w, o->compressor);
	if (o->streams)
		ptt_writer_set_streams(r->w, o->streams == 2 ? PTT_STREAMS_CODED : 1); /* coded: version 4 */
	else
		ptt_writer_set_compact(r->w, 1); /* with -z too: the compressor then has a fifth of the bytes */
	struct ptt_clock unset; /* the real one once the TSC is measured: drain_set_clock */
	ptt_clock_init(&unset, r->in.shm->start_ticks, 1000000000u);
	r->d = drain_new(r->in.shm, r->w, &unset);
	r->keeper = o->max_size && !o->streams ? ptt_inforce_new() : NULL;
	r->heads = o->max_size && o->streams ? keeper_start(o->output) : NULL;
	r->rot.kept = keeper_kept(r->heads);
	r->hsize = record_header_size(r->in.cmd);
	r->hdr = malloc(r->hsize);
	if (!r->d || (o->max_size && !r->keeper && !r->heads) || !r->hdr)
		return PTT_E_NOMEM;
	struct record_hook hook = { r->in.shm, &r->types_seen, &r->rot, r->keeper, 0 };
	r->hook = hook;
	drain_set_hook(r->d, record_before, &r->hook, record_before_sees(&r->hook));
	drain_set_streams(r->d, o->streams);
	if (o->max_size)
		drain_set_cut(r->d, next_file, r);
	return 0;
}

static void setup_signals(const struct record_opts *o)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (o->flight)
		sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigchld;
	sa.sa_flags = SA_NOCLDSTOP; /* no SA_RESTART: a sleep ends at once */
	sigaction(SIGCHLD, &sa, NULL);
	/* the processes the program leaves behind (daemons) become ours: see reap() */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
}

/* Phase 1: everything that can fail, before the program starts.  0, or -1 (said; r->code 1). */
static int recorder_setup(struct recorder *r, char **cmd)
{
	r->in.o = &r->o;
	r->in.cmd = cmd;
	r->in.clk = &r->clk;
	r->code = 1;
	record_preflight(&r->o, cmd[0]);
	if (setup_output(r) || setup_rings(r))
		return -1;
	int rc = setup_writing(r);
	if (rc) {
		fprintf(stderr, "ptt-record: %s\n", ptt_strerror(rc));
		return -1;
	}
	setup_signals(&r->o);
	return 0;
}

/* The rate of the time-stamp counter, measured while the program starts: the trace's clock. */
static void measure_clock(struct recorder *r)
{
	struct ptt_shm *s = r->in.shm;
	uint64_t over = r->over_early ? CALIBRATE_SHORT_NS : CALIBRATE_NS;
	uint64_t hz = s->use_tsc ? calibrate_tsc(r->cal_mono, r->cal_tsc, over) : 1000000000u;
	for (int again = 0; !hz && again < 3; again++) /* the clocks did not move apart: measure anew */
		hz = calibrate_tsc(record_clock_ns(CLOCK_MONOTONIC_RAW), ptt_rdtsc(), over);
	if (!hz) {
		fprintf(stderr, "ptt-record: cannot measure the time-stamp counter's rate; times are in ticks\n");
		hz = 1000000000u;
	}
	ptt_clock_init(&r->clk, s->start_ticks, hz);
}

/* The program runs: the output is the trace's now (a regular file already there is emptied). */
static void claim_output(struct recorder *r)
{
	if (r->out_fd == 1)
		return;
	recorder_fail(r, out_claim(r->out_fd, r->out_name, &r->out), r->out_name);
	rotate_first_file(&r->rot, &r->out);
}

/*
 * Phase 2: start the program.  0 once it runs; -1 when it cannot be run (said,
 * r->code 127 when it is not found, else 126, as a shell's).
 */
static int recorder_launch(struct recorder *r)
{
	pid_t child;
	int err = spawn_program(&r->o, r->shm_fd, r->in.cmd, &child);
	if (err) {
		fprintf(stderr, "ptt-record: %s: %s\n", r->in.cmd[0], strerror(err));
		r->code = err == ENOENT ? 127 : 126;
		return -1;
	}
	r->in.child = child;
	claim_output(r);
	if (r->o.flight)
		measure_clock(r);
	return 0;
}

/* The trace's beginning: the header (kept for -m's later files), before what recorder_early
 * drained, and the recorder's start event. */
static void start_trace(struct recorder *r)
{
	measure_clock(r);
	drain_set_clock(r->d, &r->clk);
	if (r->o.zlevel)
		ptt_writer_async(r->w); /* compression off the drain's path: rings are emptied while a block compresses */
	record_header(r->hdr, r->hsize, &r->in);
	size_t len = strlen(r->hdr);
	int rc = r->early_held ? ptt_writer_unhold(r->w, r->hdr, len) : ptt_writer_meta(r->w, r->hdr, len);
	if (!rc)
		rc = rotate_keep_meta(&r->rot, r->hdr, strlen(r->hdr));
	recorder_fail(r, rc, NULL);
	uint32_t a[3] = { (uint32_t)r->in.child };
	ptt_put64(a + 1, r->o.ring_bytes);
	drain_note(r->d, PTT_EV_REC_START, a, 3);
}

/* Forward a signal sent to ptt-record alone to the program, while it lives. */
static void forward_signal(struct recorder *r)
{
	if (!pending_signal || r->gone)
		return;
	if (r->d) {
		uint32_t b[2] = { (uint32_t)pending_signal, (uint32_t)r->in.child };
		drain_note(r->d, PTT_EV_REC_SIGNAL, b, 2);
	}
	kill(r->in.child, pending_signal);
	pending_signal = 0;
}

/* Reap what ended; 1 once the recording is over (after_program). */
static int program_over(struct recorder *r)
{
	child_done = 0; /* read before reap: a SIGCHLD after it wakes the next pass */
	int none_left = reap(r->in.child, &r->status, &r->gone);
	return r->gone && after_program(&r->o, none_left, r->in.cmd[0], &r->told);
}

/* Sleep up to ns, unless a writer with a full ring (or the program's end) wakes us first. */
static void doze(struct recorder *r, uint64_t ns, int woken)
{
	struct timespec ts = { 0, (long)ns };
	uint32_t seen = __atomic_load_n(&r->in.shm->wake, __ATOMIC_ACQUIRE);
	if (!woken)
		syscall(SYS_futex, &r->in.shm->wake, FUTEX_WAIT, seen, &ts, NULL, 0);
}

/* Held back at most while the clock is measured (recorder_early): the program then waits as before. */
#define EARLY_HELD_MAX (64u << 20)

/*
 * What a pass empties of a ring, for the pacing: with --streams=coded the coded stream's part
 * of it (shm.h), which the threads' coded bytes fill (the pass's bytes are those): paced by the
 * whole ring, a slow writer's stream was let fill to its end (sqlite3: 40 writer waits a run
 * against the default's 5).
 */
static uint64_t paced_ring_bytes(const struct recorder *r)
{
	return r->o.streams == 2 ? ptt_coded_bytes((uint32_t)(r->o.ring_bytes / 4)) : r->o.ring_bytes;
}

/*
 * Phase 3a, while the time-stamp counter's rate is measured (10 ms from the
 * rings' making): drain the rings already, with the rate measured so far,
 * into bytes the writer holds back until the header, which tells the rate,
 * goes before them (start_trace).  A program that starts at once no longer
 * fills its ring and waits for the measure to end (8 ms of a lock loop's
 * 65).  The counts of lost events are reported once the clock is known.
 * Not with -m (below) nor --flight.
 */
static void recorder_early(struct recorder *r)
{
	struct ptt_shm *s = r->in.shm;
	/* -m cuts files between the passes of recorder_drain only: what a short program writes
	 * before it would all go to the first file, whatever its size */
	if (r->o.max_size)
		return;
	if (r->o.zlevel)
		ptt_writer_async(r->w); /* compression off the drain's path: rings are emptied while a block compresses */
	if (ptt_writer_hold(r->w) != 0)
		return;
	r->early_held = 1;
	drain_hold_reports(r->d, 1);
	struct pace pace = { 0 };
	for (;;) {
		uint64_t mono = record_clock_ns(CLOCK_MONOTONIC_RAW), ticks = s->use_tsc ? ptt_rdtsc() : 0;
		if (mono - r->cal_mono >= CALIBRATE_NS || ptt_writer_held(r->w) > EARLY_HELD_MAX)
			break;
		if (program_over(r)) {
			r->over_early = 1;
			break;
		}
		struct ptt_clock clk; /* for the watermark's slack and the pacing only */
		uint64_t hz = s->use_tsc && ticks > r->cal_tsc && mono > r->cal_mono
				      ? (uint64_t)((unsigned __int128)(ticks - r->cal_tsc) * 1000000000u / (mono - r->cal_mono))
				      : 1000000000u;
		ptt_clock_init(&clk, s->start_ticks, hz ? hz : 1000000000u);
		drain_set_clock(r->d, &clk);
		forward_signal(r);
		long n = 0;
		uint64_t t0 = record_clock_ns(CLOCK_MONOTONIC);
		int rc = record_sync_types(s, r->w, &r->types_seen, &r->rot);
		if (!rc && (n = drain_pass(r->d, 0)) < 0)
			rc = (int)n;
		recorder_fail(r, rc, NULL);
		if (r->werr)
			break;
		const struct drain_stats *st = drain_stats(r->d);
		uint64_t pause = pace_next(&pace, st->pace_bytes, st->upto_ns, t0, paced_ring_bytes(r),
					   record_clock_ns(CLOCK_MONOTONIC) - t0, 1000000u);
		if (pause > CALIBRATE_NS - (mono - r->cal_mono))
			pause = CALIBRATE_NS - (mono - r->cal_mono);
		if (pause)
			doze(r, pause, child_done);
	}
	drain_hold_reports(r->d, 0);
}

/* One pass of the drain: the user types, the rings, a flush now and then, the next file (-m: also within a pass, drain_set_cut). */
static void drain_once(struct recorder *r, uint64_t now, uint64_t *last_flush)
{
	if (r->werr)
		return;
	long n = 0;
	int rc = record_sync_types(r->in.shm, r->w, &r->types_seen, &r->rot);
	if (!rc && (n = drain_pass(r->d, 0)) < 0)
		rc = (int)n;
	if (!rc && (r->out_fd == 1 || now - *last_flush > 100000000u)) {
		rc = ptt_writer_flush(r->w);
		*last_flush = now;
	}
	if (!rc)
		rc = next_file(r);
	recorder_fail(r, rc, rc && r->rot.failed[0] ? r->rot.failed : NULL);
	if (r->heads)
		rotate_drop(&r->rot); /* -f: the parts the keeper has read since */
}

/* Phase 3: drain the rings while the program (and what it left) runs. */
static void recorder_drain(struct recorder *r)
{
	int exited = 0, warned = 0;
	struct pace pace = { 0 }; /* the rings hold nothing older than the trace's start */
	uint64_t t_start = record_clock_ns(CLOCK_MONOTONIC), last_flush = t_start;
	while (!exited) {
		forward_signal(r);
		exited = program_over(r);
		uint64_t now = record_clock_ns(CLOCK_MONOTONIC);
		drain_once(r, now, &last_flush);
		if (!warned && !r->in.shm->handshake && (exited || now - t_start > 3000000000u)) {
			warned = 1;
			if (!r->o.quiet || exited)
				fprintf(stderr, "ptt-record: %s: the tracing runtime did not load in the program "
					"(static or setuid binary, or LD_PRELOAD removed?); the trace holds no program events\n",
					r->in.cmd[0]);
		}
		if (exited)
			break;
		const struct drain_stats *st = drain_stats(r->d);
		uint64_t pause = pace_next(&pace, st->pace_bytes, st->upto_ns, now, paced_ring_bytes(r),
					   record_clock_ns(CLOCK_MONOTONIC) - now, r->o.out_is_pipe ? 20000000u : 50000000u);
		if (r->werr)
			pause = 1000000;
		if (pause)
			doze(r, pause, child_done);
	}
}

/* The END block's lines: the counts of the run, the program's status, the compressor's work. */
static void end_lines(struct recorder *r, char *end, size_t size, uint64_t *blocks, uint64_t *behind)
{
	const struct drain_stats *st = drain_stats(r->d);
	struct rusage ru; /* the recorder's processor time, all its threads (the compressor's too) */
	uint64_t cpu = getrusage(RUSAGE_SELF, &ru) ? 0
		: ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
		  ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
	int len = snprintf(end, size, "end_ticks %" PRIu64 "\nevents %" PRIu64 "\nlost %" PRIu64 "\nwaits %" PRIu64
			   "\nlate %" PRIu64 "\nsalvaged %" PRIu64 "\nexit_status %d\nprocesses %u\n"
			   "recorder_cpu_ns %" PRIu64 "\ncpus %ld\n",
			   record_ticks(r->in.shm), st->events, st->lost, st->waits, st->late, st->salvaged, r->code,
			   r->in.shm->attached, cpu, sysconf(_SC_NPROCESSORS_ONLN));
	uint64_t cost = __atomic_load_n(&r->in.shm->trace_cost, __ATOMIC_ACQUIRE);
	if (cost && r->clk.hz && len > 0 && (size_t)len < size) /* what the trace path adds per event (ptt_calibrate) */
		len += snprintf(end + len, size - (size_t)len, "trace_path_ps %.0f\n", (double)cost * 1e9 / (double)r->clk.hz);
	if (r->o.zlevel) { /* every file's, once the queue is written out: the END lines count them all */
		if (!r->werr)
			recorder_fail(r, ptt_writer_settle(r->w), NULL);
		ptt_writer_block_counts(r->w, blocks, behind);
		snprintf(end + len, size - (size_t)len, "compressor %s\nblocks %" PRIu64 "\nblocks_raw_behind %" PRIu64 "\n",
			 r->o.compressor == PTT_COMP_ZLIB ? "zlib" : "zstd", *blocks, *behind);
	}
}

/*
 * --streams -m: the last parts' heads, written by the keeper (keeper.h) before the summary, and
 * the parts -f removes once it has read them.  PTT_DEBUG: the keeper's processor time and the wait.
 */
static void finish_heads(struct recorder *r)
{
	if (!r->heads)
		return;
	const char *why;
	uint32_t part;
	uint64_t cpu, wait;
	keeper_finish(r->heads, r->rot.part, &why, &part, &cpu, &wait);
	rotate_drop(&r->rot);
	if (why) {
		char name[PATH_MAX + 16];
		rotate_name(&r->rot, part, name, sizeof name);
		fprintf(stderr, "ptt-record: %s: %s; read alone, it does not know the names and holds in force before it\n",
			name, why);
	}
	if (getenv("PTT_DEBUG"))
		fprintf(stderr, "ptt-record: keeper: %.3f s of processor time, the run's end waited %.3f s for it\n",
			(double)cpu / 1e9, (double)wait / 1e9);
}

/* Phase 4: the program is gone: the last records, the recorder's stop event, the END block, the summary. */
static void recorder_finish(struct recorder *r)
{
	__atomic_store_n(&r->in.shm->stopping, 1, __ATOMIC_RELEASE);
	int status = r->status;
	r->code = exit_code(status);
	uint32_t b[2] = { WIFEXITED(status) ? (uint32_t)WEXITSTATUS(status) : 0,
			  WIFSIGNALED(status) ? (uint32_t)WTERMSIG(status) : 0 };
	if (!r->werr) {
		long n = drain_pass(r->d, 0);
		int rc = n < 0 ? (int)n : record_sync_types(r->in.shm, r->w, &r->types_seen, &r->rot);
		drain_note(r->d, PTT_EV_REC_STOP, b, 2);
		if (!rc && (n = drain_pass(r->d, 1)) < 0)
			rc = (int)n;
		recorder_fail(r, rc, NULL);
	}
	struct drain_stats stats = *drain_stats(r->d);
	if (r->o.streams == 2) /* coded: the program's limit records are not read; its runtime summed them */
		for (unsigned t = 1; t < PTT_LIMIT_COUNT; t++)
			ptt_limits_met(&stats.limits, t, __atomic_load_n(&r->in.shm->limit_count[t], __ATOMIC_RELAXED),
				       r->in.shm->limit_limit[t], r->in.shm->limit_need[t]);
	char end[1024];
	uint64_t blocks = 0, behind = 0;
	end_lines(r, end, sizeof end, &blocks, &behind);
	if (!r->werr)
		recorder_fail(r, ptt_writer_end(r->w, end, strlen(end)), NULL);
	uint64_t bytes = r->rot.rotated_bytes + ptt_writer_bytes(r->w);
	ptt_writer_close(r->w);
	r->w = NULL;
	if (r->out_fd != 1 && close(r->out_fd) != 0 && !r->werr) {
		fprintf(stderr, "ptt-record: %s: %s\n", r->o.output, strerror(errno));
		r->werr = 1;
	}
	r->out_fd = -1;
	finish_heads(r);
	if (!r->werr && !r->o.quiet && behind)
		fprintf(stderr, "ptt-record: %" PRIu64 " of %" PRIu64 " blocks written raw: the compressor was behind\n",
			behind, blocks);
	if (!r->werr && !r->o.quiet)
		summary(&r->o, &r->rot, &stats, bytes);
}

/*
 * Phases 3 and 4 for --flight: nothing is written while the program runs.
 * The loop forwards signals, takes snapshots on SIGUSR1, gives back the
 * rings of ended threads, and at the end (exit, crash, kill) writes the
 * rings to the output.
 */
static void recorder_fly(struct recorder *r)
{
	unsigned snaps = 0;
	for (;;) {
		forward_signal(r);
		if (program_over(r))
			break;
		if (snapshot_asked) {
			snapshot_asked = 0;
			flight_file_snapshot(&r->in, r->f, ++snaps);
		}
		flight_trim(r->f);
		__atomic_store_n(&r->in.shm->heartbeat, r->in.shm->heartbeat + 1, __ATOMIC_RELEASE);
		doze(r, 20000000, child_done || snapshot_asked); /* a thread waiting for a ring at the cap wakes us */
	}
	__atomic_store_n(&r->in.shm->stopping, 1, __ATOMIC_RELEASE);
	r->code = exit_code(r->status);
	uint64_t events = 0;
	int rc = flight_file_write(&r->in, r->f, r->out_fd, r->code, &events);
	if (rc)
		recorder_fail(r, rc, r->o.output);
	else if (!r->o.quiet)
		fprintf(stderr, "ptt-record: %s: flight recording, %" PRIu64 " events\n", r->o.output, events);
	if (close(r->out_fd) != 0 && !rc)
		fprintf(stderr, "ptt-record: %s: %s\n", r->o.output, strerror(errno));
	r->out_fd = -1;
}

/* The one cleanup path, from wherever the phases stopped; the file made for a program that never ran is removed
 * (only that: a file there before is left as it was, out_file.h). */
static void recorder_free(struct recorder *r)
{
	if (r->w)
		ptt_writer_close(r->w);
	drain_free(r->d);
	flight_free(r->f);
	ptt_inforce_free(r->keeper);
	keeper_free(r->heads);
	rotate_free(&r->rot);
	free(r->hdr);
	if (r->out_fd >= 0 && r->out_fd != 1)
		close(r->out_fd);
	if (!r->in.child)
		out_remove(r->out_name, &r->out);
}

int main(int argc, char **argv)
{
	struct recorder r = { .out_fd = -1, .shm_fd = -1 };
	int first = record_parse_opts(&r.o, argc, argv);
	if (first < 0)
		return first == -1 ? 0 : 2;
	if (recorder_setup(&r, argv + first) == 0 && recorder_launch(&r) == 0) {
		if (r.o.flight) {
			recorder_fly(&r);
		} else {
			recorder_early(&r);
			start_trace(&r);
			recorder_drain(&r);
			recorder_finish(&r);
		}
	}
	recorder_free(&r);
	return r.code;
}
