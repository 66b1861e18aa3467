/*
 * deadlock - two threads that really deadlock: each takes one lock, both
 * meet at a barrier, then each asks for the other's lock.  It hangs until
 * it is killed; under ptt-record, stop it with SIGINT (ptt-record forwards
 * it) and ptt-deadlock shows the cycle.
 */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t left = PTHREAD_MUTEX_INITIALIZER, right = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold;

static void *worker(void *arg)
{
	int first = arg != NULL;
	pthread_mutex_t *mine = first ? &left : &right, *theirs = first ? &right : &left;
	pthread_mutex_lock(mine);
	pthread_barrier_wait(&both_hold);
	pthread_mutex_lock(theirs); /* never returns */
	pthread_mutex_unlock(theirs);
	pthread_mutex_unlock(mine);
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	pthread_barrier_init(&both_hold, NULL, 2);
	pthread_create(&a, NULL, worker, (void *)1);
	pthread_create(&b, NULL, worker, NULL);
	fprintf(stderr, "deadlocking now\n");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
