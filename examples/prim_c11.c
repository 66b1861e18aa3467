/*
 * prim_c11 - C11 <threads.h> threads, mutexes and condition variables, and
 * pthread_clockjoin_np, with the counts the program made itself on stderr
 * (-v): thrd_create/join/detach/exit, mtx_lock/trylock/timedlock/unlock on
 * plain, timed and recursive mutexes, cnd_wait/timedwait/signal/broadcast;
 * then pthreads joined with pthread_clockjoin_np, one join timing out first.
 * Results are checked against what C11 and glibc promise (bad counts 0).
 *
 *   prim_c11 [-v]
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <threads.h>
#include <time.h>

#define WORKERS 4
#define ITER 200
#define CLOCKJOINS 50

static mtx_t lock, timed, rec;
static cnd_t cond;
static int ready, detached_done;
static long locks, unlocks, trylock_ok, trylock_busy, timedlock_ok, timedlock_timedout;
static long cnd_waits, cnd_timedwaits, signals, broadcasts, creates, joins, detaches, exits, clockjoins;
static int bad;

static struct timespec in_ms(clockid_t clk, long ms)
{
	struct timespec t;
	clock_gettime(clk, &t);
	t.tv_nsec += ms * 1000000;
	t.tv_sec += t.tv_nsec / 1000000000;
	t.tv_nsec %= 1000000000;
	return t;
}

static int worker(void *arg)
{
	int id = (int)(long)arg;
	for (int i = 0; i < ITER; i++) {
		if (mtx_lock(&lock) != thrd_success)
			bad++;
		locks++;
		unlocks++;
		mtx_unlock(&lock);
	}
	if (id == 0)
		thrd_exit(42); /* the value thrd_join must return */
	return id + 100;
}

/* waits for ready under the lock with cnd_wait, then tells the main thread it is done */
static int waiter(void *arg)
{
	(void)arg;
	mtx_lock(&lock);
	locks++;
	while (!ready) {
		cnd_waits++;
		cnd_wait(&cond, &lock);
	}
	detached_done = 1;
	signals++;
	cnd_signal(&cond);
	unlocks++;
	mtx_unlock(&lock);
	return 0;
}

/* holds timed until told to release it, so that a trylock and a timedlock fail */
static int held, release;

static int holder(void *arg)
{
	(void)arg;
	mtx_lock(&timed);
	locks++;
	__atomic_store_n(&held, 1, __ATOMIC_RELEASE);
	mtx_lock(&lock);
	locks++;
	while (!release) {
		struct timespec until = in_ms(CLOCK_REALTIME, 5);
		cnd_timedwaits++;
		int rc = cnd_timedwait(&cond, &lock, &until);
		if (rc != thrd_success && rc != thrd_timedout)
			bad++;
	}
	unlocks++;
	mtx_unlock(&lock);
	unlocks++;
	mtx_unlock(&timed);
	return 0;
}

static void *pworker(void *arg)
{
	return arg;
}

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;

static long gate_locks; /* pthread_mutex_lock/unlock pairs on gate */

static void *gated(void *arg)
{
	pthread_mutex_lock(&gate);
	gate_locks++;
	pthread_mutex_unlock(&gate);
	return arg;
}

static void c11_part(void)
{
	thrd_t th[WORKERS], w, h;
	if (mtx_init(&lock, mtx_plain) != thrd_success || mtx_init(&timed, mtx_timed) != thrd_success ||
	    mtx_init(&rec, mtx_plain | mtx_recursive) != thrd_success || cnd_init(&cond) != thrd_success)
		bad++;
	for (long i = 0; i < WORKERS; i++) {
		if (thrd_create(&th[i], worker, (void *)i) != thrd_success)
			bad++;
		creates++;
	}
	exits++; /* worker 0 */
	for (int i = 0; i < WORKERS; i++) {
		int res = -1;
		if (thrd_join(th[i], &res) != thrd_success || res != (i == 0 ? 42 : i + 100))
			bad++;
		joins++;
	}

	/* a detached thread that reports back through the condition variable */
	if (thrd_create(&w, waiter, NULL) != thrd_success || thrd_detach(w) != thrd_success)
		bad++;
	creates++;
	detaches++;
	mtx_lock(&lock);
	locks++;
	ready = 1;
	broadcasts++;
	cnd_broadcast(&cond);
	while (!detached_done) {
		cnd_waits++;
		cnd_wait(&cond, &lock);
	}
	unlocks++;
	mtx_unlock(&lock);

	/* trylock and timedlock, free and held */
	if (mtx_trylock(&timed) == thrd_success) {
		trylock_ok++;
		unlocks++;
		mtx_unlock(&timed);
	}
	struct timespec soon = in_ms(CLOCK_REALTIME, 1000);
	if (mtx_timedlock(&timed, &soon) == thrd_success) {
		timedlock_ok++;
		unlocks++;
		mtx_unlock(&timed);
	}
	if (thrd_create(&h, holder, NULL) != thrd_success)
		bad++;
	creates++;
	while (!__atomic_load_n(&held, __ATOMIC_ACQUIRE))
		thrd_yield();
	if (mtx_trylock(&timed) != thrd_busy)
		bad++;
	trylock_busy++;
	struct timespec brief = in_ms(CLOCK_REALTIME, 5);
	if (mtx_timedlock(&timed, &brief) != thrd_timedout)
		bad++;
	timedlock_timedout++;
	mtx_lock(&lock);
	locks++;
	release = 1;
	signals++;
	cnd_signal(&cond);
	unlocks++;
	mtx_unlock(&lock);
	if (thrd_join(h, NULL) != thrd_success)
		bad++;
	joins++;

	/* a recursive mutex taken twice */
	for (int i = 0; i < 2; i++) {
		mtx_lock(&rec);
		locks++;
	}
	for (int i = 0; i < 2; i++) {
		unlocks++;
		mtx_unlock(&rec);
	}
	mtx_destroy(&lock);
	mtx_destroy(&timed);
	mtx_destroy(&rec);
	cnd_destroy(&cond);
}

static void clockjoin_part(void)
{
	pthread_t th[CLOCKJOINS], g;
	for (long i = 0; i < CLOCKJOINS; i++)
		if (pthread_create(&th[i], NULL, pworker, (void *)i) != 0)
			bad++;
	for (long i = 0; i < CLOCKJOINS; i++) {
		void *v = NULL;
		struct timespec t = in_ms(i % 2 ? CLOCK_MONOTONIC : CLOCK_REALTIME, 10000);
		if (pthread_clockjoin_np(th[i], &v, i % 2 ? CLOCK_MONOTONIC : CLOCK_REALTIME, &t) != 0 || v != (void *)i)
			bad++;
		clockjoins++;
	}
	/* one that times out first: the thread waits for gate */
	pthread_mutex_lock(&gate);
	gate_locks++;
	if (pthread_create(&g, NULL, gated, (void *)7) != 0)
		bad++;
	struct timespec t = in_ms(CLOCK_MONOTONIC, 5);
	if (pthread_clockjoin_np(g, NULL, CLOCK_MONOTONIC, &t) != ETIMEDOUT)
		bad++;
	clockjoins++;
	pthread_mutex_unlock(&gate);
	void *v = NULL;
	t = in_ms(CLOCK_MONOTONIC, 10000);
	if (pthread_clockjoin_np(g, &v, CLOCK_MONOTONIC, &t) != 0 || v != (void *)7)
		bad++;
	clockjoins++;
}

int main(int argc, char **argv)
{
	int verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
	c11_part();
	clockjoin_part();
	if (verbose)
		fprintf(stderr, "thrd_create %ld\nthrd_join %ld\nthrd_detach %ld\nthrd_exit %ld\n"
			"mtx_lock %ld\nmtx_unlock %ld\nmtx_trylock %ld %ld\nmtx_timedlock %ld %ld\n"
			"cnd_wait %ld\ncnd_timedwait %ld\ncnd_signal %ld\ncnd_broadcast %ld\nclockjoin %ld\n"
			"pthread_create %d\npthread_mutex_lock %ld\nbad %d\n",
			creates, joins, detaches, exits, locks, unlocks, trylock_ok + trylock_busy, trylock_ok,
			timedlock_ok + timedlock_timedout, timedlock_ok, cnd_waits, cnd_timedwaits, signals, broadcasts,
			clockjoins, CLOCKJOINS + 1, gate_locks, bad);
	return bad != 0;
}
