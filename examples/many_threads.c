/*
 * many_threads - N threads alive at once (a barrier holds them all until the
 * last has started), each locking one mutex M times; prints its own ground
 * truth for the trace to be checked against.
 *
 *   many_threads [-c] [THREADS [LOCKS]]   (default 300 threads, 10 locks each)
 *
 * -c: first close every descriptor from 3 to 1023, as a daemon does at its
 * start (the tracer must not depend on one of its own the program closes).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t all_up;
static long locks, per_thread = 10;

static void *work(void *arg)
{
	pthread_barrier_wait(&all_up); /* every thread is alive here at once */
	for (long i = 0; i < per_thread; i++) {
		pthread_mutex_lock(&m);
		locks++;
		pthread_mutex_unlock(&m);
	}
	return arg;
}

int main(int argc, char **argv)
{
	int close_fds = argc > 1 && strcmp(argv[1], "-c") == 0;
	if (close_fds) {
		argc--;
		argv++;
	}
	long n = argc > 1 ? atol(argv[1]) : 300;
	if (argc > 2)
		per_thread = atol(argv[2]);
	if (n < 1 || per_thread < 0) {
		fprintf(stderr, "usage: many_threads [-c] [THREADS [LOCKS]]\n");
		return 2;
	}
	for (int fd = 3; close_fds && fd < 1024; fd++)
		close(fd);
	pthread_t *t = calloc((size_t)n, sizeof *t);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024); /* 2000 threads in little memory */
	if (!t || pthread_barrier_init(&all_up, NULL, (unsigned)n + 1) != 0)
		return 1;
	for (long i = 0; i < n; i++)
		if (pthread_create(&t[i], &attr, work, NULL) != 0) {
			perror("many_threads: pthread_create");
			return 1;
		}
	pthread_barrier_wait(&all_up);
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("threads %ld alive at once, locks %ld\n", n, locks);
	free(t);
	return 0;
}
