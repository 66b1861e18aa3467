/*
 * futex_mutex - four threads contend on a hand-made futex mutex (Drepper's
 * "Futexes are tricky", mutex 2: 0 free, 1 locked, 2 locked with waiters)
 * that waits and wakes through syscall(SYS_futex, ...) itself, as Rust's std
 * and InnoDB do.  It prints its own ground truth: the futex waits and wakes
 * it made (FUTEX_WAIT calls; FUTEX_WAKE calls and the threads they woke).
 *
 * First it checks that syscall() keeps its contract under a wrapper: a wait
 * on a word that changed fails with EAGAIN, one with a 1 ms timeout with
 * ETIMEDOUT, and other system calls answer as before.
 *
 * Usage: futex_mutex [ITERATIONS]   (default 2000 per thread)
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define THREADS 4

static unsigned futex_lock_word; /* the futex: named by its symbol in ptt's outputs */
static unsigned long counter;
static unsigned long waits, wakes, woken; /* ground truth, counted with atomics */

static void lock(void)
{
	unsigned c = 0;
	if (__atomic_compare_exchange_n(&futex_lock_word, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	if (c != 2)
		c = __atomic_exchange_n(&futex_lock_word, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		__atomic_fetch_add(&waits, 1, __ATOMIC_RELAXED);
		syscall(SYS_futex, &futex_lock_word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
		c = __atomic_exchange_n(&futex_lock_word, 2, __ATOMIC_ACQUIRE);
	}
}

static void unlock(void)
{
	if (__atomic_fetch_sub(&futex_lock_word, 1, __ATOMIC_RELEASE) != 1) {
		__atomic_store_n(&futex_lock_word, 0, __ATOMIC_RELEASE);
		long n = syscall(SYS_futex, &futex_lock_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		__atomic_fetch_add(&wakes, 1, __ATOMIC_RELAXED);
		if (n > 0)
			__atomic_fetch_add(&woken, (unsigned long)n, __ATOMIC_RELAXED);
	}
}

static long iterations = 2000;

static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < iterations; i++) {
		lock();
		counter++;
		if (i % 64 == 0)
			usleep(50); /* hold it a while now and then: the others wait in the kernel */
		unlock();
	}
	return NULL;
}

/* syscall()'s results and errno, through whatever interposes it */
static int check_syscall(void)
{
	static unsigned word = 7;
	struct timespec ms = { 0, 1000000 };
	errno = 0;
	long r1 = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 8, NULL, NULL, 0); /* 7 != 8: EAGAIN */
	int e1 = errno;
	long r2 = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 7, &ms, NULL, 0);
	int e2 = errno;
	errno = 1234;
	long pid = syscall(SYS_getpid);
	int e3 = errno;
	int ok = r1 == -1 && e1 == EAGAIN && r2 == -1 && e2 == ETIMEDOUT && pid == (long)getpid() && e3 == 1234;
	printf("syscall %s\n", ok ? "ok" : "WRONG");
	return ok;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		iterations = atol(argv[1]);
	if (!check_syscall())
		return 1;
	pthread_t th[THREADS];
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&th[i], NULL, worker, NULL) != 0)
			return 1;
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	printf("counter %lu (expected %ld)\nfutex waits %lu\nfutex wakes %lu\nthreads woken %lu\n", counter,
	       iterations * THREADS, waits, wakes, woken);
	return counter == (unsigned long)(iterations * THREADS) ? 0 : 1;
}
