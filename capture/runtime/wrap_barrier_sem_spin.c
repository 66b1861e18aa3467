/*
 * wrap_barrier_sem_spin.c - barriers (arrival and departure, the serial
 * thread's -1), semaphores (waits bracketed when they block, posts stamped
 * before they take effect, named semaphores) and spinlocks (class "spin",
 * off by default: tracing costs more than the lock).
 */
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdarg.h>
#include <time.h>

#include "runtime.h"

/* semaphores report errors through errno: record the errno value as ret */
static int sem_ret(int rc)
{
	return rc == 0 ? 0 : errno;
}

/* A semaphore call's tail after its real call (rc): the (object, result, site) event with the
 * errno value as the result; errno and rc kept for the program. */
static int sem_result(unsigned id, sem_t *s, int rc, const void *site)
{
	int saved = errno;
	ptt_obj_ret_pass(id, s, sem_ret(rc), site);
	errno = saved;
	return rc;
}

PTT_EXPORT int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *attr, unsigned count)
{
	int ret = REAL(pthread_barrier_init)(b, attr, count);
	if (ptt_on[PTT_EV_BARRIER_INIT]) {
		uint32_t a[6];
		ptt_put64(a, (uint64_t)(uintptr_t)b);
		a[2] = count;
		a[3] = (uint32_t)ret;
		ptt_put_site(a + 4, PTT_SITE);
		ptt_emit(PTT_EV_BARRIER_INIT, a, 4 + PTT_SITE_WORDS);
	}
	return ret;
}

PTT_EXPORT int pthread_barrier_wait(pthread_barrier_t *b)
{
	ptt_obj_only(PTT_EV_BARRIER_WAIT_REQ, b, PTT_SITE);
	return ptt_obj_ret_pass(PTT_EV_BARRIER_WAIT, b, REAL(pthread_barrier_wait)(b), PTT_SITE);
}

PTT_EXPORT int pthread_barrier_destroy(pthread_barrier_t *b)
{
	return ptt_obj_ret_pass(PTT_EV_BARRIER_DESTROY, b, REAL(pthread_barrier_destroy)(b), PTT_SITE);
}

PTT_EXPORT int sem_init(sem_t *s, int pshared, unsigned value)
{
	int rc = REAL(sem_init)(s, pshared, value);
	if (ptt_on[PTT_EV_SEM_INIT]) {
		int saved = errno;
		uint32_t a[6];
		ptt_put64(a, (uint64_t)(uintptr_t)s);
		a[2] = value;
		a[3] = (uint32_t)sem_ret(rc);
		ptt_put_site(a + 4, PTT_SITE);
		ptt_emit(PTT_EV_SEM_INIT, a, 4 + PTT_SITE_WORDS);
		errno = saved;
	}
	return rc;
}

PTT_EXPORT int sem_destroy(sem_t *s)
{
	return sem_result(PTT_EV_SEM_DESTROY, s, REAL(sem_destroy)(s), PTT_SITE);
}

PTT_EXPORT int sem_wait(sem_t *s)
{
	if (!ptt_on[PTT_EV_SEM_WAIT])
		return REAL(sem_wait)(s);
	int saved = errno;
	pthread_testcancel(); /* as glibc's sem_wait does first: the try below is no cancellation point */
	int rc = REAL(sem_trywait)(s);
	if (rc != 0) {
		ptt_obj_only(PTT_EV_SEM_WAIT_REQ, s, PTT_SITE);
		errno = saved;
		rc = REAL(sem_wait)(s);
	}
	return sem_result(PTT_EV_SEM_WAIT, s, rc, PTT_SITE);
}

PTT_EXPORT int sem_trywait(sem_t *s)
{
	return sem_result(PTT_EV_SEM_TRYWAIT, s, REAL(sem_trywait)(s), PTT_SITE);
}

static int timed_sem(sem_t *s, int (*real)(sem_t *, clockid_t, const struct timespec *), clockid_t clk,
		     const struct timespec *t, int (*treal)(sem_t *, const struct timespec *), const void *site)
{
	int saved = errno;
	int rc = -1;
	if (!ptt_bad_timeout(real ? clk : CLOCK_REALTIME, t)) {
		/* glibc's order: arguments, then (sem_timedwait, not sem_clockwait) cancellation, then the fast path */
		if (!real)
			pthread_testcancel();
		rc = REAL(sem_trywait)(s);
	}
	if (rc != 0) {
		ptt_obj_only(PTT_EV_SEM_WAIT_REQ, s, site);
		errno = saved;
		rc = real ? real(s, clk, t) : treal(s, t);
	}
	return sem_result(PTT_EV_SEM_TIMEDWAIT, s, rc, site);
}

PTT_EXPORT int sem_timedwait(sem_t *s, const struct timespec *t)
{
	if (!ptt_on[PTT_EV_SEM_TIMEDWAIT])
		return REAL(sem_timedwait)(s, t);
	return timed_sem(s, NULL, 0, t, REAL(sem_timedwait), PTT_SITE);
}

PTT_EXPORT int sem_clockwait(sem_t *s, clockid_t clk, const struct timespec *t)
{
	if (!ptt_on[PTT_EV_SEM_TIMEDWAIT])
		return REAL(sem_clockwait)(s, clk, t);
	return timed_sem(s, REAL(sem_clockwait), clk, t, NULL, PTT_SITE);
}

/* sem_post is async-signal-safe: a post from a signal handler that interrupts
 * the tracer is counted as lost, never written twice into the ring (its real
 * function is looked up by the constructor: runtime.h, PTT_REAL_FUNCTIONS). */
PTT_EXPORT int sem_post(sem_t *s)
{
	/* sem_ret reads errno; the record's close only stores: errno is left alone */
	return PTT_RELEASE(PTT_EV_SEM_POST, s, PTT_SITE, REAL(sem_post)(s), sem_ret);
}

PTT_EXPORT sem_t *sem_open(const char *name, int oflag, ...)
{
	sem_t *s;
	if (oflag & O_CREAT) {
		va_list ap;
		va_start(ap, oflag);
		mode_t mode = (mode_t)va_arg(ap, int);
		unsigned value = va_arg(ap, unsigned);
		va_end(ap);
		s = REAL(sem_open)(name, oflag, mode, value);
	} else {
		s = REAL(sem_open)(name, oflag);
	}
	if (s == SEM_FAILED)
		return s;
	int saved = errno;
	ptt_maps_sem_open(s, name); /* before sem_open's event: the object is the file's from its first event */
	if (ptt_on[PTT_EV_SEM_OPEN]) {
		uint32_t a[2];
		ptt_put64(a, (uint64_t)(uintptr_t)s);
		ptt_emit_str(PTT_EV_SEM_OPEN, a, 2, name);
	}
	errno = saved;
	return s;
}

PTT_EXPORT int sem_close(sem_t *s)
{
	int rc = sem_result(PTT_EV_SEM_CLOSE, s, REAL(sem_close)(s), PTT_SITE);
	if (rc == 0) {
		int saved = errno;
		ptt_maps_sem_close(s);
		errno = saved;
	}
	return rc;
}

PTT_EXPORT int sem_unlink(const char *name)
{
	int rc = REAL(sem_unlink)(name);
	if (ptt_on[PTT_EV_SEM_UNLINK]) {
		int saved = errno;
		uint32_t a[1] = { (uint32_t)sem_ret(rc) };
		ptt_emit_str(PTT_EV_SEM_UNLINK, a, 1, name);
		errno = saved;
	}
	return rc;
}

PTT_EXPORT int pthread_spin_lock(pthread_spinlock_t *l)
{
	return ptt_obj_ret_pass(PTT_EV_SPIN_LOCK, (const void *)l, REAL(pthread_spin_lock)(l), PTT_SITE);
}

PTT_EXPORT int pthread_spin_trylock(pthread_spinlock_t *l)
{
	return ptt_obj_ret_pass(PTT_EV_SPIN_TRYLOCK, (const void *)l, REAL(pthread_spin_trylock)(l), PTT_SITE);
}

PTT_EXPORT int pthread_spin_unlock(pthread_spinlock_t *l)
{
	return PTT_RELEASE(PTT_EV_SPIN_UNLOCK, (const void *)l, PTT_SITE, REAL(pthread_spin_unlock)(l), PTT_AS_IS);
}
