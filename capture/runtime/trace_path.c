/*
 * trace_path.c - writing records into the calling thread's ring.
 *
 * Protocol (one writer per ring, the owning thread):
 *   reserve: reserved += n (a plain store; only this thread writes it), then
 *            read the clock, so a record's timestamp is never older than
 *            the moment the recorder could see it reserved;
 *   write:   header, arguments, checksum into the ring;
 *   commit:  committed = reserved (store-release).
 * The recorder treats a ring whose committed < reserved as busy and holds
 * back the merge at that ring's last committed timestamp, so no record is
 * ever written out of time order.  A record that does not fit before the
 * ring's end is preceded by a pad word telling the reader to wrap.
 *
 * The wrappers of the commonest calls (mutex and rwlock lock/unlock, cond
 * signal, sem_post, trylocks) write their (object, result, site) record
 * inline, in the same order (runtime.h, ptt_fast_objret_open), as long as
 * it ends at or before t->fast_end: the room and the ring's end as the last
 * reservation here saw them (reserve).  Past it they come here.
 *
 * Ring full: in discard mode the event is counted (exactly) in ring->lost
 * with the time span; by default the thread yields until the recorder has
 * made room, giving up (and counting) only if the recorder stops beating.
 * Signal handlers that fire while the thread is inside the tracer are not
 * recorded but counted in ring->lost (a per-thread ring cannot be entered
 * twice at once).
 */
#include <errno.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"
#include "../../formats/compact.h"
#include <sys/mman.h>

__thread struct ptt_tls ptt_tls __attribute__((tls_model("initial-exec")));
struct ptt_shm *ptt_shm;
uint8_t ptt_on[PTT_MAX_TYPES];
uint8_t ptt_early_ok[PTT_MAX_TYPES];
uint8_t ptt_fast[PTT_MAX_TYPES];

static inline uint64_t now_ticks_for(unsigned id)
{
#if PTT_HAVE_TSC
	if (__builtin_expect(ptt_shm->use_tsc, 1))
		return ptt_early_ok[id] ? ptt_rdtsc_early() : ptt_rdtsc();
#else
	(void)id;
#endif
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t now_ticks(void)
{
#if PTT_HAVE_TSC
	if (__builtin_expect(ptt_shm->use_tsc, 1))
		return ptt_rdtsc();
#endif
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#ifdef PTT_UNIT_TEST
/* The unit tests link the trace path without the resolver (init.c, wrap_futex.c): glibc's own. */
long ptt_syscall(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	return syscall(n, a1, a2, a3, a4, a5, a6);
}

/* nor init.c's debug output: the tests look at the rings */
void ptt_debug(const char *msg)
{
	(void)msg;
}
#endif

uint32_t ptt_gettid(void)
{
	return (uint32_t)ptt_syscall(SYS_gettid, 0, 0, 0, 0, 0, 0);
}

/* Wake the recorder's main loop from its sleep (a system call: never on the way of an ordinary event). */
static void poke_recorder(struct ptt_shm *s)
{
	__atomic_fetch_add(&s->wake, 1, __ATOMIC_RELEASE);
	ptt_syscall(SYS_futex, (long)&s->wake, FUTEX_WAKE, 1, 0, 0, 0);
}

/* Claim a free ring for t: 0; -1 when every announced ring is taken; -2 when a ring's segment
 * cannot be mapped here (no address space left: the kernel refused the mapping). */
static int claim_ring(struct ptt_tls *t, struct ptt_shm *s)
{
	uint32_t n = __atomic_load_n(&s->nrings, __ATOMIC_ACQUIRE);
	uint32_t start = __atomic_load_n(&s->ring_hint, __ATOMIC_RELAXED);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = (start + k) % n;
		struct ptt_ring *r = &s->rings[i];
		uint32_t expect = PTT_RING_FREE;
		if (__atomic_load_n(&r->state, __ATOMIC_RELAXED) != PTT_RING_FREE ||
		    !__atomic_compare_exchange_n(&r->state, &expect, PTT_RING_CLAIMED, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		uint32_t *data = ptt_ring_data(s, i);
		if (!data) { /* its segment cannot be mapped here: leave it to others, and give up */
			__atomic_store_n(&r->state, PTT_RING_FREE, __ATOMIC_RELEASE);
			return -2;
		}
		if ((s->flags & PTT_SHM_CODED) && !t->cpt) { /* the thread's coder, once (a claim may call the kernel) */
			void *m = (void *)ptt_syscall(SYS_mmap, 0, sizeof(struct ptt_compact), PROT_READ | PROT_WRITE,
						      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m == MAP_FAILED || (uintptr_t)m > (uintptr_t)-4096) {
				__atomic_store_n(&r->state, PTT_RING_FREE, __ATOMIC_RELEASE);
				return -2;
			}
			t->cpt = m;
		}
		r->pid = t->pid;
		r->tid = t->tid;
		r->reserved = r->committed = r->first = __atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE);
		r->lost = 0;
		r->full = 0;
		r->waits = 0;
		r->lost_reported = 0;
		r->waits_reported = 0;
		/* before the ring is active, so that a pass that sees its records looks this far */
		for (uint32_t used = __atomic_load_n(&s->rings_used, __ATOMIC_RELAXED);
		     used < i + 1 && !__atomic_compare_exchange_n(&s->rings_used, &used, i + 1, 0, __ATOMIC_RELEASE,
								  __ATOMIC_RELAXED);)
			;
		__atomic_store_n(&r->state, PTT_RING_ACTIVE, __ATOMIC_RELEASE);
		__atomic_store_n(&s->ring_hint, i + 1, __ATOMIC_RELAXED);
		t->ring = r;
		t->data = data;
		t->fast_end = 0; /* set by the first reservation */
		t->id_term = ptt_rec_sum_ids(t->pid, t->tid);
		t->ring_words = s->ring_words;
		t->ring_room = s->ring_words - (s->flags & (PTT_SHM_FLIGHT | PTT_SHM_DISCARD) ? 0 : PTT_STALL_SLACK);
		t->coded = 0;
		if (s->flags & PTT_SHM_CODED) {
			/* the records are written in the ring's first PTT_CODED_RAW words and coded at their
			 * commit into its upper half, whose stream goes on from the ring's last owner's */
			t->coded = 1;
			t->ring_words = PTT_CODED_RAW;
			t->ring_room = PTT_CODED_RAW - PTT_STALL_SLACK;
			t->coded_area = ptt_coded_area(data, s->ring_words);
			t->coded_size = ptt_coded_bytes(s->ring_words);
			t->coded_at = __atomic_load_n(&r->coded_consumed, __ATOMIC_ACQUIRE);
			t->coded_count = (uint32_t)(r->coded_pos >> 32);
			t->coded_fresh = 1;
		}
		return 0;
	}
	return -1;
}

/*
 * Announce the next segment of rings, unless another thread did since we
 * counted n of them (then there are new rings to look at too).  1 when
 * there are more rings than n, 0 at the cap.  No lock: the compare-and-swap
 * picks one announcer.
 */
static int grow(struct ptt_shm *s, uint32_t n)
{
	uint32_t cap = s->max_rings;
	if (n >= cap)
		return __atomic_load_n(&s->nrings, __ATOMIC_ACQUIRE) > n;
	uint32_t next = n + s->seg_rings < cap ? n + s->seg_rings : cap;
	__atomic_compare_exchange_n(&s->nrings, &n, next, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	return 1;
}

/*
 * At the cap: will a ring become free?  Yes while some ring is free (taken
 * from under us), being claimed, or closed with nothing left half-written
 * (the recorder frees it once drained).  A ring whose owner died inside a
 * record stays with the recorder, and one owned by a live thread may stay
 * taken as long as the program runs.
 */
static int ring_coming(const struct ptt_shm *s)
{
	uint32_t n = __atomic_load_n(&s->nrings, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++) {
		const struct ptt_ring *r = &s->rings[i];
		uint32_t st = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
		if (st == PTT_RING_FREE || st == PTT_RING_CLAIMED ||
		    (st == PTT_RING_CLOSED &&
		     __atomic_load_n(&r->committed, __ATOMIC_ACQUIRE) == __atomic_load_n(&r->reserved, __ATOMIC_ACQUIRE)))
			return 1;
	}
	return 0;
}

/*
 * Waiting on the recorder: the first tries yield the processor, later ones
 * sleep 100 us.  0 to look again; -1 when the recorder is finishing, or
 * silent: no pass (no heartbeat) for QUIET_NS of the clock, however long
 * the sleeps took on a loaded machine.  The first writer to find it silent
 * says so in the shared memory (recorder_silent), for every thread of
 * every traced process: no other waits for it (one that waits already
 * stops at its next look) until the recorder beats again.  So a recorder
 * killed under the program costs the program one wait of ~2 s in all, not
 * one per thread.  Raw system calls: no cancellation point.
 */
#define QUIET_NS 2000000000ull
struct recorder_wait {
	unsigned spin;
	uint64_t beat, beat_ns; /* the heartbeat last seen, and when it was first seen */
};

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A writer found the recorder silent at its present heartbeat (struct ptt_shm, silent_beat). */
static inline int recorder_silent(const struct ptt_shm *s)
{
	uint64_t g = __atomic_load_n(&s->silent_beat, __ATOMIC_ACQUIRE);
	return g && g == __atomic_load_n(&s->heartbeat, __ATOMIC_ACQUIRE) + 1;
}

static int recorder_wait(struct ptt_shm *s, struct ptt_ring *r, struct recorder_wait *rw)
{
	if (__atomic_load_n(&s->stopping, __ATOMIC_ACQUIRE) || recorder_silent(s))
		return -1;
	if (rw->spin++ == 0) {
		rw->beat = __atomic_load_n(&s->heartbeat, __ATOMIC_ACQUIRE);
		rw->beat_ns = monotonic_ns();
	}
	if (rw->spin <= 64) {
		ptt_syscall(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
		return 0;
	}
	struct timespec ts = { 0, 100000 };
	if (r) {
		/* waiting for room: sleep on the ring's full word, which the recorder wakes as soon as it has
		 * given room back (PTT_RING_WAITING), the 100 us a bound that keeps the heartbeat's count */
		uint32_t f = __atomic_load_n(&r->full, __ATOMIC_ACQUIRE);
		if (f == 0) { /* it gave some room back since we told it: look again, and tell it again */
			__atomic_store_n(&r->full, 1, __ATOMIC_RELEASE);
			poke_recorder(s);
			return 0;
		}
		/* 1 -> waiting: a recorder that gives room back after this wakes us; one that did before
		 * cleared the word, the exchange fails, and we look again */
		if (f == 1 && !__atomic_compare_exchange_n(&r->full, &f, PTT_RING_WAITING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return 0;
		ptt_syscall(SYS_futex, (long)&r->full, FUTEX_WAIT, PTT_RING_WAITING, (long)&ts, 0, 0);
	} else {
		ptt_syscall(SYS_nanosleep, (long)&ts, 0, 0, 0, 0, 0);
	}
	uint64_t b = __atomic_load_n(&s->heartbeat, __ATOMIC_ACQUIRE);
	if (b != rw->beat) {
		rw->beat = b;
		rw->beat_ns = monotonic_ns();
	} else if (monotonic_ns() - rw->beat_ns > QUIET_NS) {
		uint64_t old = __atomic_load_n(&s->silent_beat, __ATOMIC_ACQUIRE);
		if (old != b + 1 &&
		    __atomic_compare_exchange_n(&s->silent_beat, &old, b + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			ptt_debug("the recorder made no pass for 2 s: no thread waits for it until it does; "
				  "events with no room are counted lost");
		return -1;
	}
	return 0;
}

/*
 * First event of a thread (or after fork): find a ring.  System calls are
 * allowed here.  When every ring is taken the thread announces a new
 * segment (grow) and looks again: below the cap (-t) no thread goes
 * without a ring.  At the cap it waits, waking the recorder and sleeping
 * (recorder_wait) for as long as the recorder beats and a ring is on its
 * way back (ring_coming: looked at after each failed claim, so a ring freed
 * just after the claim's scan is seen); when every ring belongs to a live
 * thread it waits at most ~2 s, and in discard mode, or with the recorder
 * finishing or silent, not at all: then its events are counted as lost.
 * A ring whose segment this process cannot map (the kernel refuses the
 * address space) is not waited for either: said under PTT_DEBUG, its
 * events counted as lost.  The loop always ends: each turn either grows
 * the rings up to the cap or sleeps in recorder_wait, which gives up.
 */
__attribute__((noinline, cold)) static int attach(struct ptt_tls *t)
{
	struct ptt_shm *s = ptt_shm;
	if (t->no_ring || t->ended)
		return -1;
	if (!t->tid) {
		t->pid = (uint32_t)getpid();
		t->tid = ptt_gettid();
	}
	struct recorder_wait rw = { 0 };
	uint64_t idle_ns = 0;
	int why = 1;
	for (;;) {
		uint32_t n = __atomic_load_n(&s->nrings, __ATOMIC_ACQUIRE);
		int rc = claim_ring(t, s);
		if (rc == 0)
			return 0;
		if (rc == -2) {
			ptt_debug("cannot map a segment of the shared rings (no address space): "
				  "this thread's events are counted lost");
			why = 2;
			break;
		}
		if (grow(s, n))
			continue;
		if (rw.spin == 0)
			idle_ns = monotonic_ns();
		if ((s->flags & PTT_SHM_DISCARD) || (!ring_coming(s) && monotonic_ns() - idle_ns > QUIET_NS))
			break;
		poke_recorder(s);
		if (recorder_wait(s, NULL, &rw))
			break;
	}
	t->no_ring = why;
	return -1;
}

static void count_lost(struct ptt_tls *t, uint64_t ts)
{
	struct ptt_ring *r = t->ring;
	if (!r) {
		__atomic_fetch_add(t->ended ? &ptt_shm->late_lost
				   : t->no_ring == 2 ? &ptt_shm->no_map_lost : &ptt_shm->no_ring_lost, 1, __ATOMIC_RELAXED);
		return;
	}
	/* lost_first is the start of the span not yet reported by the recorder */
	if (__atomic_load_n(&r->lost, __ATOMIC_RELAXED) == __atomic_load_n(&r->lost_reported, __ATOMIC_ACQUIRE))
		r->lost_first = ts;
	r->lost_last = ts;
	__atomic_store_n(&r->lost, r->lost + 1, __ATOMIC_RELEASE);
}

/*
 * A full ring wakes the recorder rather than wait for its next pass: once
 * per filling (the recorder clears the flag when it drains the ring), in
 * both modes.  An event that finds room in its thread's ring makes no
 * system call (its clock is rdtsc, or clock_gettime, which the vDSO answers
 * without one on the usual clock sources).  One that finds the ring full
 * makes this futex wake and then, in the default lossless mode, the
 * sched_yield and nanosleep calls of recorder_wait until the recorder has
 * made room; a thread's first event makes those of attach.
 */
static void wake_recorder(struct ptt_ring *r, struct ptt_shm *s)
{
	if (__atomic_load_n(&r->full, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&r->full, 1, __ATOMIC_RELAXED);
	int saved = errno;
	poke_recorder(s);
	errno = saved;
}

/*
 * Flight recorder: nobody drains the ring, so the writer moves `consumed`
 * itself, along its own records (it wrote them: their lengths are sound),
 * past the oldest ones until half the ring is free: one walk per half ring
 * of events.  `consumed` is stored (release, then a full fence) before the
 * new records overwrite the old, so a recorder that copies the ring and then
 * reads `consumed` knows which part of its copy may be torn.
 */
static void flight_forget(struct ptt_tls *t, uint64_t pos, uint64_t need)
{
	struct ptt_ring *r = t->ring;
	uint32_t size = t->ring_words;
	uint64_t c = r->consumed, goal = pos + need - size / 2;
	while (c < goal && c < pos) {
		uint32_t off = (uint32_t)c & (size - 1);
		uint32_t w0 = t->data[off];
		uint32_t n = ptt_rec_len(w0);
		c += w0 == ptt_rec_word0(PTT_EV_PAD, 0) || n == 0 ? size - off : n;
	}
	__atomic_store_n(&r->consumed, c, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/*
 * Flight mode, a snapshot being copied: wait rather than overwrite what the
 * recorder is copying (a preempted recorder would otherwise find the busy
 * rings turned over and the snapshot's threads' histories apart in time).
 * Only a thread that fills half its ring during the copy waits, and only as
 * long as the copy; not at all once the recorder is finishing or gone.
 */
__attribute__((noinline, cold)) static void wait_snapshot(struct ptt_shm *s)
{
	int saved = errno;
	struct recorder_wait rw = { 0 };
	while (__atomic_load_n(&s->snapshot, __ATOMIC_ACQUIRE))
		if (recorder_wait(s, NULL, &rw)) { /* gone: nobody waits for it again */
			__atomic_store_n(&s->snapshot, 0, __ATOMIC_RELEASE);
			break;
		}
	errno = saved;
}

/*
 * A tracer_stall or tracer_stall_end record (STALL_WORDS, one u32
 * argument) written and committed at the ring's reserved end, which the
 * caller has checked has room for it and its pad.  Only when no record is
 * open (committed == reserved): committing it publishes everything before it.
 */
#define STALL_WORDS (PTT_REC_HDR_WORDS + 2u)
#define STALL_MAX (2u * STALL_WORDS - 1u) /* with the pad to the ring's start it may need */
_Static_assert(PTT_STALL_SLACK >= STALL_MAX, "the slack holds a stall's first record");
/* A tracer_stall or tracer_stall_end record of STALL_WORDS at p, stamped ts, its argument arg, sealed. */
static inline void stall_rec(const struct ptt_tls *t, uint32_t *p, unsigned id, uint64_t ts, uint32_t arg)
{
	/* ptt_rec_put_header's words, stored one by one: through the function, whose arguments are all
	 * loaded before the first store, gcc 12 merged them into SSE stores, 33 bytes longer */
	p[0] = ptt_rec_word0(id, STALL_WORDS);
	p[1] = (uint32_t)ts;
	p[2] = (uint32_t)(ts >> 32);
	p[3] = t->pid;
	p[4] = t->tid;
	p[5] = arg;
	ptt_rec_seal(p, STALL_WORDS);
}

static void put_stall(struct ptt_tls *t, unsigned id, uint32_t arg)
{
	struct ptt_ring *r = t->ring;
	uint64_t pos = r->reserved;
	uint32_t size = t->ring_words;
	uint32_t off = (uint32_t)pos & (size - 1);
	uint32_t pad = off + STALL_WORDS > size ? size - off : 0;
	if (pad) {
		t->data[off] = ptt_rec_word0(PTT_EV_PAD, 0);
		off = 0;
	}
	stall_rec(t, t->data + off, id, now_ticks(), arg);
	r->reserved = pos + pad + STALL_WORDS;
	__atomic_store_n(&r->committed, r->reserved, __ATOMIC_RELEASE);
}

/*
 * PTT_SHM_CODED: room for need bytes at the coded stream's end, and before
 * the ring's end where contiguous (else a CPT_STREAM_PAD there and the
 * stream goes on at the ring's start).  Lossless: wait for the recorder as
 * wait_room does (its full word); st (NULL: never wait) is told when the
 * wait began and how many times the thread looked, for the stall's records
 * (coded_stall), and CODED_SLACK bytes stay free for them.  0, or -1: no
 * room (discard mode, or the recorder finishing or silent).
 */
#define CODED_WORST(n) (4u * (n) + 32u) /* a record of n words coded, and the varints' stores past it */
/* The coded bytes between two resets of a thread's history: what one damaged byte may cost its
 * stream (a reader takes it up again at the next reset, which the recorder puts at a block's start) */
#define CODED_RESET_EVERY (128u * 1024u)
/* a tracer_stall record and its end, each with the pad it may need before it */
#define CODED_SLACK (4u * (CODED_WORST(STALL_WORDS) + 1u))
struct coded_stall {
	uint64_t begin; /* ticks when the thread began to wait; 0: it did not */
	uint32_t spins, need;
};
static int coded_room(struct ptt_tls *t, uint32_t need, struct coded_stall *st)
{
	struct ptt_ring *r = t->ring;
	struct ptt_shm *s = ptt_shm;
	uint32_t size = t->coded_size, off = (uint32_t)t->coded_at & (size - 1);
	uint32_t skip = off + need > size ? size - off : 0, slack = st ? CODED_SLACK : 0;
	struct recorder_wait rw = { 0 };
	int saved = errno;
	while (t->coded_at + skip + need + slack - __atomic_load_n(&r->coded_consumed, __ATOMIC_ACQUIRE) > size) {
		if (!st || (s->flags & PTT_SHM_DISCARD)) {
			errno = saved;
			return -1;
		}
		wake_recorder(r, s);
		if (st->begin == 0 && !__atomic_load_n(&s->stopping, __ATOMIC_ACQUIRE) && !recorder_silent(s)) {
			st->begin = now_ticks();
			st->need = need;
		}
		if (recorder_wait(s, r, &rw)) {
			errno = saved;
			return -1;
		}
		st->spins = rw.spin;
		if (rw.spin == 1)
			__atomic_store_n(&r->waits, r->waits + 1, __ATOMIC_RELEASE);
	}
	errno = saved;
	if (skip) {
		t->coded_area[off] = CPT_STREAM_PAD;
		t->coded_at += skip;
		__atomic_store_n(&r->coded_wrap, t->coded_count, __ATOMIC_RELAXED); /* the records before the ring's end */
	}
	return 0;
}

/* A record of len coded bytes written at the coded stream's end: counted, and the ring's end told
 * when it ends there. */
static inline __attribute__((always_inline)) void coded_advance(struct ptt_tls *t, ptrdiff_t len)
{
	t->coded_at += (uint64_t)len;
	t->coded_count++;
	if (((uint32_t)t->coded_at & (t->coded_size - 1)) == 0) /* ended at the ring's end */
		__atomic_store_n(&t->ring->coded_wrap, t->coded_count, __ATOMIC_RELAXED);
}

/*
 * A lossless thread's wait for room in its coded stream, told as it is in a
 * ring of records (wait_room): a tracer_stall record at the wait's start
 * (its argument the bytes wanted) and a tracer_stall_end at its end (the
 * times the thread looked), coded after the records of the commit that
 * waited (written before the wait began, so older) into the slack that
 * coded_room kept for them.
 */
static void coded_stall(struct ptt_tls *t, const struct coded_stall *st)
{
	uint64_t when[2] = { st->begin, now_ticks() };
	uint32_t arg[2] = { st->need, st->spins };
	if (t->coded_fresh) /* every record of the commit lost (the recorder finishing): the stream's reset first */
		return;
	for (int i = 0; i < 2; i++) {
		uint32_t p[STALL_WORDS];
		stall_rec(t, p, i ? PTT_EV_TRACER_STALL_END : PTT_EV_TRACER_STALL, when[i], arg[i]);
		if (coded_room(t, CODED_WORST(STALL_WORDS) + 1, NULL))
			return; /* not when the slack is gone: never, the room was kept */
		unsigned char *out = t->coded_area + ((uint32_t)t->coded_at & (t->coded_size - 1));
		coded_advance(t, cpt_encode(t->cpt, out, p, STALL_WORDS) - out);
	}
	__atomic_store_n(&t->ring->coded_last, when[1], __ATOMIC_RELAXED);
}

/*
 * ptt_coded_commit for the inline fast path's one record (PTT_FAST_OBJRET_N
 * words at p, ending at end, nothing open before it: committed is where it
 * begins, and no pad): its length a constant, so that the coding's switch
 * on it folds away, with no walk.  Where the stream needs a reset, a pad or
 * a wait, the general commit.
 */
void ptt_coded_commit_fast(struct ptt_tls *t, const uint32_t *p, uint64_t end)
{
	enum { N = PTT_FAST_OBJRET_N };
	struct ptt_ring *r = t->ring;
	uint32_t csize = t->coded_size, off = (uint32_t)t->coded_at & (csize - 1);
	if (__builtin_expect(t->coded_fresh || t->coded_at >= t->coded_reset_next || off + CODED_WORST(N) > csize ||
			     t->coded_at + CODED_WORST(N) + CODED_SLACK - __atomic_load_n(&r->coded_consumed, __ATOMIC_ACQUIRE) >
				     csize,
			     0)) {
		ptt_coded_commit(t, end);
		return;
	}
	unsigned char *out = t->coded_area + off;
	coded_advance(t, cpt_encode(t->cpt, out, p, N) - out);
	__atomic_store_n(&r->coded_last, ptt_rec_ticks(p), __ATOMIC_RELAXED);
	__atomic_store_n(&r->coded_pos, (uint64_t)t->coded_count << 32 | (uint32_t)t->coded_at, __ATOMIC_RELEASE);
	__atomic_store_n(&r->consumed, end, __ATOMIC_RELAXED);
	__atomic_store_n(&r->committed, end, __ATOMIC_RELEASE);
}

void ptt_coded_commit(struct ptt_tls *t, uint64_t end)
{
	struct ptt_ring *r = t->ring;
	uint64_t pos = r->committed, last = 0;
	uint32_t size = t->ring_words, csize = t->coded_size, done = 0;
	struct coded_stall st = { 0 };
	while (pos < end) {
		uint32_t off = (uint32_t)pos & (size - 1);
		const uint32_t *p = t->data + off;
		if (p[0] == ptt_rec_word0(PTT_EV_PAD, 0)) {
			pos += size - off;
			continue;
		}
		uint32_t n = ptt_rec_len(p[0]);
		pos += n;
		if (coded_room(t, CODED_WORST(n) + 1, &st)) {
			count_lost(t, ptt_rec_ticks(p));
			continue;
		}
		unsigned char *out = t->coded_area + ((uint32_t)t->coded_at & (csize - 1)), *o = out;
		if (__builtin_expect(t->coded_fresh || t->coded_at >= t->coded_reset_next, 0)) {
			/* a ring claimed, or CODED_RESET_EVERY bytes since the last reset: the history starts
			 * again, so that damage in a block costs the stream no more than that */
			__atomic_store_n(&r->coded_reset_ts, ptt_rec_ticks(p), __ATOMIC_RELAXED);
			__atomic_store_n(&r->coded_reset, (uint64_t)t->coded_count << 32 | (uint32_t)t->coded_at,
					 __ATOMIC_RELEASE);
			*o++ = CPT_STREAM_RESET;
			cpt_reset(t->cpt, 0);
			t->coded_fresh = 0;
			t->coded_reset_next = t->coded_at + CODED_RESET_EVERY;
		}
#ifdef PTT_CODED_NOCODE /* a bench's scratch build only: the coding's share of the coded trace path */
		memcpy(o, p, 8);
		o += 8;
#else
		o = cpt_encode(t->cpt, o, p, n);
#endif
		coded_advance(t, o - out);
		last = ptt_rec_ticks(p);
		done++;
	}
	if (done)
		__atomic_store_n(&r->coded_last, last, __ATOMIC_RELAXED);
	if (st.begin)
		coded_stall(t, &st);
	if (done || st.begin)
		__atomic_store_n(&r->coded_pos, (uint64_t)t->coded_count << 32 | (uint32_t)t->coded_at, __ATOMIC_RELEASE);
	/* the records' words are the owner's scratch: given back at once */
	__atomic_store_n(&r->consumed, end, __ATOMIC_RELAXED);
	__atomic_store_n(&r->committed, end, __ATOMIC_RELEASE);
}

/*
 * Wait until need words (n of them the record, the rest its pad) fit.
 * Returns 0 when they do, -1 when the event must be dropped (discard mode,
 * or the recorder is gone).  The caller computes the record's place anew:
 * the ring's reserved end may have moved.
 *
 * Lossless mode keeps PTT_STALL_SLACK words free at every record
 * (t->ring_room), so that a wait can be told as data: a tracer_stall
 * record, written in that slack as the wait begins, and a
 * tracer_stall_end record when it ends (with the times the thread looked
 * for room), each committed as it is written (the begin's time is in order
 * with every other thread's: the recorder merges it as it comes).  Readers show the interval as a state of its own and
 * the waits of other threads that it lengthened (ptt-stat(1)).  Not when a
 * record is open (ptt_defer_close's): its commit must stay the one after it.
 */
static int wait_room(struct ptt_tls *t, uint64_t pos, uint64_t need, uint32_t n)
{
	struct ptt_ring *r = t->ring;
	struct ptt_shm *s = ptt_shm;
	if (s->flags & PTT_SHM_FLIGHT) {
		if (__atomic_load_n(&s->snapshot, __ATOMIC_SEQ_CST))
			wait_snapshot(s);
		flight_forget(t, pos, need);
		return 0;
	}
	wake_recorder(r, s);
	int fits = pos + need - __atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE) <= t->ring_words;
	if ((s->flags & PTT_SHM_DISCARD) || __atomic_load_n(&s->stopping, __ATOMIC_ACQUIRE) || recorder_silent(s))
		return fits ? 0 : -1; /* into the slack: nobody waits for room now */
	int saved = errno;
	__atomic_store_n(&r->waits, r->waits + 1, __ATOMIC_RELEASE);
	int stall = r->committed == pos && pos + STALL_MAX - __atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE) <= t->ring_words;
	/* after the wait: room for the stall's end, the record and the slack again */
	uint64_t want = stall ? STALL_MAX + 2u * n + PTT_STALL_SLACK : need;
	if (stall)
		put_stall(t, PTT_EV_TRACER_STALL, n);
	struct recorder_wait rw = { 0 };
	while (r->reserved + want - __atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE) > t->ring_words)
		if (recorder_wait(s, r, &rw)) { /* finishing, or silent for ~2 s (gone?): drop, counted */
			errno = saved;
			return -1;
		}
	if (stall)
		put_stall(t, PTT_EV_TRACER_STALL_END, rw.spin);
	errno = saved;
	return 0;
}

/*
 * Room for n words at the ring's reserved end (waiting for it unless the
 * mode or a gone recorder says drop): *pp is where to write, *end the
 * reserved position after them.  Nothing is committed.  0, or -1: no room.
 * Sets t->fast_end for the fast path: `consumed` only grows and a lap's end
 * only moves on, so a limit taken now stays safe until the next call.
 */
static inline int reserve(struct ptt_tls *t, uint32_t n, uint32_t **pp, uint64_t *end)
{
	struct ptt_ring *r = t->ring;
	uint64_t pos = r->reserved;
	uint32_t size = t->ring_words;
	uint32_t off = (uint32_t)pos & (size - 1);
	uint32_t pad = off + n > size ? size - off : 0;
	uint64_t need = (uint64_t)pad + n;
	uint64_t c = __atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE);
	if (__builtin_expect(pos + need - c > t->ring_room, 0)) {
		if (wait_room(t, pos, need, n))
			return -1;
		pos = r->reserved; /* a stall's records may have gone before */
		off = (uint32_t)pos & (size - 1);
		pad = off + n > size ? size - off : 0;
		need = (uint64_t)pad + n;
		c = __atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE);
	}
	__atomic_store_n(&r->reserved, pos + need, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* the fast path's limit (runtime.h, ptt_fast_objret_open): the room as seen now, and this lap's end */
	uint64_t room_end = c + t->ring_room, lap_end = ((pos + need) & ~(uint64_t)(size - 1)) + size;
	t->fast_end = room_end < lap_end ? room_end : lap_end;
	if (pad) {
		t->data[off] = ptt_rec_word0(PTT_EV_PAD, 0); /* "wrap to the ring's start" */
		off = 0;
	}
	uint32_t *p = t->data + off;
	/*
	 * Ask for ownership of the ring a few lines ahead: the recorder read
	 * those lines on the last lap, so writing them costs a cache-coherence
	 * round trip, and the program's next locked instruction (its mutex
	 * operation) would wait for it.  Prefetched, the round trip overlaps.
	 */
#if defined(__x86_64__)
	__asm__ volatile("prefetchw %0" : : "m"(*((const char *)p + 1024)));
#else
	__builtin_prefetch((const char *)p + 512, 1, 3);
#endif
	*pp = p;
	*end = pos + need;
	return 0;
}

/*
 * Stamp the record of n words at p (in the ring or a deferral slot) and make
 * rec describe it; with_site: the call site is its last argument, written
 * here and its checksum term kept in rec->terms, so that the
 * wrapper passes it in a register and need not keep it across this call.
 */
static inline __attribute__((always_inline)) void put_header(struct ptt_rec *rec, uint32_t *p, const struct ptt_tls *t,
							     unsigned id, uint32_t n, const void *site, int with_site)
{
	uint64_t ts = now_ticks_for(id);
	uint32_t w0 = ptt_rec_word0(id, n);
	/* ptt_rec_put_header's words, stored one by one (as put_stall's: 32-48 bytes shorter) */
	p[0] = w0;
	p[1] = (uint32_t)ts;
	p[2] = (uint32_t)(ts >> 32);
	p[3] = t->pid;
	p[4] = t->tid;
	rec->p = p;
	rec->nwords = n;
	/* the checksum's state after these 5 words, in closed form (ptt_rec_sum_term):
	 * independent terms, added to by the writer of the arguments */
	rec->sum = ptt_rec_sum_seed(PTT_REC_HDR_WORDS) ^ ptt_rec_sum_hdr(w0, ts, ptt_rec_sum_ids(t->pid, t->tid), 0);
	if (with_site) {
		uint64_t a = (uint64_t)(uintptr_t)site;
		ptt_put64(p + n - 3, a);
		rec->terms = ptt_rec_sum_term64(a, 0);
	}
}

static inline __attribute__((always_inline)) int rec_open(struct ptt_rec *rec, unsigned id, unsigned nargw,
							   const void *site, int with_site)
{
	struct ptt_tls *t = &ptt_tls;
	if (__builtin_expect(t->guard, 0)) {
		if (t->deferring && !t->defer_open) {
			/* claimed before the slot is chosen: a signal handler arriving in
			 * between sees it taken and counts its event lost */
			t->defer_open = 1;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
		} else {
			count_lost(t, now_ticks());
			return -1;
		}
		if (t->ndefer < PTT_DEFER_RECORDS && PTT_REC_HDR_WORDS + nargw + 1 <= PTT_DEFER_WORDS) {
			put_header(rec, t->defer[t->ndefer], t, id, PTT_REC_HDR_WORDS + nargw + 1, site, with_site);
			rec->end = 0; /* deferred */
			return 0;
		}
		t->defer_open = 0;
		count_lost(t, now_ticks());
		return -1;
	}
	t->guard = 1;
	if (__builtin_expect(!t->ring, 0)) {
		int saved = errno;
		int rc = attach(t);
		errno = saved;
		if (rc) {
			count_lost(t, 0);
			t->guard = 0;
			return -1;
		}
		if (!t->begun && id != PTT_EV_THREAD_BEGIN) {
			/* a thread we did not see start (created before the runtime, or by clone) */
			t->guard = 0;
			t->begun = 1;
			uint32_t a[5] = { 0 };
			ptt_put64(a, (uint64_t)pthread_self());
			ptt_emit(PTT_EV_THREAD_BEGIN, a, 5);
			t->guard = 1;
		}
	}
	uint32_t n = PTT_REC_HDR_WORDS + nargw + 1;
	uint32_t *p;
	if (__builtin_expect(reserve(t, n, &p, &rec->end) != 0, 0)) {
		count_lost(t, now_ticks());
		t->guard = 0;
		return -1;
	}
	put_header(rec, p, t, id, n, site, with_site);
	return 0;
}

int ptt_rec_open(struct ptt_rec *rec, unsigned id, unsigned nargw)
{
	return rec_open(rec, id, nargw, NULL, 0);
}

#ifndef PTT_NO_SITE
int ptt_rec_open_site(struct ptt_rec *rec, unsigned id, unsigned nargw, const void *site)
{
	return rec_open(rec, id, nargw, site, 1);
}
#endif

/* The checksum of rec, its header's part taken from rec->sum, its arguments read back. */
static uint32_t rec_checksum(const struct ptt_rec *rec)
{
	uint32_t h = rec->sum;
	for (uint32_t i = PTT_REC_HDR_WORDS; i < rec->nwords - 1; i++)
		h = ptt_rec_sum_word(h, rec->p[i]);
	return ptt_rec_sum_finish(h);
}

void ptt_rec_close(struct ptt_rec *rec)
{
	rec->p[rec->nwords - 1] = rec_checksum(rec);
	ptt_rec_publish(rec);
}

void ptt_defer_begin(void)
{
	struct ptt_tls *t = &ptt_tls;
	t->ndefer = 0;
	t->deferring = 1;
}

/*
 * Close the record held open across the call, with the deferred records
 * after it, timestamps and all, and commit them together: their times are
 * after the open record's (stamped before the call) and before anything
 * later, and until the commit the recorder holds the merge back at this
 * ring, so no other thread's later record can be written before them.
 */
static void defer_end(struct ptt_rec *rec, int keep)
{
	struct ptt_tls *t = &ptt_tls;
	unsigned n = t->ndefer;
	uint64_t end = rec->end;
	if (keep) {
		rec->p[rec->nwords - 1] = rec_checksum(rec);
	} else {
		/* its words given back: nothing was reserved after it (the nested events wait in
		 * t->defer), nothing committed past it, and the recorder reads no further than committed
		 * (a pad before it, if any, stays: a reader wraps there as it would have) */
		end -= rec->nwords;
		__atomic_store_n(&t->ring->reserved, end, __ATOMIC_RELAXED);
	}
	t->deferring = 0;
	t->ndefer = 0;
	for (unsigned k = 0; k < n; k++) {
		const uint32_t *w = t->defer[k];
		uint32_t len = ptt_rec_len(w[0]), *p;
		if (reserve(t, len, &p, &end) != 0) {
			count_lost(t, now_ticks());
			continue;
		}
		memcpy(p, w, (size_t)len * 4); /* checksum included */
	}
	if (t->coded)
		ptt_coded_commit(t, end);
	else
		__atomic_store_n(&t->ring->committed, end, __ATOMIC_RELEASE);
	t->guard = 0;
}

void ptt_defer_close(struct ptt_rec *rec)
{
	defer_end(rec, 1);
}

void ptt_defer_cancel(struct ptt_rec *rec)
{
	defer_end(rec, 0);
}

/*
 * The flight mode's log (shm.h) that keeps a record of type id: the names
 * log for what begins or names a process, thread, module or object, the
 * stacks log for what a stack id needs to be read; NULL for the others.
 * Not a process's exit: a snapshot taken after it (the recording written
 * when the program ends) still needs the names of the history it holds.
 */
static struct ptt_shm_log *log_of(struct ptt_shm *s, unsigned id, uint32_t **words, uint32_t *cap)
{
	switch (id) {
	case PTT_EV_PROCESS_BEGIN: case PTT_EV_PROCESS_EXEC: case PTT_EV_MODULE:
	case PTT_EV_MODULE_BUILD_ID: case PTT_EV_THREAD_BEGIN: case PTT_EV_THREAD_NAME: case PTT_EV_OBJECT_NAME:
	case PTT_EV_PY_RUNTIME:
		*words = s->names;
		*cap = PTT_NAMES_WORDS;
		return &s->names_log;
	case PTT_EV_STACK_FRAMES: case PTT_EV_PY_CODE:
		*words = s->stack_recs;
		*cap = PTT_STACKS_WORDS;
		return &s->stacks_log;
	default:
		return NULL;
	}
}

/* Append the checksummed record rec to a log of cap words (shm.h), if there is room. */
static void log_keep(struct ptt_shm_log *log, uint32_t *words, uint32_t cap, const uint32_t *rec)
{
	uint32_t n = ptt_rec_len(rec[0]);
	uint64_t at = __atomic_fetch_add(&log->used, n, __ATOMIC_RELAXED);
	if (at + n > cap) {
		__atomic_fetch_add(&log->lost, 1, __ATOMIC_RELAXED);
		return;
	}
	memcpy(words + at + 1, rec + 1, (size_t)(n - 1) * 4);
	__atomic_store_n(&words[at], rec[0], __ATOMIC_RELEASE);
}

/* ptt_rec_close for the records of ptt_emit*: in flight mode, what a log keeps goes to it too. */
static void close_emitted(struct ptt_rec *rec, unsigned id)
{
	uint32_t *words, cap;
	struct ptt_shm_log *log;
	if (!(ptt_shm->flags & PTT_SHM_FLIGHT) || !(log = log_of(ptt_shm, id, &words, &cap))) {
		ptt_rec_close(rec);
		return;
	}
	rec->p[rec->nwords - 1] = rec_checksum(rec);
	log_keep(log, words, cap, rec->p);
	ptt_rec_publish(rec);
}

void ptt_emit_plain(unsigned id, const uint32_t *args, unsigned nargw)
{
	struct ptt_rec rec;
	if (ptt_rec_open(&rec, id, nargw))
		return;
	for (unsigned i = 0; i < nargw; i++)
		rec.p[PTT_REC_HDR_WORDS + i] = args[i];
	close_emitted(&rec, id);
}

void ptt_emit(unsigned id, const uint32_t *args, unsigned nargw)
{
	if (__builtin_expect(ptt_stack_on[id], 0))
		ptt_emit_stacked(id, args, nargw, ptt_stack_here());
	else
		ptt_emit_plain(id, args, nargw);
}

/*
 * A stack record, then the event's, reserved one after the other while the
 * thread holds its ring (guard) and committed together: nothing (a signal
 * handler's event) can come between them, so a reader gives the stack to
 * the thread's next event.  When the second does not fit, the stack record
 * is committed alone and the event counted lost, as any event would be.
 */
void ptt_emit_stacked(unsigned id, const uint32_t *args, unsigned nargw, uint32_t stack)
{
	struct ptt_tls *t = &ptt_tls;
	struct ptt_rec rec, ev;
	if (stack == PTT_STACK_NONE || t->guard) {
		ptt_emit_plain(id, args, nargw);
		return;
	}
	/* room for both before the first is opened: a wait for room between the two would be a stall
	 * with a record open, which wait_room cannot record (a contended lock's request in a full ring
	 * would leave no tracer_stall behind) */
	if (t->ring) {
		struct ptt_ring *r = t->ring;
		uint32_t both = (PTT_REC_HDR_WORDS + 2) + (PTT_REC_HDR_WORDS + nargw + 1);
		uint64_t pos = r->reserved, need = 2u * both; /* each may need a pad to the ring's start */
		if (pos + need - __atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE) > t->ring_room) {
			t->guard = 1;
			(void)wait_room(t, pos, need, both); /* no room (discard mode): reserve below says so */
			t->guard = 0;
		}
	}
	if (ptt_rec_open(&rec, PTT_EV_STACK, 1))
		return;
	rec.p[PTT_REC_HDR_WORDS] = stack;
	rec.p[PTT_REC_HDR_WORDS + 1] = rec_checksum(&rec);
	uint32_t n = PTT_REC_HDR_WORDS + nargw + 1, *p;
	uint64_t end;
	if (reserve(t, n, &p, &end) != 0) {
		count_lost(t, now_ticks());
		ptt_rec_publish(&rec);
		return;
	}
	put_header(&ev, p, t, id, n, NULL, 0);
	for (unsigned i = 0; i < nargw; i++)
		p[PTT_REC_HDR_WORDS + i] = args[i];
	p[n - 1] = rec_checksum(&ev);
	rec.end = end;
	ptt_rec_publish(&rec);
}

void ptt_emit_str(unsigned id, const uint32_t *args, unsigned nargw, const char *str)
{
	ptt_emit_str_len(id, args, nargw, str, 0);
}

void ptt_emit_str_len(unsigned id, const uint32_t *args, unsigned nargw, const char *str, size_t whole)
{
	enum { KEEP = PTT_MAX_STR - 1 }; /* what every reader holds (ptt_event.str) */
	size_t len = 0;
	while (str && str[len] && len < KEEP)
		len++;
	if (whole < len)
		whole = len;
	if (len == KEEP && str[len] && whole == len) /* cut: how long was it? (rare; never on a lock's path) */
		whole += strlen(str + len);
	unsigned sw = (unsigned)(len + 4) / 4; /* NUL padded, at least one NUL */
	struct ptt_rec rec;
	if (ptt_rec_open(&rec, id, nargw + sw))
		return;
	uint32_t *a = rec.p + PTT_REC_HDR_WORDS;
	for (unsigned i = 0; i < nargw; i++)
		a[i] = args[i];
	a[nargw + sw - 1] = 0;
	memcpy(a + nargw, str, len);
	for (size_t i = len; i < (size_t)sw * 4; i++)
		((char *)(a + nargw))[i] = 0;
	close_emitted(&rec, id);
	if (whole > len)
		ptt_emit_limit(PTT_LIMIT_STRING, 1, len, whole);
}

/* Keep v at least m (a shared counter other processes raise too). */
static void raise_to(uint64_t *v, uint64_t m)
{
	uint64_t old = __atomic_load_n(v, __ATOMIC_RELAXED);
	while (old < m && !__atomic_compare_exchange_n(v, &old, m, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

void ptt_emit_limit(unsigned table, uint64_t count, uint64_t limit, uint64_t need)
{
	struct ptt_shm *s = ptt_shm;
	if (s && table < PTT_LIMIT_COUNT) {
		__atomic_fetch_add(&s->limit_count[table], count, __ATOMIC_RELAXED);
		raise_to(&s->limit_limit[table], limit);
		raise_to(&s->limit_need[table], need);
	}
	uint32_t a[7];
	a[0] = table;
	ptt_put64(a + 1, count);
	ptt_put64(a + 3, limit);
	ptt_put64(a + 5, need);
	ptt_emit(PTT_EV_LIMIT, a, 7);
}

/* The (object, result, site) or (object, site) event with its stack, out of the way of the fast path. */
static __attribute__((noinline)) void obj_stacked(unsigned id, const void *obj, int with_ret, int ret, const void *site)
{
	uint32_t a[5], n = 2;
	ptt_put64(a, (uint64_t)(uintptr_t)obj);
	if (with_ret)
		a[n++] = (uint32_t)ret;
	ptt_put_site(a + n, site);
	ptt_emit_stacked(id, a, n + PTT_SITE_WORDS, ptt_stack_here());
}

void ptt_obj_ret(unsigned id, const void *obj, int ret, const void *site)
{
	struct ptt_rec rec;
	if (__builtin_expect(ptt_stack_on[id], 0)) {
		obj_stacked(id, obj, 1, ret, site);
		return;
	}
	if (!ptt_on[id] || ptt_objret_open(&rec, id, obj, site) != 0)
		return;
	ptt_objret_close(&rec, ret);
}

/* (object, site): a request; its checksum from registers as in ptt_objret_open. */
void ptt_obj_only(unsigned id, const void *obj, const void *site)
{
	struct ptt_rec rec;
	enum { N = 2 + PTT_SITE_WORDS };
	if (__builtin_expect(ptt_stack_on[id], 0)) {
		obj_stacked(id, obj, 0, 0, site);
		return;
	}
	if (!ptt_on[id] || ptt_rec_open_site(&rec, id, N, site) != 0)
		return;
	uint32_t *a = rec.p + PTT_REC_HDR_WORDS;
	uint64_t o = (uint64_t)(uintptr_t)obj;
	ptt_put64(a, o);
	a[N] = ptt_rec_sum_finish(PTT_SITE_TERM(&rec) ^ ptt_rec_sum_more(rec.sum, N) ^ ptt_rec_sum_term64(o, N - 2));
	ptt_rec_publish(&rec);
}
