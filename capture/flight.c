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

#include "flight.h"

#define KEEP_CLOSED 64 /* rings of ended threads kept for their history */

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
	/* at the cap with no free ring a new thread is waiting: one more goes */
	uint32_t keep = n >= s->max_rings && !free_rings && closed ? closed - 1 : KEEP_CLOSED;
	while (closed > keep) {
		uint32_t oldest = UINT32_MAX;
		for (uint32_t i = 0; i < n; i++)
			if (f->closed_at[i] && (oldest == UINT32_MAX || f->closed_at[i] < f->closed_at[oldest]))
				oldest = i;
		f->closed_at[oldest] = 0;
		__atomic_store_n(&s->rings[oldest].state, PTT_RING_FREE, __ATOMIC_RELEASE);
		closed--;
	}
}

/* Copy ring positions [from, to) of ring data into out (wrapping). */
static void copy_span(uint32_t *out, const uint32_t *data, uint32_t size, uint64_t from, uint64_t to)
{
	while (from < to) {
		uint32_t off = (uint32_t)from & (size - 1);
		uint64_t k = size - off < to - from ? size - off : to - from;
		memcpy(out, data + off, k * 4);
		out += k;
		from += k;
	}
}

static int by_time(const void *a, const void *b)
{
	const struct frec *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ring != y->ring)
		return x->ring < y->ring ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Append ring i's valid records (copied to *copy) to *recs; the META line saying where its history begins to meta. */
static int snap_ring(struct flight *f, uint32_t i, uint32_t **copy, struct frec **recs, size_t *nrecs, size_t *cap,
		     int *cut, uint64_t *torn)
{
	struct ptt_shm *s = f->shm;
	struct ptt_ring *r = &s->rings[i];
	const uint32_t *data = ptt_ring_data(s, i);
	uint32_t size = s->ring_words;
	if (!data)
		return 0;
	uint32_t pid = r->pid, tid = r->tid;
	uint64_t first = __atomic_load_n(&r->first, __ATOMIC_ACQUIRE);
	uint64_t c0 = __atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE);
	uint64_t end = __atomic_load_n(&r->committed, __ATOMIC_ACQUIRE);
	if (end <= c0)
		return 0;
	*copy = malloc((end - c0) * 4);
	if (!*copy)
		return PTT_E_NOMEM;
	copy_span(*copy, data, size, c0, end);
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* pairs with the owner's fence after it moves consumed */
	uint64_t c1 = __atomic_load_n(&r->consumed, __ATOMIC_ACQUIRE);
	uint64_t pos = c1 > c0 ? c1 : c0;
	size_t before = *nrecs;
	uint32_t seq = 0;
	(void)f;
	while (pos < end) {
		uint32_t off = (uint32_t)pos & (size - 1);
		const uint32_t *p = *copy + (pos - c0);
		if (p[0] == ptt_rec_word0(PTT_EV_PAD, 0)) {
			pos += size - off;
			continue;
		}
		uint32_t n = ptt_rec_len(p[0]);
		if (!ptt_rec_marked(p[0]) || n < PTT_REC_MIN_WORDS || off + n > size || pos + n > end ||
		    ptt_rec_checksum(p, n - 1) != p[n - 1] || p[3] != pid || p[4] != tid) {
			(*torn)++;
			break;
		}
		if (*nrecs == *cap) {
			size_t nc = *cap ? *cap * 2 : 4096;
			struct frec *g = realloc(*recs, nc * sizeof *g);
			if (!g)
				return PTT_E_NOMEM;
			*recs = g;
			*cap = nc;
		}
		(*recs)[(*nrecs)++] = (struct frec){ (uint64_t)p[2] << 32 | p[1], tid, i, seq++, p };
		pos += n;
	}
	*cut = *nrecs > before && (c1 > c0 ? c1 : c0) != first;
	return 0;
}

/* The META lines: the common start, and where each thread's history begins. */
static int meta_lines(struct ptt_writer *w, const struct ptt_shm *s, const struct frec *recs, size_t nrecs,
		      const uint8_t *cut, uint64_t from, const struct ptt_clock *clk)
{
	size_t cap = 4096 + (size_t)s->max_rings * 64, len = 0;
	char *m = malloc(cap);
	uint8_t *done = calloc(s->max_rings, 1);
	if (!m || !done) {
		free(m);
		free(done);
		return PTT_E_NOMEM;
	}
	len += (size_t)snprintf(m, cap, "flight_from %" PRIu64 "\n", from ? ptt_clock_ns(clk, from) : 0);
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
 * Threads whose oldest records were overwritten begin at different times;
 * before the latest of those beginnings some thread's events are missing
 * (an unlock, a post), and a lock's story would not add up.  The snapshot
 * starts there for every thread: from then on it holds every event, like a
 * trace file that starts mid-run.
 */
long flight_write(struct flight *f, struct ptt_writer *w, const struct ptt_clock *clk,
		  int (*before)(void *, const uint32_t *, struct ptt_writer *), void *ctx, uint64_t *torn)
{
	struct ptt_shm *s = f->shm;
	uint32_t n = __atomic_load_n(&s->nrings, __ATOMIC_ACQUIRE);
	uint32_t **copies = calloc(n ? n : 1, sizeof *copies);
	uint8_t *cut = calloc(n ? n : 1, 1);
	struct frec *recs = NULL;
	size_t nrecs = 0, cap = 0;
	long rc = copies && cut ? 0 : PTT_E_NOMEM;
	uint64_t from = 0;
	for (uint32_t i = 0; !rc && i < n; i++) {
		if (__atomic_load_n(&s->rings[i].state, __ATOMIC_ACQUIRE) < PTT_RING_ACTIVE)
			continue;
		size_t first = nrecs;
		int c = 0;
		rc = snap_ring(f, i, &copies[i], &recs, &nrecs, &cap, &c, torn);
		cut[i] = (uint8_t)c;
		if (c && recs[first].ts > from)
			from = recs[first].ts;
	}
	if (!rc)
		qsort(recs, nrecs, sizeof *recs, by_time);
	size_t k0 = 0;
	while (k0 < nrecs && recs[k0].ts < from)
		cut[recs[k0++].ring] = 1;
	if (!rc)
		rc = meta_lines(w, s, recs + k0, nrecs - k0, cut, from, clk);
	for (size_t k = k0; !rc && k < nrecs; k++) {
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
	return rc ? rc : (long)(nrecs - k0);
}
