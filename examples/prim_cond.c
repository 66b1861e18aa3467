/*
 * prim_cond - every condition variable call, with the counts the program
 * made itself on stderr (-v): a ping-pong with signal, a broadcast to
 * several waiters, waits that time out (timedwait, clockwait), a clocked
 * wait that is signalled, and a thread cancelled inside pthread_cond_wait.
 *
 *   prim_cond [-v]
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 100
#define WAITERS 3

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ping = PTHREAD_COND_INITIALIZER, pong = PTHREAD_COND_INITIALIZER;
static pthread_cond_t gate;
static int turn, gate_open, arrived, ready;
static long waits, timed_waits, signals, broadcasts, timeouts, cancelled_waits;

/* every call counted where it is made: __atomic because waiters run on several threads */
#define COUNT(x) __atomic_fetch_add(&(x), 1, __ATOMIC_RELAXED)

static void *ponger(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	for (int i = 0; i < ROUNDS; i++) {
		while (turn != 1) {
			COUNT(waits);
			pthread_cond_wait(&ping, &m);
		}
		turn = 0;
		COUNT(signals);
		pthread_cond_signal(&pong);
	}
	pthread_mutex_unlock(&m);
	return NULL;
}

static void *gate_waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	arrived++;
	while (!gate_open) {
		COUNT(waits);
		pthread_cond_wait(&gate, &m);
	}
	pthread_mutex_unlock(&m);
	return NULL;
}

static void unlock_on_cancel(void *p)
{
	pthread_mutex_unlock(p);
}

static void *cancel_victim(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	ready = 1;
	pthread_cleanup_push(unlock_on_cancel, &m);
	for (;;) {
		COUNT(waits); /* the loop's only cancellation point: the thread can end only in a wait */
		pthread_cond_wait(&gate, &m);
	}
	pthread_cleanup_pop(1);
	return NULL;
}

static struct timespec in_ms(clockid_t clk, long ms)
{
	struct timespec t;
	clock_gettime(clk, &t);
	t.tv_nsec += ms * 1000000;
	t.tv_sec += t.tv_nsec / 1000000000;
	t.tv_nsec %= 1000000000;
	return t;
}

static void ping_pong(void)
{
	pthread_t th;
	pthread_create(&th, NULL, ponger, NULL);
	pthread_mutex_lock(&m);
	for (int i = 0; i < ROUNDS; i++) {
		turn = 1;
		COUNT(signals);
		pthread_cond_signal(&ping);
		while (turn != 0) {
			COUNT(waits);
			pthread_cond_wait(&pong, &m);
		}
	}
	pthread_mutex_unlock(&m);
	pthread_join(th, NULL);
}

static void broadcast(void)
{
	pthread_t th[WAITERS];
	pthread_cond_init(&gate, NULL);
	for (int i = 0; i < WAITERS; i++)
		pthread_create(&th[i], NULL, gate_waiter, NULL);
	for (;;) { /* all waiters inside the wait: they release m only there */
		pthread_mutex_lock(&m);
		int all = arrived == WAITERS;
		pthread_mutex_unlock(&m);
		if (all)
			break;
		usleep(1000);
	}
	pthread_mutex_lock(&m);
	gate_open = 1;
	COUNT(broadcasts);
	pthread_cond_broadcast(&gate);
	pthread_mutex_unlock(&m);
	for (int i = 0; i < WAITERS; i++)
		pthread_join(th[i], NULL);
	gate_open = 0;
}

static void timed(void)
{
	pthread_mutex_lock(&m);
	struct timespec t = in_ms(CLOCK_REALTIME, 2);
	COUNT(waits), COUNT(timed_waits);
	while (pthread_cond_timedwait(&gate, &m, &t) != ETIMEDOUT)
		COUNT(waits), COUNT(timed_waits);
	COUNT(timeouts);
	t = in_ms(CLOCK_MONOTONIC, 2);
	COUNT(waits), COUNT(timed_waits);
	while (pthread_cond_clockwait(&gate, &m, CLOCK_MONOTONIC, &t) != ETIMEDOUT)
		COUNT(waits), COUNT(timed_waits);
	COUNT(timeouts);
	pthread_mutex_unlock(&m);
}

static void cancel(void)
{
	pthread_t th;
	pthread_create(&th, NULL, cancel_victim, NULL);
	for (;;) { /* ready is set under m, which the victim releases only inside the wait */
		pthread_mutex_lock(&m);
		int in_wait = ready;
		pthread_mutex_unlock(&m);
		if (in_wait)
			break;
		usleep(1000);
	}
	pthread_cancel(th);
	void *ret;
	pthread_join(th, &ret);
	cancelled_waits = ret == PTHREAD_CANCELED;
}

int main(int argc, char **argv)
{
	int verbose = argc > 1 && !strcmp(argv[1], "-v");
	ping_pong();
	broadcast();
	timed();
	cancel();
	pthread_cond_destroy(&gate);
	if (verbose)
		fprintf(stderr, "waits %ld\ntimed_waits %ld\nsignals %ld\nbroadcasts %ld\ntimeouts %ld\ncancelled %ld\n",
			waits, timed_waits, signals, broadcasts, timeouts, cancelled_waits);
	return 0;
}
