/*
 * inversion - a lock-order inversion that happens not to deadlock: one
 * thread takes lock_a then lock_b, and only after it finished, another
 * takes lock_b then lock_a.  Run at the same time they could deadlock;
 * ptt-deadlock finds the cycle in a trace of a run that did not.
 */
#include <pthread.h>
#include <stdio.h>

#include "ptt.h"

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER, lock_b = PTHREAD_MUTEX_INITIALIZER;

static void *a_then_b(void *arg)
{
	pthread_setname_np(pthread_self(), "first");
	pthread_mutex_lock(&lock_a);
	pthread_mutex_lock(&lock_b);
	pthread_mutex_unlock(&lock_b);
	pthread_mutex_unlock(&lock_a);
	return arg;
}

static void *b_then_a(void *arg)
{
	pthread_setname_np(pthread_self(), "second");
	pthread_mutex_lock(&lock_b);
	pthread_mutex_lock(&lock_a);
	pthread_mutex_unlock(&lock_a);
	pthread_mutex_unlock(&lock_b);
	return arg;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, a_then_b, NULL);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, b_then_a, NULL);
	pthread_join(t, NULL);
	puts("no deadlock this time");
	return 0;
}
