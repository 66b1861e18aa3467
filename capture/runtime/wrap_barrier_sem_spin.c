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

PTT_EXPORT int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *attr, unsigned count)
{
	PTT_REAL_FN(pthread_barrier_init, int (*)(pthread_barrier_t *, const pthread_barrierattr_t *, unsigned), NULL);
	int ret = real_pthread_barrier_init(b, attr, count);
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
	PTT_REAL_FN(pthread_barrier_wait, int (*)(pthread_barrier_t *), NULL);
	ptt_obj_only(PTT_EV_BARRIER_WAIT_REQ, b, PTT_SITE);
	int ret = real_pthread_barrier_wait(b);
	ptt_obj_ret(PTT_EV_BARRIER_WAIT, b, ret, PTT_SITE);
	return ret;
}

PTT_EXPORT int pthread_barrier_destroy(pthread_barrier_t *b)
{
	PTT_REAL_FN(pthread_barrier_destroy, int (*)(pthread_barrier_t *), NULL);
	int ret = real_pthread_barrier_destroy(b);
	ptt_obj_ret(PTT_EV_BARRIER_DESTROY, b, ret, PTT_SITE);
	return ret;
}

PTT_EXPORT int sem_init(sem_t *s, int pshared, unsigned value)
{
	PTT_REAL_FN(sem_init, int (*)(sem_t *, int, unsigned), NULL);
	int rc = real_sem_init(s, pshared, value);
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
	PTT_REAL_FN(sem_destroy, int (*)(sem_t *), NULL);
	int rc = real_sem_destroy(s);
	int saved = errno;
	ptt_obj_ret(PTT_EV_SEM_DESTROY, s, sem_ret(rc), PTT_SITE);
	errno = saved;
	return rc;
}

PTT_EXPORT int sem_wait(sem_t *s)
{
	PTT_REAL_FN(sem_wait, int (*)(sem_t *), NULL);
	PTT_REAL_FN(sem_trywait, int (*)(sem_t *), NULL);
	if (!ptt_on[PTT_EV_SEM_WAIT])
		return real_sem_wait(s);
	int saved = errno;
	pthread_testcancel(); /* as glibc's sem_wait does first: the try below is no cancellation point */
	int rc = real_sem_trywait(s);
	if (rc != 0) {
		ptt_obj_only(PTT_EV_SEM_WAIT_REQ, s, PTT_SITE);
		errno = saved;
		rc = real_sem_wait(s);
	}
	saved = errno;
	ptt_obj_ret(PTT_EV_SEM_WAIT, s, sem_ret(rc), PTT_SITE);
	errno = saved;
	return rc;
}

PTT_EXPORT int sem_trywait(sem_t *s)
{
	PTT_REAL_FN(sem_trywait, int (*)(sem_t *), NULL);
	int rc = real_sem_trywait(s);
	int saved = errno;
	ptt_obj_ret(PTT_EV_SEM_TRYWAIT, s, sem_ret(rc), PTT_SITE);
	errno = saved;
	return rc;
}

static int timed_sem(sem_t *s, int (*real)(sem_t *, clockid_t, const struct timespec *), clockid_t clk,
		     const struct timespec *t, int (*treal)(sem_t *, const struct timespec *), const void *site)
{
	PTT_REAL_FN(sem_trywait, int (*)(sem_t *), NULL);
	int saved = errno;
	int rc = -1;
	if (!ptt_bad_timeout(real ? clk : CLOCK_REALTIME, t)) {
		/* glibc's order: arguments, then (sem_timedwait, not sem_clockwait) cancellation, then the fast path */
		if (!real)
			pthread_testcancel();
		rc = real_sem_trywait(s);
	}
	if (rc != 0) {
		ptt_obj_only(PTT_EV_SEM_WAIT_REQ, s, site);
		errno = saved;
		rc = real ? real(s, clk, t) : treal(s, t);
	}
	saved = errno;
	ptt_obj_ret(PTT_EV_SEM_TIMEDWAIT, s, sem_ret(rc), site);
	errno = saved;
	return rc;
}

PTT_EXPORT int sem_timedwait(sem_t *s, const struct timespec *t)
{
	PTT_REAL_FN(sem_timedwait, int (*)(sem_t *, const struct timespec *), NULL);
	if (!ptt_on[PTT_EV_SEM_TIMEDWAIT])
		return real_sem_timedwait(s, t);
	return timed_sem(s, NULL, 0, t, real_sem_timedwait, PTT_SITE);
}

PTT_EXPORT int sem_clockwait(sem_t *s, clockid_t clk, const struct timespec *t)
{
	PTT_REAL_FN(sem_clockwait, int (*)(sem_t *, clockid_t, const struct timespec *), NULL);
	if (!ptt_on[PTT_EV_SEM_TIMEDWAIT])
		return real_sem_clockwait(s, clk, t);
	return timed_sem(s, real_sem_clockwait, clk, t, NULL, PTT_SITE);
}

/* sem_post is async-signal-safe: a post from a signal handler that interrupts
 * the tracer is counted as lost, never written twice into the ring.  The real
 * function is resolved by a constructor, since dlsym is not async-signal-safe
 * and a program's first post may come from a handler. */
static int (*real_sem_post)(sem_t *);

__attribute__((constructor)) static void resolve_sem_post(void)
{
	if (!real_sem_post)
		real_sem_post = (__typeof__(real_sem_post))ptt_dlsym("sem_post", NULL);
	if (!real_sem_post)
		ptt_die("cannot resolve sem_post");
}

PTT_EXPORT int sem_post(sem_t *s)
{
	if (__builtin_expect(!real_sem_post, 0))
		resolve_sem_post(); /* called before the constructors ran */
	struct ptt_rec rec;
	if (!ptt_on[PTT_EV_SEM_POST] || ptt_objret_open(&rec, PTT_EV_SEM_POST, s, PTT_SITE) != 0)
		return real_sem_post(s);
	int rc = real_sem_post(s);
	int saved = errno;
	ptt_objret_close(&rec, sem_ret(rc));
	errno = saved;
	return rc;
}

PTT_EXPORT sem_t *sem_open(const char *name, int oflag, ...)
{
	PTT_REAL_FN(sem_open, sem_t *(*)(const char *, int, ...), NULL);
	sem_t *s;
	if (oflag & O_CREAT) {
		va_list ap;
		va_start(ap, oflag);
		mode_t mode = (mode_t)va_arg(ap, int);
		unsigned value = va_arg(ap, unsigned);
		va_end(ap);
		s = real_sem_open(name, oflag, mode, value);
	} else {
		s = real_sem_open(name, oflag);
	}
	if (ptt_on[PTT_EV_SEM_OPEN] && s != SEM_FAILED) {
		int saved = errno;
		uint32_t a[2];
		ptt_put64(a, (uint64_t)(uintptr_t)s);
		ptt_emit_str(PTT_EV_SEM_OPEN, a, 2, name);
		errno = saved;
	}
	return s;
}

PTT_EXPORT int sem_close(sem_t *s)
{
	PTT_REAL_FN(sem_close, int (*)(sem_t *), NULL);
	int rc = real_sem_close(s);
	int saved = errno;
	ptt_obj_ret(PTT_EV_SEM_CLOSE, s, sem_ret(rc), PTT_SITE);
	errno = saved;
	return rc;
}

PTT_EXPORT int sem_unlink(const char *name)
{
	PTT_REAL_FN(sem_unlink, int (*)(const char *), NULL);
	int rc = real_sem_unlink(name);
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
	PTT_REAL_FN(pthread_spin_lock, int (*)(pthread_spinlock_t *), NULL);
	int ret = real_pthread_spin_lock(l);
	ptt_obj_ret(PTT_EV_SPIN_LOCK, (const void *)l, ret, PTT_SITE);
	return ret;
}

PTT_EXPORT int pthread_spin_trylock(pthread_spinlock_t *l)
{
	PTT_REAL_FN(pthread_spin_trylock, int (*)(pthread_spinlock_t *), NULL);
	int ret = real_pthread_spin_trylock(l);
	ptt_obj_ret(PTT_EV_SPIN_TRYLOCK, (const void *)l, ret, PTT_SITE);
	return ret;
}

PTT_EXPORT int pthread_spin_unlock(pthread_spinlock_t *l)
{
	PTT_REAL_FN(pthread_spin_unlock, int (*)(pthread_spinlock_t *), NULL);
	struct ptt_rec rec;
	if (!ptt_on[PTT_EV_SPIN_UNLOCK] || ptt_objret_open(&rec, PTT_EV_SPIN_UNLOCK, (const void *)l, PTT_SITE) != 0)
		return real_pthread_spin_unlock(l);
	int ret = real_pthread_spin_unlock(l);
	ptt_objret_close(&rec, ret);
	return ret;
}
