/*
 * cp_pool - critical-path ground truth: a thread pool whose workers are idle
 * nearly all the time, while main does serial work and a short critical section.
 *
 *   cp_pool [-r ROUNDS] [SERIAL_MS [HOLD_MS [TASK_MS [TASKS]]]]     (defaults 4 2 2 20)
 *
 * Four workers (pool-0 .. pool-3) wait for work on pool_cond (with pool_lock).
 * main, for each of TASKS tasks: takes pool_lock, works HOLD_MS holding it
 * (the pool's bookkeeping), queues one task and signals pool_cond, releases
 * the lock, then works SERIAL_MS alone; the worker woken works TASK_MS on the
 * task, outside any lock.  At the end main sets stop, broadcasts, and joins
 * the workers.  ROUNDS multiplies TASKS.
 * At most 2 threads are runnable at once (main and the one worker with a task;
 * the machine has 2 CPUs) when TASK_MS <= SERIAL_MS: a task is done before the
 * next is queued.
 *
 * Expected critical path (hand-computed; N = ROUNDS * TASKS, s h w = the arguments):
 *   path     = N * (h + s)          main's own thread, start to end
 *   on path: pool_lock  N * h       (held by main)
 *            running    N * s       (main, outside the lock)
 *   The workers wait about 4 * path - N * w on pool_cond in all, and carry 0
 *   critical time: nothing on the path waits for them (each task is done
 *   before main's serial work is; the joins end at once, after the broadcast).
 *   what-if pool_lock:-50% = N * (h / 2 + s)
 *   (the real change: cp_pool s h/2 w TASKS)
 */
#include <pthread.h>

#include "cp_work.h"

#define WORKERS 4

pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t pool_cond = PTHREAD_COND_INITIALIZER;
static long queued, taken;	/* under pool_lock */
static int stop;		/* under pool_lock */
static double task_ms;

static void *worker(void *arg)
{
	char name[16];
	snprintf(name, sizeof name, "pool-%ld", (long)arg);
	pthread_setname_np(pthread_self(), name);
	for (;;) {
		pthread_mutex_lock(&pool_lock);
		while (taken == queued && !stop)
			pthread_cond_wait(&pool_cond, &pool_lock);
		if (taken == queued) {
			pthread_mutex_unlock(&pool_lock);
			return NULL;
		}
		taken++;
		pthread_mutex_unlock(&pool_lock);
		CP_WORK(task_ms);
	}
}

int main(int argc, char **argv)
{
	double t0 = cp_now_ms();
	long rounds = cp_rounds(&argc, &argv, 1);
	double s = cp_arg(argc, argv, 1, 4), h = cp_arg(argc, argv, 2, 2);
	task_ms = cp_arg(argc, argv, 3, 2);
	long tasks = rounds * (long)cp_arg(argc, argv, 4, 20);
	if (argc > 5) {
		fprintf(stderr, "usage: cp_pool [-r ROUNDS] [SERIAL_MS [HOLD_MS [TASK_MS [TASKS]]]]\n");
		return 2;
	}
	pthread_t t[WORKERS];
	for (long i = 0; i < WORKERS; i++)
		cp_thread(&t[i], worker, (void *)i);
	for (long i = 0; i < tasks; i++) {
		pthread_mutex_lock(&pool_lock);
		CP_WORK(h);
		queued++;
		pthread_cond_signal(&pool_cond);
		pthread_mutex_unlock(&pool_lock);
		CP_WORK(s);
		CP_PROGRESS;
	}
	pthread_mutex_lock(&pool_lock);
	stop = 1;
	pthread_cond_broadcast(&pool_cond);
	pthread_mutex_unlock(&pool_lock);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	double n = (double)tasks;
	cp_truth("cp_pool", "wall", NULL, cp_now_ms() - t0);
	cp_truth("cp_pool", "path", NULL, n * (h + s));
	cp_truth("cp_pool", "on-path", "pool_lock", n * h);
	cp_truth("cp_pool", "on-path", "running", n * s);
	cp_truth("cp_pool", "what-if", "pool_lock:-50%", n * (h / 2 + s));
	return 0;
}
