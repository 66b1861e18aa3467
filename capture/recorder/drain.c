/*
 * drain.c - merging the per-thread rings into one time-ordered stream.
 *
 * Each ring is in time order by itself (one writer, timestamps read after
 * reservation).  A pass reads every ring's committed records and computes a
 * watermark W: no record still to come can be older than W.  For a ring
 * with a write in progress (reserved > committed), the bound is its last
 * committed timestamp; for an idle ring, "now" minus a slack that covers
 * the window in which a reservation can be invisible to us (store buffer,
 * not preemption: a preempted writer has made its reservation visible);
 * a closed ring has no bound; and W is never later than now minus the
 * slack (a thread whose ring was not active yet when the pass looked at
 * it).  Records with ts <= W are merged (ties by
 * tid, then ring order) and written; the rest wait for the next pass.  The
 * recorder's own events join the merge through a small pending queue.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "drain.h"

#define SLACK_NS 200000u /* 200 us */
/* A ring left free this long gives its memory back: a thread pool that
 * shrank does not keep its peak's rings, while churn, which takes a ring
 * again within milliseconds, keeps them resident (no first-touch faults). */
#define IDLE_RING_NS 1000000000u
#define NOTES_FIRST 256 /* the recorder's notes queued for the merge: the queue doubles when full */

/*
 * A ring's (or the notes') place in the merge.  Records are read where the
 * owner wrote them, one at a time as the merge reaches them: the header is
 * read and the record copied out in the same breath, so each line of the
 * ring is fetched from the writer's core once, and no per-record index is
 * built.
 */
struct cursor {
	const uint32_t *data; /* the ring's words (NULL for the notes) */
	const uint32_t *rec;  /* the head record, when has */
	uint64_t pos;         /* ring position of the head record (notes: its index) */
	uint64_t limit;       /* committed (reserved in a final pass) when the pass began */
	uint64_t done;        /* position after the last record written */
	uint64_t ts;          /* the head record's time */
	uint64_t prev_ts;     /* time of the record before the head */
	uint64_t lost_last;   /* the last lost event's time the ring's last rec_lost covered (0: none) */
	uint32_t n;           /* the head record's words */
	uint32_t tid;
	uint8_t has;          /* a head record is loaded */
	uint8_t bounds;       /* what the ring bounds the merge by (enum bound) */
	uint8_t wrote;        /* records written in this pass: space to give back */
	/* coded streams (PTT_SHM_CODED): the bytes and records of the ring's stream copied so far */
	uint64_t cbytes;
	uint32_t ccount;
	uint64_t forgot_at; /* cbytes when the ring's memory was last given back (its pages cold again) */
};

enum bound {
	BOUND_NONE = 0, /* closed, or a final pass: nothing more will come */
	BOUND_LAST,     /* a write was in progress when the pass began: its last record */
	BOUND_IDLE,     /* idle: its last record or now minus the slack, whichever is later */
};

struct note {
	uint64_t ts;
	uint32_t nwords;
	uint32_t words[16];
};

struct drain {
	struct ptt_shm *shm;
	struct ptt_writer *w;
	struct ptt_clock clk;
	uint64_t *last_ts;    /* per ring: timestamp of the last record seen */
	uint64_t *freed_at;   /* per ring: when the recorder freed it (monotonic ns), 0 when its memory is given back or never used */
	struct cursor *cur;
	uint32_t *heap;
	uint32_t *busy;       /* rings with records in this pass, and how many */
	uint32_t nbusy;
	struct note *notes;   /* the recorder's own records to write, in time order */
	uint32_t nnotes, notes_cap;
	uint64_t written_ts;  /* the time of the last record written: no record written later is older */
	uint64_t slack_ticks;
	uint32_t pid, tid;
	uint32_t nrings;      /* rings announced, as this pass sees them */
	uint32_t notes_at;    /* index of the notes' cursor: after every ring up to the cap */
	uint32_t ring_words;
	uint64_t no_ring_seen, no_map_seen, late_seen;
	int hold_reports;     /* drain_hold_reports */
	struct drain_stats st;
	int (*before)(void *ctx, const uint32_t *rec, struct ptt_writer *w);
	void *before_ctx;
	/* the builtin ids whose records are written one at a time (the hook sees them, or the
	 * limits' summary counts them); the others are written in runs (ptt_writer_run) */
	uint8_t one_by_one[PTT_EV_BUILTIN_COUNT];
	int (*cut)(void *ctx); /* drain_set_cut */
	void *cut_ctx;
	int streams;          /* drain_set_streams: spans copied as they lie, no merge */
	uint64_t mark;        /* streams: the last MARK written (no record still to come is older) */
};

void drain_set_cut(struct drain *d, int (*cut)(void *ctx), void *ctx)
{
	d->cut = cut;
	d->cut_ctx = ctx;
}

void drain_set_hook(struct drain *d, int (*before)(void *, const uint32_t *, struct ptt_writer *), void *ctx,
		    const uint8_t *sees)
{
	d->before = before;
	d->before_ctx = ctx;
	for (unsigned id = 0; id < PTT_EV_BUILTIN_COUNT; id++)
		d->one_by_one[id] = !before ? 0 : sees ? sees[id] != 0 : 1;
	d->one_by_one[PTT_EV_LIMIT] = 1;
}

void drain_hold_reports(struct drain *d, int on) { d->hold_reports = on; }

void drain_set_streams(struct drain *d, int on) { d->streams = on; }

uint64_t drain_now(const struct drain *d)
{
	if (d->shm->use_tsc)
		return ptt_rdtsc();
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct drain *drain_new(struct ptt_shm *shm, struct ptt_writer *w, const struct ptt_clock *clk)
{
	struct drain *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	d->shm = shm;
	d->w = w;
	/* room for every ring up to the cap, the recorder's notes last: pages
	 * of rings never announced are never touched (cursors are allocated on
	 * a ring's first use) */
	d->notes_at = shm->max_rings;
	d->ring_words = shm->ring_words;
	d->last_ts = calloc(shm->max_rings, sizeof *d->last_ts);
	d->freed_at = calloc(shm->max_rings, sizeof *d->freed_at);
	d->cur = calloc(shm->max_rings + 1, sizeof *d->cur);
	d->heap = calloc(shm->max_rings + 1, sizeof *d->heap);
	d->busy = calloc(shm->max_rings + 1, sizeof *d->busy);
	d->notes_cap = NOTES_FIRST;
	d->notes = calloc(d->notes_cap, sizeof *d->notes);
	if (!d->last_ts || !d->freed_at || !d->cur || !d->heap || !d->busy || !d->notes) {
		drain_free(d);
		return NULL;
	}
	drain_set_clock(d, clk);
	drain_set_hook(d, NULL, NULL, NULL);
	d->pid = (uint32_t)getpid();
	d->tid = (uint32_t)syscall(SYS_gettid);
	return d;
}

void drain_set_clock(struct drain *d, const struct ptt_clock *clk)
{
	d->clk = *clk;
	d->slack_ticks = clk->hz / (1000000000u / SLACK_NS);
}

void drain_free(struct drain *d)
{
	if (!d)
		return;
	free(d->cur);
	free(d->heap);
	free(d->busy);
	free(d->last_ts);
	free(d->freed_at);
	free(d->notes);
	free(d);
}

const struct drain_stats *drain_stats(const struct drain *d) { return &d->st; }

/*
 * Queue a note stamped ts, among the queued ones in time order: at the end
 * when ts is now (at any time); earlier only between passes, when no note
 * is being written.
 */
static int note_at(struct drain *d, unsigned id, const uint32_t *args, unsigned nargw, uint64_t ts)
{
	if (nargw + PTT_REC_MIN_WORDS > 16)
		return -1;
	if (d->nnotes == d->notes_cap) {
		/* grow; the notes' cursor, which may hold a head record in the merge, follows */
		size_t cap = d->notes_cap;
		if (PTT_GROW(d->notes, &cap, (size_t)d->nnotes + 1) != 0)
			return -1; /* no memory: the caller reports again on the next pass */
		d->notes_cap = (uint32_t)cap;
		struct cursor *nc = &d->cur[d->notes_at];
		if (nc->has && nc->pos < d->nnotes)
			nc->rec = d->notes[nc->pos].words;
	}
	uint32_t at = d->nnotes;
	while (at > 0 && d->notes[at - 1].ts > ts)
		at--;
	memmove(d->notes + at + 1, d->notes + at, (d->nnotes - at) * sizeof d->notes[0]);
	d->nnotes++;
	struct note *n = &d->notes[at];
	n->ts = ts;
	n->nwords = PTT_REC_HDR_WORDS + nargw + 1;
	ptt_rec_put_header(n->words, ptt_rec_word0(id, n->nwords), ts, d->pid, d->tid);
	memcpy(n->words + PTT_REC_HDR_WORDS, args, nargw * 4);
	ptt_rec_seal(n->words, n->nwords);
	return 0;
}

int drain_note(struct drain *d, unsigned id, const uint32_t *args, unsigned nargw)
{
	return note_at(d, id, args, nargw, drain_now(d));
}

/*
 * A record cut short because its process died inside the call it records:
 * the releases (unlock, signal, post, cancel) write their object before the
 * call and only the result after, so such a record is complete but for its
 * result, taken as success (the process is gone: the release cannot be
 * undone), and its checksum.  Only those, only when the header is the
 * ring owner's and the time follows the ring's previous record.
 */
int drain_salvage(uint32_t *rec, uint32_t n, uint32_t pid, uint32_t tid, uint64_t prev_ts, uint64_t now)
{
	uint32_t id = ptt_rec_id(rec[0]);
	const struct ptt_type *t = ptt_builtin_type(id);
	if (!t || (t->role != PTT_ROLE_RELEASE && t->role != PTT_ROLE_POST) || n != (uint32_t)PTT_REC_MIN_WORDS + t->words ||
	    rec[3] != pid || rec[4] != tid)
		return 0;
	uint64_t ts = ptt_rec_ticks(rec);
	if (ts < prev_ts || ts > now)
		return 0;
	rec[n - 2] = 0; /* ret */
	ptt_rec_seal(rec, n);
	return 1;
}

/*
 * Load the head record of ring i's cursor at c->pos, skipping a pad: 1, or
 * 0 when the span read at the pass's start is used up.  A record that does
 * not check out ends the span; in a final pass it was torn by the program's
 * death (counted lost, unless it is a release cut short, which is salvaged).
 * The notes' cursor goes through here too.
 */
static __attribute__((noinline)) int load_slow(struct drain *d, uint32_t i, struct cursor *c, int final)
{
	c->has = 0;
	if (i == d->notes_at) {
		if (c->pos >= c->limit)
			return 0;
		const struct note *nt = &d->notes[c->pos];
		c->rec = nt->words;
		c->n = nt->nwords;
		c->ts = nt->ts;
		return c->has = 1;
	}
	uint32_t size = d->shm->ring_words;
	while (c->pos < c->limit) {
		uint32_t off = (uint32_t)c->pos & (size - 1);
		uint32_t *p = (uint32_t *)c->data + off;
		uint32_t w0 = p[0];
		if (w0 == ptt_rec_word0(PTT_EV_PAD, 0)) {
			c->pos += size - off;
			continue;
		}
		uint32_t n = ptt_rec_len(w0);
		int sound = ptt_rec_marked(w0) && n >= PTT_REC_MIN_WORDS && off + n <= size && c->pos + n <= c->limit;
		if (final && sound && !ptt_rec_sound(p, n)) {
			const struct ptt_ring *r = &d->shm->rings[i];
			if (drain_salvage(p, n, r->pid, r->tid, c->prev_ts, drain_now(d)))
				d->st.salvaged++;
			else
				sound = 0;
		}
		if (!sound) {
			if (final) { /* torn by the program's death */
				d->st.lost++;
				uint32_t a[7] = { d->shm->rings[i].tid, 1, 0, 0, 0, 0, 0 };
				drain_note(d, PTT_EV_REC_LOST, a, 7);
			}
			c->limit = c->pos;
			return 0;
		}
		c->rec = p;
		c->n = n;
		c->ts = ptt_rec_ticks(p);
		return c->has = 1;
	}
	return 0;
}

/* The common case inline: a sound record of a ring, no pad, not a final pass. */
static inline int load(struct drain *d, uint32_t i, struct cursor *c, int final)
{
	uint32_t size = d->ring_words;
	uint32_t off = (uint32_t)c->pos & (size - 1);
	const uint32_t *p = c->data + off;
	if (__builtin_expect(final || i == d->notes_at || c->pos >= c->limit, 0))
		return load_slow(d, i, c, final);
	uint32_t w0 = p[0], n = ptt_rec_len(w0);
	if (__builtin_expect(!ptt_rec_marked(w0) || n < PTT_REC_MIN_WORDS || off + n > size || c->pos + n > c->limit, 0))
		return load_slow(d, i, c, final); /* a pad, or unsound */
	c->rec = p;
	c->n = n;
	c->ts = ptt_rec_ticks(p);
	return c->has = 1;
}

/* No record still to come from a ring whose span is used up can be older than
 * this (enum bound): its last record, or for an idle one now minus the slack. */
static inline uint64_t ring_bound(const struct cursor *c, uint64_t floor)
{
	return c->bounds == BOUND_IDLE && floor > c->prev_ts ? floor : c->prev_ts;
}

/* A ring with no record left in this pass: what it bounds now applies to the watermark. */
static inline void used_up(const struct cursor *c, uint64_t floor, uint64_t *wm)
{
	if (c->bounds && ring_bound(c, floor) < *wm)
		*wm = ring_bound(c, floor);
}

/* Of rings a and b's records at one time, a's go first: the lower tid, then the lower ring. */
static inline int tie_first(const struct drain *d, uint32_t a, uint32_t b)
{
	const struct cursor *x = &d->cur[a], *y = &d->cur[b];
	return x->tid < y->tid || (x->tid == y->tid && a < b);
}

static inline int before(const struct drain *d, uint32_t a, uint32_t b)
{
	uint64_t tx = d->cur[a].ts, ty = d->cur[b].ts;
	return tx != ty ? tx < ty : tie_first(d, a, b);
}

static void sift_down(struct drain *d, uint32_t n, uint32_t k)
{
	for (;;) {
		uint32_t l = 2 * k + 1, m = k;
		if (l < n && before(d, d->heap[l], d->heap[m]))
			m = l;
		if (l + 1 < n && before(d, d->heap[l + 1], d->heap[m]))
			m = l + 1;
		if (m == k)
			return;
		uint32_t t = d->heap[k];
		d->heap[k] = d->heap[m];
		d->heap[m] = t;
		k = m;
	}
}

/* Lost events and waits of one ring not yet reported: as recorder events. */
static void report_ring(struct drain *d, struct ptt_ring *r, int in_place)
{
	uint64_t lost = __atomic_load_n(&r->lost, __ATOMIC_ACQUIRE);
	if (lost != r->lost_reported) {
		struct cursor *c = &d->cur[r - d->shm->rings];
		uint64_t n = lost - r->lost_reported, first = r->lost_first, last = r->lost_last;
		/* the runtime restarts lost_first at the first loss after a report; one that came while the
		 * report was being made left the reported start there: these losses came after it */
		if (first <= c->lost_last)
			first = c->lost_last + 1;
		if (last < first)
			last = first;
		uint32_t a[7];
		a[0] = r->tid;
		ptt_put64(a + 1, n);
		ptt_put64(a + 3, ptt_clock_ns(&d->clk, first));
		ptt_put64(a + 5, ptt_clock_ns(&d->clk, last));
		/* in_place: stamped where the stretch begins (no earlier than what is written), so that it
		 * comes after the thread's records before the loss and before those after it: a reader
		 * forgets there what the thread held and waited for (model.h: lost events) */
		if (note_at(d, PTT_EV_REC_LOST, a, 7, !in_place ? drain_now(d) : first > d->written_ts ? first : d->written_ts) == 0) {
			d->st.lost += n;
			__atomic_store_n(&r->lost_reported, lost, __ATOMIC_RELEASE);
			c->lost_last = last;
		}
	}
	uint64_t waits = __atomic_load_n(&r->waits, __ATOMIC_ACQUIRE);
	if (waits != r->waits_reported) {
		uint32_t a[3];
		a[0] = r->tid;
		ptt_put64(a + 1, waits - r->waits_reported);
		if (drain_note(d, PTT_EV_REC_RING_FULL, a, 3) == 0) {
			d->st.waits += waits - r->waits_reported;
			r->waits_reported = waits;
		}
	}
}

static void report_counters(struct drain *d)
{
	struct ptt_shm *s = d->shm;
	for (uint32_t i = 0; i < d->nrings; i++) {
		struct ptt_ring *r = &s->rings[i];
		if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) >= PTT_RING_ACTIVE)
			report_ring(d, r, 1);
	}
	uint64_t nr = __atomic_load_n(&s->no_ring_lost, __ATOMIC_ACQUIRE);
	if (nr != d->no_ring_seen) {
		uint32_t a[7] = { 0 }, l[7] = { PTT_LIMIT_RINGS };
		ptt_put64(a + 1, nr - d->no_ring_seen);
		ptt_put64(l + 1, nr - d->no_ring_seen);
		ptt_put64(l + 3, s->max_rings);
		if (drain_note(d, PTT_EV_REC_LOST, a, 7) == 0) {
			d->st.lost += nr - d->no_ring_seen;
			d->no_ring_seen = nr;
			drain_note(d, PTT_EV_LIMIT, l, 7); /* why they were lost: the ring table is full */
		}
	}
	uint64_t nm = __atomic_load_n(&s->no_map_lost, __ATOMIC_ACQUIRE);
	if (nm != d->no_map_seen) {
		uint32_t a[7] = { 0 }, l[7] = { PTT_LIMIT_RING_MAP };
		ptt_put64(a + 1, nm - d->no_map_seen);
		ptt_put64(l + 1, nm - d->no_map_seen);
		ptt_put64(l + 3, __atomic_load_n(&s->nrings, __ATOMIC_ACQUIRE));
		if (drain_note(d, PTT_EV_REC_LOST, a, 7) == 0) {
			d->st.lost += nm - d->no_map_seen;
			d->no_map_seen = nm;
			drain_note(d, PTT_EV_LIMIT, l, 7); /* why: the thread's process could not map its ring */
		}
	}
	d->st.late = __atomic_load_n(&s->late_lost, __ATOMIC_ACQUIRE);
}

static uint64_t coarse_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + 1; /* never 0 */
}

/*
 * Give a ring that stayed free its memory back.  The recorder claims it
 * first, as a thread would, so no thread can take it (and write into it)
 * while its pages go; a thread that finds it claimed looks elsewhere, and
 * one that needs it waits the few microseconds, seeing it "on its way back".
 */
static void forget_ring(struct drain *d, uint32_t i)
{
	struct ptt_ring *r = &d->shm->rings[i];
	uint32_t expect = PTT_RING_FREE;
	if (!__atomic_compare_exchange_n(&r->state, &expect, PTT_RING_CLAIMED, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return; /* a thread took it: it keeps its memory */
	ptt_ring_forget(d->shm, i); /* best effort: a kernel without hole punching in a memfd keeps the pages */
	d->cur[i].forgot_at = d->cur[i].cbytes;
	d->freed_at[i] = 0;
	__atomic_store_n(&r->state, PTT_RING_FREE, __ATOMIC_RELEASE);
}

/*
 * Give back the space of the records written so far in this pass: they are
 * in the writer's buffer now.  Done every RELEASE_EVERY records as well as
 * at the end, so a writer waiting for room (or about to) gets it while the
 * rest of a long pass (a block compressed and written) is still going on.
 */
#define RELEASE_EVERY 2048u
static void release_space(struct drain *d)
{
	for (uint32_t k = 0; k < d->nbusy; k++) {
		uint32_t i = d->busy[k];
		struct cursor *c = &d->cur[i];
		struct ptt_ring *r = &d->shm->rings[i];
		if (c->wrote && r->consumed != c->done) {
			__atomic_store_n(&r->consumed, c->done, __ATOMIC_RELEASE);
			/* room again: the owner may wake us next time; if it sleeps waiting for room, now */
			if (__atomic_load_n(&r->full, __ATOMIC_RELAXED) &&
			    __atomic_exchange_n(&r->full, 0, __ATOMIC_ACQ_REL) == PTT_RING_WAITING)
				syscall(SYS_futex, &r->full, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
		}
	}
}

/* Write the head record of cursor i (a ring's, after the hook has seen it, or a note). */
static int put(struct drain *d, uint32_t i, const struct cursor *c)
{
	/* the hook sees the ring's records, and of the notes the losses (the keeper forgets what they cover) */
	if (d->before && (i != d->notes_at || ptt_rec_id(c->rec[0]) == PTT_EV_REC_LOST)) {
		int rc = d->before(d->before_ctx, c->rec, d->w);
		if (rc)
			return rc;
	}
	if (__builtin_expect(ptt_rec_id(c->rec[0]) == PTT_EV_LIMIT, 0)) /* for the closing summary */
		ptt_limits_add_record(&d->st.limits, c->rec, c->n);
	return ptt_writer_record(d->w, c->rec, c->n);
}

/*
 * The merge: a heap of the cursors by head record (time, then tid, then
 * ring).  The top ring's records are written as a run for as long as they
 * come before the runner-up's head; the heap moves only when the lead
 * changes hands.  A run goes to the writer whole (ptt_writer_run: one call,
 * the bound a time, the block's state kept in registers), up to a record the
 * hook must see or that is not sound; those go one at a time.  A ring whose writer was busy when the pass
 * began bounds the merge by its last record, once it is used up (until
 * then its head is below every record still to write); an idle ring by
 * that record or now minus the slack, whichever is later; a closed ring,
 * or any ring in a final pass, not at all.
 */
/*
 * A pass's start: each active ring's cursor at its first record not yet
 * written, up to what was committed (reserved in a final pass), the notes
 * last; those with a record go in the heap.  Returns the heap's size; *wm
 * is what the rings with nothing to write bound the merge by.
 */
/* A pass's rings: threads may announce and claim more at any time; no ring past the highest claimed
 * has a record (a program of a few threads walks a few descriptors, not a segment's: a pass costs less). */
static void pass_rings(struct drain *d)
{
	uint32_t used = __atomic_load_n(&d->shm->rings_used, __ATOMIC_ACQUIRE);
	d->nrings = __atomic_load_n(&d->shm->nrings, __ATOMIC_ACQUIRE);
	if (used < d->nrings)
		d->nrings = used;
	d->nbusy = 0;
}

/* Ring i's cursor at its first record not yet written, up to what was committed (reserved in a
 * final pass), and what it bounds the pass by: 1, or 0 for a ring no thread writes. */
static int ring_start(struct drain *d, uint32_t i, int final, uint64_t *committed)
{
	struct ptt_ring *r = &d->shm->rings[i];
	struct cursor *c = &d->cur[i];
	uint32_t state = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
	c->has = c->wrote = 0;
	if (state < PTT_RING_ACTIVE)
		return 0;
	*committed = __atomic_load_n(&r->committed, __ATOMIC_ACQUIRE);
	uint64_t reserved = __atomic_load_n(&r->reserved, __ATOMIC_ACQUIRE);
	c->data = ptt_ring_data(d->shm, i);
	c->pos = c->done = r->consumed;
	c->limit = c->data ? final ? reserved : *committed : c->pos;
	c->prev_ts = d->last_ts[i];
	c->tid = r->tid;
	c->bounds = final || state == PTT_RING_CLOSED ? BOUND_NONE : reserved != *committed ? BOUND_LAST : BOUND_IDLE;
	return 1;
}

static uint32_t pass_cursors(struct drain *d, int final, uint64_t floor, uint64_t *wm)
{
	uint32_t nheap = 0;
	pass_rings(d);
	for (uint32_t i = 0; i < d->nrings; i++) {
		struct cursor *c = &d->cur[i];
		uint64_t committed;
		if (!ring_start(d, i, final, &committed))
			continue;
		if (load(d, i, c, final)) {
			d->heap[nheap++] = i;
			d->busy[d->nbusy++] = i;
		} else {
			used_up(c, floor, wm);
		}
	}
	/* the recorder's notes, as one more cursor */
	struct cursor *nc = &d->cur[d->notes_at];
	nc->pos = 0;
	nc->limit = d->nnotes;
	nc->tid = d->tid;
	nc->bounds = BOUND_NONE;
	if (load(d, d->notes_at, nc, final))
		d->heap[nheap++] = d->notes_at;
	for (uint32_t k = nheap; k-- > 0;)
		sift_down(d, nheap, k);
	return nheap;
}

/* After a pass: free the rings of threads that ended once everything in them is written, and
 * give back the memory of rings left free long enough (IDLE_RING_NS). */
static void pass_free_rings(struct drain *d, int final)
{
	struct ptt_shm *s = d->shm;
	uint64_t now_ns = 0;
	for (uint32_t i = 0; i < d->nrings; i++) {
		struct cursor *c = &d->cur[i];
		struct ptt_ring *r = &s->rings[i];
		uint32_t state = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
		if (state == PTT_RING_CLOSED && !c->has && !d->hold_reports &&
		    __atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE) == __atomic_load_n(&r->reserved, __ATOMIC_ACQUIRE) &&
		    (!(s->flags & PTT_SHM_CODED) ||
		     (uint32_t)__atomic_load_n(&r->coded_pos, __ATOMIC_ACQUIRE) == (uint32_t)c->cbytes)) {
			report_ring(d, r, 0); /* counts since this pass began: the ring's owner is gone now */
			if (r->lost != r->lost_reported || r->waits != r->waits_reported)
				continue; /* the report did not fit: free the ring on a later pass */
			d->last_ts[i] = 0;
			c->lost_last = 0;
			d->freed_at[i] = now_ns ? now_ns : (now_ns = coarse_ns());
			__atomic_store_n(&r->state, PTT_RING_FREE, __ATOMIC_RELEASE);
		} else if (state == PTT_RING_FREE && d->freed_at[i] && !final) {
			if (!now_ns)
				now_ns = coarse_ns();
			if (now_ns - d->freed_at[i] >= IDLE_RING_NS)
				forget_ring(d, i);
		}
	}
}

/* After a pass: drop the notes written, keep the others for the next (a final pass writes them all). */
static int pass_notes_done(struct drain *d, int final)
{
	struct cursor *nc = &d->cur[d->notes_at];
	uint32_t written_notes = (uint32_t)nc->pos;
	if (final) /* notes queued during the merge (torn records): later than every record written */
		for (; written_notes < d->nnotes; written_notes++) {
			int rc = ptt_writer_record(d->w, d->notes[written_notes].words, d->notes[written_notes].nwords);
			if (rc)
				return rc;
		}
	if (written_notes) {
		memmove(d->notes, d->notes + written_notes, (d->nnotes - written_notes) * sizeof d->notes[0]);
		d->nnotes -= written_notes;
	}
	nc->has = 0;
	return 0;
}

/* Within a pass, every RELEASE_EVERY records: the space read goes back to the rings, and the cut is offered. */
static int pass_release(struct drain *d, uint64_t *e0, uint64_t *next_release)
{
	release_space(d);
	*next_release += RELEASE_EVERY;
	if (!d->cut)
		return 0;
	uint64_t e = ptt_writer_events(d->w);
	d->st.events += e - *e0; /* drain_stats counts what is written so far */
	*e0 = e;
	return d->cut(d->cut_ctx);
}

/* A run of ring i's records from its head on, up to the ring's end, none after max_ticks. */
static inline struct ptt_run ring_run(const struct drain *d, const struct cursor *c, uint64_t max_ticks, uint64_t max_records)
{
	uint32_t off = (uint32_t)c->pos & (d->ring_words - 1);
	uint64_t span = c->limit - c->pos;
	struct ptt_run run = { c->rec, span < d->ring_words - off ? span : d->ring_words - off, max_ticks,
			       d->one_by_one, PTT_EV_BUILTIN_COUNT, (uint32_t)max_records, 0, 0, 0, 0, 0 };
	return run;
}

/* After a run of ring i: its head is past the run's records. */
static inline void ran(struct drain *d, uint32_t i, struct cursor *c, const struct ptt_run *run)
{
	c->pos += run->used;
	c->prev_ts = d->last_ts[i] = run->last_ticks;
	c->done = c->pos;
	c->wrote = 1;
}

/*
 * The top ring i (cursor c) and the runner-up up (heap[upk]) merged by the
 * writer (ptt_writer_merge) while both lead the others: up to the third
 * ring's head (one tick before: its ties are left to the heap) and wm, at
 * most max records.  How many it wrote (their heads not loaded), or an error.
 */
static long merge_two(struct drain *d, uint32_t i, struct cursor *c, uint32_t up, uint32_t upk, uint32_t nheap,
		      uint64_t wm, uint64_t max, uint64_t *bytes)
{
	struct cursor *u = &d->cur[up];
	uint32_t ci = ptt_rec_id(c->rec[0]), ui = ptt_rec_id(u->rec[0]);
	if (ci >= PTT_EV_BUILTIN_COUNT || d->one_by_one[ci] || ui >= PTT_EV_BUILTIN_COUNT || d->one_by_one[ui])
		return 0;
	/* the third: the top's other child, or one of the runner-up's */
	uint32_t third = 3 - upk < nheap ? d->heap[3 - upk] : UINT32_MAX;
	for (uint32_t k = 2 * upk + 1; k <= 2 * upk + 2 && k < nheap; k++)
		if (third == UINT32_MAX || before(d, d->heap[k], third))
			third = d->heap[k];
	uint64_t top = wm;
	if (third != UINT32_MAX && d->cur[third].ts <= top) {
		if (d->cur[third].ts == 0)
			return 0;
		top = d->cur[third].ts - 1;
	}
	if (c->ts > top || u->ts > top)
		return 0;
	struct ptt_run a = ring_run(d, c, top, max), b = ring_run(d, u, top, 0);
	int rc = ptt_writer_merge(d->w, &a, &b, tie_first(d, i, up));
	if (rc)
		return rc;
	if (!a.records && !b.records)
		return 0;
	if (a.records)
		ran(d, i, c, &a);
	if (b.records)
		ran(d, up, u, &b);
	d->written_ts = !b.records || (a.records && a.last_ticks > b.last_ticks) ? a.last_ticks : b.last_ticks;
	*bytes += (a.used + b.used) * 4;
	return (long)(a.records + b.records);
}

static long pass_streams(struct drain *d, int final);

/* A pass's end, merged or not: counted, told to the writers (heartbeat), and noted (rec_drain). */
static long pass_done(struct drain *d, int final, uint64_t ring_records, uint64_t bytes, uint64_t top)
{
	d->st.passes++;
	d->st.pace_bytes += top;
	__atomic_store_n(&d->shm->heartbeat, d->shm->heartbeat + 1, __ATOMIC_RELEASE);
	if (ring_records > 0 && !final) {
		uint32_t a[4];
		ptt_put64(a, ring_records);
		ptt_put64(a + 2, bytes);
		drain_note(d, PTT_EV_REC_DRAIN, a, 4);
	}
	return (long)ring_records; /* the program's records: what the pacing of passes is about */
}

static long pass_coded(struct drain *d, int final);

long drain_pass(struct drain *d, int final)
{
	if (d->streams)
		return d->shm->flags & PTT_SHM_CODED ? pass_coded(d, final) : pass_streams(d, final);
	uint64_t now = drain_now(d);
	/* never later than now minus the slack, as a streams pass's mark: a thread whose ring was not
	 * active yet when ring_start looked writes records later than that, and perhaps earlier than
	 * one a ring further on committed before the pass read it (threads churning, the recorder
	 * preempted between the two) */
	uint64_t floor = now - d->slack_ticks, wm = final ? UINT64_MAX : floor;
	uint64_t e0 = ptt_writer_events(d->w);
	if (!d->hold_reports)
		report_counters(d);
	uint32_t nheap = pass_cursors(d, final, floor, &wm);
	uint64_t bytes = 0, ring_records = 0, next_release = RELEASE_EVERY;
	int rc;
	while (nheap) {
		uint32_t i = d->heap[0], up = UINT32_MAX, upk = 0;
		struct cursor *c = &d->cur[i];
		/* a ring's records are written in runs (not in a final pass, whose records are checked
		 * one at a time), up to the runner-up's head, ties as before() breaks them, and wm */
		int runs = !final && i != d->notes_at;
		uint64_t run_max = wm, bound = UINT64_MAX;
		if (nheap > 1) {
			upk = nheap > 2 && before(d, d->heap[2], d->heap[1]) ? 2 : 1;
			up = d->heap[upk];
			const struct cursor *u = &d->cur[up];
			bound = u->ts - !tie_first(d, i, up);
			if (bound > u->ts)
				runs = 0; /* the runner-up at time 0 goes first: no run */
			else if (bound < run_max)
				run_max = bound;
		}
		/* two rings whose records alternate in time (two threads busy at once): merged by the
		 * writer, up to the third ring's head and wm */
		if (runs && up != UINT32_MAX && up != d->notes_at) {
			long k = merge_two(d, i, c, up, upk, nheap, wm, next_release - ring_records, &bytes);
			if (k < 0)
				return k;
			if (k > 0) {
				struct cursor *u = &d->cur[up];
				ring_records += (uint64_t)k;
				if (ring_records == next_release && (rc = pass_release(d, &e0, &next_release)) != 0)
					return rc;
				/* their next heads, both later than before: each goes down from its place, the
				 * runner-up's first (below the top); a ring used up leaves the heap */
				if (!load(d, up, u, final)) {
					used_up(u, floor, &wm);
					d->heap[upk] = d->heap[--nheap];
				}
				if (upk < nheap)
					sift_down(d, nheap, upk);
				if (!load(d, i, c, final)) {
					used_up(c, floor, &wm);
					d->heap[0] = d->heap[--nheap];
				}
				sift_down(d, nheap, 0);
				continue;
			}
		}
		int more;
		do {
			if (c->ts > wm)
				goto merged;
			uint32_t id = ptt_rec_id(c->rec[0]);
			if (runs && id < PTT_EV_BUILTIN_COUNT && !d->one_by_one[id]) {
				struct ptt_run run = ring_run(d, c, run_max, next_release - ring_records);
				if ((rc = ptt_writer_run(d->w, &run)) != 0)
					return rc;
				if (run.records) {
					ran(d, i, c, &run);
					d->written_ts = run.last_ticks;
					ring_records += run.records;
					bytes += run.used * 4;
					if (ring_records == next_release && (rc = pass_release(d, &e0, &next_release)) != 0)
						return rc;
					if (run.past) { /* the head, as load() would have it: after the runner-up's, or wm */
						c->rec += run.used;
						c->n = ptt_rec_len(c->rec[0]);
						c->ts = run.next_ticks;
						if (c->ts > bound) {
							more = 1;
							break;
						}
						goto merged;
					}
					more = load(d, i, c, final);
					continue;
				}
			}
			if ((rc = put(d, i, c)) != 0)
				return rc;
			c->pos += i == d->notes_at ? 1 : c->n;
			c->prev_ts = d->written_ts = c->ts;
			if (i != d->notes_at) {
				c->done = c->pos;
				c->wrote = 1;
				d->last_ts[i] = c->ts;
				ring_records++;
				bytes += c->n * 4u;
				if (ring_records == next_release && (rc = pass_release(d, &e0, &next_release)) != 0)
					return rc;
			}
			more = load(d, i, c, final);
		} while (more && (up == UINT32_MAX || before(d, i, up)));
		if (!more) {
			used_up(c, floor, &wm);
			d->heap[0] = d->heap[--nheap];
			sift_down(d, nheap, 0);
		} else {
			/* the runner-up leads now (the loop's last compare said so): it takes the top, which
			 * it comes before as it came before its sibling, and i goes down from its place */
			d->heap[0] = up;
			d->heap[upk] = i;
			sift_down(d, nheap, upk);
		}
	}
merged:;
	/* what this pass covered: no record still to come is older than wm (the
	 * pacing's clock, on the program's timeline rather than the recorder's) */
	uint64_t upto = ptt_clock_ns(&d->clk, wm < now ? wm : now);
	if (upto > d->st.upto_ns)
		d->st.upto_ns = upto;
	/* give the space back, free finished rings, keep unwritten notes */
	release_space(d);
	pass_free_rings(d, final);
	if ((rc = pass_notes_done(d, final)) != 0)
		return rc;
	d->st.events += ptt_writer_events(d->w) - e0; /* the hook's own records (object names) count too */
	return pass_done(d, final, ring_records, bytes, bytes); /* merged: no ring's own share */
}

/* ---- streams: the rings' spans written as they lie (format version 3) ---- */

#define SPAN_MAX_WORDS (64u * 1024u / 4u) /* a span goes to the writer in pieces of a block at most */

struct span {
	const uint32_t *at;
	uint32_t words, count;
	uint64_t first, last;
};

static int span_put(struct drain *d, uint32_t stream, struct span *sp)
{
	int rc = sp->count ? ptt_writer_span(d->w, stream, sp->at, sp->words, sp->count, sp->first, sp->last, 0) : 0;
	sp->words = sp->count = 0;
	return rc;
}

/*
 * Ring i's committed span [c->pos, limit) to the writer as it lies, as
 * stream i + 1, in pieces cut at its records.  Only each record's first
 * word is read (its length: where the next begins, where a pad wraps to the
 * ring's start) and the first and last ones' times; nothing is checked or
 * coded (the readers check every record's checksum).  A record whose first
 * word is not sound ends the span, as in the merge.  0 or an error.
 */
static int copy_span(struct drain *d, uint32_t i, struct cursor *c, uint64_t limit, uint64_t *count)
{
	uint32_t size = d->ring_words;
	struct span sp = { 0 };
	int rc;
	while (c->pos < limit) {
		uint32_t off = (uint32_t)c->pos & (size - 1);
		const uint32_t *p = c->data + off;
		uint32_t w0 = p[0];
		/* a pad, or a record that ended at the ring's end: the span goes on at the ring's start */
		if (off == 0 && sp.count && (rc = span_put(d, i + 1, &sp)) != 0)
			return rc;
		if (w0 == ptt_rec_word0(PTT_EV_PAD, 0)) {
			if ((rc = span_put(d, i + 1, &sp)) != 0)
				return rc;
			c->pos += size - off;
			continue;
		}
		uint32_t n = ptt_rec_len(w0);
		if (!ptt_rec_marked(w0) || n < PTT_REC_MIN_WORDS || off + n > size || c->pos + n > limit)
			break;
		if (sp.words + n > SPAN_MAX_WORDS && (rc = span_put(d, i + 1, &sp)) != 0)
			return rc;
		uint64_t ts = ptt_rec_ticks(p);
		if (!sp.count) {
			sp.at = p;
			sp.first = ts;
		}
		uint32_t id = ptt_rec_id(w0);
		if (__builtin_expect(id == PTT_EV_LIMIT, 0)) /* for the closing summary */
			ptt_limits_add_record(&d->st.limits, p, n);
		/* a type the program registered: the hook announces it (META) before its first record */
		if (__builtin_expect(id >= PTT_USER_ID_BASE, 0) && d->before && (rc = d->before(d->before_ctx, p, d->w)) != 0)
			return rc;
		sp.words += n;
		sp.count++;
		sp.last = c->prev_ts = ts;
		c->pos += n;
		(*count)++;
	}
	return span_put(d, i + 1, &sp);
}

/* After a ring's span in a streams pass: the cut is offered (-m: a part of about its size, whatever
 * a pass holds; the readers merge a part's streams with the next's), the events written counted first. */
static int streams_cut(struct drain *d, uint64_t *e0)
{
	if (!d->cut)
		return 0;
	uint64_t e = ptt_writer_events(d->w);
	d->st.events += e - *e0;
	*e0 = e;
	return d->cut(d->cut_ctx);
}

/* A streams pass's end (pass_streams, pass_coded): the recorder's notes as a stream of their own,
 * stamped no earlier than the last mark, in time order; the MARK; the pass counted. */
static long streams_pass_end(struct drain *d, int final, uint64_t mark, uint64_t now, uint64_t e0, uint64_t records,
			     uint64_t bytes, uint64_t top)
{
	int rc;
	/* the recorder's notes: stamped no earlier than the last mark, in time order */
	uint32_t notes = d->shm->max_rings + 1;
	for (uint32_t k = 0; k < d->nnotes; k++) {
		const struct note *nt = &d->notes[k];
		uint32_t id = ptt_rec_id(nt->words[0]);
		uint32_t lost = id == PTT_EV_REC_LOST && nt->nwords >= 9 ? nt->words[6] : 0;
		if (id == PTT_EV_LIMIT)
			ptt_limits_add_record(&d->st.limits, nt->words, nt->nwords);
		if ((rc = ptt_writer_span(d->w, notes, nt->words, nt->nwords, 1, nt->ts, nt->ts, lost)) != 0)
			return rc;
		if (nt->ts > d->written_ts)
			d->written_ts = nt->ts;
	}
	d->nnotes = 0;
	if (mark > d->mark || (final && mark == UINT64_MAX)) {
		if ((rc = ptt_writer_mark(d->w, mark)) != 0)
			return rc;
		if (mark != UINT64_MAX)
			d->mark = mark;
	}
	if (d->mark > d->written_ts) /* a note stamped in place comes no earlier than what is released */
		d->written_ts = d->mark;
	uint64_t upto = ptt_clock_ns(&d->clk, d->mark < now ? d->mark : now);
	if (upto > d->st.upto_ns)
		d->st.upto_ns = upto;
	d->st.events += ptt_writer_events(d->w) - e0;
	return pass_done(d, final, records, bytes, top);
}

/*
 * A pass in streams mode: every active ring's committed span copied as it
 * lies (copy_span), its space given back at once; the recorder's notes as a
 * stream of their own (after every ring's); then a MARK: no record still to
 * come is before it.  The mark is the least of the rings' bounds, as the
 * merge's watermark (a ring with a write open: its last record; an idle one:
 * that or now minus the slack; a closed one, or any in a final pass: none),
 * and never later than now minus the slack (a thread whose ring is not
 * announced yet).  An idle thread does not hold it back; a thread preempted
 * inside a write holds it at its last record until it commits.  In a final
 * pass a record torn by the program's death is salvaged or counted lost as
 * in the merge (load_slow).
 */
static long pass_streams(struct drain *d, int final)
{
	uint64_t now = drain_now(d), floor = now - d->slack_ticks;
	uint64_t mark = final ? UINT64_MAX : floor, records = 0, bytes = 0, top = 0;
	uint64_t e0 = ptt_writer_events(d->w);
	int rc;
	if (!d->hold_reports)
		report_counters(d);
	pass_rings(d);
	for (uint32_t i = 0; i < d->nrings; i++) {
		struct cursor *c = &d->cur[i];
		uint64_t committed;
		if (!ring_start(d, i, final, &committed))
			continue;
		if (c->data) {
			uint64_t k = 0;
			if ((rc = copy_span(d, i, c, committed, &k)) != 0)
				return rc;
			/* torn by the program's death (a final pass's limit is what was reserved): salvaged (a
			 * release cut short) or counted lost */
			while (final && c->pos == committed && committed < c->limit && load_slow(d, i, c, 1)) {
				if ((rc = ptt_writer_span(d->w, i + 1, c->rec, c->n, 1, c->ts, c->ts, 0)) != 0)
					return rc;
				c->pos += c->n;
				c->prev_ts = c->ts;
				committed = c->pos;
				k++;
			}
			c->has = 0;
			if (k) {
				records += k;
				bytes += (c->pos - c->done) * 4;
				if ((c->pos - c->done) * 4 > top)
					top = (c->pos - c->done) * 4;
				d->last_ts[i] = c->prev_ts;
				c->done = c->pos;
				c->wrote = 1;
				d->busy[d->nbusy++] = i;
				release_space(d); /* in the writer's buffer now: the owner may go on */
				d->nbusy = 0;
				if ((rc = streams_cut(d, &e0)) != 0)
					return rc;
			}
		}
		if (c->bounds && ring_bound(c, floor) < mark)
			mark = ring_bound(c, floor);
	}
	pass_free_rings(d, final);
	return streams_pass_end(d, final, mark, now, e0, records, bytes, top);
}

/* ---- coded streams: what the threads coded, copied as it lies (--streams=coded) ---- */

/* A ring's coded stream goes file to file (sendfile) for its first laps, then from the recorder's mapping
 * of it: measured here, the first touch of a page cost 1.3 ns a byte more than a copy from memory, while
 * sendfile costs about 0.15 more than a copy from pages already touched (formats/writer.c) */
#define COLD_LAPS 4

/*
 * Ring i's coded stream from the recorder's last copy to c->limit, to the
 * writer as one block, or two where it passes the ring's end (the first
 * ends with the writer's CPT_STREAM_PAD, or at a record's end): count
 * records, coded_wrap of them before the end.  No record is read.
 */
static int copy_coded(struct drain *d, uint32_t i, struct cursor *c, const struct ptt_ring *r, uint32_t count)
{
	uint32_t size = ptt_coded_bytes(d->ring_words);
	const unsigned char *area = ptt_coded_area((uint32_t *)(uintptr_t)c->data, d->ring_words);
	/* where the area lies in the rings' memfd: its bytes go file to file (ptt_writer_coded_at), so that
	 * the recorder does not fault in the pages of each ring's first lap (shm.h: ring i at ring_offset
	 * plus i rings, whatever its segment) */
	uint64_t area_off = d->shm->ring_offset + (uint64_t)i * d->ring_words * 4 + (uint64_t)(area - (const unsigned char *)c->data);
	int src_fd = c->cbytes - c->forgot_at < (uint64_t)COLD_LAPS * size ? ptt_shm_fd : -1;
	uint64_t first = d->last_ts[i], last = c->prev_ts;
	/* The span is cut where it passes the ring's end (coded_wrap: the records before it) and where
	 * the owner last started its history again (coded_reset, when inside the span): a block begins
	 * there, at which a reader whose history damage spoiled takes the stream up again. */
	uint64_t cut[2], wrap = c->cbytes + (size - ((uint32_t)c->cbytes & (size - 1)));
	uint64_t ts[2] = { last, last }; /* the times between the blocks, where known (a reset's) */
	uint32_t before[2], n = 0;
	if (wrap < c->limit) {
		cut[n] = wrap;
		before[n++] = __atomic_load_n(&r->coded_wrap, __ATOMIC_ACQUIRE) - c->ccount;
	}
	uint64_t rs = __atomic_load_n(&r->coded_reset, __ATOMIC_ACQUIRE);
	uint64_t rts = __atomic_load_n(&r->coded_reset_ts, __ATOMIC_RELAXED);
	uint64_t at = c->cbytes + (uint32_t)((uint32_t)rs - (uint32_t)c->cbytes);
	if (rs && at > c->cbytes && at < c->limit && at != wrap) {
		uint32_t k = n && cut[0] > at ? 0 : n; /* in order */
		if (k == 0 && n) {
			cut[1] = cut[0];
			before[1] = before[0];
		}
		cut[k] = at;
		before[k] = (uint32_t)(rs >> 32) - c->ccount;
		/* its first record's time; one of a later reset (the owner went on meanwhile) is past
		 * the span's last: kept within the span's bounds, the blocks' times stay bounds */
		ts[k] = rts < first ? first : rts > last ? last : rts;
		n++;
	}
	uint64_t from = c->cbytes, t0 = first;
	uint32_t done = 0;
	for (uint32_t k = 0; k <= n; k++) {
		uint64_t to = k < n ? cut[k] : c->limit, t1 = k < n ? ts[k] : last;
		uint32_t records = k < n ? before[k] - done : count - done;
		uint32_t in = (uint32_t)from & (size - 1);
		int rc = ptt_writer_coded_at(d->w, i + 1, area + in, (size_t)(to - from), src_fd, area_off + in, records,
					     t0, t1);
		if (rc)
			return rc;
		done += records;
		from = to;
		if (k < n)
			t0 = ts[k] < last ? ts[k] : t0; /* a reset's block begins at its first record; past the ring's end, not known */
	}
	return 0;
}

/*
 * A final pass: the records ring i's owner reserved and never committed,
 * [c->pos, c->done) of its scratch words, uncoded (the program died inside
 * them): each one whole and sound (a deferred batch) or a release cut short
 * (drain_salvage) written as a plain span of its stream, the first that is
 * neither counted lost, as load_slow does for the merge.
 */
static int coded_torn(struct drain *d, uint32_t i, struct cursor *c)
{
	const struct ptt_ring *r = &d->shm->rings[i];
	uint32_t size = PTT_CODED_RAW;
	uint32_t *data = (uint32_t *)(uintptr_t)c->data;
	uint64_t prev = c->prev_ts;
	while (c->pos < c->done) {
		uint32_t off = (uint32_t)c->pos & (size - 1), *p = data + off, w0 = p[0], n = ptt_rec_len(w0);
		if (w0 == ptt_rec_word0(PTT_EV_PAD, 0)) {
			c->pos += size - off;
			continue;
		}
		int sound = ptt_rec_marked(w0) && n >= PTT_REC_MIN_WORDS && off + n <= size && c->pos + n <= c->done;
		if (sound && !ptt_rec_sound(p, n)) {
			sound = drain_salvage(p, n, r->pid, r->tid, prev, drain_now(d));
			d->st.salvaged += (uint64_t)sound;
		}
		if (!sound) {
			d->st.lost++;
			uint32_t a[7] = { r->tid, 1, 0, 0, 0, 0, 0 };
			drain_note(d, PTT_EV_REC_LOST, a, 7);
			break;
		}
		prev = ptt_rec_ticks(p);
		int rc = ptt_writer_span(d->w, i + 1, p, n, 1, prev, prev, 0);
		if (rc)
			return rc;
		c->pos += n;
	}
	c->pos = c->done;
	return 0;
}

/*
 * A pass with coded streams (PTT_SHM_CODED): each ring's coded stream, as
 * far as its owner published it (coded_pos: records and bytes, one word),
 * copied to the file as it lies and given back at once; the recorder reads
 * the ring's words, its stream's bytes and its last record's time
 * (coded_last, stored before the position: no record still to come is
 * older), never a record.  The types the program registered are announced
 * before the blocks that may use them, the notes and the MARK as
 * pass_streams writes them.  A record torn by the program's death stays in
 * the owner's scratch words, uncoded: counted lost.
 */
static long pass_coded(struct drain *d, int final)
{
	uint64_t now = drain_now(d), floor = now - d->slack_ticks;
	uint64_t mark = final ? UINT64_MAX : floor, records = 0, bytes = 0, top = 0;
	uint64_t e0 = ptt_writer_events(d->w);
	uint32_t *newc = d->busy; /* the records each ring published, by ring */
	int rc;
	pass_rings(d);
	for (uint32_t i = 0; i < d->nrings; i++) {
		struct ptt_ring *r = &d->shm->rings[i];
		struct cursor *c = &d->cur[i];
		uint32_t state = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
		c->has = c->wrote = 0;
		c->limit = c->cbytes;
		newc[i] = 0;
		if (state < PTT_RING_ACTIVE || !(c->data = ptt_ring_data(d->shm, i))) {
			c->bounds = BOUND_NONE;
			continue;
		}
		uint64_t committed = __atomic_load_n(&r->committed, __ATOMIC_ACQUIRE);
		uint64_t reserved = __atomic_load_n(&r->reserved, __ATOMIC_ACQUIRE);
		uint64_t last = __atomic_load_n(&r->coded_last, __ATOMIC_ACQUIRE);
		uint64_t pos = __atomic_load_n(&r->coded_pos, __ATOMIC_ACQUIRE);
		c->limit = c->cbytes + (uint32_t)((uint32_t)pos - (uint32_t)c->cbytes);
		newc[i] = (uint32_t)(pos >> 32) - c->ccount;
		c->prev_ts = last > d->last_ts[i] ? last : d->last_ts[i];
		c->tid = r->tid;
		c->bounds = final || state == PTT_RING_CLOSED ? BOUND_NONE : reserved != committed ? BOUND_LAST : BOUND_IDLE;
		c->pos = committed;
		c->done = final ? reserved : committed; /* a final pass: what the program's death tore */
	}
	if (!d->hold_reports)
		report_counters(d);
	if (d->before) { /* the types registered so far, before any record of them is written */
		uint32_t any[PTT_REC_MIN_WORDS] = { ptt_rec_word0(0xffffu, PTT_REC_MIN_WORDS) };
		if ((rc = d->before(d->before_ctx, any, d->w)) != 0)
			return rc;
	}
	for (uint32_t i = 0; i < d->nrings; i++) {
		struct cursor *c = &d->cur[i];
		struct ptt_ring *r = &d->shm->rings[i];
		if (c->limit != c->cbytes) {
			if ((rc = copy_coded(d, i, c, r, newc[i])) != 0)
				return rc;
			records += newc[i];
			bytes += c->limit - c->cbytes;
			if (c->limit - c->cbytes > top)
				top = c->limit - c->cbytes;
			c->cbytes = c->limit;
			c->ccount += newc[i];
			d->last_ts[i] = c->prev_ts;
			__atomic_store_n(&r->coded_consumed, c->cbytes, __ATOMIC_RELEASE);
			if (__atomic_load_n(&r->full, __ATOMIC_RELAXED) &&
			    __atomic_exchange_n(&r->full, 0, __ATOMIC_ACQ_REL) == PTT_RING_WAITING)
				syscall(SYS_futex, &r->full, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
			if ((rc = streams_cut(d, &e0)) != 0)
				return rc;
		}
		if (c->done != c->pos && (rc = coded_torn(d, i, c)) != 0)
			return rc;
		if (c->bounds && ring_bound(c, floor) < mark)
			mark = ring_bound(c, floor);
	}
	/* free the closed rings whose streams are copied whole (pass_free_rings' look at the raw words
	 * holds: their owner gave its scratch back at each commit) */
	pass_free_rings(d, final);
	return streams_pass_end(d, final, mark, now, e0, records, bytes, top);
}
