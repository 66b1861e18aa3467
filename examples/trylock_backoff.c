/*
 * trylock_backoff - trylock used as an honest non-blocking attempt: one
 * thread takes lock_a then lock_b (blocking); the other takes lock_b, then
 * only tries lock_a, and when the try fails gives lock_b back and starts
 * again.  Taking locks in the reverse order this way cannot deadlock, and
 * ptt-deadlock must not report it.  The first try of each round fails for
 * certain: the first thread holds lock_a until it gets lock_b.
 */
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>

#include "ptt.h"

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER, lock_b = PTHREAD_MUTEX_INITIALIZER;
static sem_t b_taken, a_taken, round_done;
static int rounds = 3;

static void *a_then_b(void *arg)
{
	pthread_setname_np(pthread_self(), "blocking");
	for (int i = 0; i < rounds; i++) {
		pthread_mutex_lock(&lock_a);
		sem_wait(&b_taken); /* the other thread holds lock_b */
		sem_post(&a_taken);
		pthread_mutex_lock(&lock_b);
		pthread_mutex_unlock(&lock_b);
		pthread_mutex_unlock(&lock_a);
		sem_wait(&round_done); /* else it could take lock_a again before the other thread's try */
	}
	return arg;
}

static void *b_then_try_a(void *arg)
{
	pthread_setname_np(pthread_self(), "backs-off");
	for (int i = 0; i < rounds; i++) {
		pthread_mutex_lock(&lock_b);
		sem_post(&b_taken);
		sem_wait(&a_taken); /* the other thread holds lock_a */
		while (pthread_mutex_trylock(&lock_a) != 0) {
			pthread_mutex_unlock(&lock_b);
			sched_yield();
			pthread_mutex_lock(&lock_b);
		}
		pthread_mutex_unlock(&lock_a);
		pthread_mutex_unlock(&lock_b);
		sem_post(&round_done);
	}
	return arg;
}

int main(void)
{
	pthread_t t1, t2;
	ptt_name_object(&lock_a, "lock_a");
	ptt_name_object(&lock_b, "lock_b");
	sem_init(&b_taken, 0, 0);
	sem_init(&a_taken, 0, 0);
	sem_init(&round_done, 0, 0);
	pthread_create(&t1, NULL, a_then_b, NULL);
	pthread_create(&t2, NULL, b_then_try_a, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	puts("done");
	return 0;
}
