/*
 * inlined_locks - a lock wrapper and the user's function that calls it, both
 * inlined by the compiler (-O2, made sure with always_inline): the waiting
 * thread's stack has one physical frame of the program, logger_main, whose
 * DWARF inline chain says my_lock <- flush_log <- logger_main.  With
 * --skip-frames='^my_lock' the site is flush_log at the line marked LOCK-SITE.
 *
 *   inlined_locks [-n ROUNDS]   flush_log waits for main's hold, ROUNDS times (default 3)
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int waiter_coming;
static volatile long counter;
static sem_t go, done;
static long rounds = 3;

static inline __attribute__((always_inline)) void my_lock(pthread_mutex_t *m)
{
	if (pthread_mutex_lock(m) != 0)
		abort();
}

static inline __attribute__((always_inline)) void my_unlock(pthread_mutex_t *m)
{
	pthread_mutex_unlock(m);
}

/* the user's function: static and called once, -O2 inlines it (always_inline makes it sure) */
static inline __attribute__((always_inline)) void flush_log(void)
{
	waiter_coming = 1;
	my_lock(&stats_lock); /* LOCK-SITE */
	counter++;
	my_unlock(&stats_lock);
}

static void *logger_main(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++) {
		sem_wait(&go);
		flush_log();
		sem_post(&done);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc == 3 && argv[1][0] == '-' && argv[1][1] == 'n')
		rounds = atol(argv[2]);
	pthread_t th;
	sem_init(&go, 0, 0);
	sem_init(&done, 0, 0);
	pthread_create(&th, NULL, logger_main, NULL);
	for (long i = 0; i < rounds; i++) {
		/* hold the lock until the logger is on its way to it, and 20 ms more: it waits */
		my_lock(&stats_lock);
		sem_post(&go);
		while (!waiter_coming)
			sched_yield();
		struct timespec ts = { 0, 20 * 1000000L };
		nanosleep(&ts, NULL);
		waiter_coming = 0;
		counter++;
		my_unlock(&stats_lock);
		sem_wait(&done);
	}
	pthread_join(th, NULL);
	printf("counter %ld (expected %ld)\n", counter, 2 * rounds);
	return counter == 2 * rounds ? 0 : 1;
}
