/*
 * lossy_order - two locks never taken in opposite orders at once: thread
 * "sequential" takes lock_a, releases it, then takes lock_b, many times;
 * thread "nested" then takes lock_b and, holding it, lock_a, once.  There
 * is no lock-order inversion.  Traced in discard mode with tiny rings
 * (ptt-record -d -b 4k), the sequential thread's events overflow its ring
 * and some of its releases of lock_a are lost: a trace without them shows
 * lock_b taken while lock_a is held, a cycle that the loss explains and
 * ptt-deadlock must not report as a deadlock.
 *
 *   lossy_order [ROUNDS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER, lock_b = PTHREAD_MUTEX_INITIALIZER;
static long rounds = 200000;

static void *sequential(void *arg)
{
	pthread_setname_np(pthread_self(), "sequential");
	for (long i = 0; i < rounds; i++) {
		pthread_mutex_lock(&lock_a);
		pthread_mutex_unlock(&lock_a);
		pthread_mutex_lock(&lock_b);
		pthread_mutex_unlock(&lock_b);
	}
	return arg;
}

static void *nested(void *arg)
{
	pthread_setname_np(pthread_self(), "nested");
	pthread_mutex_lock(&lock_b);
	pthread_mutex_lock(&lock_a);
	pthread_mutex_unlock(&lock_a);
	pthread_mutex_unlock(&lock_b);
	return arg;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atol(argv[1]);
	pthread_t t;
	pthread_create(&t, NULL, sequential, NULL);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, nested, NULL);
	pthread_join(t, NULL);
	printf("done\n");
	return 0;
}
