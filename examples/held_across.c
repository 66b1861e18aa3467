/*
 * held_across - locks held and waits open for the whole run while the main
 * thread takes another lock ROUNDS times: every file of a rotated recording
 * (ptt-record -m) after the first starts with them in force.  The main
 * thread holds outer throughout; "waiter" blocks on outer; "sleeper" waits
 * on the condition wake (its mutex gate given up) until the end.
 *
 *   held_across [ROUNDS]
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t outer = PTHREAD_MUTEX_INITIALIZER, inner = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER, readyc = PTHREAD_COND_INITIALIZER;
static int ready, go, asking;
static long counter;

static void *waiter(void *arg)
{
	pthread_setname_np(pthread_self(), "waiter");
	__atomic_store_n(&asking, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&outer); /* blocks until the main thread is done */
	counter++;
	pthread_mutex_unlock(&outer);
	return arg;
}

static void *sleeper(void *arg)
{
	pthread_setname_np(pthread_self(), "sleeper");
	pthread_mutex_lock(&gate);
	ready = 1;
	pthread_cond_signal(&readyc);
	while (!go)
		pthread_cond_wait(&wake, &gate);
	pthread_mutex_unlock(&gate);
	return arg;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 20000;
	pthread_t w, s;
	pthread_mutex_lock(&outer);
	pthread_create(&s, NULL, sleeper, NULL);
	pthread_mutex_lock(&gate); /* gate is free again only once sleeper waits on wake */
	while (!ready)
		pthread_cond_wait(&readyc, &gate);
	pthread_mutex_unlock(&gate);
	pthread_create(&w, NULL, waiter, NULL);
	while (!__atomic_load_n(&asking, __ATOMIC_ACQUIRE)) /* the waiter is about to block on outer */
		sched_yield();
	for (long i = 0; i < rounds; i++) {
		pthread_mutex_lock(&inner);
		counter++;
		pthread_mutex_unlock(&inner);
	}
	pthread_mutex_lock(&gate);
	go = 1;
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&gate);
	pthread_mutex_unlock(&outer);
	pthread_join(w, NULL);
	pthread_join(s, NULL);
	printf("%ld\n", counter);
	return 0;
}
