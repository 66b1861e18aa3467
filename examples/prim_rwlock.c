/*
 * prim_rwlock - every read-write lock call, free and contended, with the
 * counts the program made itself on stderr (-v): each kind of acquisition
 * (ok and failed), the waits that had to block, the unlocks.
 *
 *   prim_rwlock [-v]
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "blocked.h"

static pthread_rwlock_t rw;
static int holding, release;
static pid_t main_tid;
/* per kind of call: [0] calls, [1] calls that acquired */
static long rd[2], wr[2], tryrd[2], trywr[2], timedrd[2], timedwr[2], rd_req, wr_req, unlocks;

static void got(long *c, int ret)
{
	c[0]++;
	c[1] += ret == 0;
}

static void unlock(void)
{
	unlocks++;
	pthread_rwlock_unlock(&rw);
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

/* holds the lock (for writing if arg is non-NULL) until told, then until the main
 * thread is blocked on it: its next call waits, however late the scheduler runs it */
static void *holder(void *arg)
{
	if (arg)
		pthread_rwlock_wrlock(&rw);
	else
		pthread_rwlock_rdlock(&rw);
	__atomic_store_n(&holding, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&release, __ATOMIC_ACQUIRE))
		usleep(1000);
	wait_blocked_on(main_tid, &rw, sizeof rw);
	pthread_rwlock_unlock(&rw);
	return NULL;
}

static pthread_t hold(int write)
{
	pthread_t th;
	holding = release = 0;
	pthread_create(&th, NULL, holder, write ? &rw : NULL);
	while (!__atomic_load_n(&holding, __ATOMIC_ACQUIRE))
		usleep(1000);
	return th;
}

static void free_lock(void)
{
	struct timespec t;
	got(rd, pthread_rwlock_rdlock(&rw)), unlock();
	got(wr, pthread_rwlock_wrlock(&rw)), unlock();
	got(tryrd, pthread_rwlock_tryrdlock(&rw)), unlock();
	got(trywr, pthread_rwlock_trywrlock(&rw)), unlock();
	t = in_ms(CLOCK_REALTIME, 100);
	got(timedrd, pthread_rwlock_timedrdlock(&rw, &t)), unlock();
	t = in_ms(CLOCK_REALTIME, 100);
	got(timedwr, pthread_rwlock_timedwrlock(&rw, &t)), unlock();
	t = in_ms(CLOCK_MONOTONIC, 100);
	got(timedrd, pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &t)), unlock();
	t = in_ms(CLOCK_MONOTONIC, 100);
	got(timedwr, pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &t)), unlock();
}

/* another thread writes: every attempt fails or waits */
static void write_held(void)
{
	struct timespec t;
	pthread_t th = hold(1);
	got(tryrd, pthread_rwlock_tryrdlock(&rw));
	got(trywr, pthread_rwlock_trywrlock(&rw));
	t = in_ms(CLOCK_REALTIME, 2);
	got(timedrd, pthread_rwlock_timedrdlock(&rw, &t)), rd_req++;
	t = in_ms(CLOCK_REALTIME, 2);
	got(timedwr, pthread_rwlock_timedwrlock(&rw, &t)), wr_req++;
	t = in_ms(CLOCK_MONOTONIC, 2);
	got(timedrd, pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &t)), rd_req++;
	t = in_ms(CLOCK_MONOTONIC, 2);
	got(timedwr, pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &t)), wr_req++;
	__atomic_store_n(&release, 1, __ATOMIC_RELEASE);
	got(rd, pthread_rwlock_rdlock(&rw)), rd_req++; /* blocks until the holder sees it blocked */
	unlock();
	pthread_join(th, NULL);
}

/* another thread reads: readers share, a writer waits */
static void read_held(void)
{
	pthread_t th = hold(0);
	got(tryrd, pthread_rwlock_tryrdlock(&rw)), unlock();
	got(trywr, pthread_rwlock_trywrlock(&rw));
	__atomic_store_n(&release, 1, __ATOMIC_RELEASE);
	got(wr, pthread_rwlock_wrlock(&rw)), wr_req++;
	unlock();
	pthread_join(th, NULL);
}

int main(int argc, char **argv)
{
	int verbose = argc > 1 && !strcmp(argv[1], "-v");
	main_tid = gettid();
	pthread_rwlock_init(&rw, NULL);
	free_lock();
	write_held();
	read_held();
	pthread_rwlock_destroy(&rw);
	/* the holder thread's own calls: 1 rdlock, 1 wrlock, 2 unlocks, none contended */
	rd[0]++, rd[1]++, wr[0]++, wr[1]++, unlocks += 2;
	if (verbose)
		fprintf(stderr,
			"rdlock %ld %ld\nwrlock %ld %ld\ntryrdlock %ld %ld\ntrywrlock %ld %ld\n"
			"timedrdlock %ld %ld\ntimedwrlock %ld %ld\nrdlock_req %ld\nwrlock_req %ld\nunlock %ld\n",
			rd[0], rd[1], wr[0], wr[1], tryrd[0], tryrd[1], trywr[0], trywr[1],
			timedrd[0], timedrd[1], timedwr[0], timedwr[1], rd_req, wr_req, unlocks);
	return 0;
}
