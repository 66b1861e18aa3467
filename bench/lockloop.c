/*
 * lockloop - the capture-cost workload: THREADS threads each lock and
 * unlock a mutex ITER times, uncontended (a private mutex per thread) or
 * all on one shared mutex.  Each thread times its own loop with
 * clock_gettime.  stdout: the median of the threads' ns per lock/unlock
 * pair (one number, for scripts); stderr: every thread's figure and the
 * total (wall time of the whole run / all pairs).
 *
 * With WARMUP, each thread first runs WARMUP untimed pairs and sleeps half
 * a second: under ptt-record with a ring smaller than the warm-up's records,
 * every page of the ring has been touched and the recorder has emptied it,
 * so the timed loop pays the trace path alone (no first-touch page faults,
 * no waiting for room) when its records fit in the ring.
 *
 *   lockloop THREADS ITER private|shared [WARMUP]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAXT = 64 };

static long iter, warmup;
static int shared_mode;
static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static double per[MAXT];

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *loop(void *arg)
{
	long id = (long)arg;
	pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER, *m = shared_mode ? &shared : &own;
	if (warmup) {
		for (long i = 0; i < warmup; i++) {
			pthread_mutex_lock(m);
			pthread_mutex_unlock(m);
		}
		struct timespec half = { 0, 500000000 };
		nanosleep(&half, NULL);
	}
	double t0 = now();
	for (long i = 0; i < iter; i++) {
		pthread_mutex_lock(m);
		pthread_mutex_unlock(m);
	}
	per[id] = (now() - t0) / (double)iter;
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if ((argc != 4 && argc != 5) || (strcmp(argv[3], "private") && strcmp(argv[3], "shared"))) {
		fprintf(stderr, "usage: lockloop THREADS ITER private|shared [WARMUP]\n");
		return 2;
	}
	int n = atoi(argv[1]);
	iter = atol(argv[2]);
	shared_mode = !strcmp(argv[3], "shared");
	warmup = argc == 5 ? atol(argv[4]) : 0;
	if (n < 1 || n > MAXT || iter < 1 || warmup < 0) {
		fprintf(stderr, "lockloop: THREADS must be 1-%d, ITER positive, WARMUP not negative\n", MAXT);
		return 2;
	}
	pthread_t th[MAXT];
	double t0 = now();
	for (long i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, loop, (void *)i)) {
			fprintf(stderr, "lockloop: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	double total = (now() - t0 - (warmup ? 5e8 : 0)) / ((double)(iter + warmup) * n);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "thread %d: %.2f ns/pair\n", i, per[i]);
	fprintf(stderr, "total: %.2f ns/pair (wall time / %ld pairs)\n", total, iter * n);
	qsort(per, (size_t)n, sizeof per[0], cmp);
	printf("%.2f\n", per[n / 2]);
	return 0;
}
