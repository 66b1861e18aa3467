/*
 * churn - short-lived threads, one after another: more threads than the
 * recorder has rings, started faster than it frees the rings of those that
 * ended.  Each locks one mutex LOCKS times (once by default).  Threads are
 * started in rounds of ROUND, joined before the next round starts, which
 * comes PAUSE milliseconds later (none by default).
 *
 *   churn [THREADS [ROUND [LOCKS [PAUSE]]]]   (default 2000 threads, one at a time)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long locks, per_thread = 1;

static void *work(void *arg)
{
	for (long i = 0; i < per_thread; i++) {
		pthread_mutex_lock(&m);
		locks++;
		pthread_mutex_unlock(&m);
	}
	return arg;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000;
	long round = argc > 2 ? atol(argv[2]) : 1;
	long pause_ms = argc > 4 ? atol(argv[4]) : 0;
	if (argc > 3)
		per_thread = atol(argv[3]);
	if (round < 1 || round > 1000 || per_thread < 0 || pause_ms < 0) {
		fprintf(stderr, "usage: churn [THREADS [ROUND [LOCKS [PAUSE]]]] (ROUND 1-1000)\n");
		return 2;
	}
	pthread_t t[1000];
	for (long i = 0; i < n; i += round) {
		long k = n - i < round ? n - i : round;
		for (long j = 0; j < k; j++)
			if (pthread_create(&t[j], NULL, work, NULL) != 0) {
				perror("churn: pthread_create");
				return 1;
			}
		for (long j = 0; j < k; j++)
			pthread_join(t[j], NULL);
		struct timespec ts = { pause_ms / 1000, pause_ms % 1000 * 1000000 };
		if (pause_ms)
			nanosleep(&ts, NULL);
	}
	printf("threads %ld locks %ld\n", n, locks);
	return 0;
}
