/*
 * cp_idle_vs_path - two locks: one on the critical path, one waited for
 * far longer but by idle threads, off it (ptt-stat's CRIT column and
 * --sort=critical, ptt-critical's "idle waits carry no critical time").
 *
 *   cp_idle_vs_path [-n ROUNDS] [-h HOLD_US] [-s IDLE_MS]
 *
 * Two workers take path_lock in turn ROUNDS times each and stay HOLD_US
 * inside it: the run lasts as long as their holds, 2 x ROUNDS x HOLD_US,
 * all on the critical path.  They stay asleep (a hold over I/O: time ptt
 * counts as running) rather than spinning: spinning, a loaded machine kept
 * a worker off its processor right after its unlock for 3 ms, its next lock
 * then uncontended, a wait ptt cannot see, as long as the other's holds
 * beside it and taken for the path in their place.  Meanwhile an idle thread holds idle_lock IDLE_MS
 * (default: half the run) asleep while four others wait for it, about
 * 4 x IDLE_MS waited in all, more than path_lock's waits; they are done
 * before the workers, so none of it is on the path.  The idle threads are
 * started (each posts `started` first thing, main waits for the four posts)
 * before the workers, which would otherwise keep a loaded machine's
 * processors from starting them until late.  It prints this ground truth.
 */
#include <semaphore.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t path_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t started, held;
#define WAITERS 4
static long rounds = 40, hold_us = 500, idle_ms = -1;

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++) {
		pthread_mutex_lock(&path_lock);
		long long end = now_ns() + hold_us * 1000LL; /* running, holding the lock: the path's time */
		struct timespec until = { (time_t)(end / 1000000000LL), (long)(end % 1000000000LL) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) != 0)
			;
		pthread_mutex_unlock(&path_lock);
	}
	return NULL;
}

/*
 * the holder sleeps inside idle_lock; the waiters ask for it once it is held (`held`): a loaded machine
 * that started them late or slept them long made them come after its release (17.7 ms waited, not 80)
 */
static void *idle_holder(void *arg)
{
	(void)arg;
	sem_post(&started); /* before the lock: main's wait for it ends here, not inside a hold */
	pthread_mutex_lock(&idle_lock);
	for (int i = 0; i < WAITERS; i++)
		sem_post(&held);
	usleep((useconds_t)(idle_ms * 1000));
	pthread_mutex_unlock(&idle_lock);
	return NULL;
}

static void *idle_waiter(void *arg)
{
	(void)arg;
	sem_post(&started);
	while (sem_wait(&held) != 0)
		;
	pthread_mutex_lock(&idle_lock);
	pthread_mutex_unlock(&idle_lock);
	return NULL;
}

int main(int argc, char **argv)
{
	int c;
	while ((c = getopt(argc, argv, "n:h:s:")) != -1) {
		long v = optarg ? atol(optarg) : 0;
		if (c == 'n') rounds = v;
		else if (c == 'h') hold_us = v;
		else if (c == 's') idle_ms = v;
		else {
			fprintf(stderr, "usage: cp_idle_vs_path [-n ROUNDS] [-h HOLD_US] [-s IDLE_MS]\n");
			return 2;
		}
	}
	double run_ms = 2.0 * (double)rounds * (double)hold_us / 1e3;
	if (idle_ms < 0)
		idle_ms = (long)(0.5 * run_ms); /* done well before the workers */
	pthread_t w[2], idle[1 + WAITERS];
	sem_init(&started, 0, 0);
	sem_init(&held, 0, 0);
	if (pthread_create(&idle[0], NULL, idle_holder, NULL) != 0)
		return 1;
	for (int i = 1; i <= WAITERS; i++)
		if (pthread_create(&idle[i], NULL, idle_waiter, NULL) != 0)
			return 1;
	for (int i = 0; i <= WAITERS; i++)
		sem_wait(&started);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&w[i], NULL, worker, NULL) != 0)
			return 1;
	for (int i = 0; i <= WAITERS; i++)
		pthread_join(idle[i], NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	printf("path_lock: held 2 x %ld x %ld us = %.1f ms in turn by two workers, the run's length: on the critical path\n",
	       rounds, hold_us, run_ms);
	printf("idle_lock: held %ld ms asleep by an idle thread while %d others waited for it (about %ld ms in all), "
	       "done before the workers: not on the path\n", idle_ms, WAITERS, WAITERS * idle_ms);
	return 0;
}
