/* whatif.c - the what-if replay: threads as programs of steps, locks handed to the longest waiter (whatif.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "whatif.h"

enum { ST_RUN, ST_TAKE, ST_GIVE, ST_WAIT };

struct step {
	uint8_t kind, shared;
	int32_t src;        /* ST_WAIT: the thread waited for */
	uint32_t arg;       /* ST_TAKE/GIVE: the lock; ST_WAIT: the source's steps */
	uint64_t ns;        /* ST_RUN: its time; ST_WAIT, ST_TAKE (when handed over): the latency */
	double factor;
	double done;        /* the replay: when it ended */
};

struct wthread {
	struct step *s;
	uint32_t n, cap, pc;
	uint32_t named;     /* the steps another thread's wait may name (whatif_steps): never merged into */
	double t, start;
	int started, blocked, waiting_lock;
	double ready;       /* blocked on a lock: since when */
	uint32_t waited_by; /* threads blocked in a wait for its steps (none: no one to wake) */
};

struct wlock {
	int32_t owner;      /* -1: free of writers */
	uint32_t depth, readers;
	uint32_t waiting;   /* threads blocked taking it (none: no one to hand it to) */
};

struct whatif {
	struct wthread *th;
	int nth, capth;
	struct wlock *locks;
	uint32_t nlocks;
	/* a heap of runnable threads by time */
	int *heap;
	int nheap;
	unsigned forced;    /* takes the new order could not give (whatif_forced) */
};

struct whatif *whatif_new(void) { return calloc(1, sizeof(struct whatif)); }

int whatif_thread(struct whatif *w)
{
	if (w->nth == w->capth) {
		int cap = w->capth ? 2 * w->capth : 16;
		struct wthread *t = realloc(w->th, (size_t)cap * sizeof *t);
		if (!t)
			return -1;
		w->th = t;
		w->capth = cap;
	}
	memset(&w->th[w->nth], 0, sizeof *w->th);
	return w->nth++;
}

uint32_t whatif_steps(struct whatif *w, int i) { return i >= 0 && i < w->nth ? (w->th[i].named = w->th[i].n) : 0; }

static struct step *push(struct whatif *w, int i)
{
	if (i < 0 || i >= w->nth)
		return NULL;
	struct wthread *t = &w->th[i];
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 16;
		struct step *s = realloc(t->s, cap * sizeof *s);
		if (!s)
			return NULL;
		t->s = s;
		t->cap = cap;
	}
	struct step *s = &t->s[t->n++];
	memset(s, 0, sizeof *s);
	return s;
}

void whatif_start(struct whatif *w, int i, uint64_t ns)
{
	if (i >= 0 && i < w->nth && !w->th[i].started) {
		w->th[i].start = (double)ns;
		w->th[i].started = 1;
	}
}

void whatif_run(struct whatif *w, int i, uint64_t ns, double factor)
{
	if (i < 0 || i >= w->nth || !ns)
		return;
	struct wthread *t = &w->th[i];
	if (t->n > t->named && t->s[t->n - 1].kind == ST_RUN && t->s[t->n - 1].factor == factor) {
		t->s[t->n - 1].ns += ns; /* one step for a stretch in the same holds */
		return;
	}
	struct step *s = push(w, i);
	if (s) {
		s->kind = ST_RUN;
		s->ns = ns;
		s->factor = factor;
	}
}

static int lock_of(struct whatif *w, uint32_t lock)
{
	if (lock < w->nlocks)
		return 0;
	uint32_t n = lock + 1 > 2 * w->nlocks ? lock + 1 : 2 * w->nlocks;
	struct wlock *l = realloc(w->locks, n * sizeof *l);
	if (!l)
		return -1;
	for (uint32_t k = w->nlocks; k < n; k++)
		l[k] = (struct wlock){ -1, 0, 0, 0 };
	w->locks = l;
	w->nlocks = n;
	return 0;
}

void whatif_take(struct whatif *w, int i, uint32_t lock, int shared, uint64_t latency)
{
	struct step *s = lock_of(w, lock) ? NULL : push(w, i);
	if (s) {
		s->kind = ST_TAKE;
		s->arg = lock;
		s->shared = (uint8_t)shared;
		s->ns = latency;
	}
}

void whatif_give(struct whatif *w, int i, uint32_t lock)
{
	struct step *s = lock_of(w, lock) ? NULL : push(w, i);
	if (s) {
		s->kind = ST_GIVE;
		s->arg = lock;
	}
}

void whatif_wait(struct whatif *w, int i, int src, uint32_t steps, uint64_t latency)
{
	struct step *s = push(w, i);
	if (s) {
		s->kind = ST_WAIT;
		s->src = src;
		s->arg = steps;
		s->ns = latency;
	}
}

/* ---- the heap of runnable threads, earliest first (ties: the lower index) ---- */

static int before(const struct whatif *w, int a, int b)
{
	return w->th[a].t < w->th[b].t || (w->th[a].t == w->th[b].t && a < b);
}

static void heap_push(struct whatif *w, int i)
{
	int k = w->nheap++;
	w->heap[k] = i;
	while (k && before(w, w->heap[k], w->heap[(k - 1) / 2])) {
		int p = (k - 1) / 2, x = w->heap[p];
		w->heap[p] = w->heap[k];
		w->heap[k] = x;
		k = p;
	}
}

static int heap_pop(struct whatif *w)
{
	int top = w->heap[0];
	w->heap[0] = w->heap[--w->nheap];
	for (int k = 0;;) {
		int l = 2 * k + 1, r = l + 1, m = k;
		if (l < w->nheap && before(w, w->heap[l], w->heap[m]))
			m = l;
		if (r < w->nheap && before(w, w->heap[r], w->heap[m]))
			m = r;
		if (m == k)
			break;
		int x = w->heap[m];
		w->heap[m] = w->heap[k];
		w->heap[k] = x;
		k = m;
	}
	return top;
}

double whatif_time(const struct whatif *w, int i, uint32_t steps)
{
	if (i < 0 || i >= w->nth)
		return 0;
	const struct wthread *t = &w->th[i];
	return steps ? t->s[steps - 1 < t->n ? steps - 1 : t->n - 1].done : t->start;
}

/* Can thread i take lock l now? */
static int can_take(const struct wlock *l, int i, int shared)
{
	if (shared)
		return l->owner < 0;
	return (l->owner < 0 || l->owner == i) && !l->readers;
}

/* The lock l was given back at time t: the longest waiter that can take it is made runnable at t. */
static void hand_over(struct whatif *w, uint32_t lock, double t)
{
	while (w->locks[lock].waiting) {
		int best = -1;
		for (int k = 0; k < w->nth; k++) { /* few threads wait at once: a scan */
			struct wthread *x = &w->th[k];
			if (!x->blocked || !x->waiting_lock || x->s[x->pc].arg != lock ||
			    !can_take(&w->locks[lock], k, x->s[x->pc].shared))
				continue;
			if (best < 0 || x->ready < w->th[best].ready)
				best = k;
		}
		if (best < 0)
			return;
		struct wthread *x = &w->th[best];
		x->blocked = x->waiting_lock = 0;
		w->locks[lock].waiting--;
		if (x->t < t + (double)x->s[x->pc].ns) /* handed over: the recorded hand-off's latency after the release */
			x->t = t + (double)x->s[x->pc].ns;
		heap_push(w, best); /* it takes the lock when it runs (several readers may) */
		if (!x->s[x->pc].shared)
			return;
	}
}

/* The threads blocked waiting for thread src's steps: runnable again if it made them. */
static void wake_waiters(struct whatif *w, int src)
{
	for (int k = 0; w->th[src].waited_by && k < w->nth; k++) { /* after every step: scan only when one waits */
		struct wthread *x = &w->th[k];
		if (x->blocked && !x->waiting_lock && x->s[x->pc].src == src && w->th[src].pc >= x->s[x->pc].arg) {
			x->blocked = 0;
			w->th[src].waited_by--;
			heap_push(w, k);
		}
	}
}

/* Run thread i from its pc until it blocks, ends, or has run (then it goes back in the heap). */
static void step_thread(struct whatif *w, int i)
{
	struct wthread *t = &w->th[i];
	while (t->pc < t->n) {
		struct step *s = &t->s[t->pc];
		if (s->kind == ST_RUN) {
			t->t += (double)s->ns * s->factor;
			s->done = t->t;
			t->pc++;
			wake_waiters(w, i);
			heap_push(w, i);
			return;
		}
		if (s->kind == ST_WAIT) {
			struct wthread *src = s->src >= 0 && s->src < w->nth ? &w->th[s->src] : NULL;
			if (src && src->pc < s->arg) {
				t->blocked = 1;
				src->waited_by++;
				return;
			}
			double at = src ? whatif_time(w, s->src, s->arg) + (double)s->ns : t->t;
			if (at > t->t)
				t->t = at;
		} else if (s->kind == ST_TAKE) {
			struct wlock *l = &w->locks[s->arg];
			if (!can_take(l, i, s->shared)) {
				t->blocked = t->waiting_lock = 1;
				l->waiting++;
				t->ready = t->t;
				return;
			}
			if (s->shared) {
				l->readers++;
			} else {
				l->owner = i;
				l->depth++;
			}
		} else { /* ST_GIVE */
			struct wlock *l = &w->locks[s->arg];
			if (l->owner == i) {
				if (--l->depth == 0)
					l->owner = -1;
			} else if (l->readers) {
				l->readers--;
			}
			if (l->owner < 0)
				hand_over(w, s->arg, t->t);
		}
		s->done = t->t;
		t->pc++;
		wake_waiters(w, i);
	}
}

int whatif_replay(struct whatif *w, unsigned *stuck)
{
	free(w->heap);
	w->heap = malloc(((size_t)w->nth + 1) * sizeof *w->heap);
	if (!w->heap)
		return -1;
	w->nheap = 0;
	for (int i = 0; i < w->nth; i++) {
		w->th[i].t = w->th[i].start;
		w->th[i].pc = 0;
		/* a thread whose first step waits for another is started by it; the others at their own start */
		heap_push(w, i);
	}
	for (;;) {
		while (w->nheap)
			step_thread(w, heap_pop(w));
		/* blocked for ever in the new order: the earliest thread waiting for a lock takes it as it did in the
		 * recorded order (beside its holder: the two holds overlap in the replay), and the replay goes on */
		int best = -1;
		for (int i = 0; i < w->nth; i++) {
			const struct wthread *x = &w->th[i];
			if (x->pc < x->n && x->blocked && x->waiting_lock && (best < 0 || x->ready < w->th[best].ready))
				best = i;
		}
		if (best < 0)
			break;
		struct wthread *x = &w->th[best];
		x->blocked = x->waiting_lock = 0;
		w->locks[x->s[x->pc].arg].waiting--;
		x->s[x->pc].kind = ST_RUN; /* taken: nothing more to wait for */
		x->s[x->pc].ns = 0;
		x->s[x->pc].factor = 1;
		w->forced++;
		heap_push(w, best);
	}
	unsigned left = 0;
	for (int i = 0; i < w->nth; i++) {
		left += w->th[i].pc < w->th[i].n;
		if (getenv("PTT_DEBUG") && w->th[i].pc < w->th[i].n) {
			const struct step *s = &w->th[i].s[w->th[i].pc];
			fprintf(stderr, "replay: thread %d stuck at step %u/%u kind %d arg %u src %d (lock owner %d readers %u)\n", i,
				w->th[i].pc, w->th[i].n, s->kind, s->arg, s->src,
				s->kind == ST_TAKE ? w->locks[s->arg].owner : -2, s->kind == ST_TAKE ? w->locks[s->arg].readers : 0);
		}
	}
	*stuck = left;
	return left ? -1 : 0;
}

unsigned whatif_forced(const struct whatif *w) { return w->forced; }

void whatif_free(struct whatif *w)
{
	if (!w)
		return;
	for (int i = 0; i < w->nth; i++)
		free(w->th[i].s);
	free(w->th);
	free(w->locks);
	free(w->heap);
	free(w);
}
