/*
 * cp_forkjoin - critical-path ground truth: fork/join with one straggler.
 *
 *   cp_forkjoin [-r ROUNDS] [WORK_MS [STRAGGLER_MS [MERGE_MS]]]     (defaults -r 2, 5 20 8)
 *
 * main forks two workers (fj-0, fj-1) and joins them at the end.  Each round,
 * one worker (fj-R%2 in round R: the role alternates) works STRAGGLER_MS, the
 * other WORK_MS; each then merges its result holding merge_lock for MERGE_MS,
 * and waits at round_barrier (2 parties) for the other: the straggler is the
 * last to arrive and ends the other's wait.
 * At most 2 threads are runnable at once (the workers; main sleeps in join; the
 * machine has 2 CPUs).  WORK_MS + MERGE_MS <= STRAGGLER_MS: the fast worker's
 * merge is over before the straggler's begins, so merge_lock is never contended.
 *
 * Expected critical path (hand-computed; R = ROUNDS, w L m = the arguments):
 *   path     = R * (L + m)
 *              main -> create -> round 0's straggler: L, then its merge m ->
 *              its arrival ends the other's barrier wait -> round 1's straggler
 *              (the other thread): L + m -> ... -> the last straggler's exit
 *              ends main's join
 *   on path: merge_lock  R * m          (only the stragglers' holds; the fast
 *                                        worker's R * m of holds are off the path)
 *            running     R * L
 *   The fast worker waits R * (L - w) at the barrier, none of it on the path.
 *   what-if merge_lock:-50% = R * (L + m / 2)
 *   (the real change: cp_forkjoin -r R w L m/2)
 */
#include <pthread.h>

#include "cp_work.h"

pthread_mutex_t merge_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_barrier_t round_barrier;
static double work_ms, straggler_ms, merge_ms;
static long rounds;
static double merged;

static void *worker(void *arg)
{
	long id = (long)arg;
	char name[16];
	snprintf(name, sizeof name, "fj-%ld", id);
	pthread_setname_np(pthread_self(), name);
	for (long r = 0; r < rounds; r++) {
		int straggler = r % 2 == id;
		CP_WORK(straggler ? straggler_ms : work_ms);
		pthread_mutex_lock(&merge_lock);
		CP_WORK(merge_ms);
		merged += 1;
		pthread_mutex_unlock(&merge_lock);
		pthread_barrier_wait(&round_barrier);
		if (straggler)
			CP_PROGRESS;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double t0 = cp_now_ms();
	rounds = cp_rounds(&argc, &argv, 2);
	work_ms = cp_arg(argc, argv, 1, 5);
	straggler_ms = cp_arg(argc, argv, 2, 20);
	merge_ms = cp_arg(argc, argv, 3, 8);
	if (argc > 4) {
		fprintf(stderr, "usage: cp_forkjoin [-r ROUNDS] [WORK_MS [STRAGGLER_MS [MERGE_MS]]]\n");
		return 2;
	}
	pthread_barrier_init(&round_barrier, NULL, 2);
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		cp_thread(&t[i], worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&round_barrier);
	double R = (double)rounds, L = straggler_ms, m = merge_ms;
	cp_truth("cp_forkjoin", "wall", NULL, cp_now_ms() - t0);
	cp_truth("cp_forkjoin", "path", NULL, R * (L + m));
	cp_truth("cp_forkjoin", "on-path", "merge_lock", R * m);
	cp_truth("cp_forkjoin", "on-path", "running", R * L);
	cp_truth("cp_forkjoin", "what-if", "merge_lock:-50%", R * (L + m / 2));
	return 0;
}
