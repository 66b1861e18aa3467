/*
 * wrap_thread.c - thread life cycle: create (through a trampoline that
 * registers the new thread), begin, end (return, pthread_exit or
 * cancellation), join, detach, cancel, names.
 */

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime.h"

/*
 * pthread_t -> kernel tid, for the targets of join, detach, cancel and
 * setname, without a table: the tid is read where the target thread keeps
 * it, in its own memory, which glibc keeps from the thread's creation until
 * it is joined (a joinable thread's stack, with its struct pthread and its
 * static TLS, is only reused for a new thread after the join):
 *
 *  - glibc's struct pthread holds the tid from before pthread_create
 *    returns (CLONE_PARENT_SETTID), but the kernel clears it when the
 *    thread exits (CLONE_CHILD_CLEARTID): tid_offset, found once;
 *  - our ptt_tls.tid, written by the trampoline before the start routine
 *    runs (or at a thread's first event) and left there after its end.
 *    ptt_tls is initial-exec TLS: in every thread it lies at the same
 *    distance from the thread's struct pthread (tls_delta), which each new
 *    thread checks against itself, as it checks tid_offset.
 *
 * A handle glibc reuses (a new thread on a joined thread's cached stack)
 * reads the new thread's tid: glibc re-initializes the static TLS of a
 * reused stack, and the trampoline writes the new tid.  No lock, no
 * allocation, nothing to forget, nothing to copy at fork (the child's
 * handles of other threads are not joinable).  A target neither place
 * knows (a thread that ended before it ever reached the tracer, or a wrong
 * guess of either offset) reads 0 and is reported in a limit event.
 */
static int tid_offset = -2; /* -2 not searched, -1 unusable */
static long tls_delta;      /* &ptt_tls - pthread_self(), the same in every thread */
static int tls_delta_ok = -2; /* -2 not computed, -1 unusable, 1 usable */

static long own_tls_delta(void)
{
	return (long)((uintptr_t)&ptt_tls - (uintptr_t)pthread_self());
}

/*
 * The kernel writes a new thread's tid into glibc's struct pthread before
 * pthread_create returns (CLONE_PARENT_SETTID); we find that field once by
 * looking for our own tid in our own struct, and each new thread checks
 * the guess against itself.  A wrong guess only disables the shortcut.
 */
static void find_tid_offset(void)
{
	uint32_t tid = ptt_tls.tid ? ptt_tls.tid : ptt_gettid();
	const char *self = (const char *)pthread_self();
	int found = -1;
	for (int off = 64; off < 2048; off += 4) {
		uint32_t v;
		memcpy(&v, self + off, 4);
		if (v == tid) {
			found = off;
			break;
		}
	}
	int expect = -2;
	__atomic_compare_exchange_n(&tid_offset, &expect, found, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static void find_tls_delta(void)
{
	__atomic_store_n(&tls_delta, own_tls_delta(), __ATOMIC_RELAXED); /* racing finders store the same value */
	int expect = -2;
	__atomic_compare_exchange_n(&tls_delta_ok, &expect, 1, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/* The tid glibc keeps in th's struct pthread: 0 once th has exited, or when the field is unknown. */
static uint32_t kernel_tid(pthread_t th)
{
	if (__atomic_load_n(&tid_offset, __ATOMIC_RELAXED) == -2)
		find_tid_offset();
	int off = __atomic_load_n(&tid_offset, __ATOMIC_RELAXED);
	if (off < 0)
		return 0;
	return __atomic_load_n((const uint32_t *)((uintptr_t)th + (uintptr_t)off), __ATOMIC_RELAXED);
}

/* The tid th's trampoline (or first event) left in th's ptt_tls: 0 before that, or when unusable. */
static uint32_t tls_tid(pthread_t th)
{
	if (__atomic_load_n(&tls_delta_ok, __ATOMIC_ACQUIRE) == -2)
		find_tls_delta();
	if (__atomic_load_n(&tls_delta_ok, __ATOMIC_ACQUIRE) != 1)
		return 0;
	long delta = __atomic_load_n(&tls_delta, __ATOMIC_RELAXED);
	const struct ptt_tls *t = (const struct ptt_tls *)((uintptr_t)th + (uintptr_t)delta);
	return __atomic_load_n(&t->tid, __ATOMIC_RELAXED); /* aligned: never torn by the owner's plain store */
}

/*
 * th's tid (0: not known, reported).  Valid for a handle that may be
 * joined, detached, cancelled or named, i.e. whenever the program may pass
 * it to glibc: its memory is then the thread's.  Read the TLS, then the
 * struct, then the TLS again: a thread that had not reached its
 * trampoline at the first look and has ended by the second (its struct's
 * tid cleared) has written its TLS by the third.
 */
uint32_t ptt_handle_tid(pthread_t th)
{
	uint32_t tid = tls_tid(th);
	if (!tid)
		tid = kernel_tid(th);
	if (!tid)
		tid = tls_tid(th);
	return tid;
}

/* After an event naming target tid 0: a limit event says so (not with a record open). */
static void target_unknown(uint32_t tid)
{
	if (!tid && ptt_shm)
		ptt_emit_limit(PTT_LIMIT_TARGET_UNKNOWN, 1, 0, 0);
}

/* The tid of a thread just created, for thread_create (its TLS is likely not written yet). */
uint32_t ptt_peek_tid(pthread_t th)
{
	uint32_t tid = kernel_tid(th);
	return tid ? tid : tls_tid(th);
}

/* In each new thread: do both guesses hold here too?  A wrong one is dropped for good. */
void ptt_check_tid_offset(uint32_t tid)
{
	int off = __atomic_load_n(&tid_offset, __ATOMIC_RELAXED);
	if (off >= 0) {
		uint32_t v;
		memcpy(&v, (const char *)pthread_self() + off, 4);
		if (v != tid)
			__atomic_store_n(&tid_offset, -1, __ATOMIC_RELAXED);
	}
	if (__atomic_load_n(&tls_delta_ok, __ATOMIC_ACQUIRE) == -2)
		find_tls_delta();
	if (__atomic_load_n(&tls_delta_ok, __ATOMIC_ACQUIRE) == 1 && own_tls_delta() != __atomic_load_n(&tls_delta, __ATOMIC_RELAXED))
		__atomic_store_n(&tls_delta_ok, -1, __ATOMIC_RELEASE);
}

/* how: 0 returned, 1 pthread_exit, 2 cancelled, 3 process exit */
void ptt_thread_end(void *retval, unsigned how)
{
	struct ptt_tls *t = &ptt_tls;
	if (!ptt_shm || t->ended)
		return;
	uint32_t a[3];
	ptt_put64(a, (uint64_t)(uintptr_t)retval);
	a[2] = how;
	ptt_emit(PTT_EV_THREAD_END, a, 3);
	t->ended = 1;
	if (t->ring) {
		__atomic_store_n(&t->ring->state, PTT_RING_CLOSED, __ATOMIC_RELEASE);
		t->ring = NULL;
		t->fast_end = 0;
	}
}

/*
 * A thread's end comes after everything it does, and a thread still runs
 * code after its start routine returns (or pthread_exit, or cancellation
 * unwinds it): glibc's start_thread first runs the C++ thread_local
 * destructors (__call_tls_dtors), then the pthread_key destructors, in
 * rounds while some destructor sets a key again, PTHREAD_DESTRUCTOR_ITERATIONS
 * (4) at most.  Those destructors lock (a thread-local cache given back to
 * a shared pool), so the thread_end record is written by a key destructor
 * of the runtime's own, which sets its key again in every round but the
 * last: in the last, after every destructor of the rounds before.  Only a
 * destructor that comes after ours in that last round (one that set its
 * key again in the round before) can record after the end: counted as late
 * (struct ptt_shm's late_lost), as before.  The ring is given up there as
 * it was at the start routine's return: the thread writes nothing after it.
 * A thread the key is not armed in (no key: every key taken; a thread not
 * started through the trampoline) ends where it did, at its return.
 */
static pthread_key_t end_key;
static int end_key_ok;

static void end_at_key(void *v)
{
	struct ptt_tls *t = &ptt_tls;
	if (++t->end_round < PTHREAD_DESTRUCTOR_ITERATIONS && pthread_setspecific(end_key, v) == 0)
		return; /* another round comes: the program's destructors may still lock in it */
	t->end_armed = 0;
	ptt_thread_end(t->end_value, t->end_how);
}

/* Arm the calling thread's end at its key: 1, or 0 when there is no key (then end at once). */
static int end_arm(void)
{
	struct ptt_tls *t = &ptt_tls;
	t->end_round = 0;
	t->end_armed = end_key_ok && pthread_setspecific(end_key, (void *)1) == 0;
	return t->end_armed;
}

void ptt_thread_end_key(void)
{
	end_key_ok = pthread_key_create(&end_key, end_at_key) == 0;
	if (!end_key_ok)
		ptt_debug("no pthread key left: a thread's end is written before its destructors run");
	end_arm();
}

/* The thread's end, by how (as ptt_thread_end): at its key's destructor when armed, else now. */
static void thread_ends(void *retval, unsigned how)
{
	struct ptt_tls *t = &ptt_tls;
	if (!t->end_armed) {
		ptt_thread_end(retval, how);
		return;
	}
	t->end_value = retval;
	t->end_how = (uint8_t)how;
}

struct trampoline_arg {
	void *(*start)(void *);
	void *arg;
	uint32_t parent;
	int c11;  /* start is a C11 thrd_start_t: int (*)(void *) */
	int busy; /* a pool slot in use (atomic) */
};

/*
 * What pthread_create hands to the trampoline, from a pool rather than
 * malloc: the tracer adds no allocation of its own to a thread's creation.
 * A slot is busy from the create until the new thread has copied it.  More
 * creations in flight than slots add a chunk of slots, mapped (not
 * malloc'd) and linked with a compare-and-swap: no lock, no limit but
 * memory; chunks are kept for the next burst.  A slot busy in another
 * thread at fork stays busy in the child, which only costs it that slot.
 */
#define TRAMPOLINE_SLOTS 64
struct trampoline_chunk {
	struct trampoline_chunk *next;
	struct trampoline_arg slot[TRAMPOLINE_SLOTS];
};
static struct trampoline_chunk trampoline_pool;

static struct trampoline_arg *trampoline_arg_get(void)
{
	struct trampoline_chunk *c = &trampoline_pool;
	for (;;) {
		for (unsigned i = 0; i < TRAMPOLINE_SLOTS; i++) {
			int expect = 0;
			if (__atomic_load_n(&c->slot[i].busy, __ATOMIC_RELAXED) == 0 &&
			    __atomic_compare_exchange_n(&c->slot[i].busy, &expect, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
				return &c->slot[i];
		}
		struct trampoline_chunk *next = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE);
		if (!next) {
			struct trampoline_chunk *fresh =
				mmap(NULL, sizeof *fresh, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (fresh == MAP_FAILED)
				return NULL;
			fresh->slot[0].busy = 1; /* ours, before anyone can see the chunk */
			if (__atomic_compare_exchange_n(&c->next, &next, fresh, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				return &fresh->slot[0];
			munmap(fresh, sizeof *fresh); /* another thread linked one first: look in it */
		}
		c = next;
	}
}

static void trampoline_arg_put(struct trampoline_arg *ta)
{
	__atomic_store_n(&ta->busy, 0, __ATOMIC_RELEASE);
}

static void end_by_unwind(void *unused)
{
	(void)unused;
	struct ptt_tls *t = &ptt_tls;
	if (t->exiting)
		thread_ends(t->exit_value, 1);
	else
		thread_ends(PTHREAD_CANCELED, 2);
}

static void *trampoline(void *p)
{
	struct trampoline_arg ta = *(struct trampoline_arg *)p;
	trampoline_arg_put(p);
	struct ptt_tls *t = &ptt_tls;
	t->pid = (uint32_t)getpid();
	t->tid = ptt_gettid();
	ptt_check_tid_offset(t->tid);
	end_arm(); /* before the first event: glibc may allocate for a key past the first 32 */
	t->begun = 1;
	uint32_t a[5];
	ptt_put64(a, (uint64_t)pthread_self());
	ptt_put64(a + 2, (uint64_t)(uintptr_t)ta.start);
	a[4] = ta.parent;
	ptt_emit(PTT_EV_THREAD_BEGIN, a, 5);
	void *ret;
	pthread_cleanup_push(end_by_unwind, NULL);
	if (ta.c11) /* as glibc's start_thread does for thrd_create's threads */
		ret = (void *)(intptr_t)((int (*)(void *))(void *)ta.start)(ta.arg);
	else
		ret = ta.start(ta.arg);
	pthread_cleanup_pop(0);
	thread_ends(ret, 0);
	return ret;
}

/* pthread_create and thrd_create (c11: start is an int (*)(void *)); site: the exported wrapper's
 * caller; an errno code. */
int ptt_create_thread(pthread_t *th, const pthread_attr_t *attr, void *(*start)(void *), void *arg, int c11,
		      const void *site)
{
	if (!ptt_on[PTT_EV_THREAD_CREATE]) /* not recording (thrd_create checks first) */
		return REAL(pthread_create)(th, attr, start, arg);
	struct trampoline_arg *ta = trampoline_arg_get();
	if (!ta)
		return c11 ? EAGAIN : REAL(pthread_create)(th, attr, start, arg);
	struct ptt_tls *t = &ptt_tls;
	if (!t->tid) {
		t->pid = (uint32_t)getpid();
		t->tid = ptt_gettid();
	}
	ta->start = start;
	ta->arg = arg;
	ta->parent = t->tid;
	ta->c11 = c11;
	ptt_modules_refresh();
	/* timestamp before the thread exists, so create always precedes begin */
	struct ptt_rec rec;
	int open = ptt_rec_open(&rec, PTT_EV_THREAD_CREATE, 6 + PTT_SITE_WORDS) == 0;
	if (open)
		ptt_defer_begin();
	int ret = REAL(pthread_create)(th, attr, trampoline, ta);
	if (ret != 0)
		trampoline_arg_put(ta);
	if (open) {
		uint32_t *w = rec.p + PTT_REC_HDR_WORDS;
		ptt_put64(w, ret == 0 ? (uint64_t)*th : 0);
		ptt_put64(w + 2, (uint64_t)(uintptr_t)start);
		w[4] = ret == 0 ? ptt_peek_tid(*th) : 0;
		w[5] = (uint32_t)ret;
		ptt_put_site(w + 6, site);
		ptt_defer_close(&rec);
	}
	return ret;
}

PTT_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
	return ptt_create_thread(th, attr, start, arg, 0, PTT_SITE);
}

static void join_event(unsigned id, pthread_t th, uint32_t tid, int ret, void *value, const void *site)
{
	uint32_t a[8];
	ptt_put64(a, (uint64_t)th);
	a[2] = tid;
	a[3] = (uint32_t)ret;
	ptt_put64(a + 4, (uint64_t)(uintptr_t)value);
	ptt_put_site(a + 6, site);
	ptt_emit(id, a, 6 + PTT_SITE_WORDS);
}

static void join_req_event(pthread_t th, uint32_t tid, const void *site)
{
	if (!ptt_on[PTT_EV_THREAD_JOIN_REQ])
		return;
	uint32_t a[5];
	ptt_put64(a, (uint64_t)th);
	a[2] = tid;
	ptt_put_site(a + 3, site);
	ptt_emit(PTT_EV_THREAD_JOIN_REQ, a, 3 + PTT_SITE_WORDS);
}

enum join_kind { JOIN_PLAIN, JOIN_TIMED, JOIN_CLOCK };

static int real_join(enum join_kind kind, pthread_t th, void **value, clockid_t clk, const struct timespec *abstime)
{
	switch (kind) {
	case JOIN_TIMED: return REAL(pthread_timedjoin_np)(th, value, abstime);
	case JOIN_CLOCK: return REAL(pthread_clockjoin_np)(th, value, clk, abstime);
	default: return REAL(pthread_join)(th, value);
	}
}

/* A blocking join, with or without a time limit: join_req, then thread_join with the outcome. */
static int traced_join(enum join_kind kind, pthread_t th, void **retval, clockid_t clk, const struct timespec *abstime,
		       const void *site)
{
	if (!ptt_on[PTT_EV_THREAD_JOIN])
		return real_join(kind, th, retval, clk, abstime);
	uint32_t tid = ptt_handle_tid(th);
	join_req_event(th, tid, site);
	void *value = NULL;
	int ret = real_join(kind, th, &value, clk, abstime);
	if (ret == 0 && retval)
		*retval = value;
	join_event(PTT_EV_THREAD_JOIN, th, tid, ret, value, site);
	target_unknown(tid);
	return ret;
}

PTT_EXPORT int pthread_join(pthread_t th, void **retval)
{
	return traced_join(JOIN_PLAIN, th, retval, CLOCK_REALTIME, NULL, PTT_SITE);
}

int ptt_join_at(pthread_t th, void **retval, const void *site)
{
	return traced_join(JOIN_PLAIN, th, retval, CLOCK_REALTIME, NULL, site);
}

PTT_EXPORT int pthread_timedjoin_np(pthread_t th, void **retval, const struct timespec *abstime)
{
	return traced_join(JOIN_TIMED, th, retval, CLOCK_REALTIME, abstime, PTT_SITE);
}

/* glibc 2.34+: a join timed on a chosen clock, the same events as the timed join */
PTT_EXPORT int pthread_clockjoin_np(pthread_t th, void **retval, clockid_t clk, const struct timespec *abstime)
{
	return traced_join(JOIN_CLOCK, th, retval, clk, abstime, PTT_SITE);
}

PTT_EXPORT int pthread_tryjoin_np(pthread_t th, void **retval)
{
	if (!ptt_on[PTT_EV_THREAD_TRYJOIN])
		return REAL(pthread_tryjoin_np)(th, retval);
	uint32_t tid = ptt_handle_tid(th);
	void *value = NULL;
	int ret = REAL(pthread_tryjoin_np)(th, &value);
	if (ret == 0 && retval)
		*retval = value;
	join_event(PTT_EV_THREAD_TRYJOIN, th, tid, ret, value, PTT_SITE);
	target_unknown(tid);
	return ret;
}

static int detach_body(pthread_t th, const void *site)
{
	if (!ptt_on[PTT_EV_THREAD_DETACH])
		return REAL(pthread_detach)(th);
	uint32_t tid = ptt_handle_tid(th);
	int ret = REAL(pthread_detach)(th);
	uint32_t a[6];
	ptt_put64(a, (uint64_t)th);
	a[2] = tid;
	a[3] = (uint32_t)ret;
	ptt_put_site(a + 4, site);
	ptt_emit(PTT_EV_THREAD_DETACH, a, 4 + PTT_SITE_WORDS);
	target_unknown(tid);
	return ret;
}

PTT_EXPORT int pthread_detach(pthread_t th)
{
	return detach_body(th, PTT_SITE);
}

int ptt_detach_at(pthread_t th, const void *site)
{
	return detach_body(th, site);
}

PTT_EXPORT int pthread_cancel(pthread_t th)
{
	struct ptt_rec rec;
	if (!ptt_on[PTT_EV_THREAD_CANCEL])
		return REAL(pthread_cancel)(th);
	uint32_t tid = ptt_handle_tid(th);
	target_unknown(tid);
	/* stamped before the cancel: the target may end before pthread_cancel returns */
	if (ptt_rec_open(&rec, PTT_EV_THREAD_CANCEL, 4 + PTT_SITE_WORDS) != 0)
		return REAL(pthread_cancel)(th);
	uint32_t *w = rec.p + PTT_REC_HDR_WORDS;
	ptt_put64(w, (uint64_t)th);
	w[2] = tid;
	w[3] = 0;
	ptt_put_site(w + 4, PTT_SITE);
	if (pthread_equal(th, pthread_self())) {
		/* with asynchronous cancellation the call does not return: commit first */
		ptt_rec_close(&rec);
		return REAL(pthread_cancel)(th);
	}
	int ret = REAL(pthread_cancel)(th);
	w[3] = (uint32_t)ret;
	ptt_rec_close(&rec);
	return ret;
}

PTT_EXPORT void pthread_exit(void *value)
{
	struct ptt_tls *t = &ptt_tls;
	t->exiting = 1;
	t->exit_value = value;
	if (ptt_on[PTT_EV_THREAD_EXIT]) {
		uint32_t a[2];
		ptt_put64(a, (uint64_t)(uintptr_t)value);
		ptt_emit(PTT_EV_THREAD_EXIT, a, 2);
	}
	if (t->tid && t->tid == t->pid)
		thread_ends(value, 1); /* the main thread has no trampoline */
	REAL(pthread_exit)(value);
	__builtin_unreachable(); /* the table's entry is not declared noreturn */
}

PTT_EXPORT int pthread_setname_np(pthread_t th, const char *name)
{
	int ret = REAL(pthread_setname_np)(th, name);
	if (ret == 0 && ptt_shm) {
		uint32_t a[1];
		if (pthread_equal(th, pthread_self()))
			a[0] = ptt_tls.tid ? ptt_tls.tid : ptt_gettid();
		else
			a[0] = ptt_handle_tid(th);
		if (a[0])
			ptt_emit_str(PTT_EV_THREAD_NAME, a, 1, name);
		else
			target_unknown(0);
	}
	return ret;
}
