/*
 * exit_locks - locks taken while threads end: each of THREADS threads sets
 * a pthread_key whose destructor (run by glibc after the start routine has
 * returned, or after pthread_exit) locks a mutex; one key's destructor sets
 * its value again once, so glibc runs a second round of destructors and it
 * locks again there.  Prints its own count of those locks.
 *
 *   exit_locks [THREADS]   (default 4)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t key, again;
static long exit_locks;

static void count_lock(void)
{
	pthread_mutex_lock(&m);
	exit_locks++;
	pthread_mutex_unlock(&m);
}

static void destroy(void *v)
{
	(void)v;
	count_lock();
}

/* first round: set again, so that glibc runs a second round; second round: lock and stop */
static void destroy_again(void *v)
{
	count_lock();
	if (v == (void *)1)
		pthread_setspecific(again, (void *)2);
}

static void *work(void *arg)
{
	pthread_setspecific(key, arg);
	pthread_setspecific(again, (void *)1);
	if (arg == (void *)2)
		pthread_exit(NULL); /* the destructors run after pthread_exit too */
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 4;
	if (n < 1 || n > 1000) {
		fprintf(stderr, "usage: exit_locks [THREADS] (1-1000)\n");
		return 2;
	}
	if (pthread_key_create(&key, destroy) != 0 || pthread_key_create(&again, destroy_again) != 0)
		return 1;
	pthread_t t[1000];
	for (long i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, work, (void *)(1 + i % 2)) != 0) {
			perror("exit_locks: pthread_create");
			return 1;
		}
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("threads %ld exit_locks %ld\n", n, exit_locks);
	return 0;
}
