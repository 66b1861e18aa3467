/*
 * two_sites - two functions take the same mutex at different rates: a
 * call-site check for the readers (fast_path 3 times for each slow_path).
 *
 *   two_sites [-n ROUNDS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile long counter;

__attribute__((noinline)) static void fast_path(void)
{
	pthread_mutex_lock(&shared_lock);
	counter++;
	pthread_mutex_unlock(&shared_lock);
}

__attribute__((noinline)) static void slow_path(void)
{
	pthread_mutex_lock(&shared_lock);
	for (int i = 0; i < 1000; i++)
		counter++;
	pthread_mutex_unlock(&shared_lock);
}

static long rounds = 100;

static void *worker_main(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++) {
		fast_path();
		fast_path();
		fast_path();
		slow_path();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int c;
	while ((c = getopt(argc, argv, "n:")) != -1) {
		if (c != 'n') {
			fprintf(stderr, "usage: two_sites [-n ROUNDS]\n");
			return 2;
		}
		rounds = atol(optarg);
	}
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker_main, NULL) != 0)
			return 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%ld\n", counter);
	return 0;
}
