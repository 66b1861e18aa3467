/*
 * wrap_cond.c - condition variables.  A wait is recorded as the release of
 * its mutex and the start of the wait (cond_wait_req, timestamped before
 * glibc releases the mutex) and as the wake-up with the mutex held again
 * (cond_wait, after glibc re-locked it internally, out of any wrapper's
 * sight).  A wait ended by cancellation still records the re-acquisition
 * (glibc re-locks before running cleanup handlers), with ret ECANCELED.
 * signal and broadcast are timestamped before they take effect.
 *
 * glibc 2.36 keeps two versions of pthread_cond_*: the old GLIBC_2.2.5
 * ABI and the current GLIBC_2.3.2 one, which is what programs link to;
 * resolve that one explicitly (dlsym would give the default anyway, but
 * say so rather than rely on it).
 */
#include <errno.h>
#include <time.h>

#include "runtime.h"

#define COND_VERSION "GLIBC_2.3.2"

static void cond_mutex_event(unsigned id, const void *c, const void *m, int with_ret, int ret, const void *site)
{
	if (!ptt_on[id])
		return;
	uint32_t a[7], n = 4;
	ptt_put64(a, (uint64_t)(uintptr_t)c);
	ptt_put64(a + 2, (uint64_t)(uintptr_t)m);
	if (with_ret)
		a[n++] = (uint32_t)ret;
	ptt_put_site(a + n, site);
	ptt_emit(id, a, n + PTT_SITE_WORDS);
}

struct wait_ctx {
	pthread_cond_t *c;
	pthread_mutex_t *m;
	const void *site;
};

static void cancelled_in_wait(void *p)
{
	struct wait_ctx *w = p;
	cond_mutex_event(PTT_EV_COND_WAIT, w->c, w->m, 1, ECANCELED, w->site);
}

static int cond_wait_body(pthread_cond_t *c, pthread_mutex_t *m, const void *site)
{
	PTT_REAL_FN(pthread_cond_wait, int (*)(pthread_cond_t *, pthread_mutex_t *), COND_VERSION);
	if (!ptt_on[PTT_EV_COND_WAIT])
		return real_pthread_cond_wait(c, m);
	struct wait_ctx w = { c, m, site };
	int ret;
	cond_mutex_event(PTT_EV_COND_WAIT_REQ, c, m, 0, 0, w.site);
	pthread_cleanup_push(cancelled_in_wait, &w);
	ret = real_pthread_cond_wait(c, m);
	pthread_cleanup_pop(0);
	cond_mutex_event(PTT_EV_COND_WAIT, c, m, 1, ret, w.site);
	return ret;
}

PTT_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	return cond_wait_body(c, m, PTT_SITE);
}

int ptt_cond_wait_at(pthread_cond_t *c, pthread_mutex_t *m, const void *site)
{
	return cond_wait_body(c, m, site);
}

static int cond_timedwait_body(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime, const void *site)
{
	PTT_REAL_FN(pthread_cond_timedwait, int (*)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *), COND_VERSION);
	if (!ptt_on[PTT_EV_COND_WAIT])
		return real_pthread_cond_timedwait(c, m, abstime);
	struct wait_ctx w = { c, m, site };
	int ret;
	cond_mutex_event(PTT_EV_COND_TIMEDWAIT_REQ, c, m, 0, 0, w.site);
	pthread_cleanup_push(cancelled_in_wait, &w);
	ret = real_pthread_cond_timedwait(c, m, abstime);
	pthread_cleanup_pop(0);
	cond_mutex_event(PTT_EV_COND_WAIT, c, m, 1, ret, w.site);
	return ret;
}

PTT_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime)
{
	return cond_timedwait_body(c, m, abstime, PTT_SITE);
}

int ptt_cond_timedwait_at(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime, const void *site)
{
	return cond_timedwait_body(c, m, abstime, site);
}

PTT_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk, const struct timespec *abstime)
{
	static int (*real)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
	if (!real) /* new in 2.30: a single version */
		real = (__typeof__(real))ptt_dlsym("pthread_cond_clockwait", NULL);
	if (!real)
		ptt_die("cannot resolve pthread_cond_clockwait");
	if (!ptt_on[PTT_EV_COND_WAIT])
		return real(c, m, clk, abstime);
	struct wait_ctx w = { c, m, PTT_SITE };
	int ret;
	cond_mutex_event(PTT_EV_COND_TIMEDWAIT_REQ, c, m, 0, 0, w.site);
	pthread_cleanup_push(cancelled_in_wait, &w);
	ret = real(c, m, clk, abstime);
	pthread_cleanup_pop(0);
	cond_mutex_event(PTT_EV_COND_WAIT, c, m, 1, ret, w.site);
	return ret;
}

/* signal/broadcast: timestamp first, so a woken waiter's event never precedes it */
static int wake(unsigned id, pthread_cond_t *c, int (*real)(pthread_cond_t *), const void *site)
{
	struct ptt_rec rec;
	if (!ptt_on[id] || ptt_objret_open(&rec, id, c, site) != 0)
		return real(c);
	int ret = real(c);
	ptt_objret_close(&rec, ret);
	return ret;
}

PTT_ALWAYS_INLINE int cond_signal_body(pthread_cond_t *c, const void *site)
{
	PTT_REAL_FN(pthread_cond_signal, int (*)(pthread_cond_t *), COND_VERSION);
	return wake(PTT_EV_COND_SIGNAL, c, real_pthread_cond_signal, site);
}

PTT_EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	return cond_signal_body(c, PTT_SITE);
}

int ptt_cond_signal_at(pthread_cond_t *c, const void *site)
{
	return cond_signal_body(c, site);
}

PTT_ALWAYS_INLINE int cond_broadcast_body(pthread_cond_t *c, const void *site)
{
	PTT_REAL_FN(pthread_cond_broadcast, int (*)(pthread_cond_t *), COND_VERSION);
	return wake(PTT_EV_COND_BROADCAST, c, real_pthread_cond_broadcast, site);
}

PTT_EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	return cond_broadcast_body(c, PTT_SITE);
}

int ptt_cond_broadcast_at(pthread_cond_t *c, const void *site)
{
	return cond_broadcast_body(c, site);
}

PTT_ALWAYS_INLINE int cond_init_body(pthread_cond_t *c, const pthread_condattr_t *attr, const void *site)
{
	PTT_REAL_FN(pthread_cond_init, int (*)(pthread_cond_t *, const pthread_condattr_t *), COND_VERSION);
	int ret = real_pthread_cond_init(c, attr);
	ptt_obj_ret(PTT_EV_COND_INIT, c, ret, site);
	return ret;
}

PTT_EXPORT int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *attr)
{
	return cond_init_body(c, attr, PTT_SITE);
}

int ptt_cond_init_at(pthread_cond_t *c, const pthread_condattr_t *attr, const void *site)
{
	return cond_init_body(c, attr, site);
}

PTT_ALWAYS_INLINE int cond_destroy_body(pthread_cond_t *c, const void *site)
{
	PTT_REAL_FN(pthread_cond_destroy, int (*)(pthread_cond_t *), COND_VERSION);
	int ret = real_pthread_cond_destroy(c);
	ptt_obj_ret(PTT_EV_COND_DESTROY, c, ret, site);
	return ret;
}

PTT_EXPORT int pthread_cond_destroy(pthread_cond_t *c)
{
	return cond_destroy_body(c, PTT_SITE);
}

int ptt_cond_destroy_at(pthread_cond_t *c, const void *site)
{
	return cond_destroy_body(c, site);
}
