/*
 * churn - short-lived threads, one after another: more threads than the
 * recorder has rings, started faster than it frees the rings of those that
 * ended.  Each locks one mutex once.  Threads are started in rounds of
 * ROUND, joined before the next round starts.
 *
 *   churn [THREADS [ROUND]]   (default 2000 threads, one at a time)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long locks;

static void *work(void *arg)
{
	pthread_mutex_lock(&m);
	locks++;
	pthread_mutex_unlock(&m);
	return arg;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000;
	long round = argc > 2 ? atol(argv[2]) : 1;
	if (round < 1 || round > 1000) {
		fprintf(stderr, "usage: churn [THREADS [ROUND]] (ROUND 1-1000)\n");
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
	}
	printf("threads %ld locks %ld\n", n, locks);
	return 0;
}
