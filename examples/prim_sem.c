/*
 * prim_sem - every semaphore call, with the counts the program made itself
 * on stderr (-v): trywait, timedwait and clockwait that succeed and fail,
 * a wait that blocks, posts from another thread and from a signal handler,
 * a named semaphore opened twice; errno is checked around each call.
 * With "signals", a thread busy locking a mutex also gets many signals whose
 * handler posts a semaphore: the posts that interrupt the tracer itself are
 * counted as lost events by the runtime, never written half.
 *
 *   prim_sem [-v] [signals]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "blocked.h"

static sem_t sem;
static long posts, waits, wait_req, trywaits[2], timedwaits[2];
static int errno_bad;

static struct timespec in_ms(clockid_t clk, long ms)
{
	struct timespec t;
	clock_gettime(clk, &t);
	t.tv_nsec += ms * 1000000;
	t.tv_sec += t.tv_nsec / 1000000000;
	t.tv_nsec %= 1000000000;
	return t;
}

/* a successful call leaves errno alone; a failed one sets the expected code */
static void check(int rc, int want_errno)
{
	if (rc == 0 ? errno != 4242 : errno != want_errno)
		errno_bad++;
	errno = 4242;
}

static void on_signal(int sig)
{
	(void)sig;
	int saved = errno;
	sem_post(&sem); /* async-signal-safe */
	errno = saved;
}

static sem_t sig_sem;
static pthread_mutex_t busy_mutex = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t stop;
static long handler_posts;

static void on_signal_busy(int sig)
{
	(void)sig;
	int saved = errno;
	sem_post(&sig_sem);
	handler_posts++; /* only the busy thread runs this handler */
	errno = saved;
}

static void *busy(void *arg)
{
	(void)arg;
	while (!stop) {
		pthread_mutex_lock(&busy_mutex);
		pthread_mutex_unlock(&busy_mutex);
	}
	return NULL;
}

/* returns the number of posts made by the handler */
static long signal_storm(void)
{
	pthread_t th;
	sem_init(&sig_sem, 0, 0);
	signal(SIGUSR2, on_signal_busy);
	pthread_create(&th, NULL, busy, NULL);
	for (int i = 0; i < 100; i++) {
		pthread_kill(th, SIGUSR2);
		usleep(100);
	}
	stop = 1;
	pthread_join(th, NULL);
	return handler_posts;
}

/* posts once the main thread is blocked in its sem_wait: that wait blocks, however late
 * the scheduler runs the main thread */
static void *late_poster(void *arg)
{
	wait_blocked_on(*(pid_t *)arg, &sem, sizeof sem);
	posts++;
	sem_post(&sem);
	return NULL;
}

int main(int argc, char **argv)
{
	int verbose = 0, signals = 0;
	for (int i = 1; i < argc; i++) {
		verbose |= !strcmp(argv[i], "-v");
		signals |= !strcmp(argv[i], "signals");
	}
	struct timespec t;
	errno = 4242;
	check(sem_init(&sem, 0, 0), 0);

	trywaits[0]++, check(sem_trywait(&sem), EAGAIN);
	t = in_ms(CLOCK_REALTIME, 2);
	timedwaits[0]++, check(sem_timedwait(&sem, &t), ETIMEDOUT);
	t = in_ms(CLOCK_MONOTONIC, 2);
	timedwaits[0]++, check(sem_clockwait(&sem, CLOCK_MONOTONIC, &t), ETIMEDOUT);

	posts += 3;
	check(sem_post(&sem), 0), check(sem_post(&sem), 0), check(sem_post(&sem), 0);
	trywaits[0]++, trywaits[1]++, check(sem_trywait(&sem), 0);
	t = in_ms(CLOCK_REALTIME, 100);
	timedwaits[0]++, timedwaits[1]++, check(sem_timedwait(&sem, &t), 0);
	t = in_ms(CLOCK_MONOTONIC, 100);
	timedwaits[0]++, timedwaits[1]++, check(sem_clockwait(&sem, CLOCK_MONOTONIC, &t), 0);

	/* a post from a signal handler, outside any traced call of this thread */
	signal(SIGUSR1, on_signal);
	posts++, raise(SIGUSR1);
	waits++, check(sem_wait(&sem), 0);

	pthread_t th; /* a wait that blocks until another thread posts */
	pid_t main_tid = gettid();
	pthread_create(&th, NULL, late_poster, &main_tid);
	waits++, wait_req++, check(sem_wait(&sem), 0);
	pthread_join(th, NULL);
	check(sem_destroy(&sem), 0);

	char name[40]; /* one per process: tests may run side by side */
	snprintf(name, sizeof name, "/ptt-prim-sem-%d", (int)getpid());
	sem_unlink(name);
	errno = 4242;
	sem_t *a = sem_open(name, O_CREAT | O_EXCL, 0600, 1);
	sem_t *b = sem_open(name, 0);
	if (a == SEM_FAILED || b == SEM_FAILED)
		return 1;
	waits++, check(sem_wait(b), 0);
	posts++, check(sem_post(a), 0);
	check(sem_close(b), 0);
	check(sem_close(a), 0);
	check(sem_unlink(name), 0);
	check(sem_unlink(name), ENOENT);

	long storm = signals ? signal_storm() : 0;
	posts += storm;

	if (verbose)
		fprintf(stderr, "handler_posts %ld\nsem_post %ld\nsem_wait %ld\nsem_wait_req %ld\nsem_trywait %ld %ld\n"
			"sem_timedwait %ld %ld\nerrno_bad %d\n",
			storm, posts, waits, wait_req + timedwaits[0] - timedwaits[1], trywaits[0], trywaits[1],
			timedwaits[0], timedwaits[1], errno_bad);
	return errno_bad != 0;
}
