/*
 * sem_deadlock - two semaphores used as locks (initialised to 1), taken in
 * opposite orders by two threads.  With -s the threads run one after the
 * other (an inversion that did not deadlock); else both hold one, meet at a
 * barrier, and each waits for the other's: it hangs until killed, and
 * ptt-deadlock shows the cycle.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>

static sem_t sem_a, sem_b;
static pthread_barrier_t both_hold;
static int overlap = 1;

static void *worker(void *arg)
{
	sem_t *mine = arg ? &sem_a : &sem_b, *theirs = arg ? &sem_b : &sem_a;
	sem_wait(mine);
	if (overlap)
		pthread_barrier_wait(&both_hold);
	sem_wait(theirs); /* never returns when both overlap */
	sem_post(theirs);
	sem_post(mine);
	return NULL;
}

int main(int argc, char **argv)
{
	overlap = !(argc > 1 && strcmp(argv[1], "-s") == 0);
	sem_init(&sem_a, 0, 1);
	sem_init(&sem_b, 0, 1);
	pthread_barrier_init(&both_hold, NULL, 2);
	pthread_t a, b;
	pthread_create(&a, NULL, worker, &sem_a);
	if (!overlap)
		pthread_join(a, NULL);
	pthread_create(&b, NULL, worker, NULL);
	if (overlap)
		pthread_join(a, NULL);
	pthread_join(b, NULL);
	puts("no deadlock this time");
	return 0;
}
