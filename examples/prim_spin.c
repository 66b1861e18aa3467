/*
 * prim_spin - spinlocks shared by threads, with the counts the program
 * made itself on stderr (-v): locks, trylocks (acquired or EBUSY), unlocks.
 * Spinlocks are recorded only with ptt-record -e spin (or -e all).
 *
 *   prim_spin [-v]
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define THREADS 3
#define ROUNDS 300

static pthread_spinlock_t spin;
static long locks, trylocks, trylock_ok, unlocks, shared;

static void *worker(void *arg)
{
	long id = (long)arg;
	for (int i = 0; i < ROUNDS; i++) {
		/* the counters are updated while holding the spinlock */
		if (id == 0 && pthread_spin_trylock(&spin) != 0) {
			pthread_spin_lock(&spin);
			trylocks++, locks++;
		} else if (id == 0) {
			trylocks++, trylock_ok++;
		} else {
			pthread_spin_lock(&spin);
			locks++;
		}
		shared++;
		unlocks++;
		pthread_spin_unlock(&spin);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int verbose = argc > 1 && !strcmp(argv[1], "-v");
	pthread_t th[THREADS];
	pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
	for (long i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	pthread_spin_lock(&spin); /* held: a trylock must fail */
	int busy = pthread_spin_trylock(&spin) == EBUSY;
	pthread_spin_unlock(&spin);
	locks++, trylocks++, unlocks++;
	pthread_spin_destroy(&spin);
	if (verbose)
		fprintf(stderr, "spin_lock %ld\nspin_trylock %ld %ld\nspin_unlock %ld\nbusy %d\n",
			locks, trylocks, trylock_ok, unlocks, busy);
	return shared != ROUNDS * THREADS;
}
