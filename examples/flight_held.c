/*
 * flight_held - a lock taken long before a small flight ring's retained
 * history begins and released inside it, while another thread waits for it
 * (ptt-record --flight: the snapshot must tell the hold in force where the
 * holder's history begins).  "holder" takes held, then takes and releases
 * busy ROUNDS times (its own acquisition of held is overwritten); "waiter"
 * then blocks on held, and holder lets it go once waiter sleeps on it (and
 * ends only once waiter has it).
 * When both are done main prints a line and, given GO, waits until the
 * file GO exists (a snapshot, taken meanwhile), 60 s at most.
 *
 *   flight_held [ROUNDS [GO]]
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "blocked.h"

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER, busy = PTHREAD_MUTEX_INITIALIZER;
static int asked, got;
static pid_t waiter_tid;
static long counter;

static void *waiter(void *arg)
{
	pthread_setname_np(pthread_self(), "waiter");
	__atomic_store_n(&waiter_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&asked, __ATOMIC_ACQUIRE))
		sched_yield();
	pthread_mutex_lock(&held); /* blocks until the holder lets it go */
	__atomic_store_n(&got, 1, __ATOMIC_RELEASE);
	counter++;
	pthread_mutex_unlock(&held);
	return arg;
}

static void *holder(void *arg)
{
	long rounds = *(const long *)arg;
	pid_t w;
	pthread_setname_np(pthread_self(), "holder");
	pthread_mutex_lock(&held);
	for (long i = 0; i < rounds; i++) {
		pthread_mutex_lock(&busy);
		counter++;
		pthread_mutex_unlock(&busy);
	}
	__atomic_store_n(&asked, 1, __ATOMIC_RELEASE);
	while (!(w = __atomic_load_n(&waiter_tid, __ATOMIC_ACQUIRE)))
		sched_yield();
	wait_blocked_on(w, &held, sizeof held);
	pthread_mutex_unlock(&held);
	while (!__atomic_load_n(&got, __ATOMIC_ACQUIRE)) /* alive at the hand-over: a hand-off link to draw */
		sched_yield();
	return NULL;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 20000;
	const char *go = argc > 2 ? argv[2] : NULL;
	const struct timespec ms = { 0, 1000000 };
	pthread_t h, w;
	pthread_create(&w, NULL, waiter, NULL);
	pthread_create(&h, NULL, holder, &rounds);
	pthread_join(h, NULL);
	pthread_join(w, NULL);
	printf("counter %ld\n", counter);
	fflush(stdout);
	for (int i = 0; go && i < 60000 && access(go, F_OK) != 0; i++)
		nanosleep(&ms, NULL);
	return 0;
}
