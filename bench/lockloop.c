/*
 * lockloop - the capture-cost workload: THREADS threads each lock and
 * unlock a mutex ITER times (a private mutex each, or one shared by all),
 * or play condition-variable ping-pong; prints ns per lock/unlock pair (or
 * per round trip) as the median of the threads.
 *
 *   lockloop private|shared|pingpong THREADS ITER
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long iter;
static int shared_mode;
static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pc = PTHREAD_COND_INITIALIZER;
static long turn;
static double per[64];

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *loop(void *arg)
{
	long id = (long)arg;
	pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER, *m = shared_mode ? &shared : &own;
	double t0 = now();
	for (long i = 0; i < iter; i++) {
		pthread_mutex_lock(m);
		pthread_mutex_unlock(m);
	}
	per[id] = (now() - t0) / (double)iter;
	return NULL;
}

static void *pong(void *arg)
{
	long id = (long)arg;
	double t0 = now();
	for (long i = 0; i < iter; i++) {
		pthread_mutex_lock(&pm);
		while (turn % 2 != id)
			pthread_cond_wait(&pc, &pm);
		turn++;
		pthread_cond_signal(&pc);
		pthread_mutex_unlock(&pm);
	}
	per[id] = (now() - t0) / (double)iter;
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: lockloop private|shared|pingpong THREADS ITER\n");
		return 2;
	}
	int n = atoi(argv[2]);
	iter = atol(argv[3]);
	int ping = !strcmp(argv[1], "pingpong");
	shared_mode = !strcmp(argv[1], "shared");
	if (ping)
		n = 2;
	if (n < 1 || n > 64 || iter < 1)
		return 2;
	pthread_t th[64];
	for (long i = 0; i < n; i++)
		pthread_create(&th[i], NULL, ping ? pong : loop, (void *)i);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	qsort(per, (size_t)n, sizeof per[0], cmp);
	printf("%.2f\n", per[n / 2]);
	return 0;
}
