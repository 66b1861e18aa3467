/*
 * cp_condchain - critical-path ground truth: a condition-variable hand-off
 * chain, T0 signals T1 signals T2 ..., each working before it passes on.
 *
 *   cp_condchain [-r ROUNDS] [TAIL_MS [W0_MS W1_MS ...]]     (defaults 2, 6 10 14 20)
 *
 * One thread per W (cc-0, cc-1, ..., 8 at most).  A token goes round them
 * ROUNDS times: thread i waits on hand_cond[i] (with hand_lock) until the token
 * is its own, works Wi holding work_lock (the chain's shared state; never
 * contended: one thread has the token), then takes hand_lock again, passes the
 * token to thread i+1 (the last to thread 0) and signals hand_cond[i+1], and
 * works TAIL_MS outside any lock.  main joins them all.
 * At most 2 threads are runnable at once (one thread's tail beside the next
 * one's work; the machine has 2 CPUs) when TAIL_MS <= every Wi, halved ones too
 * (the defaults are).
 *
 * Expected critical path (hand-computed; R = ROUNDS, t = TAIL_MS, S = W0 + W1 + ...):
 *   path     = R * S + t
 *              main -> create cc-0 -> W0 -> its signal ends cc-1's wait on
 *              hand_cond[1] -> W1 -> ... -> the last thread's last hand-off
 *              -> its tail t -> its exit ends main's join
 *   on path: work_lock  R * S       (each cc-i holds Wi a round)
 *            running    t           (the last holder's tail; every other tail
 *                                    runs beside the next thread's work)
 *            hand_lock: its short holds only (microseconds)
 *   Each cc-i waits on hand_cond[i] about R * (S - Wi) - t: idle, off the path
 *   but for the hand-offs themselves.
 *   what-if work_lock:-50% = R * S / 2 + t
 *   (the real change: cp_condchain -r R t W0/2 W1/2 ...)
 */
#include <pthread.h>

#include "cp_work.h"

#define MAX_LINKS 8

pthread_mutex_t hand_lock = PTHREAD_MUTEX_INITIALIZER, work_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t hand_cond[MAX_LINKS];
static int links, turn;	/* turn: under hand_lock */
static long rounds;
static double tail_ms, work_ms[MAX_LINKS];

static void *link_run(void *arg)
{
	int i = (int)(long)arg;
	char name[16];
	snprintf(name, sizeof name, "cc-%d", i);
	pthread_setname_np(pthread_self(), name);
	for (long r = 0; r < rounds; r++) {
		pthread_mutex_lock(&hand_lock);
		while (turn != i)
			pthread_cond_wait(&hand_cond[i], &hand_lock);
		pthread_mutex_unlock(&hand_lock);
		pthread_mutex_lock(&work_lock);
		CP_WORK(work_ms[i]);
		pthread_mutex_unlock(&work_lock);
		pthread_mutex_lock(&hand_lock);
		turn = (i + 1) % links;
		pthread_cond_signal(&hand_cond[turn]);
		pthread_mutex_unlock(&hand_lock);
		CP_WORK(tail_ms);
		if (i == links - 1)
			CP_PROGRESS;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const double def[] = { 6, 10, 14, 20 };
	double t0 = cp_now_ms();
	rounds = cp_rounds(&argc, &argv, 1);
	tail_ms = cp_arg(argc, argv, 1, 2);
	links = argc > 2 ? argc - 2 : 4;
	if (links > MAX_LINKS) {
		fprintf(stderr, "usage: cp_condchain [-r ROUNDS] [TAIL_MS [W0_MS W1_MS ...]] (%d W at most)\n",
			MAX_LINKS);
		return 2;
	}
	double S = 0;
	for (int i = 0; i < links; i++) {
		work_ms[i] = argc > 2 ? cp_arg(argc, argv, i + 2, 0) : def[i];
		S += work_ms[i];
		pthread_cond_init(&hand_cond[i], NULL);
	}
	pthread_t t[MAX_LINKS];
	for (long i = 0; i < links; i++)
		cp_thread(&t[i], link_run, (void *)i);
	for (int i = 0; i < links; i++)
		pthread_join(t[i], NULL);
	double R = (double)rounds;
	cp_truth("cp_condchain", "wall", NULL, cp_now_ms() - t0);
	cp_truth("cp_condchain", "path", NULL, R * S + tail_ms);
	cp_truth("cp_condchain", "on-path", "work_lock", R * S);
	cp_truth("cp_condchain", "on-path", "running", tail_ms);
	cp_truth("cp_condchain", "what-if", "work_lock:-50%", R * S / 2 + tail_ms);
	return 0;
}
