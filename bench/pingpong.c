/*
 * pingpong - two threads hand a turn back and forth through one mutex and
 * one condition variable, ROUNDS turns each.  A turn is lock, wait until
 * it is our turn, pass the turn, signal, unlock.  stdout: ns per turn
 * (wall time / 2*ROUNDS); stderr: the same with the round count.
 *
 *   pingpong ROUNDS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long rounds;
static long turn;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *player(void *arg)
{
	long id = (long)arg;
	for (long i = 0; i < rounds; i++) {
		pthread_mutex_lock(&m);
		while (turn % 2 != id)
			pthread_cond_wait(&c, &m);
		turn++;
		pthread_cond_signal(&c);
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2 || (rounds = atol(argv[1])) < 1) {
		fprintf(stderr, "usage: pingpong ROUNDS\n");
		return 2;
	}
	pthread_t th[2];
	double t0 = now();
	for (long i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, player, (void *)i)) {
			fprintf(stderr, "pingpong: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	double t = (now() - t0) / (2.0 * (double)rounds);
	fprintf(stderr, "%ld turns: %.2f ns/turn\n", 2 * rounds, t);
	printf("%.2f\n", t);
	return 0;
}
