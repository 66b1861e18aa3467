/*
 * wrap_mutex.c - pthread mutexes.  A lock first tries the mutex: when that
 * succeeds the acquisition is one event (mutex_lock); otherwise the wait is
 * bracketed by mutex_lock_req and mutex_lock.  An unlock is timestamped
 * before the mutex is released, so a trace never shows two holders at once.
 */

#include <errno.h>

#include "runtime.h"

PTT_ALWAYS_INLINE int mutex_lock_body(pthread_mutex_t *m, const void *site)
{
	if (!ptt_on[PTT_EV_MUTEX_LOCK])
		return REAL(pthread_mutex_lock)(m);
	int ret = REAL(pthread_mutex_trylock)(m);
	if (ret != 0 && ret != EOWNERDEAD) {
		ptt_obj_only(PTT_EV_MUTEX_LOCK_REQ, m, site);
		ret = REAL(pthread_mutex_lock)(m);
	}
	ptt_obj_ret(PTT_EV_MUTEX_LOCK, m, ret, site);
	return ret;
}

PTT_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	return mutex_lock_body(m, PTT_SITE);
}

int ptt_mutex_lock_at(pthread_mutex_t *m, const void *site)
{
	return mutex_lock_body(m, site);
}

PTT_ALWAYS_INLINE int mutex_trylock_body(pthread_mutex_t *m, const void *site)
{
	return ptt_obj_ret_pass(PTT_EV_MUTEX_TRYLOCK, m, REAL(pthread_mutex_trylock)(m), site);
}

PTT_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
	return mutex_trylock_body(m, PTT_SITE);
}

int ptt_mutex_trylock_at(pthread_mutex_t *m, const void *site)
{
	return mutex_trylock_body(m, site);
}

PTT_ALWAYS_INLINE int mutex_timedlock_body(pthread_mutex_t *m, const struct timespec *abstime, const void *site)
{
	if (!ptt_on[PTT_EV_MUTEX_TIMEDLOCK])
		return REAL(pthread_mutex_timedlock)(m, abstime);
	int ret = REAL(pthread_mutex_trylock)(m);
	if (ret != 0 && ret != EOWNERDEAD) {
		ptt_obj_only(PTT_EV_MUTEX_TIMEDLOCK_REQ, m, site);
		ret = REAL(pthread_mutex_timedlock)(m, abstime);
	}
	ptt_obj_ret(PTT_EV_MUTEX_TIMEDLOCK, m, ret, site);
	return ret;
}

PTT_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	return mutex_timedlock_body(m, abstime, PTT_SITE);
}

int ptt_mutex_timedlock_at(pthread_mutex_t *m, const struct timespec *abstime, const void *site)
{
	return mutex_timedlock_body(m, abstime, site);
}

PTT_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clk, const struct timespec *abstime)
{
	if (!ptt_on[PTT_EV_MUTEX_TIMEDLOCK])
		return REAL(pthread_mutex_clocklock)(m, clk, abstime);
	int ret = ptt_bad_timeout(clk, abstime) ? EINVAL : REAL(pthread_mutex_trylock)(m);
	if (ret != 0 && ret != EOWNERDEAD) {
		ptt_obj_only(PTT_EV_MUTEX_TIMEDLOCK_REQ, m, PTT_SITE);
		ret = REAL(pthread_mutex_clocklock)(m, clk, abstime);
	}
	ptt_obj_ret(PTT_EV_MUTEX_TIMEDLOCK, m, ret, PTT_SITE);
	return ret;
}

PTT_ALWAYS_INLINE int mutex_unlock_body(pthread_mutex_t *m, const void *site)
{
	struct ptt_rec rec;
	/* the object first: a process killed inside the call leaves a record the recorder can complete */
	if (!ptt_on[PTT_EV_MUTEX_UNLOCK] || ptt_objret_open(&rec, PTT_EV_MUTEX_UNLOCK, m, site) != 0)
		return REAL(pthread_mutex_unlock)(m);
	int ret = REAL(pthread_mutex_unlock)(m);
	ptt_objret_close(&rec, ret);
	return ret;
}

PTT_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	return mutex_unlock_body(m, PTT_SITE);
}

int ptt_mutex_unlock_at(pthread_mutex_t *m, const void *site)
{
	return mutex_unlock_body(m, site);
}

PTT_ALWAYS_INLINE int mutex_init_body(pthread_mutex_t *m, const pthread_mutexattr_t *attr, const void *site)
{
	int ret = REAL(pthread_mutex_init)(m, attr);
	if (ptt_on[PTT_EV_MUTEX_INIT]) {
		int type = PTHREAD_MUTEX_NORMAL, robust = PTHREAD_MUTEX_STALLED;
		if (attr) {
			pthread_mutexattr_gettype(attr, &type);
			pthread_mutexattr_getrobust(attr, &robust);
		}
		uint32_t a[6];
		ptt_put64(a, (uint64_t)(uintptr_t)m);
		a[2] = (uint32_t)(type | (robust == PTHREAD_MUTEX_ROBUST ? 0x10 : 0));
		a[3] = (uint32_t)ret;
		ptt_put_site(a + 4, site);
		ptt_emit(PTT_EV_MUTEX_INIT, a, 4 + PTT_SITE_WORDS);
	}
	return ret;
}

PTT_EXPORT int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
	return mutex_init_body(m, attr, PTT_SITE);
}

int ptt_mutex_init_at(pthread_mutex_t *m, const pthread_mutexattr_t *attr, const void *site)
{
	return mutex_init_body(m, attr, site);
}

PTT_ALWAYS_INLINE int mutex_destroy_body(pthread_mutex_t *m, const void *site)
{
	return ptt_obj_ret_pass(PTT_EV_MUTEX_DESTROY, m, REAL(pthread_mutex_destroy)(m), site);
}

PTT_EXPORT int pthread_mutex_destroy(pthread_mutex_t *m)
{
	return mutex_destroy_body(m, PTT_SITE);
}

int ptt_mutex_destroy_at(pthread_mutex_t *m, const void *site)
{
	return mutex_destroy_body(m, site);
}
