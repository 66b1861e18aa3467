/*
 * merge.c - the per-thread streams of a version 3 trace merged by time
 * (merge.h).  Each stream keeps its records held in one array of words and
 * one of record heads (time, tid, where its words begin, file offset), a
 * queue read from its start; the heap orders the streams that hold a
 * record by their first one's (time, tid, stream).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"
#include "ptt_trace.h"

struct mrec {
	uint64_t ticks, offset;
	size_t at; /* index of its first word in the stream's words */
	uint32_t n, tid;
};

struct mstream {
	uint32_t id;
	uint32_t *words;
	size_t nwords, words_cap;
	struct mrec *recs;
	size_t head, nrecs, recs_cap; /* recs[head, nrecs) are held */
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
};

struct ptt_merge *ptt_merge_new(void)
{
	return calloc(1, sizeof(struct ptt_merge)); /* a zeroed map is an empty one */
}

void ptt_merge_free(struct ptt_merge *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->ns; i++) {
		free(m->s[i].words);
		free(m->s[i].recs);
	}
	free(m->s);
	free(m->heap);
	ptt_map_free(&m->ids);
	free(m);
}

size_t ptt_merge_held(const struct ptt_merge *m) { return m ? m->held : 0; }

/* Stream a's first record goes before stream b's: the earlier time, then the lower tid, then the lower stream. */
static int before(const struct ptt_merge *m, uint32_t a, uint32_t b)
{
	const struct mstream *x = &m->s[a], *y = &m->s[b];
	const struct mrec *p = &x->recs[x->head], *q = &y->recs[y->head];
	if (p->ticks != q->ticks)
		return p->ticks < q->ticks;
	if (p->tid != q->tid)
		return p->tid < q->tid;
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

int ptt_merge_add(struct ptt_merge *m, uint32_t stream, const uint32_t *words, uint32_t n, uint64_t ticks,
		  uint32_t tid, uint64_t offset)
{
	uint32_t i;
	struct mstream *s = stream_of(m, stream, &i);
	if (!s)
		return PTT_E_NOMEM;
	if (s->head == s->nrecs) /* used up: start again from the arrays' beginning */
		s->head = s->nrecs = s->nwords = 0;
	else if (s->head > 4096 && s->head * 2 > s->nrecs) { /* half given back: move the rest down */
		size_t w0 = s->recs[s->head].at;
		memmove(s->words, s->words + w0, (s->nwords - w0) * 4);
		s->nwords -= w0;
		memmove(s->recs, s->recs + s->head, (s->nrecs - s->head) * sizeof *s->recs);
		s->nrecs -= s->head;
		s->head = 0;
		for (size_t k = 0; k < s->nrecs; k++)
			s->recs[k].at -= w0;
	}
	if (PTT_GROW(s->words, &s->words_cap, s->nwords + n) != 0 || PTT_GROW(s->recs, &s->recs_cap, s->nrecs + 1) != 0)
		return PTT_E_NOMEM;
	struct mrec *r = &s->recs[s->nrecs++];
	r->ticks = ticks;
	r->offset = offset;
	r->at = s->nwords;
	r->n = n;
	r->tid = tid;
	memcpy(s->words + s->nwords, words, (size_t)n * 4);
	s->nwords += n;
	m->held++;
	if (!s->in_heap) {
		s->in_heap = 1;
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
	const struct mrec *r = &s->recs[s->head];
	if (!m->all && r->ticks >= m->mark)
		return 0;
	memcpy(words, s->words + r->at, (size_t)r->n * 4);
	*n = r->n;
	*offset = r->offset;
	s->head++;
	m->held--;
	if (s->head == s->nrecs) {
		s->in_heap = 0;
		m->heap[0] = m->heap[--m->nheap];
	}
	if (m->nheap)
		sift_down(m, 0);
	return 1;
}
