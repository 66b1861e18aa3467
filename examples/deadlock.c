/*
 * deadlock - two threads that really deadlock: each takes one lock, both
 * meet at a barrier, then each asks for the other's lock.  It hangs until
 * it is killed; under ptt-record, stop it with SIGINT (ptt-record forwards
 * it) and ptt-deadlock shows the cycle.
 *
 * deadlock ROUNDS: once the pair is blocked (each in a futex wait on the
 * other's lock, as /proc says), two more threads lock and unlock a third
 * mutex ROUNDS times each while the pair stays deadlocked; when they are done it
 * prints "busy rounds N" and hangs as before.  The case of a flight
 * recording (ptt-record --flight): the busy threads' rings turn over many
 * times after the pair's last events.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "blocked.h"

static pthread_mutex_t left = PTHREAD_MUTEX_INITIALIZER, right = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t busy_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold;
static long rounds;
static volatile long counter;
static pid_t tids[2];

static void *worker(void *arg)
{
	int first = arg != NULL;
	pthread_mutex_t *mine = first ? &left : &right, *theirs = first ? &right : &left;
	__atomic_store_n(&tids[first], gettid(), __ATOMIC_RELEASE);
	pthread_mutex_lock(mine);
	pthread_barrier_wait(&both_hold);
	pthread_mutex_lock(theirs); /* never returns */
	pthread_mutex_unlock(theirs);
	pthread_mutex_unlock(mine);
	return NULL;
}

static void *busy(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++) {
		pthread_mutex_lock(&busy_lock);
		counter++;
		pthread_mutex_unlock(&busy_lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b, c, d;
	rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	pthread_barrier_init(&both_hold, NULL, 2);
	pthread_create(&a, NULL, worker, (void *)1);
	pthread_create(&b, NULL, worker, NULL);
	fprintf(stderr, "deadlocking now\n");
	if (rounds > 0) {
		/* 10 s at most (no /proc): the pair's last events come before all of the busy threads' */
		for (int i = 0; i < 10000 && !(blocked_on(__atomic_load_n(&tids[1], __ATOMIC_ACQUIRE), &right, sizeof right) > 0 &&
					       blocked_on(__atomic_load_n(&tids[0], __ATOMIC_ACQUIRE), &left, sizeof left) > 0); i++)
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		pthread_create(&c, NULL, busy, NULL);
		pthread_create(&d, NULL, busy, NULL);
		pthread_join(c, NULL);
		pthread_join(d, NULL);
		printf("busy rounds %ld\n", counter);
		fflush(stdout);
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
