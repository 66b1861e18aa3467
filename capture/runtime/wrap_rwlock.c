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

static int acquire(pthread_rwlock_t *l, unsigned req, unsigned done, rw_fn try, rw_fn lock, const void *site)
{
	if (!ptt_on[done])
		return lock(l);
	int ret = try(l);
	if (ret != 0) {
		ptt_obj_only(req, l, site);
		ret = lock(l);
	}
	ptt_obj_ret(done, l, ret, site);
	return ret;
}

PTT_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	PTT_REAL_FN(pthread_rwlock_rdlock, rw_fn, NULL);
	PTT_REAL_FN(pthread_rwlock_tryrdlock, rw_fn, NULL);
	return acquire(l, PTT_EV_RWLOCK_RDLOCK_REQ, PTT_EV_RWLOCK_RDLOCK, real_pthread_rwlock_tryrdlock, real_pthread_rwlock_rdlock,
		       PTT_SITE);
}

PTT_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	PTT_REAL_FN(pthread_rwlock_wrlock, rw_fn, NULL);
	PTT_REAL_FN(pthread_rwlock_trywrlock, rw_fn, NULL);
	return acquire(l, PTT_EV_RWLOCK_WRLOCK_REQ, PTT_EV_RWLOCK_WRLOCK, real_pthread_rwlock_trywrlock, real_pthread_rwlock_wrlock,
		       PTT_SITE);
}

PTT_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	PTT_REAL_FN(pthread_rwlock_tryrdlock, rw_fn, NULL);
	int ret = real_pthread_rwlock_tryrdlock(l);
	ptt_obj_ret(PTT_EV_RWLOCK_TRYRDLOCK, l, ret, PTT_SITE);
	return ret;
}

PTT_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	PTT_REAL_FN(pthread_rwlock_trywrlock, rw_fn, NULL);
	int ret = real_pthread_rwlock_trywrlock(l);
	ptt_obj_ret(PTT_EV_RWLOCK_TRYWRLOCK, l, ret, PTT_SITE);
	return ret;
}

#define TIMED(fname, args, call, clk, tryfn, req, done) \
	PTT_EXPORT int fname args \
	{ \
		PTT_REAL_FN(fname, int (*) args, NULL); \
		PTT_REAL_FN(tryfn, rw_fn, NULL); \
		if (!ptt_on[done]) \
			return real_##fname call; \
		int ret = ptt_bad_timeout(clk, t) ? EINVAL : real_##tryfn(l); \
		if (ret != 0) { \
			ptt_obj_only(req, l, PTT_SITE); \
			ret = real_##fname call; \
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
	PTT_REAL_FN(pthread_rwlock_unlock, rw_fn, NULL);
	struct ptt_rec rec;
	if (!ptt_on[PTT_EV_RWLOCK_UNLOCK] || ptt_objret_open(&rec, PTT_EV_RWLOCK_UNLOCK, l, PTT_SITE) != 0)
		return real_pthread_rwlock_unlock(l);
	int ret = real_pthread_rwlock_unlock(l);
	ptt_objret_close(&rec, ret);
	return ret;
}

PTT_EXPORT int pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *attr)
{
	PTT_REAL_FN(pthread_rwlock_init, int (*)(pthread_rwlock_t *, const pthread_rwlockattr_t *), NULL);
	int ret = real_pthread_rwlock_init(l, attr);
	ptt_obj_ret(PTT_EV_RWLOCK_INIT, l, ret, PTT_SITE);
	return ret;
}

PTT_EXPORT int pthread_rwlock_destroy(pthread_rwlock_t *l)
{
	PTT_REAL_FN(pthread_rwlock_destroy, rw_fn, NULL);
	int ret = real_pthread_rwlock_destroy(l);
	ptt_obj_ret(PTT_EV_RWLOCK_DESTROY, l, ret, PTT_SITE);
	return ret;
}
