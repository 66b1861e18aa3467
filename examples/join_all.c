/*
 * join_all - N threads alive at once (a barrier holds them until the last
 * has started), then joined in a chosen order, each after every thread has
 * ended or while some still run; prints its own ground truth (each
 * thread's tid as the thread itself saw it, by handle) for the trace to be
 * checked against.
 *
 *   join_all [THREADS [ORDER [ROUNDS]]]
 *     ORDER: forward (default), reverse or stride (every 7th, then the rest)
 *     ROUNDS: repeat create-all/join-all this many times (default 1): glibc
 *             reuses the joined threads' stacks, hence their handles
 *   With -v each join is printed as "join HANDLE TID".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_barrier_t all_up;
static pid_t *tids;

static void *work(void *arg)
{
	tids[(long)arg] = gettid();
	pthread_barrier_wait(&all_up); /* every thread is alive here at once */
	return arg;
}

int main(int argc, char **argv)
{
	int verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
	argc -= verbose;
	argv += verbose;
	long n = argc > 1 ? atol(argv[1]) : 1000, rounds = argc > 3 ? atol(argv[3]) : 1;
	const char *order = argc > 2 ? argv[2] : "forward";
	if (n < 1 || rounds < 1 || (strcmp(order, "forward") && strcmp(order, "reverse") && strcmp(order, "stride"))) {
		fprintf(stderr, "usage: join_all [-v] [THREADS [forward|reverse|stride [ROUNDS]]]\n");
		return 2;
	}
	pthread_t *t = calloc((size_t)n, sizeof *t);
	long *seq = calloc((size_t)n, sizeof *seq);
	tids = calloc((size_t)n, sizeof *tids);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024); /* thousands of threads in little memory */
	if (!t || !seq || !tids)
		return 1;
	long k = 0;
	if (!strcmp(order, "stride")) {
		for (long i = 0; i < n; i += 7)
			seq[k++] = i;
		for (long i = 0; i < n; i++)
			if (i % 7)
				seq[k++] = i;
	} else {
		for (long i = 0; i < n; i++)
			seq[i] = !strcmp(order, "reverse") ? n - 1 - i : i;
	}
	long joined = 0;
	for (long r = 0; r < rounds; r++) {
		if (pthread_barrier_init(&all_up, NULL, (unsigned)n + 1) != 0)
			return 1;
		for (long i = 0; i < n; i++)
			if (pthread_create(&t[i], &attr, work, (void *)i) != 0) {
				perror("join_all: pthread_create");
				return 1;
			}
		pthread_barrier_wait(&all_up);
		if (r == 0)
			usleep(20000); /* the first round's threads end well before they are joined */
		for (long i = 0; i < n; i++) {
			void *ret;
			if (pthread_join(t[seq[i]], &ret) == 0 && (long)ret == seq[i])
				joined++;
			if (verbose)
				printf("join 0x%lx %d\n", (unsigned long)t[seq[i]], (int)tids[seq[i]]);
		}
		pthread_barrier_destroy(&all_up);
	}
	printf("threads %ld alive at once, %ld rounds, %ld joined (%s)\n", n, rounds, joined, order);
	free(t);
	free(seq);
	free(tids);
	return 0;
}
