/*
 * runtime.h - internals of libptt.so shared by its files: the per-thread
 * state, the record writer and the real functions behind the wrappers.
 */
#ifndef PTT_RUNTIME_H
#define PTT_RUNTIME_H

#include <pthread.h>
#include <semaphore.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <threads.h>
#include <time.h>

#include "../../formats/ptt_trace.h"
#include "../shm.h"

#define PTT_HIDDEN __attribute__((visibility("hidden")))
#define PTT_EXPORT __attribute__((visibility("default")))

#define PTT_DEFER_RECORDS 16
#define PTT_STALL_SLACK 16 /* lossless mode: ring words kept free for a stall's first record (wait_room) */
#define PTT_DEFER_WORDS 16 /* a deferred record's size at most: object events are 9 to 13 words */

struct ptt_compact;
struct ptt_tls {
	struct ptt_ring *ring;
	uint32_t *data;
	uint32_t ring_words;
	uint32_t ring_room; /* words a record may fill before the wait: lossless keeps PTT_STALL_SLACK free */
	_Alignas(8) uint32_t pid; /* pid then tid, 8-aligned: one 64-bit load for a record's header */
	uint32_t tid;
	/* ptt_fast_objret_open: a record may end at or before fast_end without a look at the ring's end
	 * or at `consumed` (set by reserve; 0, e.g. without a ring: take the slow path) */
	uint64_t fast_end;
	uint32_t id_term;  /* the checksum term of pid and tid: ptt_rec_sum_ids(pid, tid) */
	int guard;     /* inside the tracer: nested events (signal handlers) are counted, not written */
	int coded;     /* PTT_SHM_CODED: a commit codes the thread's records into its coded stream (ptt_coded_commit) */
	int ended;     /* thread_end written: later events are counted as late */
	int no_ring;   /* no ring: 1 every ring was taken, 2 the kernel refused to map one */
	int begun;     /* thread_begin written */
	void *exit_value;
	int exiting;   /* pthread_exit called */
	/* the thread's end, written by the runtime's key destructor (wrap_thread.c, end_at_key) after
	 * the program's own destructors: armed, its value and how, and glibc's rounds seen so far */
	void *end_value;
	uint8_t end_armed, end_how, end_round;
	/* ptt_defer_begin..ptt_defer_close: a record is held open across a call
	 * that may itself be traced (pthread_create allocates, and an allocator
	 * like jemalloc locks pthread mutexes); the nested events wait here, in
	 * order, and follow the open record into the ring when it is closed */
	uint8_t deferring, defer_open, ndefer;
	uint8_t unwinding; /* inside ptt_stack_here: a nested event gets no stack */
	uint32_t defer[PTT_DEFER_RECORDS][PTT_DEFER_WORDS];
	/* PTT_SHM_CODED: the thread's coder (allocated at its first ring's claim), its ring's coded
	 * bytes (a byte ring of coded_size), the stream's position and records so far, and whether
	 * the next record starts the history again (CPT_STREAM_RESET: a ring claimed) */
	struct ptt_compact *cpt;
	unsigned char *coded_area;
	uint64_t coded_at;
	uint32_t coded_size, coded_count;
	int coded_fresh;
	uint64_t coded_reset_next; /* coded_at from which the next commit starts the history again */
};

extern __thread struct ptt_tls ptt_tls __attribute__((tls_model("initial-exec"))) PTT_HIDDEN;
extern struct ptt_shm *ptt_shm PTT_HIDDEN;
extern uint8_t ptt_on[PTT_MAX_TYPES] PTT_HIDDEN; /* 1 when the event id is recorded */
extern uint8_t ptt_early_ok[PTT_MAX_TYPES] PTT_HIDDEN; /* the event may use an unserialized timestamp */
/* How the event id is written, for the wrappers' fast path (ptt_fast_objret_open): 0 not
 * recorded (!ptt_on[id]); PTT_FAST_SERIAL or PTT_FAST_EARLY when it is recorded without a
 * stack and stamped with rdtsc, then as ptt_early_ok says; PTT_FAST_NO: recorded, the general way */
enum { PTT_FAST_SERIAL = 1, PTT_FAST_EARLY = 2, PTT_FAST_NO = 3 };
extern uint8_t ptt_fast[PTT_MAX_TYPES] PTT_HIDDEN;

/* A record being written: between ptt_rec_open and ptt_rec_close the
 * timestamp is fixed and the recorder waits for this ring. */
struct ptt_rec {
	uint32_t *p;      /* the record in the ring, args at p + PTT_REC_HDR_WORDS */
	uint32_t nwords;
	uint32_t sum;     /* the checksum's state after the 5 header words (ptt_rec_checksum) */
	uint64_t end;     /* reserved position after the record; 0: deferred */
	uint32_t terms;   /* checksum terms written so far: the site's (ptt_rec_open_site), then ptt_objret_open's */
};

/* Reserve and timestamp a record with nargw argument words; 0 on success,
 * -1 when the event is not written (counted as lost where it is a loss). */
int ptt_rec_open(struct ptt_rec *rec, unsigned id, unsigned nargw) PTT_HIDDEN;
#ifndef PTT_NO_SITE
/* The same with the call site as the last two of the nargw words, written here with its
 * checksum term in rec->terms: the caller passes it in a register and need not keep it
 * across the call (ptt_objret_open).  Without sites (PTT_NO_SITE) it is ptt_rec_open. */
int ptt_rec_open_site(struct ptt_rec *rec, unsigned id, unsigned nargw, const void *site) PTT_HIDDEN;
#endif
/* Checksum (reading the argument words back) and publish (release) the record. */
void ptt_rec_close(struct ptt_rec *rec) PTT_HIDDEN;
/*
 * PTT_SHM_CODED: commit the ring's records up to end by coding them, in
 * order, into the thread's coded stream (compact.h's coding, each record's
 * checksum kept), and publishing the stream's new end for the recorder,
 * which copies it as it lies.  The records' words are scratch then: the
 * owner gives them back itself.  Lossless, it waits for the recorder where
 * the coded stream has no room; in discard mode the record is counted lost.
 * No lock, no system call but those waits.
 */
void ptt_coded_commit(struct ptt_tls *t, uint64_t end) PTT_HIDDEN;
/* The same for the inline fast path's one record at p (runtime.h, ptt_fast_objret_close). */
void ptt_coded_commit_fast(struct ptt_tls *t, const uint32_t *p, uint64_t end) PTT_HIDDEN;
/* Publish a checksummed record: commit it (release), or keep it deferred until ptt_defer_close. */
static inline __attribute__((always_inline)) void ptt_rec_publish(const struct ptt_rec *rec)
{
	struct ptt_tls *t = &ptt_tls;
	if (__builtin_expect(rec->end == 0, 0)) {
		t->ndefer++;
		t->defer_open = 0;
		return;
	}
	if (__builtin_expect(t->coded, 0)) {
		ptt_coded_commit(t, rec->end);
		t->guard = 0;
		return;
	}
	__atomic_store_n(&t->ring->committed, rec->end, __ATOMIC_RELEASE);
	t->guard = 0;
}
/* Around a real call made with a record open: events traced inside it are
 * kept (up to PTT_DEFER_RECORDS) instead of counted lost, and ptt_defer_close
 * closes the open record and writes them after it, with their own
 * timestamps, in one commit. */
void ptt_defer_begin(void) PTT_HIDDEN;
void ptt_defer_close(struct ptt_rec *rec) PTT_HIDDEN;
/* ptt_defer_close without the open record: the call failed and there is nothing to say (its
 * room is given back), the nested events committed all the same. */
void ptt_defer_cancel(struct ptt_rec *rec) PTT_HIDDEN;
/* Both at once, copying nargw argument words. */
void ptt_emit(unsigned id, const uint32_t *args, unsigned nargw) PTT_HIDDEN;
/* Measure what the trace path adds per event into s->trace_cost, once per recording (wrap_mutex.c). */
void ptt_calibrate(struct ptt_shm *s) PTT_HIDDEN;
/* The same with a string as the last argument; a string longer than PTT_MAX_STR - 1 bytes is cut
 * there, and a limit event (PTT_LIMIT_STRING) follows the record to say so. */
void ptt_emit_str(unsigned id, const uint32_t *args, unsigned nargw, const char *s) PTT_HIDDEN;
/* The same for a string already cut by its caller from one of whole bytes (0: s is whole). */
void ptt_emit_str_len(unsigned id, const uint32_t *args, unsigned nargw, const char *s, size_t whole) PTT_HIDDEN;
/* A limit event (enum ptt_limit): count dropped or cut, the table's limit, what was needed.  Not while a record is open. */
void ptt_emit_limit(unsigned table, uint64_t count, uint64_t limit, uint64_t need) PTT_HIDDEN;
/* ptt_emit without a stack, whatever ptt_stack_on says (the stack records themselves). */
void ptt_emit_plain(unsigned id, const uint32_t *args, unsigned nargw) PTT_HIDDEN;

/*
 * Stacks (capture/runtime/stack.c).  ptt_stack_on[id]: the event gets the caller's
 * stack (set at start-up from --stacks: requests of waits; with all, every
 * acquisition too).  ptt_emit, ptt_obj_only and ptt_obj_ret look at it and,
 * when set, call ptt_stack_here() and write a stack record before the event,
 * in the same commit (ptt_emit_stacked): a new blocking event written
 * through them has its stack with no code of its own.
 * ptt_stack_here: unwind and intern the caller's stack; its id, or
 * PTT_STACK_NONE (stacks off, nothing unwound, or the thread is already
 * unwinding or inside the tracer) or PTT_STACK_FULL (the table is full).
 * Never allocates; may write stack_frames records (a new stack).
 */
#define PTT_STACK_DEPTH 24
#define PTT_STACK_WALK (PTT_STACK_DEPTH + 1) /* frames unwound: one past the depth tells a stack cut (PTT_FRAME_CUT) */
#define PTT_STACK_NONE 0u
#define PTT_STACK_FULL 0xffffffffu
extern uint8_t ptt_stack_on[PTT_MAX_TYPES] PTT_HIDDEN;
uint32_t ptt_stack_here(void) PTT_HIDDEN;
uint32_t ptt_stack_intern(const uintptr_t *frames, unsigned n) PTT_HIDDEN;
void ptt_stack_init(unsigned mode) PTT_HIDDEN;
void ptt_stack_after_fork(void) PTT_HIDDEN;
/* The event (nargw argument words) preceded by a stack record for stack (none: the event alone). */
void ptt_emit_stacked(unsigned id, const uint32_t *args, unsigned nargw, uint32_t stack) PTT_HIDDEN;

/*
 * CPython's frames (capture/runtime/pyframes.c).  ptt_py_announce: from announce_modules (start-up,
 * a fork child, a dlopen seen at pthread_create), after ptt_py_init (stacks are recorded): is this a CPython (once),
 * and py_runtime says so once per process.  ptt_py_frames: the calling thread's Python frames
 * (PTT_PYFRAME), innermost first, at most max, into out; their number (0 when not a CPython we can
 * read).  May write py_code records (a new code object); never allocates, locks or calls the kernel.
 */
#define PTT_PY_DEPTH 16
#define PTT_PY_WALK (PTT_PY_DEPTH + 1) /* Python frames walked: one past the depth tells a cut (PTT_FRAME_CUT, limit table 12) */
void ptt_py_init(void) PTT_HIDDEN; /* from ptt_stack_init, when stacks are recorded */
void ptt_py_announce(void) PTT_HIDDEN;
unsigned ptt_py_frames(uintptr_t *out, unsigned max) PTT_HIDDEN;
void ptt_py_after_fork(void) PTT_HIDDEN;
/*
 * The interpreter loop's code (_PyEval_EvalFrameDefault) in a CPython whose frames are read, else
 * [0, 0): the native unwind stops at its first frame, since the Python frames tell the rest.
 */
extern uintptr_t ptt_py_eval_lo, ptt_py_eval_hi PTT_HIDDEN;


/* A wrapper's body, inlined into its exported pthread function and into its ptt_*_at twin. */
#define PTT_ALWAYS_INLINE static inline __attribute__((always_inline))

/*
 * The call site of an event: the return address of the exported wrapper,
 * i.e. the instruction after the program's call (no unwinding; one load from
 * the stack).  Take it in the exported function itself and pass it down:
 * inside a helper it would name the wrapper.  It is the last argument
 * ("site:ptr") of every event type whose argspec has one (formats/events.def).
 * Writers store it with ptt_rec_open_site or ptt_put_site and count
 * PTT_SITE_WORDS for it.
 *
 * PTT_NO_SITE (make bench only, BUILD/nosite): a runtime, recorder and type
 * table without the argument, so that the bench can time the real wrappers
 * with and without it in one run.  Never installed.
 */
#ifdef PTT_NO_SITE
#define PTT_SITE ((const void *)0)
#define PTT_SITE_WORDS 0u
#define ptt_rec_open_site(rec, id, nargw, site) ((void)(site), ptt_rec_open(rec, id, nargw))
#define PTT_SITE_TERM(rec) 0u
PTT_ALWAYS_INLINE void ptt_put_site(uint32_t *w, const void *site)
{
	(void)w;
	(void)site;
}
#else
#define PTT_SITE ((const void *)__builtin_return_address(0))
#define PTT_SITE_WORDS 2u
#define PTT_SITE_TERM(rec) ((rec)->terms) /* the site's checksum term, after ptt_rec_open_site */
PTT_ALWAYS_INLINE void ptt_put_site(uint32_t *w, const void *site)
{
	ptt_put64(w, (uint64_t)(uintptr_t)site);
}
#endif

/*
 * The commonest shape, (object:ptr, ret:i32, site:ptr), written with its
 * checksum computed from registers (ptt_rec_sum_term, ptt-trace(5)): the
 * terms do not depend on each other or on the header's, so the site costs
 * its store and three independent operations, not two more rounds of a
 * dependent chain.  ptt_objret_open writes all but the result (0 until
 * then: a record the recorder salvages reads "result 0") and keeps the
 * terms; ptt_objret_close writes the result, the checksum, and publishes.
 * Between the two the real call may run (releases are stamped before it).
 */
#define PTT_OBJRET_WORDS (3u + PTT_SITE_WORDS)
PTT_ALWAYS_INLINE int ptt_objret_open(struct ptt_rec *rec, unsigned id, const void *obj, const void *site)
{
	if (ptt_rec_open_site(rec, id, PTT_OBJRET_WORDS, site) != 0)
		return -1;
	uint32_t *a = rec->p + PTT_REC_HDR_WORDS;
	uint64_t o = (uint64_t)(uintptr_t)obj;
	ptt_put64(a, o);
	a[2] = 0;
	rec->terms = PTT_SITE_TERM(rec) ^ ptt_rec_sum_more(rec->sum, PTT_OBJRET_WORDS) ^ ptt_rec_sum_term64(o, PTT_OBJRET_WORDS - 2);
	return 0;
}
PTT_ALWAYS_INLINE void ptt_objret_close(struct ptt_rec *rec, int ret)
{
	rec->p[PTT_REC_HDR_WORDS + 2] = (uint32_t)ret;
	rec->p[PTT_REC_HDR_WORDS + PTT_OBJRET_WORDS] =
		ptt_rec_sum_finish(rec->terms ^ ptt_rec_sum_term((uint32_t)ret, PTT_OBJRET_WORDS - 3));
	ptt_rec_publish(rec);
}

/*
 * The fast path of the (object, result, site) events, inlined into the
 * wrappers of the hottest calls (mutex and rwlock lock and unlock, cond
 * signal, sem_post, and ptt_obj_ret_pass's trylocks and results): the same record,
 * written the same way as ptt_objret_open and ptt_objret_close write it,
 * but with everything that is settled once per thread or per recording
 * taken out of the way:
 *   - one byte, ptt_fast[id], says the event is recorded, without a stack,
 *     with rdtsc; mode, a constant of the caller, says how it is stamped
 *     (lfence first, or not: ptt_early_ok), and must equal it;
 *   - the room check and the ring's-end check are one comparison with
 *     t->fast_end, the least of the two limits as the last slow
 *     reservation saw them (`consumed` only grows: a stale limit is a safe
 *     one); past it, and for a thread without a ring or inside the tracer,
 *     the caller takes the general path, which sets fast_end anew (the
 *     first event of a thread, at each ring's end, when the room runs out);
 *   - no prefetchw as reserve() has: it measured slower here;
 *   - the header's words and the checksum's terms that do not change
 *     (the first word for a constant id, pid and tid) are constants or one
 *     64-bit load; the record's state stays in registers.
 * The protocol is trace_path.c's: guard set (a signal handler's event
 * arriving after it is counted lost), reserved stored, then the clock read,
 * the record written, committed stored (release).  -1: nothing reserved,
 * use the general path.
 */
struct ptt_fast_rec {
	struct ptt_ring *r;
	uint32_t *p;
	uint64_t end;
	uint32_t terms; /* the checksum's terms of every word but the result */
};
#define PTT_FAST_OBJRET_N (PTT_REC_HDR_WORDS + PTT_OBJRET_WORDS + 1u)
_Static_assert(offsetof(struct ptt_tls, tid) == offsetof(struct ptt_tls, pid) + 4, "pid and tid: one 64-bit load");
PTT_ALWAYS_INLINE int ptt_fast_objret_open(struct ptt_fast_rec *f, unsigned id, unsigned mode, const void *obj,
					   const void *site)
{
	enum { N = PTT_FAST_OBJRET_N, K = PTT_OBJRET_WORDS };
	struct ptt_tls *t = &ptt_tls;
	if (__builtin_expect(ptt_fast[id] != mode || t->guard, 0))
		return -1;
	t->guard = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* a handler that comes now sees the guard */
	struct ptt_ring *r = t->ring;
	uint64_t pos;
	if (__builtin_expect(!r || (pos = r->reserved) + N > t->fast_end, 0)) {
		t->guard = 0;
		return -1;
	}
	__atomic_store_n(&r->reserved, pos + N, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* no prefetchw as reserve() has: here it cost 0.2 ns per event and saved nothing measurable */
	uint32_t *p = t->data + ((uint32_t)pos & (t->ring_words - 1));
	uint64_t ts = mode == PTT_FAST_EARLY ? ptt_rdtsc_early() : ptt_rdtsc();
	uint64_t o = (uint64_t)(uintptr_t)obj, ids;
	uint32_t w0 = ptt_rec_word0(id, N);
	__builtin_memcpy(&ids, &t->pid, 8); /* pid, tid */
	/* ptt_rec_put_header's words, pid and tid as one 64-bit load and store */
	p[0] = w0;
	ptt_put64(p + 1, ts);
	__builtin_memcpy(p + 3, &ids, 8);
	ptt_put64(p + PTT_REC_HDR_WORDS, o);
	p[PTT_REC_HDR_WORDS + 2] = 0;
	ptt_put_site(p + PTT_REC_HDR_WORDS + 3, site);
	/* ptt_rec_checksum over words 0..N-2 in closed form (ptt_rec_sum_term: word i counts
	 * N-2-i times), the result's term left to ptt_fast_objret_close */
	uint32_t h = ptt_rec_sum_seed(N - 1) ^ ptt_rec_sum_hdr(w0, ts, t->id_term, N - 6) ^ ptt_rec_sum_term64(o, K - 2);
#ifndef PTT_NO_SITE
	h ^= ptt_rec_sum_term64((uint64_t)(uintptr_t)site, 0);
#endif
	f->r = r;
	f->p = p;
	f->end = pos + N;
	f->terms = h;
	return 0;
}
PTT_ALWAYS_INLINE void ptt_fast_objret_close(struct ptt_fast_rec *f, int ret)
{
	f->p[PTT_REC_HDR_WORDS + 2] = (uint32_t)ret;
	f->p[PTT_FAST_OBJRET_N - 1] =
		ptt_rec_sum_finish(f->terms ^ ptt_rec_sum_term((uint32_t)ret, PTT_OBJRET_WORDS - 3));
	if (__builtin_expect(ptt_tls.coded, 0))
		ptt_coded_commit_fast(&ptt_tls, f->p, f->end);
	else
		__atomic_store_n(&f->r->committed, f->end, __ATOMIC_RELEASE);
	ptt_tls.guard = 0;
}

/*
 * A release (unlock, signal, broadcast, post): the value of the real call
 * CALL, recorded as event ID on OBJ at SITE with RESULT(CALL's value) as
 * its result.  The record is opened before the call, the object first, so
 * that a process killed inside the call leaves a record the recorder can
 * complete (drain_salvage), and closed after it: by the inlined fast path
 * when it can, else the general one, else the call is made alone.  A
 * macro, so that each path makes the call itself: one shared call site
 * after both opens measured 1.2 ns more per event (the fast path's state
 * spilled across it).
 */
#define PTT_RELEASE(id, obj, site, call, result)                                                       \
	__extension__({                                                                                 \
		struct ptt_fast_rec ptt_f_;                                                             \
		struct ptt_rec ptt_r_;                                                                  \
		int ptt_ret_;                                                                           \
		if (ptt_fast_objret_open(&ptt_f_, (id), PTT_FAST_EARLY, (obj), (site)) == 0) {          \
			ptt_ret_ = (call);                                                              \
			ptt_fast_objret_close(&ptt_f_, result(ptt_ret_));                               \
		} else if (ptt_on[id] && ptt_objret_open(&ptt_r_, (id), (obj), (site)) == 0) {          \
			ptt_ret_ = (call);                                                              \
			ptt_objret_close(&ptt_r_, result(ptt_ret_));                                    \
		} else {                                                                                \
			ptt_ret_ = (call);                                                              \
		}                                                                                       \
		ptt_ret_;                                                                               \
	})
/* RESULT for the calls whose value is the result */
#define PTT_AS_IS(ret) (ret)

/*
 * The pthread wrappers with the call site given: wrap_c11.c calls these with
 * its own caller's address (through the exported pthread function the site
 * would be an address inside libptt's mtx_lock).
 */
int ptt_mutex_lock_at(pthread_mutex_t *m, const void *site) PTT_HIDDEN;
int ptt_mutex_trylock_at(pthread_mutex_t *m, const void *site) PTT_HIDDEN;
int ptt_mutex_timedlock_at(pthread_mutex_t *m, const struct timespec *abstime, const void *site) PTT_HIDDEN;
int ptt_mutex_unlock_at(pthread_mutex_t *m, const void *site) PTT_HIDDEN;
int ptt_mutex_init_at(pthread_mutex_t *m, const pthread_mutexattr_t *attr, const void *site) PTT_HIDDEN;
int ptt_mutex_destroy_at(pthread_mutex_t *m, const void *site) PTT_HIDDEN;
int ptt_cond_wait_at(pthread_cond_t *c, pthread_mutex_t *m, const void *site) PTT_HIDDEN;
int ptt_cond_timedwait_at(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime,
			  const void *site) PTT_HIDDEN;
int ptt_cond_signal_at(pthread_cond_t *c, const void *site) PTT_HIDDEN;
int ptt_cond_broadcast_at(pthread_cond_t *c, const void *site) PTT_HIDDEN;
int ptt_cond_init_at(pthread_cond_t *c, const pthread_condattr_t *attr, const void *site) PTT_HIDDEN;
int ptt_cond_destroy_at(pthread_cond_t *c, const void *site) PTT_HIDDEN;
int ptt_join_at(pthread_t th, void **retval, const void *site) PTT_HIDDEN;
int ptt_detach_at(pthread_t th, const void *site) PTT_HIDDEN;

/* Common event shapes: an object, a result and the call site; an object and the call site (a request). */
void ptt_obj_ret(unsigned id, const void *obj, int ret, const void *site) PTT_HIDDEN;
void ptt_obj_only(unsigned id, const void *obj, const void *site) PTT_HIDDEN;
/* A wrapper's tail after its real call: the (object, result, site) event when it is recorded,
 * and the result for the wrapper to return: `return ptt_obj_ret_pass(id, obj, REAL(f)(obj), site);` */
PTT_ALWAYS_INLINE int ptt_obj_ret_pass(unsigned id, const void *obj, int ret, const void *site)
{
	struct ptt_fast_rec f;
	if (!ptt_fast[id]) /* not recorded: first, so that it costs what it did */
		return ret;
	if (ptt_fast_objret_open(&f, id, PTT_FAST_SERIAL, obj, site) == 0)
		ptt_fast_objret_close(&f, ret);
	else
		ptt_obj_ret(id, obj, ret, site);
	return ret;
}

/* Thread bookkeeping */
void ptt_thread_end(void *retval, unsigned how) PTT_HIDDEN;
/* At attach, in the main thread: the key whose destructor writes each thread's end (wrap_thread.c). */
void ptt_thread_end_key(void) PTT_HIDDEN;
/* pthread_create, and thrd_create with c11 set (start is then an int (*)(void *)): an errno code */
int ptt_create_thread(pthread_t *th, const pthread_attr_t *attr, void *(*start)(void *), void *arg, int c11,
		      const void *site) PTT_HIDDEN;
/* The tid of a thread the program may pass to glibc (joinable, or alive), read from the thread's own memory; 0: not known. */
uint32_t ptt_handle_tid(pthread_t h) PTT_HIDDEN;
uint32_t ptt_gettid(void) PTT_HIDDEN;
uint32_t ptt_peek_tid(pthread_t th) PTT_HIDDEN;
void ptt_check_tid_offset(uint32_t tid) PTT_HIDDEN;
/* Announce objects loaded since the last look (dlopen): at a thread's creation, where a look at
 * the loader's count is cheap beside the rest, so sites in a library loaded before it are named. */
void ptt_modules_refresh(void) PTT_HIDDEN;

/* Before an exec: is the shared ring's descriptor where PTT_SHM_FD says, for the new image to attach
 * from?  1 yes (*reopened: it was closed and the runtime opened it again, to be closed if the exec
 * fails), 0 no (gone and not to be had again, or its number the program's own now). */
int ptt_exec_ring_fd(int *reopened) PTT_HIDDEN;
void ptt_exec_ring_fd_close(void) PTT_HIDDEN;

/* process_fork around a call that starts a child sharing the parent's memory (wrap_exec.c): opened
 * before (1: open), closed with the child's pid after (0 or less: the start failed, no event). */
int ptt_fork_open(struct ptt_rec *rec) PTT_HIDDEN;
/* The ring's file (init.c): the runtime's own mappings of it are no program's shared memory. */
int ptt_is_ring_file(dev_t dev, ino_t ino) PTT_HIDDEN;
/* In a forked child: its parent's shared mappings told again under its pid (wrap_mmap.c). */
void ptt_maps_after_fork(void) PTT_HIDDEN;
/* A named semaphore's mapping, made inside libc: told after sem_open, and after the sem_close that unmapped it
 * (wrap_mmap.c). */
void ptt_maps_sem_open(const void *sem, const char *name) PTT_HIDDEN;
void ptt_maps_sem_close(const void *sem) PTT_HIDDEN;
void ptt_fork_close(struct ptt_rec *rec, pid_t pid) PTT_HIDDEN;

void ptt_debug(const char *msg) PTT_HIDDEN;
void ptt_die(const char *msg) PTT_HIDDEN;

/*
 * The real functions behind the wrappers: one table, ptt_real, filled by
 * ptt_resolve (init.c) from this list, and one way to reach an entry,
 * REAL(name).  Every entry is looked up at start-up by ptt_resolve, called
 * from libptt's constructor: dlsym is not async-signal-safe, and a
 * program's first sem_post may come from a signal handler.  A wrapper that
 * runs before (another library's constructor) resolves them through
 * REAL's slow path, ptt_real_slow, the one place that knows the bootstrap:
 * a call made while the look-ups run (dlsym's allocator locking a mutex,
 * a system call) gets a stand-in instead of recursing.  A function this
 * glibc lacks aborts with its name when first called.
 *
 *   X(name, return type, parameter types, symbol version or NULL for the default)
 *
 * The order is the order of the look-ups: first what an allocator may call
 * from inside dlsym (the mutex functions, unlock before lock, so that a
 * real lock never meets a stand-in unlock; syscall), then the rest.
 * glibc keeps two versions of pthread_cond_*: the old GLIBC_2.2.5 ABI and
 * GLIBC_2.3.2, the one programs link to; that one is asked for by name
 * (dlsym would give the default anyway, but say so rather than rely on it).
 */
#define PTT_COND_VERSION "GLIBC_2.3.2"
#define PTT_REAL_FUNCTIONS(X) \
	X(pthread_mutex_unlock, int, (pthread_mutex_t *), NULL) \
	X(pthread_mutex_trylock, int, (pthread_mutex_t *), NULL) \
	X(pthread_mutex_lock, int, (pthread_mutex_t *), NULL) \
	X(syscall, long, (long, ...), NULL) \
	X(mmap, void *, (void *, size_t, int, int, int, off_t), NULL) \
	X(mmap64, void *, (void *, size_t, int, int, int, off_t), NULL) \
	X(munmap, int, (void *, size_t), NULL) \
	X(pthread_mutex_init, int, (pthread_mutex_t *, const pthread_mutexattr_t *), NULL) \
	X(pthread_mutex_destroy, int, (pthread_mutex_t *), NULL) \
	X(pthread_mutex_timedlock, int, (pthread_mutex_t *, const struct timespec *), NULL) \
	X(pthread_mutex_clocklock, int, (pthread_mutex_t *, clockid_t, const struct timespec *), NULL) \
	X(pthread_cond_wait, int, (pthread_cond_t *, pthread_mutex_t *), PTT_COND_VERSION) \
	X(pthread_cond_timedwait, int, (pthread_cond_t *, pthread_mutex_t *, const struct timespec *), PTT_COND_VERSION) \
	X(pthread_cond_clockwait, int, (pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *), \
	  NULL) /* new in 2.30: a single version */ \
	X(pthread_cond_signal, int, (pthread_cond_t *), PTT_COND_VERSION) \
	X(pthread_cond_broadcast, int, (pthread_cond_t *), PTT_COND_VERSION) \
	X(pthread_cond_init, int, (pthread_cond_t *, const pthread_condattr_t *), PTT_COND_VERSION) \
	X(pthread_cond_destroy, int, (pthread_cond_t *), PTT_COND_VERSION) \
	X(pthread_rwlock_rdlock, int, (pthread_rwlock_t *), NULL) \
	X(pthread_rwlock_tryrdlock, int, (pthread_rwlock_t *), NULL) \
	X(pthread_rwlock_timedrdlock, int, (pthread_rwlock_t *, const struct timespec *), NULL) \
	X(pthread_rwlock_clockrdlock, int, (pthread_rwlock_t *, clockid_t, const struct timespec *), NULL) \
	X(pthread_rwlock_wrlock, int, (pthread_rwlock_t *), NULL) \
	X(pthread_rwlock_trywrlock, int, (pthread_rwlock_t *), NULL) \
	X(pthread_rwlock_timedwrlock, int, (pthread_rwlock_t *, const struct timespec *), NULL) \
	X(pthread_rwlock_clockwrlock, int, (pthread_rwlock_t *, clockid_t, const struct timespec *), NULL) \
	X(pthread_rwlock_unlock, int, (pthread_rwlock_t *), NULL) \
	X(pthread_rwlock_init, int, (pthread_rwlock_t *, const pthread_rwlockattr_t *), NULL) \
	X(pthread_rwlock_destroy, int, (pthread_rwlock_t *), NULL) \
	X(pthread_spin_lock, int, (pthread_spinlock_t *), NULL) \
	X(pthread_spin_trylock, int, (pthread_spinlock_t *), NULL) \
	X(pthread_spin_unlock, int, (pthread_spinlock_t *), NULL) \
	X(pthread_barrier_init, int, (pthread_barrier_t *, const pthread_barrierattr_t *, unsigned), NULL) \
	X(pthread_barrier_wait, int, (pthread_barrier_t *), NULL) \
	X(pthread_barrier_destroy, int, (pthread_barrier_t *), NULL) \
	X(sem_init, int, (sem_t *, int, unsigned), NULL) \
	X(sem_destroy, int, (sem_t *), NULL) \
	X(sem_wait, int, (sem_t *), NULL) \
	X(sem_trywait, int, (sem_t *), NULL) \
	X(sem_timedwait, int, (sem_t *, const struct timespec *), NULL) \
	X(sem_clockwait, int, (sem_t *, clockid_t, const struct timespec *), NULL) \
	X(sem_post, int, (sem_t *), NULL) \
	X(sem_open, sem_t *, (const char *, int, ...), NULL) \
	X(sem_close, int, (sem_t *), NULL) \
	X(sem_unlink, int, (const char *), NULL) \
	X(pthread_create, int, (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *), NULL) \
	X(pthread_join, int, (pthread_t, void **), NULL) \
	X(pthread_tryjoin_np, int, (pthread_t, void **), NULL) \
	X(pthread_timedjoin_np, int, (pthread_t, void **, const struct timespec *), NULL) \
	X(pthread_clockjoin_np, int, (pthread_t, void **, clockid_t, const struct timespec *), NULL) \
	X(pthread_detach, int, (pthread_t), NULL) \
	X(pthread_cancel, int, (pthread_t), NULL) \
	X(pthread_exit, void, (void *), NULL) \
	X(pthread_setname_np, int, (pthread_t, const char *), NULL) \
	X(thrd_create, int, (thrd_t *, thrd_start_t, void *), NULL) \
	X(fork, pid_t, (void), NULL) \
	X(posix_spawn, int, (pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *, \
			     char *const[], char *const[]), NULL) \
	X(posix_spawnp, int, (pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *, \
			      char *const[], char *const[]), NULL) \
	X(execve, int, (const char *, char *const[], char *const[]), NULL) \
	X(execv, int, (const char *, char *const[]), NULL) \
	X(execvp, int, (const char *, char *const[]), NULL) \
	X(execvpe, int, (const char *, char *const[], char *const[]), NULL) \
	X(fexecve, int, (int, char *const[], char *const[]), NULL) \
	X(prctl, int, (int, ...), NULL) \
	X(_exit, void, (int), NULL) \
	X(__libc_start_main, int, \
	  (int (*)(int, char **, char **), int, char **, void (*)(void), void (*)(void), void (*)(void), void *), NULL)

#define PTT_REAL_FIELD(name, ret, params, version) ret (*name) params;
struct ptt_real {
	PTT_REAL_FUNCTIONS(PTT_REAL_FIELD)
};
#undef PTT_REAL_FIELD
extern struct ptt_real ptt_real PTT_HIDDEN;

/* Look up every entry of ptt_real, once (later calls return at once). */
void ptt_resolve(void) PTT_HIDDEN;
/* REAL's slow path: the entry at offset off of ptt_real, resolving the table first; while
 * the look-ups run, the entry's stand-in; aborts with name when there is neither. */
typedef void (*ptt_fn)(void);
ptt_fn ptt_real_slow(size_t off, const char *name) PTT_HIDDEN __attribute__((cold));

/* The real function name: a load of the entry, a test and the call (ptt_real_slow, out of
 * the way, only before the table is resolved). */
#define REAL(name) \
	(__builtin_expect(ptt_real.name != 0, 1) \
		 ? ptt_real.name \
		 : (__typeof__(ptt_real.name))ptt_real_slow(offsetof(struct ptt_real, name), #name))

/*
 * A wrapper that tries the lock first (to tell a free acquisition from a
 * wait) must not succeed where glibc would fail: glibc refuses a clock it
 * cannot wait on, and (rwlocks, semaphores) a bad tv_nsec, before it looks at
 * the lock.  With such arguments the wrapper skips the try and lets the real
 * call answer EINVAL.
 */
static inline int ptt_bad_timeout(clockid_t clk, const struct timespec *t)
{
	return (clk != CLOCK_REALTIME && clk != CLOCK_MONOTONIC) || !t || t->tv_nsec < 0 || t->tv_nsec >= 1000000000;
}

/* A call of the variadic syscall(): its six arguments after the number, read whatever the call
 * passed (as glibc's own syscall() passes six registers to the kernel). */
PTT_ALWAYS_INLINE void ptt_syscall_args(va_list ap, long arg[6])
{
	for (int i = 0; i < 6; i++)
		arg[i] = va_arg(ap, long);
}

/* REAL(syscall) with six arguments: the runtime's own system calls, so that its futex wake of
 * the recorder is not traced as the program's. */
long ptt_syscall(long n, long a1, long a2, long a3, long a4, long a5, long a6) PTT_HIDDEN;

#endif
