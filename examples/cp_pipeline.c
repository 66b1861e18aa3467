/*
 * cp_pipeline - critical-path ground truth: producer -> stage -> consumer, two
 * queues (a mutex and a condition variable each), the middle stage slow.
 *
 *   cp_pipeline [-r ROUNDS] [P_MS [S_MS [C_MS [ITEMS]]]]     (defaults 1 20 5 8)
 *
 * Each round: pipe-producer makes ITEMS items, each P_MS of work, and pushes
 * them on the queue in_q (in_lock, in_cond); pipe-stage pops each, works S_MS
 * on it holding stage_lock (the stage's state), and pushes it on out_q
 * (out_lock, out_cond); pipe-consumer pops each and works C_MS on it.  main
 * joins the three, and the next round starts.
 * At most 2 threads are runnable at once (the machine has 2 CPUs): the producer
 * is done before the stage's first item is out, when (ITEMS - 1) * P_MS <= S_MS,
 * and the consumer is done with an item before the next, when C_MS <= S_MS;
 * keep both true of the halved S_MS too (the defaults do).
 *
 * Expected critical path (hand-computed; R = ROUNDS, p s c n = the arguments):
 *   path     = R * (p + n * s + c)
 *              main -> create -> the producer's first item p -> its signal ends
 *              the stage's wait on in_cond -> the stage's n items back to back
 *              (each s, in stage_lock; the others are queued by then) -> the
 *              stage's last signal ends the consumer's wait on out_cond -> the
 *              consumer's last item c -> its exit ends main's join
 *   on path: stage_lock  R * n * s       (pipe-stage: the bound)
 *            running     R * (p + c)     (the producer's first item, the consumer's last)
 *            in_lock, out_lock: their short holds only (microseconds)
 *   The consumer waits n * (s - c) a round on out_cond, and none of it is on the path.
 *   what-if stage_lock:-50% = R * (p + n * s / 2 + c)
 *   (the real change: cp_pipeline p s/2 c n)
 */
#include <pthread.h>

#include "cp_work.h"

struct queue {
	pthread_mutex_t *lock;
	pthread_cond_t *cond;
	long pushed, popped;	/* the items are their numbers: only the counts matter */
};

pthread_mutex_t in_lock = PTHREAD_MUTEX_INITIALIZER, out_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t in_cond = PTHREAD_COND_INITIALIZER, out_cond = PTHREAD_COND_INITIALIZER;
pthread_mutex_t stage_lock = PTHREAD_MUTEX_INITIALIZER;
static struct queue in_q = { &in_lock, &in_cond, 0, 0 }, out_q = { &out_lock, &out_cond, 0, 0 };
static double p_ms, s_ms, c_ms;
static long items;

static void push(struct queue *q)
{
	pthread_mutex_lock(q->lock);
	q->pushed++;
	pthread_cond_signal(q->cond);
	pthread_mutex_unlock(q->lock);
}

static void pop(struct queue *q)
{
	pthread_mutex_lock(q->lock);
	while (q->popped == q->pushed)
		pthread_cond_wait(q->cond, q->lock);
	q->popped++;
	pthread_mutex_unlock(q->lock);
}

static void *producer(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "pipe-producer");
	for (long i = 0; i < items; i++) {
		CP_WORK(p_ms);
		push(&in_q);
	}
	return NULL;
}

static void *stage(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "pipe-stage");
	for (long i = 0; i < items; i++) {
		pop(&in_q);
		pthread_mutex_lock(&stage_lock);
		CP_WORK(s_ms);
		pthread_mutex_unlock(&stage_lock);
		push(&out_q);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "pipe-consumer");
	for (long i = 0; i < items; i++) {
		pop(&out_q);
		CP_WORK(c_ms);
		CP_PROGRESS;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double t0 = cp_now_ms();
	long rounds = cp_rounds(&argc, &argv, 1);
	p_ms = cp_arg(argc, argv, 1, 1);
	s_ms = cp_arg(argc, argv, 2, 20);
	c_ms = cp_arg(argc, argv, 3, 5);
	items = (long)cp_arg(argc, argv, 4, 8);
	if (argc > 5) {
		fprintf(stderr, "usage: cp_pipeline [-r ROUNDS] [P_MS [S_MS [C_MS [ITEMS]]]]\n");
		return 2;
	}
	void *(*fn[3])(void *) = { producer, stage, consumer };
	for (long r = 0; r < rounds; r++) {
		pthread_t t[3];
		in_q.pushed = in_q.popped = out_q.pushed = out_q.popped = 0;
		for (int i = 0; i < 3; i++)
			cp_thread(&t[i], fn[i], NULL);
		for (int i = 0; i < 3; i++)
			pthread_join(t[i], NULL);
	}
	double R = (double)rounds, n = (double)items;
	cp_truth("cp_pipeline", "wall", NULL, cp_now_ms() - t0);
	cp_truth("cp_pipeline", "path", NULL, R * (p_ms + n * s_ms + c_ms));
	cp_truth("cp_pipeline", "on-path", "stage_lock", R * n * s_ms);
	cp_truth("cp_pipeline", "on-path", "running", R * (p_ms + c_ms));
	cp_truth("cp_pipeline", "what-if", "stage_lock:-50%", R * (p_ms + n * s_ms / 2 + c_ms));
	return 0;
}
