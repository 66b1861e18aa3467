/*
 * wrapper_semantics - calls whose outcome a tracing wrapper could change by
 * trying the lock first: timed and clock locks with bad arguments (glibc
 * answers EINVAL without taking the lock) and semaphore waits with a
 * cancellation pending (glibc cancels even when the semaphore is free).
 * Prints what each call did: the tests compare an untraced run with a
 * traced one, line for line, so whatever this glibc does is the reference.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <time.h>

static void check(const char *what, int yes)
{
	printf("%s: %s\n", what, yes ? "yes" : "no");
}

static struct timespec in_one_second(clockid_t clk, long bad_nsec)
{
	struct timespec t;
	clock_gettime(clk, &t);
	t.tv_sec += 1;
	if (bad_nsec)
		t.tv_nsec = bad_nsec;
	return t;
}

static sem_t free_sem;
static int wait_kind;

static void *cancelled_waiter(void *arg)
{
	(void)arg;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_cancel(pthread_self()); /* pending until the wait below */
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	struct timespec t = in_one_second(CLOCK_REALTIME, 0);
	if (wait_kind == 0)
		sem_wait(&free_sem);
	else if (wait_kind == 1)
		sem_timedwait(&free_sem, &t);
	else
		sem_clockwait(&free_sem, CLOCK_MONOTONIC, &t);
	return (void *)1; /* not reached when the wait honours the cancellation */
}

int main(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	struct timespec t = in_one_second(CLOCK_MONOTONIC, 0);
	check("mutex_clocklock, bad clock: EINVAL", pthread_mutex_clocklock(&m, CLOCK_PROCESS_CPUTIME_ID, &t) == EINVAL);
	check("mutex_clocklock, bad clock: mutex left free", pthread_mutex_trylock(&m) == 0 && pthread_mutex_unlock(&m) == 0);

	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	check("rwlock_clockwrlock, bad clock: EINVAL", pthread_rwlock_clockwrlock(&l, CLOCK_THREAD_CPUTIME_ID, &t) == EINVAL);
	check("rwlock_clockrdlock, bad clock: EINVAL", pthread_rwlock_clockrdlock(&l, CLOCK_THREAD_CPUTIME_ID, &t) == EINVAL);
	struct timespec bad = in_one_second(CLOCK_REALTIME, 2000000000);
	check("rwlock_timedrdlock, bad tv_nsec: EINVAL", pthread_rwlock_timedrdlock(&l, &bad) == EINVAL);
	check("rwlock_timedwrlock, bad tv_nsec: EINVAL", pthread_rwlock_timedwrlock(&l, &bad) == EINVAL);
	check("rwlock left free", pthread_rwlock_trywrlock(&l) == 0 && pthread_rwlock_unlock(&l) == 0);

	sem_t s;
	int v = -1;
	sem_init(&s, 0, 1);
	errno = 0;
	check("sem_timedwait, bad tv_nsec: -1, EINVAL", sem_timedwait(&s, &bad) == -1 && errno == EINVAL);
	errno = 0;
	check("sem_clockwait, bad clock: -1, EINVAL", sem_clockwait(&s, CLOCK_PROCESS_CPUTIME_ID, &t) == -1 && errno == EINVAL);
	check("semaphore left at 1", sem_getvalue(&s, &v) == 0 && v == 1);

	static const char *const kinds[] = { "sem_wait", "sem_timedwait", "sem_clockwait" };
	for (wait_kind = 0; wait_kind < 3; wait_kind++) {
		char what[96];
		void *ret = NULL;
		pthread_t th;
		sem_init(&free_sem, 0, 1);
		pthread_create(&th, NULL, cancelled_waiter, NULL);
		pthread_join(th, &ret);
		snprintf(what, sizeof what, "%s on a free semaphore with a cancellation pending: cancelled", kinds[wait_kind]);
		check(what, ret == PTHREAD_CANCELED);
		sem_getvalue(&free_sem, &v);
		snprintf(what, sizeof what, "%s cancelled: semaphore left at 1", kinds[wait_kind]);
		check(what, v == 1);
	}
	return 0;
}
