/*
 * app_lock - a program that takes its mutex through a wrapper of its own,
 * app_lock()/app_unlock() around pthread_mutex_lock/unlock (a function that
 * takes the lock, another that releases it, both called from hot_path and
 * cold_path; cold_path releases it with app_unlock_wake instead, which wakes
 * the waiters of a condition first, as pigz's yarn library's twist() does
 * beside its release()), and one function that hands a lock to its caller on purpose
 * (lock_slot: the caller, use_slot, unlocks it itself: no wrapper).
 * ptt names the callers of the wrapper as the sites, with no option given.
 *
 * Prints its ground truth: the calls of hot_path, cold_path and use_slot.
 *
 * Usage: app_lock [ROUNDS]   (default 2000 per thread, 3 threads)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER, slot_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t state_changed = PTHREAD_COND_INITIALIZER;
static volatile unsigned long state, slot;
static unsigned long hot_calls, cold_calls, slot_calls;
static int rounds = 2000;

__attribute__((noinline)) static void app_lock(pthread_mutex_t *m)
{
	if (pthread_mutex_lock(m) != 0)
		abort();
	__asm__ volatile("" ::: "memory"); /* no tail call: app_lock keeps its frame */
}

__attribute__((noinline)) static void app_unlock(pthread_mutex_t *m)
{
	pthread_mutex_unlock(m);
	__asm__ volatile("" ::: "memory");
}

/* a second unlocker of the same wrapper: wakes the state's waiters, then releases */
__attribute__((noinline)) static void app_unlock_wake(pthread_mutex_t *m)
{
	pthread_cond_broadcast(&state_changed);
	pthread_mutex_unlock(m);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void hot_path(void)
{
	app_lock(&state_lock);
	for (int i = 0; i < 2000; i++)
		state++;
	hot_calls++;
	app_unlock(&state_lock);
}

__attribute__((noinline)) static void cold_path(void)
{
	app_lock(&state_lock);
	for (int i = 0; i < 500; i++)
		state--;
	cold_calls++;
	app_unlock_wake(&state_lock);
}

/* returns with slot_lock held: its caller releases it (a hand-over, not a wrapper) */
__attribute__((noinline)) static void lock_slot(void)
{
	pthread_mutex_lock(&slot_lock);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void use_slot(void)
{
	lock_slot();
	for (int i = 0; i < 1000; i++)
		slot++;
	slot_calls++;
	pthread_mutex_unlock(&slot_lock);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int r = 0; r < rounds; r++) {
		hot_path();
		if (r % 4 == 0)
			cold_path();
		use_slot();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1 && (rounds = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: app_lock [ROUNDS]\n");
		return 2;
	}
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	printf("hot_path calls: %lu\n", hot_calls);
	printf("cold_path calls: %lu\n", cold_calls);
	printf("use_slot calls: %lu\n", slot_calls);
	return 0;
}
