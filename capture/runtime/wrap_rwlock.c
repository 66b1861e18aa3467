/*
 * wrap_rwlock.c - read-write locks, recorded like mutexes: a lock is tried
 * first, so an uncontended acquisition is one event and a contended one is
 * bracketed by *_req and the acquisition; an unlock is stamped before the
 * release.
 */
#include <errno.h>
#include <time.h>

#include "runtime.h"

typedef int (*rw_fn)(pthread_rwlock_t *);

PTT_ALWAYS_INLINE int acquire(pthread_rwlock_t *l, unsigned req, unsigned done, rw_fn try, rw_fn lock,
			       const void *site)
{
	if (!ptt_on[done])
		return lock(l);
	int ret = try(l);
	struct ptt_fast_rec f;
	if (ret == 0 && ptt_fast_objret_open(&f, done, PTT_FAST_SERIAL, l, site) == 0) {
		ptt_fast_objret_close(&f, 0);
		return 0;
	}
	if (ret != 0) {
		ptt_obj_only(req, l, site);
		ret = lock(l);
	}
	ptt_obj_ret(done, l, ret, site);
	return ret;
}

PTT_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	return acquire(l, PTT_EV_RWLOCK_RDLOCK_REQ, PTT_EV_RWLOCK_RDLOCK, REAL(pthread_rwlock_tryrdlock),
		       REAL(pthread_rwlock_rdlock), PTT_SITE);
}

PTT_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	return acquire(l, PTT_EV_RWLOCK_WRLOCK_REQ, PTT_EV_RWLOCK_WRLOCK, REAL(pthread_rwlock_trywrlock),
		       REAL(pthread_rwlock_wrlock), PTT_SITE);
}

PTT_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	return ptt_obj_ret_pass(PTT_EV_RWLOCK_TRYRDLOCK, l, REAL(pthread_rwlock_tryrdlock)(l), PTT_SITE);
}

PTT_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	return ptt_obj_ret_pass(PTT_EV_RWLOCK_TRYWRLOCK, l, REAL(pthread_rwlock_trywrlock)(l), PTT_SITE);
}

#define TIMED(fname, args, call, clk, tryfn, req, done) \
	PTT_EXPORT int fname args \
	{ \
		if (!ptt_on[done]) \
			return REAL(fname) call; \
		int ret = ptt_bad_timeout(clk, t) ? EINVAL : REAL(tryfn)(l); \
		if (ret != 0) { \
			ptt_obj_only(req, l, PTT_SITE); \
			ret = REAL(fname) call; \
		} \
		ptt_obj_ret(done, l, ret, PTT_SITE); \
		return ret; \
	}

TIMED(pthread_rwlock_timedrdlock, (pthread_rwlock_t *l, const struct timespec *t), (l, t), CLOCK_REALTIME,
      pthread_rwlock_tryrdlock, PTT_EV_RWLOCK_RDLOCK_REQ, PTT_EV_RWLOCK_TIMEDRDLOCK)
TIMED(pthread_rwlock_timedwrlock, (pthread_rwlock_t *l, const struct timespec *t), (l, t), CLOCK_REALTIME,
      pthread_rwlock_trywrlock, PTT_EV_RWLOCK_WRLOCK_REQ, PTT_EV_RWLOCK_TIMEDWRLOCK)
TIMED(pthread_rwlock_clockrdlock, (pthread_rwlock_t *l, clockid_t c, const struct timespec *t), (l, c, t), c,
      pthread_rwlock_tryrdlock, PTT_EV_RWLOCK_RDLOCK_REQ, PTT_EV_RWLOCK_TIMEDRDLOCK)
TIMED(pthread_rwlock_clockwrlock, (pthread_rwlock_t *l, clockid_t c, const struct timespec *t), (l, c, t), c,
      pthread_rwlock_trywrlock, PTT_EV_RWLOCK_WRLOCK_REQ, PTT_EV_RWLOCK_TIMEDWRLOCK)

PTT_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	return PTT_RELEASE(PTT_EV_RWLOCK_UNLOCK, l, PTT_SITE, REAL(pthread_rwlock_unlock)(l), PTT_AS_IS);
}

PTT_EXPORT int pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *attr)
{
	return ptt_obj_ret_pass(PTT_EV_RWLOCK_INIT, l, REAL(pthread_rwlock_init)(l, attr), PTT_SITE);
}

PTT_EXPORT int pthread_rwlock_destroy(pthread_rwlock_t *l)
{
	return ptt_obj_ret_pass(PTT_EV_RWLOCK_DESTROY, l, REAL(pthread_rwlock_destroy)(l), PTT_SITE);
}
