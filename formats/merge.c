/*
 * merge.c - the per-thread streams of a version 3 trace merged by time
 * (merge.h).  Each stream keeps the records it holds in a queue of chunks
 * of words, the records' own words with their file offsets once a run; a
 * chunk read to its end goes back to a pool shared by the streams, so that
 * what is held costs its records and at most one part-filled chunk a stream
 * (a record cost 32 bytes more, in arrays that grew to four times what they
 * held: 25 MB for the 2-thread lock loop's coded trace, 7.5 MB of records).
 * The pool keeps every chunk given back: memory stays at the most ever held
 * at once, which it reached anyway; a pool of 4 let malloc give the heap's
 * top back to the kernel as the held records fell, and the pages were
 * faulted in again as they rose (2 % of ptt-stat's time on that trace).  The stream's first record's time and tid are kept beside
 * it, so that the heap, which orders the streams holding a record by their
 * first one's (time, tid, stream), compares without reaching into chunks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"
#include "ptt_trace.h"

/*
 * A record's file offset is held once for a run of records: a word that no
 * record starts with (RUN_SAME: the records that follow share the offset,
 * those of a compact or compressed block; RUN_STEP: each follows the one
 * before in the file, a raw block's) and the offset, before the run's first
 * record and at each chunk's start.
 */
enum { RUN_SAME = 1, RUN_STEP = 2, RUN_WORDS = 3 };
#define CHUNK_WORDS 16384 /* 64 KiB: far more than a record (PTT_REC_MAX_WORDS + RUN_WORDS) */
#define COPY_WORDS 16      /* copy_rec's first part: most records (the lock loop's 9 or 10) */

struct chunk {
	struct chunk *next;
	uint32_t head, len; /* w[head, len): records held */
	uint32_t w[CHUNK_WORDS + COPY_WORDS]; /* room for copy_rec's whole first part at the end */
};

struct mstream {
	uint32_t id;
	uint32_t tid;   /* the first held record's, */
	uint64_t ticks; /* ... and its time (valid while in_heap) */
	struct chunk *first, *last; /* read from first, added to last */
	uint64_t add_off, head_off; /* the offset of the record added last; of the first held */
	uint32_t add_n, run_added, run; /* the record added last's length, its run; the run read (RUN_*) */
	int in_heap;
};

struct ptt_merge {
	struct mstream *s;
	size_t ns, s_cap;
	struct ptt_map ids; /* stream id -> index in s */
	uint32_t *heap;     /* indices in s of the streams holding a record */
	size_t nheap, heap_cap;
	uint64_t mark;      /* records before it may go */
	int all;            /* everything may go */
	size_t held;
	struct chunk *pool; /* chunks read to their end, to reuse */
};

struct ptt_merge *ptt_merge_new(void)
{
	return calloc(1, sizeof(struct ptt_merge)); /* a zeroed map is an empty one */
}

void ptt_merge_free(struct ptt_merge *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->ns; i++)
		for (struct chunk *c = m->s[i].first, *next; c; c = next) {
			next = c->next;
			free(c);
		}
	for (struct chunk *c = m->pool, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	free(m->s);
	free(m->heap);
	ptt_map_free(&m->ids);
	free(m);
}

size_t ptt_merge_held(const struct ptt_merge *m) { return m ? m->held : 0; }

/* Stream a's first record goes before stream b's: the earlier time, then the lower tid, then the lower stream. */
static inline int before(const struct ptt_merge *m, uint32_t a, uint32_t b)
{
	const struct mstream *x = &m->s[a], *y = &m->s[b];
	if (x->ticks != y->ticks)
		return x->ticks < y->ticks;
	if (x->tid != y->tid)
		return x->tid < y->tid;
	return x->id < y->id;
}

static void sift_up(struct ptt_merge *m, size_t k)
{
	while (k > 0) {
		size_t up = (k - 1) / 2;
		if (!before(m, m->heap[k], m->heap[up]))
			return;
		uint32_t t = m->heap[k];
		m->heap[k] = m->heap[up];
		m->heap[up] = t;
		k = up;
	}
}

static void sift_down(struct ptt_merge *m, size_t k)
{
	for (;;) {
		size_t l = 2 * k + 1, best = k;
		if (l < m->nheap && before(m, m->heap[l], m->heap[best]))
			best = l;
		if (l + 1 < m->nheap && before(m, m->heap[l + 1], m->heap[best]))
			best = l + 1;
		if (best == k)
			return;
		uint32_t t = m->heap[k];
		m->heap[k] = m->heap[best];
		m->heap[best] = t;
		k = best;
	}
}

static struct mstream *stream_of(struct ptt_merge *m, uint32_t id, uint32_t *index)
{
	void *v = ptt_map_get(&m->ids, id); /* the index + 1: never NULL */
	if (v) {
		*index = (uint32_t)((uintptr_t)v - 1);
		return &m->s[*index];
	}
	if (PTT_GROW(m->s, &m->s_cap, m->ns + 1) != 0 || PTT_GROW(m->heap, &m->heap_cap, m->ns + 1) != 0 ||
	    ptt_map_put(&m->ids, id, (void *)(uintptr_t)(m->ns + 1)) != 0)
		return NULL;
	struct mstream *s = &m->s[m->ns];
	memset(s, 0, sizeof *s);
	s->id = id;
	*index = (uint32_t)m->ns++;
	return s;
}

/* A record's n words copied: its first COPY_WORDS as one fixed move whatever n (both sides have the
 * room), then the rest.  memcpy of n * 4 bytes became a rep movs, whose start cost a third of
 * ptt_merge_next on the lock loop. */
static inline void copy_rec(uint32_t *dst, const uint32_t *src, uint32_t n)
{
	memcpy(dst, src, COPY_WORDS * 4);
	if (n > COPY_WORDS)
		memcpy(dst + COPY_WORDS, src + COPY_WORDS, (size_t)(n - COPY_WORDS) * 4);
}

/* The stream's first held record (at its first chunk's head) is its key in the heap. */
static inline void take_head(struct mstream *s)
{
	struct chunk *c = s->first;
	const uint32_t *w = c->w + c->head;
	if (w[0] < RUN_WORDS) { /* a run begins */
		s->run = w[0];
		s->head_off = (uint64_t)w[2] << 32 | w[1];
		c->head += RUN_WORDS;
		w += RUN_WORDS;
	}
	s->ticks = ptt_rec_ticks(w);
	s->tid = ptt_rec_tid(w);
}

/* A chunk read to its end: to the pool. */
static void give_back(struct ptt_merge *m, struct chunk *c)
{
	c->next = m->pool;
	m->pool = c;
}

int ptt_merge_add(struct ptt_merge *m, uint32_t stream, const uint32_t *words, uint32_t n, uint64_t offset)
{
	uint32_t i;
	struct mstream *s = stream_of(m, stream, &i);
	if (!s)
		return PTT_E_NOMEM;
	struct chunk *c = s->last;
	int fresh = !c || c->len + RUN_WORDS + n > CHUNK_WORDS;
	if (fresh) {
		if (m->pool) {
			c = m->pool;
			m->pool = c->next;
		} else if (!(c = malloc(sizeof *c))) {
			return PTT_E_NOMEM;
		}
		c->next = NULL;
		c->head = c->len = 0;
		if (s->last)
			s->last->next = c;
		else
			s->first = c;
		s->last = c;
	}
	uint32_t *w = c->w + c->len, run = s->run_added;
	uint64_t step = s->add_off + 4 * (uint64_t)s->add_n;
	if (fresh || !(run == RUN_SAME ? offset == s->add_off : offset == step)) {
		run = s->add_n && offset == step ? RUN_STEP : RUN_SAME;
		w[0] = run;
		w[1] = (uint32_t)offset;
		w[2] = (uint32_t)(offset >> 32);
		w += RUN_WORDS;
		c->len += RUN_WORDS;
		s->run_added = run;
	}
	copy_rec(w, words, n);
	c->len += n;
	s->add_off = offset;
	s->add_n = n;
	m->held++;
	if (!s->in_heap) {
		s->in_heap = 1;
		take_head(s);
		m->heap[m->nheap] = i;
		sift_up(m, m->nheap++);
	}
	return 0;
}

void ptt_merge_mark(struct ptt_merge *m, uint64_t ticks)
{
	if (ticks > m->mark)
		m->mark = ticks;
	m->all = 0;
}

void ptt_merge_all(struct ptt_merge *m) { m->all = 1; }

int ptt_merge_next(struct ptt_merge *m, uint32_t *words, uint32_t *n, uint64_t *offset)
{
	if (!m->nheap)
		return 0;
	uint32_t i = m->heap[0];
	struct mstream *s = &m->s[i];
	if (!m->all && s->ticks >= m->mark)
		return 0;
	struct chunk *c = s->first;
	const uint32_t *w = c->w + c->head;
	uint32_t len = ptt_rec_len(w[0]);
	copy_rec(words, w, len);
	*n = len;
	*offset = s->head_off;
	if (s->run == RUN_STEP)
		s->head_off += 4 * (uint64_t)len;
	c->head += len;
	m->held--;
	if (c->head == c->len) {
		s->first = c->next;
		if (!s->first)
			s->last = NULL;
		give_back(m, c);
	}
	if (!s->first) {
		s->in_heap = 0;
		m->heap[0] = m->heap[--m->nheap];
	} else {
		take_head(s);
	}
	if (m->nheap > 1)
		sift_down(m, 0);
	return 1;
}
