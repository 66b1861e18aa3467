/*
 * wrap_c11.c - C11 <threads.h>: thrd_*, mtx_*, cnd_* and call_once are
 * exports of their own in glibc that call its pthread internals directly,
 * so a C11 program never reaches the pthread wrappers through them.  Each
 * wrapper here does what glibc's C11 function does (glibc 2.36,
 * sysdeps/pthread/{thrd,mtx,cnd}_*.c) through the traced pthread function,
 * so C11 threads and locks give the same events as pthread ones; the
 * pthread error code is mapped to the thrd_* result as glibc maps it.
 * thrd_create shares pthread_create's trampoline (ptt_create_thread).
 * Each calls the pthread wrapper's hidden twin (ptt_*_at) with its own
 * PTT_SITE, so an event's call site is the program's, not this file's.
 */
#include <errno.h>
#include <stdint.h>
#include <threads.h>

#include "runtime.h"

/* glibc's thrd_err_map */
static int thrd_result(int err)
{
	switch (err) {
	case 0: return thrd_success;
	case ENOMEM: case EAGAIN: return thrd_nomem;
	case ETIMEDOUT: return thrd_timedout;
	case EBUSY: return thrd_busy;
	default: return thrd_error;
	}
}

PTT_EXPORT int thrd_create(thrd_t *thr, thrd_start_t func, void *arg)
{
	_Static_assert(sizeof(thrd_t) == sizeof(pthread_t), "thrd_t is a pthread_t in glibc");
	if (!ptt_on[PTT_EV_THREAD_CREATE])
		return REAL(thrd_create)(thr, func, arg);
	return thrd_result(ptt_create_thread((pthread_t *)thr, NULL, (void *(*)(void *))(void *)func, arg, 1, PTT_SITE));
}

PTT_EXPORT int thrd_join(thrd_t thr, int *res)
{
	void *value;
	int err = ptt_join_at((pthread_t)thr, &value, PTT_SITE);
	if (err == 0 && res)
		*res = (int)(intptr_t)value;
	return thrd_result(err);
}

PTT_EXPORT int thrd_detach(thrd_t thr)
{
	return thrd_result(ptt_detach_at((pthread_t)thr, PTT_SITE));
}

PTT_EXPORT _Noreturn void thrd_exit(int res)
{
	pthread_exit((void *)(intptr_t)res);
}

/* mtx_t and cnd_t are pthread_mutex_t and pthread_cond_t in glibc */
_Static_assert(sizeof(mtx_t) == sizeof(pthread_mutex_t), "mtx_t is a pthread_mutex_t in glibc");
_Static_assert(sizeof(cnd_t) == sizeof(pthread_cond_t), "cnd_t is a pthread_cond_t in glibc");

PTT_EXPORT int mtx_init(mtx_t *m, int type)
{
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	/* glibc: recursive when asked, otherwise a normal mutex (mtx_timed changes nothing) */
	pthread_mutexattr_settype(&attr, type & mtx_recursive ? PTHREAD_MUTEX_RECURSIVE : PTHREAD_MUTEX_NORMAL);
	int err = ptt_mutex_init_at((pthread_mutex_t *)m, &attr, PTT_SITE);
	pthread_mutexattr_destroy(&attr);
	return thrd_result(err);
}

PTT_EXPORT void mtx_destroy(mtx_t *m)
{
	ptt_mutex_destroy_at((pthread_mutex_t *)m, PTT_SITE);
}

PTT_EXPORT int mtx_lock(mtx_t *m)
{
	return thrd_result(ptt_mutex_lock_at((pthread_mutex_t *)m, PTT_SITE));
}

PTT_EXPORT int mtx_trylock(mtx_t *m)
{
	return thrd_result(ptt_mutex_trylock_at((pthread_mutex_t *)m, PTT_SITE));
}

PTT_EXPORT int mtx_timedlock(mtx_t *restrict m, const struct timespec *restrict abstime)
{
	return thrd_result(ptt_mutex_timedlock_at((pthread_mutex_t *)m, abstime, PTT_SITE));
}

PTT_EXPORT int mtx_unlock(mtx_t *m)
{
	return thrd_result(ptt_mutex_unlock_at((pthread_mutex_t *)m, PTT_SITE));
}

PTT_EXPORT int cnd_init(cnd_t *c)
{
	return thrd_result(ptt_cond_init_at((pthread_cond_t *)c, NULL, PTT_SITE));
}

PTT_EXPORT void cnd_destroy(cnd_t *c)
{
	ptt_cond_destroy_at((pthread_cond_t *)c, PTT_SITE);
}

PTT_EXPORT int cnd_signal(cnd_t *c)
{
	return thrd_result(ptt_cond_signal_at((pthread_cond_t *)c, PTT_SITE));
}

PTT_EXPORT int cnd_broadcast(cnd_t *c)
{
	return thrd_result(ptt_cond_broadcast_at((pthread_cond_t *)c, PTT_SITE));
}

PTT_EXPORT int cnd_wait(cnd_t *c, mtx_t *m)
{
	return thrd_result(ptt_cond_wait_at((pthread_cond_t *)c, (pthread_mutex_t *)m, PTT_SITE));
}

PTT_EXPORT int cnd_timedwait(cnd_t *restrict c, mtx_t *restrict m, const struct timespec *restrict abstime)
{
	return thrd_result(ptt_cond_timedwait_at((pthread_cond_t *)c, (pthread_mutex_t *)m, abstime, PTT_SITE));
}
