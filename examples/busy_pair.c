/*
 * busy_pair - two threads, the main one and one named "worker", taking one
 * file-scope mutex (hot) as fast as they can until the program is stopped
 * (SIGINT, SIGTERM) or SECONDS pass: a flight recording's rings turn over
 * in microseconds, its process, module and name events long overwritten.
 *
 *   busy_pair [SECONDS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t hot = PTHREAD_MUTEX_INITIALIZER;
static volatile long counter;
static time_t until;

static void *spin(void *arg)
{
	while (time(NULL) < until) {
		for (int i = 0; i < 1000; i++) {
			pthread_mutex_lock(&hot);
			counter++;
			pthread_mutex_unlock(&hot);
		}
	}
	return arg;
}

static void *worker(void *arg)
{
	pthread_setname_np(pthread_self(), "worker");
	return spin(arg);
}

int main(int argc, char **argv)
{
	until = time(NULL) + (argc > 1 ? atol(argv[1]) : 60);
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	spin(NULL);
	pthread_join(t, NULL);
	printf("%ld\n", counter);
	return 0;
}
