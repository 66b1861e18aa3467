/*
 * flight.c - the flight recorder's side of the rings: keep the rings of
 * ended threads for a while, and write a snapshot of every ring.
 *
 * A ring in flight mode holds its owner's records from `consumed` (a record
 * boundary the owner moves forward itself before it overwrites anything) to
 * `committed`.  A snapshot copies that span, then reads `consumed` again:
 * what the owner may have overwritten during the copy lies before the new
 * value, which is also a record boundary, and the copy is read from there.
 * Each record's checksum is verified as well: a record that fails (torn by
 * a wrap we did not see, or by a death inside a write) ends that ring's
 * part of the snapshot and is counted.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drain.h"
#include "flight.h"
#include "../../formats/ptt_trace.h"

#define KEEP_FREE 16 /* rings the recorder keeps free for new threads */

struct flight {
	struct ptt_shm *shm;
	uint64_t *closed_at;  /* per ring: the trim call that first saw it closed (0: not closed) */
	uint64_t calls;
};

struct frec {
	uint64_t ts;
	uint32_t tid, ring, seq;
	const uint32_t *rec;
};

struct flight *flight_new(struct ptt_shm *shm)
{
	struct flight *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	f->shm = shm;
	f->closed_at = calloc(shm->max_rings, sizeof *f->closed_at);
	if (!f->closed_at) {
		free(f);
		return NULL;
	}
	return f;
}

void flight_free(struct flight *f)
{
	if (!f)
		return;
	free(f->closed_at);
	free(f);
}

void flight_trim(struct flight *f)
{
	struct ptt_shm *s = f->shm;
	uint32_t n = __atomic_load_n(&s->nrings, __ATOMIC_ACQUIRE), closed = 0, free_rings = 0;
	f->calls++;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t st = __atomic_load_n(&s->rings[i].state, __ATOMIC_ACQUIRE);
		if (st == PTT_RING_CLOSED) {
			if (!f->closed_at[i])
				f->closed_at[i] = f->calls;
			closed++;
		} else {
			f->closed_at[i] = 0;
			free_rings += st == PTT_RING_FREE;
		}
	}
	/* keep a few rings free for new threads (fewer under a low cap) */
	uint32_t want = s->max_rings / 4 < KEEP_FREE ? s->max_rings / 4 : KEEP_FREE;
	if (!want)
		want = 1;
	while (free_rings < want && closed) {
		uint32_t oldest = UINT32_MAX;
		for (uint32_t i = 0; i < n; i++)
			if (f->closed_at[i] && (oldest == UINT32_MAX || f->closed_at[i] < f->closed_at[oldest]))
				oldest = i;
		f->closed_at[oldest] = 0;
		__atomic_store_n(&s->rings[oldest].state, PTT_RING_FREE, __ATOMIC_RELEASE);
		closed--;
		free_rings++;
	}
}

/* The rings' clock now (as drain_now). */
static uint64_t now_ticks(const struct ptt_shm *s)
{
	if (s->use_tsc)
		return ptt_rdtsc();
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A snapshot's order: time, then tid, ring and place in the ring (a total order); whether x comes before y. */
static inline int earlier(const struct frec *x, const struct frec *y)
{
	if (x->ts != y->ts)
		return x->ts < y->ts;
	if (x->tid != y->tid)
		return x->tid < y->tid;
	return x->ring != y->ring ? x->ring < y->ring : x->seq < y->seq;
}

/* earlier's order for qsort */
static int by_time(const void *a, const void *b)
{
	const struct frec *x = a, *y = b;
	return earlier(x, y) ? -1 : earlier(y, x);
}

/*
 * recs[0, n) in by_time's order, the records of each ring a run of its own
 * (run k is recs[start[k], start[k + 1]), in the ring's order): each run is
 * in time order already (a thread stamps its records in the order it
 * reserves them), so the runs are merged, two by two, rather than the whole
 * sorted (qsort took a quarter of a snapshot's time: CPython's 5 threads,
 * 188 000 records); a run out of order is sorted first.  The same order as
 * qsort by by_time, which is a total order.  *recs may be replaced.
 */
static int time_order(struct frec **recs, size_t n, size_t *start, uint32_t nruns)
{
	struct frec *a = *recs, *b;
	for (uint32_t k = 0; k < nruns; k++)
		for (size_t i = start[k] + 1; i < start[k + 1]; i++)
			if (earlier(&a[i], &a[i - 1])) {
				qsort(a + start[k], start[k + 1] - start[k], sizeof *a, by_time);
				break;
			}
	if (nruns < 2)
		return 0;
	if (!(b = malloc(n * sizeof *b)))
		return PTT_E_NOMEM;
	while (nruns > 1) {
		uint32_t m = 0;
		for (uint32_t k = 0; k < nruns; k += 2, m++) {
			size_t i = start[k], mid = start[k + 1], end = k + 1 < nruns ? start[k + 2] : mid, j = mid, o = i;
			while (i < mid && j < end)
				b[o++] = earlier(&a[j], &a[i]) ? a[j++] : a[i++];
			memcpy(b + o, a + i, (mid - i) * sizeof *a);
			o += mid - i;
			memcpy(b + o, a + j, (end - j) * sizeof *a);
			start[m] = start[k];
		}
		start[m] = n;
		nruns = m;
		struct frec *t = a;
		a = b;
		b = t;
	}
	free(b);
	*recs = a;
	return 0;
}

/* A ring's copy: taken for every ring first, one right after another, and only then read. */
struct ring_copy {
	uint32_t *words;      /* positions [c0, end) of the ring */
	uint64_t c0, c1, end; /* c1: consumed again after the copy; the copy is sound from max(c0, c1) */
	uint64_t first, now, bound;
	uint32_t pid, tid;
	int busy;
};

/*
 * Where ring i's span is, now (no copy yet: the positions of every ring are
 * read in one sweep).  A record being written (reserved ahead of committed)
 * takes nanoseconds unless its writer was preempted in it: it is waited for,
 * until deadline (ticks), so that a preempted writer does not cut every other
 * thread's history at its last record.  No record stays open long: those
 * held across a call (a release's) are around calls that never block.
 */
static void ring_span(struct flight *f, uint32_t i, struct ring_copy *rc, int live, uint64_t cut, uint64_t deadline)
{
	struct ptt_shm *s = f->shm;
	struct ptt_ring *r = &s->rings[i];
	rc->pid = r->pid;
	rc->tid = r->tid;
	rc->first = __atomic_load_n(&r->first, __ATOMIC_ACQUIRE);
	int closed = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == PTT_RING_CLOSED;
	rc->busy = 1;
	for (unsigned tries = 0; rc->busy; tries++) {
		rc->now = now_ticks(s);
		rc->c0 = __atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE);
		rc->end = __atomic_load_n(&r->committed, __ATOMIC_ACQUIRE);
		uint64_t reserved = __atomic_load_n(&r->reserved, __ATOMIC_ACQUIRE);
		rc->busy = reserved != rc->end;
		if (!live) { /* the program is gone: what it wrote past its last commit may be whole, or salvageable */
			rc->end = reserved;
			break;
		}
		if (rc->busy && rc->now > deadline)
			break;
		if (rc->busy && tries >= 1000) {
			struct timespec ts = { 0, 50000 };
			nanosleep(&ts, NULL);
		}
	}
	/* no later record of this ring can be older than the cut (drain.c's rule: the sweep
	 * comes a slack after it); a writer still in a record bounds it by its last one */
	rc->bound = closed || rc->busy ? UINT64_MAX : cut;
}

/* Copy ring i's span as ring_span found it, then read `consumed` again. */
static int copy_span_of(struct flight *f, uint32_t i, struct ring_copy *rc)
{
	struct ptt_shm *s = f->shm;
	const uint32_t *data = ptt_ring_data(s, i);
	if (!data || rc->end <= rc->c0)
		return 0;
	rc->words = malloc((rc->end - rc->c0) * 4);
	if (!rc->words)
		return PTT_E_NOMEM;
	ptt_ring_copy(rc->words, data, s->ring_words, rc->c0, rc->end);
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* pairs with the owner's fence after it moves consumed */
	rc->c1 = __atomic_load_n(&s->rings[i].consumed, __ATOMIC_ACQUIRE);
	return 0;
}

/* Append ring i's valid records (from its copy) to *recs; *cut: its history does not reach its thread's start. */
static int read_copy(struct flight *f, uint32_t i, struct ring_copy *rc, struct frec **recs, size_t *nrecs, size_t *cap,
		     int live, int *cut, uint64_t *torn)
{
	uint32_t size = f->shm->ring_words;
	uint64_t pos = rc->c1 > rc->c0 ? rc->c1 : rc->c0, end = rc->end;
	size_t before = *nrecs;
	uint32_t seq = 0;
	*cut = 0;
	if (!rc->words)
		return 0;
	while (pos < end) {
		uint32_t off = (uint32_t)pos & (size - 1);
		uint32_t *p = rc->words + (pos - rc->c0);
		if (p[0] == ptt_rec_word0(PTT_EV_PAD, 0)) {
			pos += size - off;
			continue;
		}
		uint32_t n = ptt_ring_rec_len(p, pos, end, size, rc->pid, rc->tid);
		uint64_t prev = *nrecs > before ? (*recs)[*nrecs - 1].ts : 0;
		if (!n || (!ptt_rec_sound(p, n) && (live || !drain_salvage(p, n, rc->pid, rc->tid, prev, rc->now)))) {
			(*torn)++;
			break;
		}
		if (PTT_GROW(*recs, cap, *nrecs + 1) != 0)
			return PTT_E_NOMEM;
		(*recs)[(*nrecs)++] = (struct frec){ ptt_rec_ticks(p), rc->tid, i, seq++, p };
		pos += n;
	}
	*cut = *nrecs > before && (rc->c1 > rc->c0 ? rc->c1 : rc->c0) != rc->first;
	if (*nrecs > before && rc->busy)
		rc->bound = (*recs)[*nrecs - 1].ts;
	return 0;
}

/* The META lines: the common start, and where each thread's history begins. */
static int meta_lines(struct ptt_writer *w, const struct ptt_shm *s, const struct frec *recs, size_t nrecs,
		      const uint8_t *cut, uint64_t from, const struct ptt_clock *clk, long head)
{
	size_t cap = 4096 + (size_t)s->max_rings * 64, len = 0;
	char *m = malloc(cap);
	uint8_t *done = calloc(s->max_rings, 1);
	if (!m || !done) {
		free(m);
		free(done);
		return PTT_E_NOMEM;
	}
	len += (size_t)snprintf(m, cap, "flight_from %" PRIu64 "\nhead %ld\n", from ? ptt_clock_ns(clk, from) : 0, head);
	for (size_t k = 0; k < nrecs && len < cap - 128; k++) {
		const struct frec *r = &recs[k];
		if (done[r->ring])
			continue;
		done[r->ring] = 1;
		len += (size_t)snprintf(m + len, cap - len, "flight_thread %" PRIu32 " %" PRIu32 " %" PRIu64 " %s\n",
					r->rec[3], r->tid, ptt_clock_ns(clk, r->ts), cut[r->ring] ? "cut" : "whole");
	}
	int rc = ptt_writer_meta(w, m, len);
	free(m);
	free(done);
	return rc;
}

/*
 * One try at copying every ring: the records in time order, [0, *nrecs) to
 * write.  The cut is one instant for all; every ring's span is taken in one
 * sweep a slack after it, then the spans are copied, and read
 * (checksums, order) only then.  While the copy lasts the writers do not
 * overwrite (shm's snapshot flag), so a recorder preempted between two
 * copies still finds every span as the sweep saw it; a writer that began to
 * overwrite just before the flag is caught by `consumed` read again.
 */
static long collect(struct flight *f, uint32_t n, int live, uint64_t slack, uint32_t **copies, uint8_t *cut,
		    struct frec **recs, size_t *nrecs, uint64_t *from, uint64_t *torn)
{
	struct ptt_shm *s = f->shm;
	size_t cap = 0;
	uint64_t upto = UINT64_MAX;
	long rc = 0;
	struct ring_copy *rcs = calloc(n ? n : 1, sizeof *rcs);
	size_t *start = malloc((n + 1) * sizeof *start); /* where each ring's records begin: time_order's runs */
	uint32_t nruns = 0;
	if (!rcs || !start) {
		free(rcs);
		free(start);
		return PTT_E_NOMEM;
	}
	*from = 0;
	if (live) /* writers wait rather than overwrite until every ring is copied (trace_path.c) */
		__atomic_store_n(&s->snapshot, 1, __ATOMIC_SEQ_CST);
	/*
	 * The cut is now; the sweep comes a slack later, when every record
	 * stamped before the cut is visible (or its writer is still in it).
	 * Sweeping first and cutting a slack before the sweep, as the drain
	 * does, would leave out a thread so busy that its whole retained
	 * history is younger than the slack.
	 */
	/* a writer preempted in a record (a release's is open across its call) runs again within
	 * milliseconds even on a loaded machine, where 20 ms proved too short: 1 s at most */
	uint64_t cut_at = now_ticks(s), deadline = cut_at + slack * 5000;
	while (live && now_ticks(s) - cut_at < slack) {
		struct timespec ts = { 0, 50000 };
		nanosleep(&ts, NULL);
	}
	for (uint32_t i = 0; i < n; i++) {
		rcs[i].bound = UINT64_MAX;
		if (__atomic_load_n(&s->rings[i].state, __ATOMIC_ACQUIRE) >= PTT_RING_ACTIVE && ptt_ring_data(s, i))
			ring_span(f, i, &rcs[i], live, cut_at, deadline);
	}
	for (uint32_t i = 0; !rc && i < n; i++) {
		rc = copy_span_of(f, i, &rcs[i]);
		copies[i] = rcs[i].words;
	}
	if (live)
		__atomic_store_n(&s->snapshot, 0, __ATOMIC_SEQ_CST);
	for (uint32_t i = 0; !rc && i < n; i++) {
		size_t first = *nrecs;
		int c = 0;
		rc = read_copy(f, i, &rcs[i], recs, nrecs, &cap, live, &c, torn);
		if (*nrecs > first)
			start[nruns++] = first;
		cut[i] = (uint8_t)c;
		if (live && rcs[i].bound < upto)
			upto = rcs[i].bound;
		if (c && (*recs)[first].ts > *from)
			*from = (*recs)[first].ts;
	}
	free(rcs);
	start[nruns] = *nrecs;
	if (!rc)
		rc = time_order(recs, *nrecs, start, nruns);
	free(start);
	if (rc)
		return rc;
	while (*nrecs > 0 && (*recs)[*nrecs - 1].ts > upto)
		(*nrecs)--;
	return 0;
}

/* The threads of a snapshot, and where each one's history in it begins: who tells the head's names. */
struct tellers {
	struct { uint32_t pid, tid; uint64_t first; size_t at; uint8_t cut; } *v; /* at: recs[at] is its first */
	size_t n;
};

static int tellers_of(struct tellers *t, const struct frec *recs, size_t nrecs, const uint8_t *cut)
{
	t->n = 0;
	t->v = NULL;
	for (size_t k = 0; k < nrecs; k++) {
		size_t i = 0;
		while (i < t->n && (t->v[i].tid != recs[k].tid || t->v[i].pid != recs[k].rec[3]))
			i++;
		if (i < t->n)
			continue;
		if ((t->n & (t->n + 1)) == 0 || !t->v) { /* at 0, 1, 3, 7, ...: room for twice as many */
			void *nv = realloc(t->v, (t->n + 1) * 2 * sizeof *t->v);
			if (!nv)
				return PTT_E_NOMEM;
			t->v = nv;
		}
		t->v[t->n].pid = recs[k].rec[3];
		t->v[t->n].tid = recs[k].tid;
		t->v[t->n].at = k;
		t->v[t->n].cut = cut[recs[k].ring];
		t->v[t->n++].first = recs[k].ts; /* recs are in time order: the thread's first */
	}
	return 0;
}

static long teller_at(const struct tellers *t, uint32_t pid, uint32_t tid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].pid == pid && t->v[i].tid == tid)
			return (long)i;
	return -1;
}

/* ptt_inforce_write's teller: nobody for a record still in its thread's history here, else its
 * thread (or the one it is about) when in the snapshot, else the process's main or any thread. */
static uint32_t snapshot_teller(void *ctx, const uint32_t *rec, uint32_t pid, uint32_t by)
{
	const struct tellers *t = ctx;
	long own = teller_at(t, pid, rec[4]);
	if (own >= 0 && t->v[own].first <= ptt_rec_ticks(rec))
		return 0; /* the snapshot has it in its place */
	if (teller_at(t, pid, by) >= 0)
		return by;
	if (teller_at(t, pid, pid) >= 0)
		return pid;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].pid == pid)
			return t->v[i].tid;
	return 0;
}

/* The holds in force where the cut threads begin (formats/inforce.h), each to be written just before recs[at]. */
struct told {
	size_t at, order;
	uint32_t n;
	uint32_t words[16]; /* an acquisition's record: 11 words */
};
struct telling {
	const struct tellers *tel;
	struct told *v;
	size_t n, cap;
};

static int tell_held(void *ctx, const uint32_t *rec, uint32_t n)
{
	struct telling *t = ctx;
	long i = teller_at(t->tel, rec[3], rec[4]);
	if (i < 0 || n > sizeof t->v[0].words / 4)
		return 0;
	if (PTT_GROW(t->v, &t->cap, t->n + 1) != 0)
		return PTT_E_NOMEM;
	struct told *d = &t->v[t->n];
	d->at = t->tel->v[i].at;
	d->order = t->n++;
	d->n = n;
	memcpy(d->words, rec, (size_t)n * 4);
	return 0;
}

static int by_place(const void *a, const void *b)
{
	const struct told *x = a, *y = b;
	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * What the retained records show held where each cut thread's history
 * begins: its releases of what it had not taken since (ptt_inforce_infer_thread).
 * Nothing on a shortage of memory: the snapshot then reads as before, its
 * locks released before any acquisition.
 */
static void infer_held(struct telling *out, const struct tellers *tel, const struct frec *recs, size_t nrecs)
{
	struct ptt_inforce *k = ptt_inforce_new();
	int any = 0, rc = k ? 0 : PTT_E_NOMEM;
	for (size_t i = 0; !rc && i < tel->n; i++)
		if (tel->v[i].cut && (rc = ptt_inforce_infer_thread(k, tel->v[i].pid, tel->v[i].tid, tel->v[i].first)) == 0)
			any = 1;
	for (size_t i = 0; !rc && any && i < nrecs; i++)
		ptt_inforce_see(k, recs[i].rec, 0);
	if (!rc && any && ptt_inforce_infer_write(k, tell_held, out) < 0)
		out->n = 0;
	ptt_inforce_free(k);
	if (out->n)
		qsort(out->v, out->n, sizeof out->v[0], by_place);
}

/*
 * Every thread's whole retained history is written, merged by time: a
 * thread quiet for long (one hung on a lock: what a flight recording is
 * for) keeps its old events although the busy threads' rings have turned
 * over many times since.  Threads whose oldest records were overwritten
 * begin at different times, each said in its flight_thread line; before
 * the latest of those beginnings (flight_from) some thread's events are
 * missing (an unlock, a post), which the readers allow for in a flight
 * recording; what a cut thread evidently held where its history begins is
 * told just before its first record, stamped with it (infer_held): not at
 * the snapshot's first record, where another thread's retained records may
 * show the lock taken and released before this thread's history begins.
 * A snapshot of a live program ends, for every thread, at the
 * cut collect's sweep took (the lowest of the rings' bounds).  Should a try
 * still come out empty, it copies again (a few times at most).
 */
long flight_write(struct flight *f, struct ptt_writer *w, const struct ptt_clock *clk, int live,
		  int (*before)(void *, const uint32_t *, struct ptt_writer *), void *ctx, struct ptt_inforce *names,
		  uint64_t *torn)
{
	struct ptt_shm *s = f->shm;
	uint32_t n = __atomic_load_n(&s->nrings, __ATOMIC_ACQUIRE);
	uint32_t **copies = calloc(n ? n : 1, sizeof *copies);
	uint8_t *cut = calloc(n ? n : 1, 1);
	struct frec *recs = NULL;
	size_t nrecs = 0;
	uint64_t from = 0, slack = clk->hz / 5000; /* 200 us, as the drain's */
	long rc = copies && cut ? 0 : PTT_E_NOMEM;
	uint64_t t = 0; /* the records found torn by the last try */
	for (int tries = 0; !rc && tries < 10; tries++) {
		t = 0;
		rc = collect(f, n, live, slack, copies, cut, &recs, &nrecs, &from, &t);
		if (rc || nrecs > 0 || !live || tries == 9) /* the last try's copies are written, even empty */
			break;
		for (uint32_t i = 0; i < n; i++) {
			free(copies[i]);
			copies[i] = NULL;
		}
		nrecs = 0;
	}
	*torn += t;
	struct tellers tel = { NULL, 0 };
	struct telling held = { &tel, NULL, 0, 0 };
	long head = 0;
	if (!rc && nrecs)
		rc = tellers_of(&tel, recs, nrecs, cut);
	if (!rc && nrecs)
		infer_held(&held, &tel, recs, nrecs);
	if (!rc && names && nrecs)
		head = ptt_inforce_write(names, NULL, 0, snapshot_teller, &tel);
	if (!rc)
		rc = meta_lines(w, s, recs, nrecs, cut, from, clk, head);
	if (!rc && head > 0) { /* the names in force, first, stamped at the snapshot's first record */
		long hn = ptt_inforce_write(names, w, recs[0].ts, snapshot_teller, &tel);
		rc = hn < 0 ? (int)hn : 0;
	}
	free(tel.v);
	for (size_t k = 0, h = 0; !rc && k < nrecs; k++) {
		for (; !rc && h < held.n && held.v[h].at == k; h++) /* a cut thread's holds, before its first record */
			rc = ptt_writer_record(w, held.v[h].words, held.v[h].n);
		if (rc)
			break;
		if (before)
			rc = before(ctx, recs[k].rec, w);
		if (!rc)
			rc = ptt_writer_record(w, recs[k].rec, ptt_rec_len(recs[k].rec[0]));
	}
	for (uint32_t i = 0; copies && i < n; i++)
		free(copies[i]);
	free(copies);
	free(cut);
	free(recs);
	free(held.v);
	return rc ? rc : (long)(nrecs + held.n);
}
