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
	struct ptt_fast_rec f;
	if (ret == 0 && ptt_fast_objret_open(&f, PTT_EV_MUTEX_LOCK, PTT_FAST_SERIAL, m, site) == 0) {
		ptt_fast_objret_close(&f, 0);
		return 0;
	}
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
	return PTT_RELEASE(PTT_EV_MUTEX_UNLOCK, m, site, REAL(pthread_mutex_unlock)(m), PTT_AS_IS);
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

/*
 * What the trace path adds to the calling thread per event, measured once
 * per recording (the first process to attach): pairs of lock and unlock of
 * a private mutex through the wrappers, their records written into a
 * scratch ring of this thread, against the same pairs through the real
 * functions; the least of a few trials, in ticks per event times 1000,
 * published in ptt_shm->trace_cost (first writer wins).  Readers use it to
 * tell how much of a hold was ptt's own recording (ptt-stat's `observer:`).
 * Runs at attach, before the program's main: no other thread of it exists.
 */
#define CALIB_PAIRS 128
#define CALIB_TRIALS 5
void ptt_calibrate(struct ptt_shm *s)
{
	if (!s->use_tsc || !ptt_on[PTT_EV_MUTEX_LOCK] || !ptt_on[PTT_EV_MUTEX_UNLOCK] ||
	    __atomic_load_n(&s->trace_cost, __ATOMIC_RELAXED))
		return; /* ticks are what it measures in */
	static struct ptt_ring scratch;
	static uint32_t words[1u << 14] __attribute__((aligned(64))); /* > CALIB_PAIRS x 2 records: never full */
	struct ptt_tls *t = &ptt_tls;
	struct ptt_ring *ring = t->ring;
	uint32_t *data = t->data, ring_words = t->ring_words, ring_room = t->ring_room;
	uint64_t fast_end = t->fast_end;
	/* coded (PTT_SHM_CODED): the coding is timed too, into a scratch stream; the thread's
	 * history starts again after (its stream says so: CPT_STREAM_RESET) */
	static unsigned char coded_scratch[1u << 16] __attribute__((aligned(64)));
	unsigned char *coded_area = t->coded_area;
	uint64_t coded_at = t->coded_at;
	uint32_t coded_size = t->coded_size, coded_count = t->coded_count;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	const void *site = (const void *)(uintptr_t)ptt_calibrate;
	uint64_t best_traced = UINT64_MAX, best_real = UINT64_MAX;
	t->ring = &scratch;
	t->data = words;
	t->ring_words = t->ring_room = 1u << 14;
	t->fast_end = 0;
	for (int trial = 0; trial <= CALIB_TRIALS; trial++) { /* trial 0 warms up */
		scratch.reserved = scratch.committed = scratch.consumed = 0;
		scratch.coded_consumed = 0;
		t->coded_area = coded_scratch;
		t->coded_size = sizeof coded_scratch;
		t->coded_at = 0;
		uint64_t a = ptt_rdtsc();
		for (int i = 0; i < CALIB_PAIRS; i++) {
			mutex_lock_body(&m, site);
			mutex_unlock_body(&m, site);
		}
		uint64_t b = ptt_rdtsc();
		for (int i = 0; i < CALIB_PAIRS; i++) {
			REAL(pthread_mutex_lock)(&m);
			REAL(pthread_mutex_unlock)(&m);
		}
		uint64_t c = ptt_rdtsc();
		if (trial && b - a < best_traced)
			best_traced = b - a;
		if (trial && c - b < best_real)
			best_real = c - b;
	}
	t->ring = ring;
	t->data = data;
	t->ring_words = ring_words;
	t->ring_room = ring_room;
	t->fast_end = fast_end;
	t->coded_area = coded_area;
	t->coded_at = coded_at;
	t->coded_size = coded_size;
	t->coded_count = coded_count;
	t->coded_fresh = 1;
	if (best_traced > best_real) {
		uint64_t cost = (best_traced - best_real) * 1000 / (2 * CALIB_PAIRS), zero = 0;
		__atomic_compare_exchange_n(&s->trace_cost, &zero, cost, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	}
}
