/*
 * cp_work.h - shared by the critical-path ground-truth examples (cp_*.c):
 * work of a given wall length, the arguments, and the ground truth they print.
 *
 * Work is a busy loop that spins until CLOCK_MONOTONIC passes a deadline, so
 * "a hold of X ms" is X ms of wall time whenever the thread has a CPU.  Each
 * example keeps at most 2 threads runnable at once (this machine has 2 CPUs):
 * more would stretch the holds by the scheduler's sharing, and the hand-computed
 * path would no longer be the run's.
 *
 * CP_WORK is a macro, not a function: its code carries the line of its use, so
 * a sampling profiler (Coz) sees each critical section as a line of its own.
 * Its inner loop is plain arithmetic between clock reads, so that most samples
 * fall in the example's own code, not in the vDSO's clock_gettime.
 *
 * The ground truth goes to stderr when CP_TRUTH=1 is set (stdout is the same
 * traced or not: nothing), one fact a line, "PROG: KEY VALUE ms":
 *   PROG: wall MS                     main's start to main's end, measured
 *   PROG: path MS                     the critical path's length, by formula
 *   PROG: on-path LOCK MS             the time LOCK is held on the path, by formula
 *   PROG: on-path running MS          the path's time outside any lock, by formula
 *   PROG: what-if LOCK:-50% MS        the run time with LOCK's holds halved, by formula
 * The formulas leave out thread creation, wake-up latencies and the like (tens
 * of microseconds each); the wall time includes them.
 *
 * With -DPTT_COZ (bench/whatif_coz.sh), CP_PROGRESS is Coz's progress point;
 * otherwise nothing, and coz.h is not needed.
 */
#ifndef PTT_EXAMPLE_CP_WORK_H
#define PTT_EXAMPLE_CP_WORK_H
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef PTT_COZ
#include <coz.h>
#define CP_PROGRESS COZ_PROGRESS_NAMED("unit")
#else
#define CP_PROGRESS do { } while (0)
#endif

static volatile unsigned long cp_sink;

static inline double cp_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Spin for MS milliseconds of wall time (one source line: see above). */
#define CP_WORK(ms) do { double cp_end_ = cp_now_ms() + (ms); do { for (int cp_i_ = 0; cp_i_ < 200; cp_i_++) cp_sink += (unsigned long)cp_i_; } while (cp_now_ms() < cp_end_); } while (0)

/* Argument I of argv as milliseconds (or a count), DEF when absent; exits 2 on a bad one. */
static inline double cp_arg(int argc, char **argv, int i, double def)
{
	if (i >= argc)
		return def;
	char *end;
	double v = strtod(argv[i], &end);
	if (end == argv[i] || *end || v < 0 || v > 1e6) {
		fprintf(stderr, "%s: %s: not a duration in ms (or a count)\n", argv[0], argv[i]);
		exit(2);
	}
	return v;
}

/* -r ROUNDS, when it is the first argument: the number of times the scenario repeats (default DEF). */
static inline long cp_rounds(int *argc, char ***argv, long def)
{
	if (*argc >= 3 && !strcmp((*argv)[1], "-r")) {
		long r = atol((*argv)[2]);
		if (r < 1) {
			fprintf(stderr, "%s: -r %s: not a number of rounds\n", (*argv)[0], (*argv)[2]);
			exit(2);
		}
		(*argv)[2] = (*argv)[0];
		*argc -= 2;
		*argv += 2;
		return r;
	}
	return def;
}

/* pthread_create, or exit 1 with a message. */
static inline void cp_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	int e = pthread_create(t, NULL, fn, arg);
	if (e) {
		fprintf(stderr, "pthread_create: %s\n", strerror(e));
		exit(1);
	}
}

static inline int cp_truth_wanted(void)
{
	const char *t = getenv("CP_TRUTH");
	return t && *t && strcmp(t, "0");
}

/* One line of ground truth (see above), when CP_TRUTH asks. */
static inline void cp_truth(const char *prog, const char *key, const char *what, double ms)
{
	if (cp_truth_wanted())
		fprintf(stderr, "%s: %s%s%s %.3f ms\n", prog, key, what ? " " : "", what ? what : "", ms);
}
#endif
