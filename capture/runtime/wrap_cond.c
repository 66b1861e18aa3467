/*
 * wrap_cond.c - condition variables.  A wait is recorded as the release of
 * its mutex and the start of the wait (cond_wait_req, timestamped before
 * glibc releases the mutex) and as the wake-up with the mutex held again
 * (cond_wait, after glibc re-locked it internally, out of any wrapper's
 * sight).  A wait ended by cancellation still records the re-acquisition
 * (glibc re-locks before running cleanup handlers), with ret ECANCELED.
 * signal and broadcast are timestamped before they take effect.
 * The real functions are glibc's GLIBC_2.3.2 versions (runtime.h,
 * PTT_COND_VERSION).
 */
#include <errno.h>
#include <time.h>

#include "runtime.h"

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

enum wait_kind { WAIT_PLAIN, WAIT_TIMED, WAIT_CLOCK };

static int real_wait(enum wait_kind kind, pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
		     const struct timespec *abstime)
{
	switch (kind) {
	case WAIT_TIMED: return REAL(pthread_cond_timedwait)(c, m, abstime);
	case WAIT_CLOCK: return REAL(pthread_cond_clockwait)(c, m, clk, abstime);
	default: return REAL(pthread_cond_wait)(c, m);
	}
}

/* A wait, with or without a time limit: the request (releasing m), then cond_wait with m held again. */
static int traced_wait(enum wait_kind kind, pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
		       const struct timespec *abstime, const void *site)
{
	if (!ptt_on[PTT_EV_COND_WAIT])
		return real_wait(kind, c, m, clk, abstime);
	struct wait_ctx w = { c, m, site };
	int ret;
	cond_mutex_event(kind == WAIT_PLAIN ? PTT_EV_COND_WAIT_REQ : PTT_EV_COND_TIMEDWAIT_REQ, c, m, 0, 0, w.site);
	pthread_cleanup_push(cancelled_in_wait, &w);
	ret = real_wait(kind, c, m, clk, abstime);
	pthread_cleanup_pop(0);
	cond_mutex_event(PTT_EV_COND_WAIT, c, m, 1, ret, w.site);
	return ret;
}

PTT_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	return traced_wait(WAIT_PLAIN, c, m, CLOCK_REALTIME, NULL, PTT_SITE);
}

int ptt_cond_wait_at(pthread_cond_t *c, pthread_mutex_t *m, const void *site)
{
	return traced_wait(WAIT_PLAIN, c, m, CLOCK_REALTIME, NULL, site);
}

PTT_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime)
{
	return traced_wait(WAIT_TIMED, c, m, CLOCK_REALTIME, abstime, PTT_SITE);
}

int ptt_cond_timedwait_at(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime, const void *site)
{
	return traced_wait(WAIT_TIMED, c, m, CLOCK_REALTIME, abstime, site);
}

PTT_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk, const struct timespec *abstime)
{
	return traced_wait(WAIT_CLOCK, c, m, clk, abstime, PTT_SITE);
}

/* signal/broadcast: timestamp first, so a woken waiter's event never precedes it */
PTT_ALWAYS_INLINE int wake(unsigned id, pthread_cond_t *c, int (*real)(pthread_cond_t *), const void *site)
{
	return PTT_RELEASE(id, c, site, real(c), PTT_AS_IS);
}

PTT_ALWAYS_INLINE int cond_signal_body(pthread_cond_t *c, const void *site)
{
	return wake(PTT_EV_COND_SIGNAL, c, REAL(pthread_cond_signal), site);
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
	return wake(PTT_EV_COND_BROADCAST, c, REAL(pthread_cond_broadcast), site);
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
	return ptt_obj_ret_pass(PTT_EV_COND_INIT, c, REAL(pthread_cond_init)(c, attr), site);
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
	return ptt_obj_ret_pass(PTT_EV_COND_DESTROY, c, REAL(pthread_cond_destroy)(c), site);
}

PTT_EXPORT int pthread_cond_destroy(pthread_cond_t *c)
{
	return cond_destroy_body(c, PTT_SITE);
}

int ptt_cond_destroy_at(pthread_cond_t *c, const void *site)
{
	return cond_destroy_body(c, site);
}
