/*
 * contention - threads taking one mutex with a known hold time; the program
 * measures its own acquisitions, total wait and total hold time (around its
 * pthread calls, with CLOCK_MONOTONIC) and prints them with -v, so that
 * ptt-stat can be checked against it.
 *
 *   contention [-t THREADS] [-n ROUNDS] [-u HOLD_US] [-v]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "ptt.h"

static pthread_mutex_t hot = PTHREAD_MUTEX_INITIALIZER;
static long rounds = 500, hold_us = 20;
static long long total_wait, total_hold, acquisitions;

static long long now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *worker(void *arg)
{
	(void)arg;
	long long wait = 0, hold = 0;
	for (long i = 0; i < rounds; i++) {
		long long t0 = now();
		pthread_mutex_lock(&hot);
		long long t1 = now();
		while (now() - t1 < hold_us * 1000)
			; /* work while holding */
		long long t2 = now();
		pthread_mutex_unlock(&hot);
		wait += t1 - t0;
		hold += t2 - t1;
		/* out of the lock long enough for a woken waiter to take it: a wake-up on a loaded 2-CPU
		 * guest can take longer than 10 us, and the holder, back first, took the lock again for
		 * hold after hold (test/cli/66's long holds saw no hand-off in a second) */
		usleep(hold_us / 40 > 10 ? (useconds_t)(hold_us / 40) : 10);
	}
	__atomic_fetch_add(&total_wait, wait, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total_hold, hold, __ATOMIC_RELAXED);
	__atomic_fetch_add(&acquisitions, rounds, __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 4, verbose = 0, c;
	while ((c = getopt(argc, argv, "t:n:u:v")) != -1) {
		switch (c) {
		case 't': threads = atoi(optarg); break;
		case 'n': rounds = atol(optarg); break;
		case 'u': hold_us = atol(optarg); break;
		case 'v': verbose = 1; break;
		default:
			fprintf(stderr, "usage: contention [-t THREADS] [-n ROUNDS] [-u HOLD_US] [-v]\n");
			return 2;
		}
	}
	if (threads < 1 || threads > 512) {
		fprintf(stderr, "contention: 1 to 512 threads\n");
		return 2;
	}
	ptt_name_object(&hot, "hot_lock");
	pthread_t th[512];
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	printf("done\n");
	if (verbose)
		fprintf(stderr, "acquisitions %lld\nwait_ns %lld\nhold_ns %lld\n", acquisitions, total_wait, total_hold);
	return 0;
}
