/*
 * wrapped_locks - a program that takes its locks through a layer of its own
 * (my_lock/my_unlock around pthread_mutex_lock), as sqlite3, CPython or
 * MariaDB do: every call site of pthread is inside my_lock, and only a stack
 * says which of the program's functions waited (update_stats or flush_log).
 *
 *   wrapped_locks [-n ROUNDS] [-c PAIRS]  contention: flush_log waits for update_stats, ROUNDS times (-c: the logger first takes a lock of its own PAIRS times)
 *   wrapped_locks -o            lock order: transfer_ab takes a then b, later transfer_ba b then a
 *                               (one thread after the other: a potential deadlock, never a real one)
 *   wrapped_locks -s            the same contention from a signal handler's wait, a fork child,
 *                               a thread being created and a dlopen'd library (stack safety)
 */
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER, lock_b = PTHREAD_MUTEX_INITIALIZER, churn_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int waiter_coming;
static volatile long counter;

__attribute__((noinline)) static void my_lock(pthread_mutex_t *m)
{
	if (pthread_mutex_lock(m) != 0)
		abort();
	__asm__ volatile("" ::: "memory"); /* no tail call: my_lock keeps its frame */
}

__attribute__((noinline)) static void my_unlock(pthread_mutex_t *m)
{
	pthread_mutex_unlock(m);
	__asm__ volatile("" ::: "memory");
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* holds the lock, lets the logger go (let_go), until flush_log is on its way to it, and 20 ms more:
 * flush_log waits */
__attribute__((noinline)) static void update_stats(sem_t *let_go)
{
	my_lock(&stats_lock);
	if (let_go)
		sem_post(let_go);
	while (!waiter_coming)
		sched_yield();
	sleep_ms(20);
	counter++;
	waiter_coming = 0;
	my_unlock(&stats_lock);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void flush_log(void)
{
	waiter_coming = 1;
	my_lock(&stats_lock);
	counter++;
	my_unlock(&stats_lock);
	__asm__ volatile("" ::: "memory");
}

static sem_t go, done;
static long rounds = 3, churn; /* -c: a flight ring turns over between the logger's waits of one stack */

static void *logger_main(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++) {
		sem_wait(&go);
		for (long k = 0; k < churn && pthread_mutex_lock(&churn_lock) == 0; k++)
			pthread_mutex_unlock(&churn_lock);
		flush_log();
		sem_post(&done);
	}
	return NULL;
}

static void contention(void)
{
	pthread_t th;
	sem_init(&go, 0, 0);
	sem_init(&done, 0, 0);
	pthread_create(&th, NULL, logger_main, NULL);
	for (long i = 0; i < rounds; i++) {
		/* taken before the logger is let go: the logger's lock is a wait */
		pthread_mutex_lock(&lock_b); /* (nothing: keeps main's own site apart) */
		pthread_mutex_unlock(&lock_b);
		update_stats(&go);
		sem_wait(&done);
	}
	pthread_join(th, NULL);
}

__attribute__((noinline)) static void transfer_ab(void)
{
	my_lock(&lock_a);
	my_lock(&lock_b);
	counter++;
	my_unlock(&lock_b);
	my_unlock(&lock_a);
}

__attribute__((noinline)) static void transfer_ba(void)
{
	my_lock(&lock_b);
	my_lock(&lock_a);
	counter++;
	my_unlock(&lock_a);
	my_unlock(&lock_b);
}

static void *ab_main(void *arg) { (void)arg; transfer_ab(); return NULL; }
static void *ba_main(void *arg) { (void)arg; transfer_ba(); return NULL; }

static void lock_order(void)
{
	pthread_t t1, t2;
	pthread_create(&t1, NULL, ab_main, NULL);
	pthread_join(t1, NULL);
	pthread_create(&t2, NULL, ba_main, NULL);
	pthread_join(t2, NULL);
}

/* ---- -s: stacks taken where unwinding is delicate ---- */

static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int handler_ran;

__attribute__((noinline)) static void in_signal_handler(int sig)
{
	(void)sig;
	/* not async-signal-safe in general; here the lock is only ever taken by this handler and main,
	 * which holds it in another thread's sight: a contended acquisition inside the handler */
	my_lock(&handler_lock);
	handler_ran++;
	my_unlock(&handler_lock);
}

static void *hold_handler_lock(void *arg)
{
	(void)arg;
	my_lock(&handler_lock);
	sleep_ms(50);
	my_unlock(&handler_lock);
	return NULL;
}

static void *one_flush(void *arg)
{
	(void)arg;
	sem_wait(&go);
	flush_log();
	sem_post(&done);
	return NULL;
}

static void *creator_main(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20; i++) { /* threads being created while others wait */
		pthread_t th;
		if (pthread_create(&th, NULL, one_flush, NULL) == 0)
			pthread_join(th, NULL);
	}
	return NULL;
}

static void safety(const char *self)
{
	/* a wait inside a signal handler, on a stack that goes through the signal frame */
	pthread_t th;
	pthread_create(&th, NULL, hold_handler_lock, NULL);
	sleep_ms(10);
	signal(SIGUSR1, in_signal_handler);
	raise(SIGUSR1);
	pthread_join(th, NULL);
	/* a fork child that waits (its stacks start afresh, under its pid) */
	pid_t pid = fork();
	if (pid == 0) {
		rounds = 2;
		contention();
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	/* waits while threads are created, one thread at a time */
	sem_init(&go, 0, 0);
	sem_init(&done, 0, 0);
	pthread_t creator;
	pthread_create(&creator, NULL, creator_main, NULL);
	for (int i = 0; i < 20; i++) {
		update_stats(&go);
		sem_wait(&done);
	}
	pthread_join(creator, NULL);
	/* a wait in a dlopen'd library's code ($WRAPPED_LOCKS_DSO: a library with dso_contend(void),
	 * which the tests build), unloaded afterwards */
	const char *dso = getenv("WRAPPED_LOCKS_DSO");
	void *h = dso ? dlopen(dso, RTLD_NOW) : NULL;
	if (dso && !h)
		fprintf(stderr, "wrapped_locks: %s\n", dlerror());
	if (h) {
		void (*contend)(void) = (void (*)(void))dlsym(h, "dso_contend");
		if (contend)
			contend();
		dlclose(h);
	}
	(void)self;
	printf("signal handler %d, child %d\n", handler_ran, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

int main(int argc, char **argv)
{
	int c, order = 0, safe = 0;
	while ((c = getopt(argc, argv, "c:n:os")) != -1) {
		switch (c) {
		case 'c': churn = atol(optarg); break;
		case 'n': rounds = atol(optarg); break;
		case 'o': order = 1; break;
		case 's': safe = 1; break;
		default:
			fprintf(stderr, "usage: wrapped_locks [-n ROUNDS] [-c PAIRS] [-o] [-s]\n");
			return 2;
		}
	}
	if (order)
		lock_order();
	else if (safe)
		safety(argv[0]);
	else
		contention();
	printf("counter %ld\n", counter);
	return 0;
}
