/*
 * churn - short-lived threads, one after another: more threads than the
 * recorder has rings, started faster than it frees the rings of those that
 * ended.  Each locks one mutex once.
 *
 *   churn [THREADS]   (default 2000)
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
	for (long i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, work, NULL) != 0) {
			perror("churn: pthread_create");
			return 1;
		}
		pthread_join(t, NULL);
	}
	printf("threads %ld locks %ld\n", n, locks);
	return 0;
}
