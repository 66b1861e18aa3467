/*
 * deep_holds.c - one thread holds n mutexes at once (default 1100, past the
 * readers' 1024 frames a thread), sleeps 50 ms holding them, releases them
 * newest first, and prints its own ground truth: "held n at once".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1100;
	pthread_mutex_t *m = calloc(n, sizeof *m);
	struct timespec ts = { 0, 50000000 };
	if (!m)
		return 1;
	for (int i = 0; i < n; i++)
		pthread_mutex_init(&m[i], NULL);
	for (int i = 0; i < n; i++)
		pthread_mutex_lock(&m[i]);
	nanosleep(&ts, NULL);
	for (int i = n; i-- > 0;)
		pthread_mutex_unlock(&m[i]);
	printf("held %d at once\n", n);
	free(m);
	return 0;
}
