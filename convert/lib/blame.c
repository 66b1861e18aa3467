/* blame.c - cascaded blame and the knots of the wait-for graph (blame.h). */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../../formats/map.h"
#include "blame.h"
#include "cli.h"
#include "host.h"
#include "symbols.h"

#define UNKNOWN_T 0xffffffffu /* a segment's target when no edge is known */
#define KNOT_TIDS 16          /* a knot's threads listed by tid, the rest counted */

struct bseg {                 /* [from, to] of a thread's waits, on target's behalf */
	uint64_t from, to;
	uint32_t target;      /* a thread's serial, or UNKNOWN_T */
};

struct bon {                  /* time waited on target's behalf */
	uint32_t target;
	uint64_t ns;
};

struct bsite {                /* time waited at a site for another thread */
	uint64_t site, ns;
};

struct bthr {
	uint32_t serial, pid, tid;
	uint64_t begin, end;
	int ended, group;
	struct bseg *hist;    /* a ring of its last cascaded waits, oldest at first */
	uint32_t first, n, cap;
	uint64_t dropped_to;  /* its waits before are gone from hist */
	struct bon *on;
	uint32_t non;
	uint64_t own, unknown, open;
	uint64_t life, running;
	unsigned vi;          /* its vertex */
	int comp, idle;
	struct bsite *sites;  /* where its waits that another thread ended were made */
	size_t nsites, capsites;
};

struct bgroup {
	char name[128];
	unsigned threads;
	uint64_t life, own, unknown, open, waited;
	uint64_t waited_for;  /* the time other threads but the idle waited on its threads' behalf */
	int knot;             /* 1 + the knot it is in, 0: none */
	int idle;             /* every thread of it idle */
	unsigned idle_threads; /* running under BLAME_IDLE_PCT of their life: their waits bound nothing they do */
	uint64_t work_life;   /* its working (not idle) threads': their life, */
	uint64_t work_for;    /* ... their waits on other threads' behalf (cascaded), */
	uint64_t work_running; /* ... their running time, */
	struct bsite *sites;  /* ... and where they made the waits others ended */
	size_t nsites, capsites;
	uint32_t pid;         /* its first thread's process, to name the sites */
};

struct bknot {                /* the knots of threads of the same groups */
	unsigned *groups;     /* their groups, in order */
	unsigned ngroups, knots, threads;
	uint64_t in;          /* the time the other threads waited for them */
	uint64_t life, running;
	uint32_t pid, tid;    /* its first knot's first thread */
	uint32_t *tids;       /* the threads of its knots, in the order met */
};

struct blame {
	struct ptt_syms *syms;
	struct ptt_map threads; /* serial -> bthr */
	struct bseg *scratch;
	size_t nscratch, capscratch;
	uint64_t uncascaded, end_ns;
	uint64_t from, to;    /* the window (0: none) */
	struct bgroup *g;
	unsigned ng;
	uint64_t *w;          /* w[i * ng + j]: group i's time waiting on group j's behalf */
	uint64_t *ww;         /* the same, of its working threads alone, another thread's behalf */
	struct bknot *k;
	unsigned nk;
};

static struct bthr *thr(struct blame *b, uint32_t serial)
{
	return ptt_map_get(&b->threads, serial);
}

static void on_thread(void *ctx, uint32_t serial, uint32_t pid, uint32_t tid, uint64_t ns, int ended)
{
	struct blame *b = ctx;
	if (b->from && ns < b->from)
		ns = b->from;
	if (b->to && ns > b->to)
		ns = b->to;
	struct bthr *t = thr(b, serial);
	if (!t && !ended && (t = calloc(1, sizeof *t))) {
		t->serial = serial;
		t->pid = pid;
		t->tid = tid;
		t->begin = ns;
		if (ptt_map_put(&b->threads, serial, t)) {
			free(t);
			return;
		}
	}
	if (t && ended && !t->ended) {
		t->ended = 1;
		t->end = ns;
	}
}

/* ns more waited at site in the array *sites of n (of capacity *cap) */
static void add_site(struct bsite **sites, size_t *n, size_t *cap, uint64_t site, uint64_t ns)
{
	for (size_t i = 0; i < *n; i++)
		if ((*sites)[i].site == site) {
			(*sites)[i].ns += ns;
			return;
		}
	if (PTT_GROW(*sites, cap, *n + 1) == 0)
		(*sites)[(*n)++] = (struct bsite){ site, ns };
}

static void add_on(struct bthr *t, uint32_t target, uint64_t ns)
{
	if (target == t->serial) {
		t->own += ns;
		return;
	}
	if (target == UNKNOWN_T) {
		t->unknown += ns;
		return;
	}
	for (uint32_t i = 0; i < t->non; i++)
		if (t->on[i].target == target) {
			t->on[i].ns += ns;
			return;
		}
	struct bon *o = realloc(t->on, (t->non + 1) * sizeof *o);
	if (!o)
		return;
	t->on = o;
	t->on[t->non++] = (struct bon){ target, ns };
}

/* t's history gains [from, to] on target's behalf (after its last), the oldest dropped when full. */
static void remember(struct bthr *t, uint64_t from, uint64_t to, uint32_t target)
{
	if (to <= from)
		return;
	if (t->n) {
		struct bseg *last = &t->hist[(t->first + t->n - 1) % t->cap];
		if (last->target == target && last->to == from) {
			last->to = to;
			return;
		}
	}
	if (t->n == t->cap && t->cap < BLAME_HISTORY) {
		uint32_t cap = t->cap ? 2 * t->cap : 16;
		struct bseg *h = malloc(cap * sizeof *h);
		if (h) {
			for (uint32_t i = 0; i < t->n; i++)
				h[i] = t->hist[(t->first + i) % t->cap];
			free(t->hist);
			t->hist = h;
			t->first = 0;
			t->cap = cap;
		}
	}
	if (!t->cap)
		return;
	if (t->n == t->cap) {
		t->dropped_to = t->hist[t->first].to;
		t->first = (t->first + 1) % t->cap;
		t->n--;
	}
	t->hist[(t->first + t->n++) % t->cap] = (struct bseg){ from, to, target };
}

static void piece(struct blame *b, uint64_t from, uint64_t to, uint32_t target)
{
	if (to <= from)
		return;
	if (PTT_GROW(b->scratch, &b->capscratch, b->nscratch + 1))
		return;
	b->scratch[b->nscratch++] = (struct bseg){ from, to, target };
}

/*
 * [from, to] of a's wait, ended by e: where e was waiting then, on whose
 * behalf e waited (its own waits are cascaded already: they ended before the
 * edge), the rest on e.  Pieces go to scratch from the latest back.
 */
static void cascade(struct blame *b, const struct bthr *a, const struct bthr *e, uint64_t from, uint64_t to)
{
	uint64_t cursor = to;
	for (uint32_t i = e->n; i-- > 0 && cursor > from;) {
		const struct bseg *s = &e->hist[(e->first + i) % e->cap];
		if (s->to <= from)
			break;
		uint64_t x = s->from > from ? s->from : from, y = s->to < cursor ? s->to : cursor;
		if (x >= y)
			continue;
		piece(b, y, cursor, e->serial);
		/* e waited for a itself (a cycle): that part is e's, a cannot wait on its own behalf */
		piece(b, x, y, s->target == a->serial ? e->serial : s->target);
		cursor = x;
	}
	if (cursor > from && e->dropped_to > from) /* e's history of then is gone: it stays on e */
		b->uncascaded += (cursor < e->dropped_to ? cursor : e->dropped_to) - from;
	piece(b, from, cursor, e->serial);
}

static void on_wait(void *ctx, const struct critical_wait *w)
{
	struct blame *b = ctx;
	struct bthr *a = thr(b, w->serial);
	struct critical_wait cw = *w; /* clipped to the window */
	if (!cli_window_clip(b->from, b->to, &cw.begin, &cw.end))
		return;
	w = &cw;
	if (!a || w->end <= w->begin)
		return;
	b->nscratch = 0;
	struct bthr *e = w->kind == CRITICAL_WAIT_EDGE ? thr(b, w->edge_serial) : NULL;
	switch (w->kind) {
	case CRITICAL_WAIT_OPEN:
		a->open += w->end - w->begin;
		return;
	case CRITICAL_WAIT_SELF:
		piece(b, w->begin, w->end, a->serial);
		break;
	case CRITICAL_WAIT_EDGE:
		if (e && e != a) {
			add_site(&a->sites, &a->nsites, &a->capsites, w->site, w->end - w->begin);
			piece(b, w->edge_t > w->begin ? w->edge_t : w->begin, w->end, e->serial); /* the hand-off's latency */
			if (w->edge_t > w->begin)
				cascade(b, a, e, w->begin, w->edge_t);
			break;
		}
		/* an edge ptt has no thread for */
		__attribute__((fallthrough));
	default:
		piece(b, w->begin, w->end, UNKNOWN_T);
	}
	for (size_t i = b->nscratch; i-- > 0;) { /* in time order */
		const struct bseg *s = &b->scratch[i];
		add_on(a, s->target, s->to - s->from);
		remember(a, s->from, s->to, s->target);
	}
}

void blame_set_window(struct blame *b, uint64_t from_ns, uint64_t to_ns)
{
	b->from = from_ns;
	b->to = to_ns;
}

struct blame *blame_new(struct ptt_syms *syms, struct critical *c)
{
	struct blame *b = calloc(1, sizeof *b);
	if (!b)
		return NULL;
	b->syms = syms;
	const struct critical_observer o = { b, on_thread, on_wait };
	critical_observe(c, &o);
	return b;
}

/*
 * A thread's group: its name with each run of digits not after a letter read as N (pool-0 .. pool-3:
 * pool-N; apache2 stays); a thread with no name, its start routine's symbol or, where its module has
 * none for it, the routine's address as addr2line takes it, "mariadbd+0xc7f450()" (one per routine:
 * mariadbd's connection threads are one group); the last resort, "thread N".
 */
static void group_name(struct blame *b, const struct bthr *t, char *buf, size_t size)
{
	char name[128];
	uint64_t start;
	if (!*ptt_syms_thread_known_name(b->syms, t->pid, t->tid, name, sizeof name)) {
		if ((start = ptt_syms_thread_start(b->syms, t->pid, t->tid)))
			snprintf(buf, size, "%s()", ptt_syms_code(b->syms, t->pid, start)->where);
		else
			snprintf(buf, size, "thread N");
		return;
	}
	size_t n = 0;
	for (const char *p = name; *p && n + 1 < size; p++) {
		static const char digits[] = "0123456789";
		if (strchr(digits, *p) && !(p > name && isalpha((unsigned char)p[-1]))) {
			while (p[1] && strchr(digits, p[1]))
				p++;
			buf[n++] = 'N';
		} else {
			buf[n++] = *p;
		}
	}
	buf[n] = 0;
}

static int group_of(struct blame *b, const char *name)
{
	for (unsigned i = 0; i < b->ng; i++)
		if (!strcmp(b->g[i].name, name))
			return (int)i;
	struct bgroup *g = realloc(b->g, (b->ng + 1) * sizeof *g);
	if (!g)
		return -1;
	b->g = g;
	memset(&g[b->ng], 0, sizeof *g);
	snprintf(g[b->ng].name, sizeof g->name, "%s", name);
	return (int)b->ng++;
}

/* Is t's wait on o's behalf an edge of the graph: t works, o is another thread, and it weighs BLAME_TRIM_PCT of t's life? */
static struct bthr *kept(struct blame *b, const struct bthr *t, const struct bon *o)
{
	struct bthr *u = thr(b, o->target);
	return u && u != t && !t->idle && o->ns * 100 >= t->life * BLAME_TRIM_PCT ? u : NULL;
}

/* Tarjan's strongly connected components of the threads over the kept edges (recursive: as deep as a chain). */
struct tarjan {
	struct blame *b;
	struct bthr **v;
	unsigned idx, sp, ncomp;
	unsigned *index, *low, *stack;
	unsigned char *on;
};

static void strong(struct tarjan *T, unsigned v)
{
	struct bthr *t = T->v[v];
	T->index[v] = T->low[v] = ++T->idx;
	T->stack[T->sp++] = v;
	T->on[v] = 1;
	for (uint32_t i = 0; i < t->non; i++) {
		struct bthr *u = kept(T->b, t, &t->on[i]);
		if (!u)
			continue;
		unsigned w = u->vi;
		if (!T->index[w]) {
			strong(T, w);
			if (T->low[w] < T->low[v])
				T->low[v] = T->low[w];
		} else if (T->on[w] && T->index[w] < T->low[v]) {
			T->low[v] = T->index[w];
		}
	}
	if (T->low[v] != T->index[v])
		return;
	unsigned x;
	do {
		x = T->stack[--T->sp];
		T->on[x] = 0;
		T->v[x]->comp = (int)T->ncomp;
	} while (x != v);
	T->ncomp++;
}

static int by_in(const void *x, const void *y)
{
	const struct bknot *p = x, *q = y;
	return p->in < q->in ? 1 : p->in > q->in ? -1 : (p->groups[0] > q->groups[0]) - (p->groups[0] < q->groups[0]);
}

static int by_uint(const void *x, const void *y)
{
	unsigned a = *(const unsigned *)x, c = *(const unsigned *)y;
	return (a > c) - (a < c);
}

/* The knot of component comp, merged with the knots of the same groups (a stage of each round: one row). */
static void add_knot(struct blame *b, struct bthr **v, unsigned n, int comp, uint64_t in)
{
	unsigned *gs = malloc(b->ng * sizeof *gs), ngs = 0, threads = 0;
	uint64_t life = 0, running = 0;
	const struct bthr *first = NULL;
	uint32_t *tids = malloc(n * sizeof *tids);
	if (!gs || !tids) {
		free(gs);
		free(tids);
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		if (v[i]->comp != comp)
			continue;
		tids[threads++] = v[i]->tid;
		if (!first)
			first = v[i];
		life += v[i]->life;
		running += v[i]->running;
		unsigned g = (unsigned)v[i]->group, k = 0;
		while (k < ngs && gs[k] != g)
			k++;
		if (k == ngs)
			gs[ngs++] = g;
	}
	qsort(gs, ngs, sizeof *gs, by_uint);
	for (unsigned x = 0; x < b->nk; x++) {
		struct bknot *k = &b->k[x];
		if (k->ngroups == ngs && !memcmp(k->groups, gs, ngs * sizeof *gs)) {
			uint32_t *all = realloc(k->tids, (k->threads + threads) * sizeof *all);
			if (all) {
				memcpy(all + k->threads, tids, threads * sizeof *tids);
				k->tids = all;
			}
			free(tids);
			if (!all)
				threads = 0; /* counted, not listed: see the print */
			k->knots++;
			k->threads += threads;
			k->in += in;
			k->life += life;
			k->running += running;
			free(gs);
			return;
		}
	}
	struct bknot *k = realloc(b->k, (b->nk + 1) * sizeof *k);
	if (!k) {
		free(gs);
		free(tids);
		return;
	}
	b->k = k;
	b->k[b->nk++] = (struct bknot){ gs, ngs, 1, threads, in, life, running, first->pid, first->tid, tids };
}

void blame_finish(struct blame *b)
{
	struct ptt_map_iter it;
	void *v;
	char name[128];
	unsigned nt = 0;
	for (ptt_map_iter_init(&it, &b->threads); ptt_map_next(&it, NULL, &v);) {
		struct bthr *t = v;
		group_name(b, t, name, sizeof name);
		t->group = group_of(b, name);
		nt++;
	}
	unsigned n = b->ng;
	if (!n)
		return;
	struct tarjan T = { .b = b };
	b->w = calloc((size_t)n * n, sizeof *b->w);
	b->ww = calloc((size_t)n * n, sizeof *b->ww);
	T.v = calloc(nt, sizeof *T.v);
	T.index = calloc(nt, sizeof *T.index);
	T.low = calloc(nt, sizeof *T.low);
	T.stack = calloc(nt, sizeof *T.stack);
	T.on = calloc(nt, 1);
	unsigned char *out = calloc(nt, 1);
	uint64_t *in = calloc(nt, sizeof *in);
	if (!b->w || !b->ww || !T.v || !T.index || !T.low || !T.stack || !T.on || !out || !in || nt > 0x3fffffff)
		goto done;
	nt = 0;
	for (ptt_map_iter_init(&it, &b->threads); ptt_map_next(&it, NULL, &v);) {
		struct bthr *t = v;
		if (t->group < 0)
			continue;
		struct bgroup *g = &b->g[t->group];
		uint64_t waited = t->own + t->unknown + t->open;
		for (uint32_t i = 0; i < t->non; i++)
			waited += t->on[i].ns;
		t->life = t->end > t->begin ? t->end - t->begin : 0;
		t->running = t->life > waited ? t->life - waited : 0;
		/* an idle thread (running under BLAME_IDLE_PCT of its life): its waits bound nothing it does */
		t->idle = t->running * 100 < t->life * BLAME_IDLE_PCT;
		t->vi = nt;
		T.v[nt++] = t;
		g->threads++;
		g->idle_threads += (unsigned)t->idle;
		g->life += t->life;
		g->own += t->own;
		g->unknown += t->unknown;
		g->open += t->open;
		g->waited += waited;
		for (uint32_t i = 0; i < t->non; i++) {
			const struct bthr *to = thr(b, t->on[i].target);
			if (to && to->group >= 0)
				b->w[(size_t)t->group * n + (unsigned)to->group] += t->on[i].ns;
		}
	}
	for (unsigned i = 0; i < n; i++)
		b->g[i].idle = b->g[i].threads && b->g[i].idle_threads == b->g[i].threads;
	/* WAITED FOR: by every other thread that works, of its own group too (a knot's threads are often of one) */
	for (unsigned i = 0; i < nt; i++) {
		const struct bthr *t = T.v[i];
		struct bgroup *g = &b->g[t->group];
		if (t->idle)
			continue;
		if (!g->work_life)
			g->pid = t->pid;
		g->work_life += t->life;
		g->work_running += t->running;
		for (uint32_t e = 0; e < t->non; e++) {
			const struct bthr *u = thr(b, t->on[e].target);
			if (u && u != t && u->group >= 0) {
				b->g[u->group].waited_for += t->on[e].ns;
				g->work_for += t->on[e].ns;
				b->ww[(size_t)t->group * n + (unsigned)u->group] += t->on[e].ns;
			}
		}
		for (size_t x = 0; x < t->nsites; x++)
			add_site(&g->sites, &g->nsites, &g->capsites, t->sites[x].site, t->sites[x].ns);
	}
	/* the graph: threads, their kept edges; a knot is a component with no kept edge out of it */
	for (unsigned i = 0; i < nt; i++)
		if (!T.index[i])
			strong(&T, i);
	for (unsigned i = 0; i < nt; i++) {
		struct bthr *t = T.v[i];
		for (uint32_t e = 0; e < t->non; e++) {
			struct bthr *u = kept(b, t, &t->on[e]);
			if (u && u->comp != t->comp) {
				out[t->comp] = 1;
				in[u->comp] += t->on[e].ns;
			}
		}
	}
	for (unsigned c = 0; c < T.ncomp; c++)
		if (!out[c] && in[c])
			add_knot(b, T.v, nt, (int)c, in[c]);
	if (b->nk)
		qsort(b->k, b->nk, sizeof *b->k, by_in);
	for (unsigned x = b->nk; x-- > 0;)
		for (unsigned j = 0; j < b->k[x].ngroups; j++)
			b->g[b->k[x].groups[j]].knot = (int)x + 1;
done:
	free(T.v);
	free(T.index);
	free(T.low);
	free(T.stack);
	free(T.on);
	free(out);
	free(in);
}

const char *blame_bound(const struct blame *b)
{
	return b->nk ? b->g[b->k[0].groups[0]].name : NULL;
}

/* A knot's name: its groups, and its thread when it is one thread of a group of several. */
static const char *knot_name(const struct blame *b, const struct bknot *k, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = 0;
	for (unsigned j = 0; j < k->ngroups && len < size; j++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", j ? " + " : "", b->g[k->groups[j]].name);
	if (k->knots == 1 && k->threads == 1 && b->g[k->groups[0]].threads > 1 && len < size) {
		char t[128];
		ptt_syms_thread_name(b->syms, k->pid, k->tid, t, sizeof t);
		if (!strncmp(t, "thread ", 7))
			snprintf(buf + len, size - len, ": its thread %" PRIu32, k->tid);
		else
			snprintf(buf + len, size - len, ": its thread %s (%" PRIu32 ")", t, host_local(k->tid));
	}
	return buf;
}

static double ms(uint64_t ns) { return (double)ns / 1e6; }
static double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0; }

static int by_waited_for(const void *x, const void *y, void *ctx)
{
	const struct blame *b = ctx;
	unsigned i = *(const unsigned *)x, j = *(const unsigned *)y;
	uint64_t p = b->g[i].waited_for, q = b->g[j].waited_for;
	return p < q ? 1 : p > q ? -1 : (i > j) - (i < j);
}

static int by_work_for(const void *x, const void *y, void *ctx)
{
	const struct blame *b = ctx;
	const struct bgroup *p = &b->g[*(const unsigned *)x], *q = &b->g[*(const unsigned *)y];
	return p->work_running < q->work_running ? 1 : p->work_running > q->work_running ? -1 : 0;
}

static int by_site_ns(const void *x, const void *y)
{
	const struct bsite *p = x, *q = y;
	return p->ns < q->ns ? 1 : p->ns > q->ns ? -1 : (p->site > q->site) - (p->site < q->site);
}

/*
 * The working threads' waits for others, by group, the busiest (most running time) first: in a server,
 * the threads that serve the requests, whose waits are what would make them faster; and what the graph's
 * trim hides when a group's threads wait for each other in turn (a group commit's leader, a pool's),
 * each edge small, their sum not; with where they waited.  Returns the busiest group (-1: none works).
 */
static int print_work_waits(const struct blame *b, FILE *out)
{
	unsigned n = b->ng, *order = malloc(n * sizeof *order), shown = 0;
	int heavy = -1;
	if (!order)
		return -1;
	for (unsigned i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof *order, by_work_for, (void *)b);
	fprintf(out, "\nWAITS OF THE WORKING THREADS FOR OTHERS (by group, its idle threads left out, the busiest first:\n"
		     "its running time; the time it waited on other threads' behalf, cascaded, and for whom; where it made\n"
		     "the waits another thread ended, each wait's whole length; threads of a group that wait for each other\n"
		     "in turn, as for a group commit's leader, make many edges, each under the graph's trim)\n");
	unsigned quiet = 0; /* working groups that waited for no other thread, not listed but the busiest */
	for (unsigned r = 0; r < n; r++) {
		struct bgroup *g = &b->g[order[r]];
		if (!g->work_life)
			continue;
		if (heavy >= 0 && !g->work_for) {
			quiet++;
			continue;
		}
		if (heavy < 0)
			heavy = (int)order[r];
		fprintf(out, "  %s: running or in untraced calls %.3f ms (%.1f %% of its working threads' life), waited %.3f ms (%.1f %%)%s",
			g->name, ms(g->work_running), pct(g->work_running, g->work_life), ms(g->work_for),
			pct(g->work_for, g->work_life), g->work_for ? " for" : "");
		for (unsigned j = 0, k = 0; j < n; j++) {
			uint64_t x = b->ww[(size_t)order[r] * n + j];
			if (x && x * 100 >= g->work_for) /* the targets of 1 % of it or more */
				fprintf(out, "%s %s %.3f ms", k++ ? "," : "", j == order[r] ? "its own group" : b->g[j].name, ms(x));
		}
		if (g->nsites)
			qsort(g->sites, g->nsites, sizeof *g->sites, by_site_ns);
		for (size_t x = 0; x < g->nsites && x < 3; x++) {
			char site[256];
			ptt_syms_code_phrase(b->syms, g->pid, g->sites[x].site, site, sizeof site);
			fprintf(out, "\n    %10.3f ms waited%s", ms(g->sites[x].ns), g->sites[x].site ? site : " at an unknown site");
		}
		fprintf(out, "\n");
		shown++;
	}
	if (!shown)
		fprintf(out, "  (none: every thread is idle)\n");
	if (quiet)
		fprintf(out, "  (%u more group%s of working threads that waited for no other thread)\n", quiet, quiet > 1 ? "s" : "");
	free(order);
	return heavy;
}

void blame_print(const struct blame *b, unsigned top, FILE *out)
{
	unsigned n = b->ng;
	fprintf(out, "BLAME (per group of threads, one name with its digits as N: the time it waited, on whose behalf,\n"
		     "cascaded as wPerf does: a wait for B while B waited for C is a wait for C)\n");
	if (!n || !b->w) {
		fprintf(out, "(no thread in the trace)\n");
		return;
	}
	unsigned *order = malloc(n * sizeof *order);
	if (!order)
		return;
	for (unsigned i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof *order, by_waited_for, (void *)b);
	fprintf(out, "%-24s %7s %11s %11s %6s %11s %11s %11s %11s  %s\n", "GROUP", "THREADS", "LIFE ms", "WAITED FOR ms",
		"KNOT", "RUNNING ms", "OWN ms", "UNKNOWN ms", "AT END ms", "ITS WAITS WERE FOR (cascaded)");
	for (unsigned r = 0; r < n && (!top || r < top); r++) {
		unsigned i = order[r];
		const struct bgroup *g = &b->g[i];
		char knot[16] = "-";
		if (g->knot)
			snprintf(knot, sizeof knot, "%d", g->knot);
		else if (g->idle)
			snprintf(knot, sizeof knot, "idle");
		uint64_t running = g->life > g->waited ? g->life - g->waited : 0;
		fprintf(out, "%-24s %7u %11.3f %13.3f %4s %11.3f %11.3f %11.3f %11.3f ", g->name, g->threads, ms(g->life), ms(g->waited_for),
			knot, ms(running), ms(g->own), ms(g->unknown), ms(g->open));
		/* its three heaviest edges */
		uint64_t shown = 0;
		for (int k = 0; k < 3; k++) {
			unsigned best = n;
			for (unsigned j = 0; j < n; j++)
				if (b->w[(size_t)i * n + j] && b->w[(size_t)i * n + j] < (shown ? shown : UINT64_MAX) &&
				    (best == n || b->w[(size_t)i * n + j] > b->w[(size_t)i * n + best]))
					best = j;
			if (best == n)
				break;
			shown = b->w[(size_t)i * n + best];
			fprintf(out, "%s%s %.3f ms (%.0f %%)", k ? ", " : " ", best == i ? "its own group" : b->g[best].name,
				ms(shown), pct(shown, g->life));
		}
		fprintf(out, "%s\n", shown ? "" : " -");
	}
	free(order);
	fprintf(out, "  (LIFE: its threads' time from start to end or to the trace's end; RUNNING: the rest of it once\n"
		     "  its waits are counted, with time in calls ptt does not trace (I/O, epoll, sleep without a timeout\n"
		     "  ptt sees); OWN: its timeouts; AT END: waits still open where the trace ends, blamed on nobody;\n"
		     "  WAITED FOR: by the other threads, of its own group too, but the idle; KNOT: its knot's rank;\n"
		     "  idle: running under %d %% of its life, its waits left out of the graph)\n",
		BLAME_IDLE_PCT);
	if (b->uncascaded)
		fprintf(out, "  %.3f ms of waits reached further back than a thread's last %d waits: left on that thread, "
			     "not cascaded\n", ms(b->uncascaded), BLAME_HISTORY);
	fprintf(out, "\nKNOTS (threads waiting only for each other, a thread's edges under %d %% of its life and an idle\n"
		     "thread's dropped; ranked by the time the other threads waited for them; knots of the same groups\n"
		     "in one row)\n", BLAME_TRIM_PCT);
	char names[512];
	for (unsigned x = 0; x < b->nk; x++) {
		const struct bknot *k = &b->k[x];
		knot_name(b, k, names, sizeof names);
		fprintf(out, "  %u. %.3f ms waited for by the others: %s (%u knot%s of %u thread%s, running %.1f %% of their life;"
			     " tid%s", x + 1, ms(k->in), names, k->knots, k->knots > 1 ? "s" : "", k->threads,
			k->threads > 1 ? "s" : "", pct(k->running, k->life), k->threads > 1 ? "s" : "");
		for (unsigned j = 0; j < k->threads && j < KNOT_TIDS; j++)
			fprintf(out, " %" PRIu32, k->tids[j]);
		fprintf(out, k->threads > KNOT_TIDS ? " and %u more)\n" : ")\n", k->threads - KNOT_TIDS);
	}
	if (!b->nk)
		fprintf(out, "  (none: no thread that works waits for another beyond %d %% of its life)\n", BLAME_TRIM_PCT);
	/* the first knot whose threads work: an idle one (a timer in its timed waits) is waited for, but its time
	 * is waits of its own, not the work that bounds the others */
	unsigned first = 0;
	while (first < b->nk && b->k[first].running * 100 < b->k[first].life * BLAME_IDLE_PCT)
		first++;
	if (first)
		fprintf(out, first > 1 ? "  (knots 1 to %u: idle threads, running under %d %% of their life, waiting on timers or on\n"
					 "  others: waited for, but not what bounds the work; not named as the bound)\n"
				       : "  (knot %u: idle threads, running under %d %% of their life, waiting on timers or on\n"
					 "  others: waited for, but not what bounds the work; not named as the bound)\n",
			first, BLAME_IDLE_PCT);
	int heavy = print_work_waits(b, out);
	if (first < b->nk) {
		const struct bknot *k = &b->k[first];
		fprintf(out, "bound: %s, the knot the others' waits end up on (%.3f ms)", knot_name(b, k, names, sizeof names),
			ms(k->in));
		if (k->running * 100 >= k->life * 90)
			fprintf(out, ": its threads' time is their own (running, or in calls ptt does not trace: I/O, epoll)");
		fprintf(out, "\n");
	} else {
		if (b->nk)
			fprintf(out, "bound: none named: the knots the others' waits end up on are idle threads; the working threads'\n"
				     "time is mostly their own: running, or in calls ptt does not trace (I/O, epoll: the load, the\n"
				     "network, a disk)\n");
		else
			fprintf(out, "bound: none named: no thread that works waits for another thread beyond %d %% of its life; each\n"
				     "one's time is mostly its own: running, or in calls ptt does not trace (I/O, epoll: the load, the\n"
				     "network, a disk)\n", BLAME_TRIM_PCT);
		if (heavy >= 0)
			fprintf(out, "the busiest group, %s, running %.1f %% of its working threads' life, waited %.1f %% of it\n"
				     "for other threads (WAITS OF THE WORKING THREADS above: for whom, and where)\n", b->g[heavy].name,
				pct(b->g[heavy].work_running, b->g[heavy].work_life), pct(b->g[heavy].work_for, b->g[heavy].work_life));
	}
}

void blame_free(struct blame *b)
{
	if (!b)
		return;
	struct ptt_map_iter it;
	void *v;
	for (ptt_map_iter_init(&it, &b->threads); ptt_map_next(&it, NULL, &v);) {
		struct bthr *t = v;
		free(t->hist);
		free(t->on);
		free(t->sites);
		free(t);
	}
	ptt_map_free(&b->threads);
	free(b->scratch);
	for (unsigned i = 0; i < b->ng; i++)
		free(b->g[i].sites);
	free(b->g);
	free(b->w);
	free(b->ww);
	for (unsigned x = 0; x < b->nk; x++) {
		free(b->k[x].groups);
		free(b->k[x].tids);
	}
	free(b->k);
	free(b);
}
