/* critical.c - the critical path of a trace and its what-if replay (critical.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "critical.h"
#include "host.h"
#include "knownlock.h"
#include "lockframes.h"
#include "model.h"
#include "symbols.h"
#include "whatif.h"

/* What a stretch of the path is. */
enum ck { CK_RUN, CK_HANDOFF, CK_SELF, CK_UNKNOWN, CK_START };

/*
 * A context: a level of a thread's holds (its parent the holds around it),
 * or a wait (parent 0).  Interned: the same holds taken at the same sites
 * are one context, whichever thread or time.
 */
struct cctx {
	uint32_t parent;
	uint32_t pid, stack;
	uint8_t cls, wait;
	uint64_t obj, site;
	uint64_t call;      /* the call address of the event that opened it: the site where the stack has none */
	double factor;      /* what-if: running time in these holds is scaled by this */
	uint64_t *frames;   /* its process's image was replaced (an exec numbers stacks anew): its stack's frames, kept */
	uint32_t nframes;
	uint8_t gone;       /* ... and it is never found again for a new hold or wait */
};

/* Time of one kind in one context of one thread, within a node. */
struct centry {
	uint64_t ns;
	uint32_t ctx, tid;
	uint8_t kind;
};

/*
 * A stretch of one thread's time on a path, [from, to], and the path before
 * it (prev).  Shared by every path that passes through it (refs); frozen
 * once shared: only a node its thread alone holds is extended.  Compacted
 * (compact()), a node also holds the stretches before it that no other path
 * shares, of other threads too: pid and tid are then its last stretch's, and
 * each entry says its own thread.
 */
struct cnode {
	struct cnode *prev;
	uint32_t refs, n, cap;
	uint32_t sorted;    /* e[0, sorted): in by_entry's order, each once (absorb() made them so) */
	uint32_t pid, tid;
	uint32_t mark;      /* compact(): visited in this round */
	uint8_t sealed;     /* a window's start lies at its end: never extended, never merged */
	uint64_t from, to;
	uint64_t events;    /* its thread's events in it (each costs the trace path's time: critical_set_trace_cost) */
	struct centry *e;
};

/* A thread's path and new time as they were at one moment (a release, a post, an end). */
struct csnap {
	struct cnode *node; /* referenced */
	uint64_t t;
	double nt;
	uint32_t tid, serial;
	uint8_t valid;
	int wi;             /* what-if: the thread's replay program, and its steps then */
	uint32_t wsteps;
};

struct cthr {
	uint32_t pid, tid, serial;
	struct mthread *mt;
	uint64_t at;        /* accounted up to */
	struct cnode *head; /* the path ending at `at` (referenced; NULL: none yet) */
	double nt;          /* what-if: the new time of `at` */
	uint32_t hold;      /* the context of its holds */
	unsigned hdepth;    /* the model's frames when hold was made, and the top one's opening */
	uint64_t htop;
	double factor;
	uint8_t waiting, closed, own_end, lost_wait;
	uint64_t cut;       /* its events before are lost (model_history_cut) */
	uint32_t wait_ctx;
	uint64_t wait_mutex;
	struct csnap edge;
	int wi;             /* what-if: its replay program (-1: none) */
	uint8_t self_edge;  /* its wait was ended by its own event (the last to arrive at a barrier) */
	uint8_t took_hold;  /* its wait ended taking a hold: the replay's take step waits instead */
	uint8_t pend_take, pend_shared;
	uint32_t pend_lock; /* a take made while its wait was open: written after the wait */
	uint64_t pend_latency; /* ... the hand-off's latency, from the release to the take */
	uint64_t fx;        /* the futex word whose woken wait it ended last, until it wakes it or waits again (futex_after) */
	uint32_t fx_ctx;    /* ... that wait's context (its site: the lock's) */
	uint64_t fhold;     /* a futex lock's word it holds, inferred (futex_hold): in its holds' context */
	uint64_t hfx;       /* fhold when hold was made */
};

struct cobj {
	uint32_t pid;
	uint8_t cls;
	uint64_t addr;
	struct csnap last;
	uint64_t total_wait, waits;
	uint32_t lock;      /* what-if: its index in the replay (0: none yet) */
	uint8_t reorder;    /* what-if: 0 not asked yet, 1 its hand-offs keep their order, 2 a --what-if names it */
	uint8_t known;      /* a condition that is a known lock's (enum knownlock: CPython's GIL, a Java monitor) */
};

struct cspec {
	char *name;
	double factor;
	unsigned matched;
};

struct crow {           /* a row of a table: an object, a site or a thread on the path */
	uint32_t pid;
	uint64_t key;
	unsigned cls;
	uint64_t held, waited;
	uint32_t ctx;               /* a site's: the context it was last seen in (its object) */
};

struct critical {
	struct ptt_syms *syms;
	struct model *m;
	struct cctx *ctx;
	uint32_t nctx, capctx;
	struct ptt_map ctxmap;      /* hash -> ctx index */
	struct ptt_map threads;     /* serial -> cthr */
	struct ptt_map bytid;       /* pid:tid -> cthr */
	struct cthr *last_th;       /* bytid's entry thr_of found last (critical_event's, then critical_after's) */
	struct ptt_map objects;     /* ptt_obj_key -> cobj */
	struct ptt_map creates;     /* pid:child tid -> csnap (pthread_create's) */
	struct ptt_map ended;       /* serial -> csnap (a thread's end, for its join) */
	struct ptt_map joins;       /* link key -> serial of the joined thread */
	struct cspec *specs;
	unsigned nspecs;
	uint32_t want_tid;
	uint64_t from_ns, to_ns, first_ns, last_ns;
	int any, sealed, over;
	int late_sites;             /* sites named at critical_finish, the lock layer learnt meanwhile (critical_late_sites) */
	const struct ptt_event *cur;
	double trace_path_ps;       /* what ptt's trace path adds per event (0: unknown) */
	struct csnap final;         /* where the path ends */
	uint32_t final_pid;
	/* the account, at critical_finish */
	struct critical_sum sum;
	struct critical_obj *objs;
	unsigned nobjs;
	struct ptt_map objs_by_key; /* ptt_obj_key -> 1 + index in objs */
	struct crow *sites, *thr;
	unsigned nsites, nthr;
	uint64_t nodes, max_nodes;
	struct cnode *spare;        /* nodes let go, for the next (node_drop) */
	unsigned nspare;
	struct centry *scratch;     /* tidy()'s and sort_entries()' working space, kept */
	size_t capscratch;
	uint64_t compact_at;        /* compact() when nodes exceed it (0: never: the stretches are kept) */
	uint32_t epoch;
	uint64_t *ctx_ns;           /* the path's time per context (a hold's innermost, or a wait) */
	struct whatif *w;           /* the what-if replay's programs (with specs) */
	uint32_t nlocks;
	int replay_stuck;           /* threads the replay could not finish (then: order kept) */
	unsigned replay_forced;     /* takes the new order blocked for ever, let happen as recorded */
	struct critical_observer obs; /* told of every wait and thread (critical_observe) */
	uint64_t fx_whole, fx_part; /* what-if: futex locks' holds seen from a wait's end, and known from a waiter's arrival */
	/* spans (critical_spans) */
	int spans;
	struct skind *kinds;
	unsigned nkinds;
	struct ptt_map open_spans;  /* span_key -> sopen */
	uint64_t span_orphans, span_clashes;
	struct sacc *sacc;          /* one span's critical time per row, while it is summed */
	size_t nsacc, capsacc;
};

static uint64_t tkey(uint32_t pid, uint32_t tid) { return (uint64_t)pid << 32 | tid; }

/* ---- spans: their kinds, rows and histograms ---- */

#define SPAN_SUB 16                     /* buckets per power of two: a bucket's middle within 3.2 % of its values ... */
#define SPAN_BUCKETS (41 * SPAN_SUB)    /* ... up to 2^41 ns (36 min) */

struct srow {                           /* an object's or a site's critical time per span of a kind */
	uint32_t pid, ctx;
	uint64_t key;
	uint8_t cls;
	uint64_t held, waited, n;       /* n: the spans it was on the path of */
	uint32_t *h;                    /* their times, as a histogram */
};

struct skind {
	char name[48];
	uint64_t count, open, total, prorata;
	uint64_t part[5];               /* by enum ck */
	uint64_t free_run;              /* running holding no lock */
	uint32_t h[SPAN_BUCKETS];       /* span lengths */
	struct srow *rows[2];           /* objects, sites */
	unsigned nrows[2];
	struct ptt_map idx[2];
};

struct sopen {
	uint32_t pid, kind;
	uint64_t key, tb;
	struct csnap begin;             /* the beginning thread's path then: a reference keeps it a node of its own */
};

struct sacc {
	uint8_t table;
	uint32_t row;
	uint64_t ns;
};

/* ---- nodes ---- */

/*
 * Nodes let go are kept for the next ones with their entry arrays (a node per
 * hand-off: a lock loop makes and frees millions; malloc and free were 9 % of
 * ptt-critical's time on a sqlite3 trace), up to CNODE_SPARE of them, each
 * array up to CNODE_SPARE_ENTRIES.  CNODE_SPARE is compact()'s first round:
 * a round frees up to that many nodes at once, and with 4096 kept the rest
 * went back to malloc and were asked for again (sqlite3: 1.18 M callocs and
 * reallocs of 2.47 M nodes, 8 % of ptt-stat's instructions).  A spare node
 * was live once and a new one is made only when none is spare: the nodes
 * never outnumber those live at the peak, which compact() bounds.
 */
#define CNODE_SPARE 65536
#define CNODE_SPARE_ENTRIES 16

static void node_drop(struct critical *c, struct cnode *n)
{
	if (c->nspare < CNODE_SPARE && n->cap <= CNODE_SPARE_ENTRIES) {
		n->prev = c->spare;
		c->spare = n;
		c->nspare++;
		return;
	}
	free(n->e);
	free(n);
}

static struct cnode *node_new(struct critical *c, const struct cthr *th, struct cnode *prev, uint64_t from)
{
	struct cnode *n = c->spare;
	if (n) {
		c->spare = n->prev;
		c->nspare--;
		*n = (struct cnode){ .e = n->e, .cap = n->cap };
	} else if (!(n = calloc(1, sizeof *n))) {
		return NULL;
	}
	n->prev = prev;
	n->refs = 1;
	n->pid = th->pid;
	n->tid = th->tid;
	n->from = n->to = from;
	if (++c->nodes > c->max_nodes)
		c->max_nodes = c->nodes;
	return n;
}

static void deref(struct critical *c, struct cnode *n)
{
	while (n && --n->refs == 0) {
		struct cnode *prev = n->prev;
		node_drop(c, n);
		c->nodes--;
		n = prev;
	}
}

/* The order of a node's entries: by thread, context, kind. */
static inline int entry_before(const struct centry *x, const struct centry *y)
{
	if (x->tid != y->tid)
		return x->tid < y->tid;
	if (x->ctx != y->ctx)
		return x->ctx < y->ctx;
	return x->kind < y->kind;
}

/* entry_before's order for qsort; 0: the same entry */
static int by_entry(const void *a, const void *b)
{
	return entry_before(a, b) ? -1 : entry_before(b, a);
}

/* c's working space for n entries (NULL: no memory); kept for the next tidy() */
static struct centry *scratch(struct critical *c, size_t n)
{
	return PTT_GROW(c->scratch, &c->capscratch, n) == 0 ? c->scratch : NULL;
}

/* e[0, n) in by_entry's order: runs of 16 by insertion, then merged bottom-up, the comparison inline (qsort's
 * call per comparison was 7 % of ptt-critical's time on a sqlite3 trace); qsort without the memory. */
static void sort_entries(struct critical *c, struct centry *e, uint32_t n)
{
	enum { RUN = 16 };
	struct centry *tmp = n > RUN ? scratch(c, n) : NULL;
	if (n > RUN && !tmp) {
		qsort(e, n, sizeof *e, by_entry);
		return;
	}
	for (uint32_t i = 0; i < n; i += RUN) {
		uint32_t hi = i + RUN < n ? i + RUN : n;
		for (uint32_t k = i + 1; k < hi; k++) {
			struct centry v = e[k];
			uint32_t j = k;
			for (; j > i && entry_before(&v, &e[j - 1]); j--)
				e[j] = e[j - 1];
			e[j] = v;
		}
	}
	struct centry *a = e, *b = tmp;
	for (uint32_t w = RUN; w < n; w *= 2) {
		for (uint32_t i = 0; i < n; i += 2 * w) {
			uint32_t m = i + w < n ? i + w : n, hi = i + 2 * w < n ? i + 2 * w : n, x = i, y = m, o = i;
			while (x < m && y < hi)
				b[o++] = entry_before(&a[y], &a[x]) ? a[y++] : a[x++];
			while (x < m)
				b[o++] = a[x++];
			while (y < hi)
				b[o++] = a[y++];
		}
		struct centry *t = a;
		a = b;
		b = t;
	}
	if (a != e)
		memcpy(e, a, (size_t)n * sizeof *e);
}

/* e[0, n) sorted in by_entry's order and each entry summed into one: their number now. */
static uint32_t sort_sum(struct critical *c, struct centry *e, uint32_t n)
{
	if (!n)
		return 0;
	sort_entries(c, e, n);
	uint32_t k = 0;
	for (uint32_t i = 1; i < n; i++) {
		if (!by_entry(&e[k], &e[i]))
			e[k].ns += e[i].ns;
		else
			e[++k] = e[i];
	}
	return k + 1;
}

/*
 * n's entries each once, in by_entry's order: those after the sorted ones
 * sorted and summed, then the two runs merged, so that a node is never sorted
 * whole again (a sqlite3 trace's head nodes grew to 163 000 entries, sorted
 * whole: 18 % of ptt-critical's time).  A new entry whose key the sorted run
 * has is added there first (a binary search): a node has as many keys as its
 * threads' contexts, so most of the new run is gone before the sort, and the
 * rest merges in place from the back (sqlite3: sorting was 6 % of ptt-stat's
 * instructions).  The same entries and sums as a sort of the whole.
 */
static void tidy(struct critical *c, struct cnode *n)
{
	if (n->n - n->sorted < 1 || n->n < 2) {
		n->sorted = n->n;
		return;
	}
	struct centry *e = n->e;
	uint32_t s0 = n->sorted, k = s0;
	for (uint32_t i = s0; i < n->n; i++) {
		uint32_t lo = 0, hi = s0;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			if (entry_before(&e[mid], &e[i]))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < s0 && !entry_before(&e[i], &e[lo]))
			e[lo].ns += e[i].ns;
		else
			e[k++] = e[i];
	}
	uint32_t r = sort_sum(c, e + s0, k - s0); /* e[s0, s0 + r): the new keys, none in e[0, s0) */
	struct centry *t = s0 && r ? scratch(c, r) : NULL;
	if (t) { /* merged from the back: e[0, s0 + r) is written from its end, past what is still to read */
		memcpy(t, e + s0, (size_t)r * sizeof *t);
		uint32_t i = s0, j = r, o = s0 + r;
		while (j > 0) {
			if (i > 0 && entry_before(&t[j - 1], &e[i - 1]))
				e[--o] = e[--i];
			else
				e[--o] = t[--j];
		}
	} else if (s0 && r) { /* out of memory: sorted whole in place, as before */
		r = sort_sum(c, e, s0 + r) - s0;
	}
	n->n = n->sorted = s0 + r;
}

static void add_entry(struct critical *c, struct cnode *n, unsigned kind, uint32_t ctx, uint32_t tid, uint64_t ns)
{
	for (uint32_t i = n->n, k = 0; i-- > 0 && k < 4; k++)
		if (n->e[i].ctx == ctx && n->e[i].kind == kind && n->e[i].tid == tid) {
			n->e[i].ns += ns;
			return;
		}
	if (n->n - n->sorted >= 256 && n->n - n->sorted >= n->sorted)
		tidy(c, n); /* a node's entries stay as many as its threads' contexts, not its events */
	if (n->n >= n->cap) {
		size_t cap = n->cap;
		if (PTT_GROW(n->e, &cap, (size_t)n->n + 1) != 0)
			return; /* out of memory: the time is missing, and the check at the end says so */
		n->cap = (uint32_t)cap;
	}
	n->e[n->n++] = (struct centry){ ns, ctx, tid, (uint8_t)kind };
}

/* The node before n folded into n, when only n holds it and it is n's thread's (memory: hand-offs, not events). */
static void merge_prev(struct critical *c, struct cnode *n)
{
	struct cnode *p = n->prev;
	if (!p || p->refs != 1 || p->sealed || p->tid != n->tid || p->pid != n->pid || p->to != n->from)
		return;
	for (uint32_t i = 0; i < p->n; i++)
		add_entry(c, n, p->e[i].kind, p->e[i].ctx, p->e[i].tid, p->e[i].ns);
	n->from = p->from;
	n->events += p->events;
	n->prev = p->prev; /* p's reference to it moves to n */
	node_drop(c, p);
	c->nodes--;
}

/* Add [t0, t1) of kind in ctx to th's path (its head extended when th alone holds it). */
static void append(struct critical *c, struct cthr *th, unsigned kind, uint32_t ctx, uint64_t t0, uint64_t t1)
{
	if (t1 <= t0)
		return;
	struct cnode *h = th->head;
	if (!h || h->refs > 1 || h->sealed || h->tid != th->tid || h->pid != th->pid || h->to != t0) {
		struct cnode *n = node_new(c, th, h, t0);
		if (!n)
			return;
		th->head = h = n; /* the reference to the old head moves into n->prev */
	}
	merge_prev(c, h);
	if (h->prev) /* the node before is often shared (an object's last release): fold its own past into it */
		merge_prev(c, h->prev);
	add_entry(c, h, kind, ctx, th->tid, t1 - t0);
	h->to = t1;
}

/*
 * th's path becomes the path of node (whose reference moves in) at t0, then
 * [t0, t1) of kind in ctx: a hand-off or a thread's start.  Split at a
 * window's start that falls inside, so that no stretch straddles it.
 */
static void jump(struct critical *c, struct cthr *th, struct cnode *node, uint64_t t0, uint64_t t1, unsigned kind,
		 uint32_t ctx)
{
	uint64_t cut = c->from_ns > t0 && c->from_ns < t1 ? c->from_ns : t0;
	struct cnode *n = node_new(c, th, node, t0);
	if (!n) {
		deref(c, node);
		return;
	}
	deref(c, th->head);
	th->head = n;
	if (cut > t0) {
		add_entry(c, n, kind, ctx, th->tid, cut - t0);
		n->to = cut;
		n->sealed = 1;
	}
	append(c, th, kind, ctx, cut, t1);
	if (!th->head->n) /* t1 == t0: an empty stretch, for its place on the path */
		th->head->to = t1;
}


/* p can fold into n, its only holder: the same process, contiguous, whole, on one side of the window's start. */
static int foldable(const struct critical *c, const struct cnode *p, const struct cnode *n)
{
	if (p->refs != 1 || p->sealed || p->pid != n->pid || p->to != n->from)
		return 0;
	if (c->from_ns && p->from < c->from_ns && n->to > c->from_ns)
		return 0;
	uint64_t len = 0;
	for (uint32_t i = 0; i < p->n; i++)
		len += p->e[i].ns;
	return len == p->to - p->from; /* a stretch the end's check would fail stays apart, and fails it */
}

/* The nodes before n that only n holds folded into it, their entries summed by thread, context and kind. */
static void absorb(struct critical *c, struct cnode *n)
{
	struct cnode *p;
	int any = 0;
	while ((p = n->prev) && foldable(c, p, n)) {
		size_t cap = n->cap;
		if (PTT_GROW(n->e, &cap, (size_t)n->n + p->n) != 0)
			break;
		n->cap = (uint32_t)cap;
		memcpy(n->e + n->n, p->e, p->n * sizeof *p->e);
		n->n += p->n;
		n->from = p->from;
		n->events += p->events;
		n->prev = p->prev; /* p's reference to it moves to n */
		node_drop(c, p);
		c->nodes--;
		any = 1;
		if (n->n - n->sorted >= 256 && n->n - n->sorted >= n->sorted)
			tidy(c, n); /* a chain of thousands of nodes: summed as it goes, not sorted whole at its end */
	}
	if (!any || n->n < 2)
		return;
	tidy(c, n);
}

static void compact_from(struct critical *c, struct cnode *n)
{
	for (; n && n->mark != c->epoch; n = n->prev) {
		n->mark = c->epoch;
		absorb(c, n);
	}
}

/*
 * Memory bounded by what is shared, not by the path's length: every chain of
 * nodes held by one holder each is folded into its last node (the tables
 * need only each thread's time per context, not the stretches' order).  The
 * roots are every reference a node has from outside the nodes.  Run between
 * events, when the nodes have doubled since the last round; never when the
 * stretches are asked for (critical_keep_stretches).
 */
static void compact(struct critical *c)
{
	struct ptt_map_iter it;
	void *v;
	c->epoch++;
	for (ptt_map_iter_init(&it, &c->threads); ptt_map_next(&it, NULL, &v);) {
		struct cthr *th = v;
		compact_from(c, th->head);
		if (th->edge.valid)
			compact_from(c, th->edge.node);
	}
	for (ptt_map_iter_init(&it, &c->objects); ptt_map_next(&it, NULL, &v);)
		if (((struct cobj *)v)->last.valid)
			compact_from(c, ((struct cobj *)v)->last.node);
	struct ptt_map *snaps[] = { &c->creates, &c->ended };
	for (unsigned k = 0; k < 2; k++)
		for (ptt_map_iter_init(&it, snaps[k]); ptt_map_next(&it, NULL, &v);)
			if (((struct csnap *)v)->valid)
				compact_from(c, ((struct csnap *)v)->node);
	if (c->final.valid)
		compact_from(c, c->final.node);
	c->compact_at = 2 * c->nodes > 65536 ? 2 * c->nodes : 65536;
}

void critical_keep_stretches(struct critical *c) { c->compact_at = 0; }

static struct csnap snap(const struct critical *c, const struct cthr *th)
{
	struct csnap s = { th->head, th->at, th->nt, th->tid, th->serial, 1, th->wi, c->w ? whatif_steps(c->w, th->wi) : 0 };
	if (s.node)
		s.node->refs++;
	return s;
}

static void unsnap(struct critical *c, struct csnap *s)
{
	if (s->valid)
		deref(c, s->node);
	memset(s, 0, sizeof *s);
}

/* ---- contexts ---- */

static const char *func_name(struct critical *c, uint32_t pid, uint64_t addr, char *buf, size_t size)
{
	return lockframes_name(c->syms, pid, addr, buf, size);
}

/* The what-if factor of a hold of obj taken at site (with stack): the first spec naming it, else 1. */
static double spec_factor(struct critical *c, uint32_t pid, uint64_t obj, uint64_t site, uint32_t stack)
{
	if (!c->nspecs)
		return 1;
	char name[512], hex[32];
	ptt_syms_object_name(c->syms, pid, obj, name, sizeof name);
	snprintf(hex, sizeof hex, "0x%" PRIx64, obj);
	char fn[512] = "";
	if (site)
		func_name(c, pid, site, fn, sizeof fn);
	const uint64_t *frames = NULL;
	unsigned nf = stack ? ptt_stacks_get(model_stacks(c->m), pid, stack, &frames) : 0;
	for (unsigned i = 0; i < c->nspecs; i++) {
		struct cspec *s = &c->specs[i];
		int hit = !strcmp(s->name, name) || !strcmp(s->name, hex) || (*fn && !strcmp(s->name, fn));
		for (unsigned k = 0; !hit && k < nf; k++) {
			char f[512];
			hit = !strcmp(s->name, func_name(c, pid, frames[k], f, sizeof f));
		}
		if (hit) {
			s->matched++;
			return s->factor;
		}
	}
	return 1;
}

/* A context's site (cctx): named from its stack and call address, once the lock layer is known. */
static void name_site(struct critical *c, struct cctx *x)
{
	uint64_t site = x->gone ? lockframes_site_of(c->syms, x->pid, x->frames, x->nframes) : 0;
	x->site = site ? site : lockframes_site_or_call(c->syms, model_stacks(c->m), x->pid, x->gone ? 0 : x->stack, x->call);
}

/*
 * Process pid's image is replaced (an exec, or a process_begin of a pid seen before): its contexts keep
 * their stacks' frames (the new image numbers its stacks from 1 again) and are not found again, so that
 * their sites, named at the end (critical_late_sites) or in --folded, are the old image's.
 */
static void image_gone(struct critical *c, uint32_t pid)
{
	for (uint32_t i = 1; i < c->nctx; i++) {
		struct cctx *x = &c->ctx[i];
		if (x->pid != pid || x->gone)
			continue;
		x->nframes = model_stack_copy(c->m, pid, x->stack, &x->frames);
		x->gone = 1;
	}
}

/* The context of a hold or wait (parent: the holds around it) opened by a call at call with stack. */
static uint32_t intern(struct critical *c, uint32_t parent, uint32_t pid, unsigned cls, int wait, uint64_t obj,
		       uint64_t call, uint32_t stack)
{
	uint64_t h = ((uint64_t)parent * 0x9E3779B97F4A7C15ull) ^ ptt_obj_key(pid, obj);
	h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull ^ call;
	h = (h ^ (h >> 31)) * 0x94d049bb133111ebull ^ ((uint64_t)stack << 2 | (uint64_t)wait << 1);
	h = (h ^ (h >> 32)) | 1;
	uintptr_t got;
	for (; (got = (uintptr_t)ptt_map_get(&c->ctxmap, h)); h += 2) { /* a collision: the next odd key */
		const struct cctx *x = &c->ctx[got];
		if (x->parent == parent && x->pid == pid && x->obj == obj && x->call == call && x->stack == stack &&
		    x->wait == wait && !x->gone)
			return (uint32_t)got;
	}
	size_t cap = c->capctx;
	if (PTT_GROW(c->ctx, &cap, (size_t)c->nctx + 2) != 0) /* the new one, after the unused 0 */
		return 0;
	c->capctx = (uint32_t)cap;
	if (!c->nctx)
		c->nctx = 1; /* 0: no context */
	uint32_t id = c->nctx++;
	struct cctx *x = &c->ctx[id];
	*x = (struct cctx){ parent, pid, stack, (uint8_t)cls, (uint8_t)wait, obj, 0, call, 1, NULL, 0, 0 };
	if (!c->late_sites)
		name_site(c, x);
	if (!wait) {
		double f = spec_factor(c, pid, obj, x->site, stack), pf = parent ? c->ctx[parent].factor : 1;
		x->factor = f < pf ? f : pf;
	}
	ptt_map_put(&c->ctxmap, h, (void *)(uintptr_t)id);
	return id;
}

/* The call address of the event that opened a frame (its site, where its stack is none: name_site). */
static uint64_t frame_call(struct critical *c, const struct mframe *f)
{
	return ptt_syms_site_addr(c->syms, f->open.id, f->open.arg);
}

/* th's holds, from the model's frames, as a context. */
static void holds_of(struct critical *c, struct cthr *th)
{
	uint32_t ctx = 0;
	const struct mthread *t = th->mt;
	uint64_t top = t && t->depth ? t->stack[t->depth - 1].open.pos ^ t->stack[t->depth - 1].obj : 0;
	if (!t || (t->depth == th->hdepth && top == th->htop && th->hfx == th->fhold))
		return;
	th->hdepth = t->depth;
	th->htop = top;
	th->hfx = th->fhold;
	for (unsigned i = 0; t && i < t->depth; i++) {
		const struct mframe *f = &t->stack[i];
		if (mstate_is_hold(f->state))
			ctx = intern(c, ctx, th->pid, mstate_class(f->state), 0, f->obj, frame_call(c, f), f->stack);
	}
	if (th->fhold) { /* innermost: taken after the holds the model saw (a lower bound of what it knows) */
		const struct cctx *w = th->fx_ctx ? &c->ctx[th->fx_ctx] : NULL;
		ctx = intern(c, ctx, th->pid, PTT_CLASS_FUTEX, 0, th->fhold, w ? w->call : 0, w ? w->stack : 0);
	}
	th->hold = ctx;
	th->factor = ctx ? c->ctx[ctx].factor : 1;
}

static void advance(struct critical *c, struct cthr *th, uint64_t now);

/*
 * Futex locks (Rust's std Mutex, GLib's, InnoDB's): no event takes or
 * releases them.  A thread that wakes the word whose woken wait it ended
 * last is letting the lock go (the unlock of a lock it took contended: the
 * model's evidence that the word is a lock's, model.h), and held it since
 * that wait's end: from its last event on (at the wait's end, or later:
 * its time before is accounted already, and a hold whose wake never comes
 * is none seen) the time is in a hold of the word (holds_of), on the path
 * and in the what-if.  A hold taken uncontended is not seen (no event): the
 * futex's held time is a lower bound.  Before the event's time is accounted.
 */
static void futex_hold(struct critical *c, struct cthr *th, uint64_t w)
{
	th->fhold = w;
	holds_of(c, th);
}

static void futex_before(struct critical *c, struct cthr *th, const struct ptt_event *ev)
{
	if (ev->id != PTT_EV_FUTEX_WAKE || th->waiting)
		return;
	uint64_t w = ptt_event_argn(ev, PTT_ARGNAME_FUTEX, 0);
	if (th->fhold == w || th->fx == w) {
		if (th->fhold != w)
			futex_hold(c, th, w); /* from its last event on */
		if (c->nspecs && spec_factor(c, th->pid, w, 0, 0) != 1)
			c->fx_whole++;
		return;
	}
	/*
	 * What-if only, on a word a --what-if names, taken uncontended where no event says: held since
	 * the first wait on the word still open (a waiter found it held), a lower bound; that time,
	 * from its last event on, is replayed at the named factor.  A hold let go with no waiter (no
	 * wake) is not seen, and keeps its length: the prediction is at most that shorter.
	 */
	double f = c->nspecs ? spec_factor(c, th->pid, w, 0, 0) : 1;
	if (f == 1)
		return;
	uint64_t first = 0; /* the earliest wait on w still open: the word was held then */
	struct ptt_map_iter it;
	void *v;
	for (ptt_map_iter_init(&it, &c->threads); ptt_map_next(&it, NULL, &v);) {
		const struct cthr *o = v;
		if (o != th && o->waiting && o->pid == th->pid && o->wait_ctx && c->ctx[o->wait_ctx].obj == w &&
		    (!first || o->at < first))
			first = o->at;
	}
	if (!first || first >= ev->ns)
		return;
	c->fx_part++;
	uint64_t from = first > th->at ? first : th->at;
	advance(c, th, from); /* before the hold: as it was */
	double was = th->factor;
	th->factor = f < was ? f : was;
	advance(c, th, ev->ns);
	th->factor = was;
}

/* After the model took ev: the futex word whose woken wait th ended, until it wakes it (let go: futex_before) or
 * waits on it again (it did not get it). */
static void futex_after(struct critical *c, struct cthr *th, const struct ptt_event *ev)
{
	if (ev->id == PTT_EV_FUTEX_WAIT && !th->waiting && ptt_event_argn(ev, PTT_ARGNAME_RET, 1) == 0) {
		uint64_t w = ptt_event_argn(ev, PTT_ARGNAME_FUTEX, 0);
		const struct cctx *x = th->wait_ctx ? &c->ctx[th->wait_ctx] : NULL;
		th->fx = w;
		th->fx_ctx = x && x->obj == w ? th->wait_ctx : 0;
		/* a library's function that says the word a signal (GLib's g_cond_wait): no lock */
		if (x && x->obj == w && lockframes_futex_use(c->syms, th->pid, x->call) == MF_SIGNAL)
			th->fx = 0;
	} else if ((th->fx || th->fhold) && (ev->id == PTT_EV_FUTEX_WAKE || ev->id == PTT_EV_FUTEX_WAIT_REQ)) {
		uint64_t w = ptt_event_argn(ev, PTT_ARGNAME_FUTEX, 0);
		if (w == th->fx)
			th->fx = 0;
		if (w == th->fhold)
			futex_hold(c, th, 0);
	}
}

/* ---- threads and objects ---- */

static struct cthr *thr_of(struct critical *c, uint32_t pid, uint32_t tid)
{
	struct cthr *th = c->last_th;
	if (th && th->pid == pid && th->tid == tid)
		return th;
	return c->last_th = ptt_map_get(&c->bytid, tkey(pid, tid));
}

static struct cobj *obj_of(struct critical *c, uint32_t pid, uint64_t addr, unsigned cls)
{
	uint64_t k = ptt_obj_key(pid, addr);
	struct cobj *o = ptt_map_get(&c->objects, k);
	if (!o && (o = calloc(1, sizeof *o))) {
		o->pid = pid;
		o->addr = addr;
		o->cls = (uint8_t)cls;
		if (ptt_map_put(&c->objects, k, o)) {
			free(o);
			return NULL;
		}
	}
	if (o && cls != PTT_CLASS_META)
		o->cls = (uint8_t)cls;
	return o;
}

/* th's time up to now: running (in its holds), or unknown where its events were lost. */
static void advance(struct critical *c, struct cthr *th, uint64_t now)
{
	if (th->waiting || now <= th->at)
		return;
	uint64_t lost_to = th->mt && th->mt->lost_to > th->cut ? th->mt->lost_to : th->cut;
	if (lost_to > th->at) {
		uint64_t u = lost_to < now ? lost_to : now;
		append(c, th, CK_UNKNOWN, 0, th->at, u);
		th->nt += (double)(u - th->at);
		if (c->w)
			whatif_run(c->w, th->wi, u - th->at, 1);
		th->at = u;
	}
	if (now > th->at) {
		append(c, th, CK_RUN, th->hold, th->at, now);
		th->nt += (double)(now - th->at) * th->factor;
		if (c->w)
			whatif_run(c->w, th->wi, now - th->at, th->factor);
		th->at = now;
	}
}

static int replay_reorders(struct critical *c, uint32_t pid, uint64_t addr);

/* The observer's account of th's wait [begin, end] on ctx, ended by e (or by none): resolve's own choice. */
static void tell_wait(struct critical *c, const struct cthr *th, const struct csnap *e, uint32_t wctx, uint64_t begin,
		      uint64_t end, int own)
{
	struct critical_wait w = { th->pid, th->tid, th->serial, 0, begin, end, 0, wctx ? c->ctx[wctx].obj : 0,
				   CRITICAL_WAIT_UNKNOWN, wctx ? c->ctx[wctx].site : 0 };
	if (th->lost_wait)
		w.kind = CRITICAL_WAIT_UNKNOWN;
	else if (e->valid && e->t <= end) {
		w.kind = CRITICAL_WAIT_EDGE;
		w.edge_serial = e->serial;
		w.edge_t = e->t;
	} else if (own)
		w.kind = CRITICAL_WAIT_SELF;
	c->obs.wait(c->obs.ctx, &w);
}

/* The wait th was in ended at end: its path and new time go on from the edge, or from itself. */
static void resolve(struct critical *c, struct cthr *th, uint64_t end, int timed_out)
{
	uint64_t begin = th->at;
	struct csnap e = th->edge;
	uint32_t wctx = th->wait_ctx;
	memset(&th->edge, 0, sizeof th->edge);
	struct csnap sig = e; /* a condition wait's signal (a copy: no reference of its own) */
	int self_edge = th->self_edge;
	th->self_edge = 0;
	if (th->wait_mutex) { /* a condition wait: the mutex's release after the wake, when later, is the edge */
		struct cobj *mo = ptt_map_get(&c->objects, ptt_obj_key(th->pid, th->wait_mutex));
		if (mo && mo->last.valid && mo->last.tid != th->tid && mo->last.t <= end &&
		    mo->last.t > (e.valid ? e.t : begin)) {
			unsnap(c, &e);
			e = mo->last;
			if (e.node)
				e.node->refs++;
			const struct cctx *w = &c->ctx[wctx];
			wctx = intern(c, 0, th->pid, PTT_CLASS_MUTEX, 1, th->wait_mutex, w->call, w->stack);
		}
	}
	if (c->w && !th->took_hold) {
		/* a reordered lock's wait is the replay's take step; any other wait waits for its edge: a condition
		 * wait for its signal when the replay hands its mutex out anew (the take step waits for the mutex) */
		const struct csnap *re = th->wait_mutex && replay_reorders(c, th->pid, th->wait_mutex) ? &sig : &e;
		if (re->valid && re->t >= begin && re->t <= end && !th->lost_wait)
			whatif_wait(c->w, th->wi, re->wi, re->wsteps, end - re->t);
		else
			whatif_run(c->w, th->wi, end - begin, 1);
	}
	th->took_hold = 0;
	if (c->obs.wait)
		tell_wait(c, th, &e, wctx, begin, end, timed_out || self_edge);
	th->pend_latency = e.valid && e.t >= begin && e.t <= end ? end - e.t : 0; /* the replay's take, if one */
	th->waiting = 0;
	if (e.valid && e.t >= begin && e.t <= end && !th->lost_wait) {
		jump(c, th, e.node, e.t, end, CK_HANDOFF, wctx); /* e's reference moves */
		double nt = e.nt + (double)(end - e.t);
		th->nt = nt > th->nt ? nt : th->nt;
	} else {
		unsigned kind = th->lost_wait || (!timed_out && !self_edge) ? CK_UNKNOWN : CK_SELF;
		if (e.valid && !th->lost_wait)
			kind = CK_HANDOFF; /* woken by an event before the wait: its whole time, on the waiter's own path */
		unsnap(c, &e);
		append(c, th, kind, wctx, begin, end);
		th->nt += (double)(end - begin);
	}
	th->at = end;
	th->lost_wait = 0;
}

/* ---- the model's callbacks ---- */

static void on_thread_begin(void *ctx, struct mthread *t, struct mprocess *p, uint64_t ns)
{
	struct critical *c = ctx;
	(void)p;
	struct cthr *th = calloc(1, sizeof *th);
	if (!th)
		return;
	th->pid = t->pid;
	th->tid = t->tid;
	th->serial = t->serial;
	th->mt = t;
	th->at = ns;
	th->nt = (double)ns;
	th->factor = 1;
	th->wi = c->w ? whatif_thread(c->w) : -1;
	th->cut = model_history_cut(c->m, t->pid, t->tid);
	struct csnap *s = ptt_map_del(&c->creates, tkey(t->pid, t->tid));
	if (s && s->t <= ns) {
		jump(c, th, s->node, s->t, ns, CK_START, 0); /* the creator's path, at its pthread_create */
		th->nt = s->nt + (double)(ns - s->t);
		if (c->w)
			whatif_wait(c->w, th->wi, s->wi, s->wsteps, ns - s->t);
	} else {
		if (s)
			deref(c, s->node);
		if (c->w)
			whatif_start(c->w, th->wi, ns);
	}
	free(s);
	ptt_map_put(&c->threads, t->serial, th);
	ptt_map_put(&c->bytid, tkey(t->pid, t->tid), th);
	c->last_th = NULL;
	if (c->obs.thread)
		c->obs.thread(c->obs.ctx, th->serial, th->pid, th->tid, ns, 0);
}

/* The path ends here if this is the last end so far (the thread whose own event it is first, on a tie). */
static void maybe_final(struct critical *c, struct cthr *th, int own)
{
	if (c->want_tid ? th->tid != c->want_tid
			: c->final.valid && (th->at < c->final.t || (th->at == c->final.t && !own)))
		return;
	unsnap(c, &c->final);
	c->final = snap(c, th);
	c->final_pid = th->pid;
}

/* th's own event at ns, once applied: its recording lengthened the stretch of th's path that ends there. */
static void count_event(struct cthr *th, uint64_t ns)
{
	if (th->head && th->head->tid == th->tid && th->head->to == ns)
		th->head->events++;
}

static void on_thread_end(void *ctx, struct mthread *t, struct mprocess *p, uint64_t ns)
{
	struct critical *c = ctx;
	(void)p;
	struct cthr *th = ptt_map_del(&c->threads, t->serial);
	if (!th)
		return;
	ptt_map_del(&c->bytid, tkey(th->pid, th->tid));
	c->last_th = NULL;
	if (!c->over) {
		if (th->waiting) /* blocked until its end (its process exited, or the trace ends) */
			resolve(c, th, ns, 0);
		advance(c, th, ns);
		if (c->cur && c->cur->tid == th->tid && c->cur->pid == th->pid)
			count_event(th, ns); /* its own end (the after hook no longer finds it) */
		maybe_final(c, th, c->cur && c->cur->tid == th->tid);
		struct csnap *s = malloc(sizeof *s);
		if (s) {
			*s = snap(c, th);
			struct csnap *old = ptt_map_get(&c->ended, th->serial);
			if (old) {
				unsnap(c, old);
				free(old);
			}
			if (ptt_map_put(&c->ended, th->serial, s)) {
				unsnap(c, s);
				free(s);
			}
		}
	}
	if (c->obs.thread && !c->over)
		c->obs.thread(c->obs.ctx, th->serial, th->pid, th->tid, th->at > ns ? th->at : ns, 1);
	unsnap(c, &th->edge);
	deref(c, th->head);
	free(th);
}

static void on_link_start(void *ctx, struct mprocess *p, uint32_t from, const char *kind, uint64_t key, uint64_t ns)
{
	(void)p, (void)ns;
	if (!strcmp(kind, "join"))
		ptt_map_put(&((struct critical *)ctx)->joins, key, (void *)(uintptr_t)from);
}

static void on_link_end(void *ctx, struct mprocess *p, uint32_t to, const char *kind, uint64_t key, uint64_t ns)
{
	struct critical *c = ctx;
	(void)p, (void)ns;
	if (strcmp(kind, "join"))
		return;
	uint32_t from = (uint32_t)(uintptr_t)ptt_map_del(&c->joins, key);
	struct csnap *s = from ? ptt_map_del(&c->ended, from) : NULL;
	struct cthr *th = ptt_map_get(&c->threads, to);
	if (s && th) {
		unsnap(c, &th->edge);
		th->edge = *s; /* its reference moves */
	} else if (s) {
		unsnap(c, s);
	}
	free(s);
}

static void on_last(void *ctx, struct mthread *t, struct mobject *mo, const struct ptt_event *ev)
{
	struct critical *c = ctx;
	struct cthr *th = ptt_map_get(&c->threads, t->serial);
	struct cobj *o = obj_of(c, t->pid, mo->addr, mo->cls);
	if (!th || !o || c->over)
		return;
	advance(c, th, ev->ns);
	unsnap(c, &o->last);
	o->last = snap(c, th);
}

static void on_wait_begin(void *ctx, struct mthread *t, struct mobject *mo, const struct mframe *wait,
			  const struct ptt_event *ev)
{
	struct critical *c = ctx;
	struct cthr *th = ptt_map_get(&c->threads, t->serial);
	if (!th || c->over)
		return;
	advance(c, th, ev->ns);
	unsnap(c, &th->edge);
	th->waiting = 1;
	th->closed = 0;
	unsigned cls = ev->type->cls;
	(void)mo;
	struct cobj *o = cls == PTT_CLASS_COND ? obj_of(c, t->pid, wait->obj, cls) : NULL;
	if (o && !o->known) /* one wait a lock's makes the condition a lock's: ptt-stat's rule (knownlock.h) */
		o->known = (uint8_t)knownlock_of_wait(c->syms, model_stacks(c->m), t->pid, wait);
	th->wait_ctx = intern(c, 0, t->pid, cls, 1, wait->obj, frame_call(c, wait), wait->stack);
	th->wait_mutex = ev->type->cls == PTT_CLASS_COND ? ptt_event_argn(ev, PTT_ARGNAME_MUTEX, 0) : 0;
}

/*
 * th's wait on mo ended at ns; edge: it was let go by mo's last releaser,
 * signaller, poster or arriver (the model's link, which it draws only while
 * that thread lives: the edge does not need it to).
 */
static void waited(struct critical *c, struct cthr *th, struct mobject *mo, const struct mframe *wait, uint64_t ns, int edge)
{
	th->closed = 1;
	/* a join's object is its target thread (the model gives none): the rows name it "join of THREAD" */
	struct cobj *o = mo ? obj_of(c, th->pid, mo->addr, mo->cls)
			    : wait && wait->state == MS_JOIN ? obj_of(c, th->pid, wait->obj, PTT_CLASS_THREAD) : NULL;
	if (!o || !wait)
		return;
	o->total_wait += ns - wait->begin_ns;
	o->waits++;
	th->self_edge = edge && o->last.valid && o->last.tid == th->tid; /* a barrier's last arriver: its own time */
	if (edge && o->last.valid && o->last.tid != th->tid) {
		unsnap(c, &th->edge);
		th->edge = o->last;
		if (th->edge.node)
			th->edge.node->refs++;
	}
}

/* The replay's index of lock mo (made at its first use). */
/*
 * Does the replay hand the lock at addr out anew?  Only a lock a --what-if
 * names (by its name or address): its holds change, so may its order.  Any
 * other lock's hand-offs keep their recorded order, as every other edge's:
 * a what-if naming nothing replays the run as recorded.
 */
static int replay_reorders(struct critical *c, uint32_t pid, uint64_t addr)
{
	struct cobj *o = obj_of(c, pid, addr, PTT_CLASS_META); /* made at its first take: the answer never changes */
	if (!o)
		return 0;
	if (!o->reorder) {
		char name[512], hex[32];
		ptt_syms_object_name(c->syms, pid, addr, name, sizeof name);
		snprintf(hex, sizeof hex, "0x%" PRIx64, addr);
		o->reorder = 1;
		for (unsigned i = 0; i < c->nspecs && o->reorder == 1; i++)
			if (!strcmp(c->specs[i].name, name) || !strcmp(c->specs[i].name, hex))
				o->reorder = 2;
	}
	return o->reorder == 2;
}

static uint32_t replay_lock(struct critical *c, uint32_t pid, const struct mobject *mo)
{
	struct cobj *o = obj_of(c, pid, mo->addr, mo->cls);
	if (o && !o->lock)
		o->lock = ++c->nlocks;
	return o ? o->lock : 0;
}

/*
 * th took a hold of mo.  A lock the replay hands out anew: its take step,
 * after the step of the wait it ends (critical_after).  Any other, taken
 * without a wait: a wait for the previous holder's release, in the order
 * recorded (a wait's edge is its resolve's).  1 for a take step.
 */
static int replay_take(struct critical *c, struct cthr *th, const struct mobject *mo, const struct mframe *hold)
{
	if (!replay_reorders(c, th->pid, mo->addr)) {
		const struct cobj *o = ptt_map_get(&c->objects, ptt_obj_key(th->pid, mo->addr));
		int exclusive = hold->state == MS_MUTEX_HOLD || hold->state == MS_RW_WR_HOLD || hold->state == MS_SPIN_HOLD ||
				hold->state == MS_SEM_HOLD;
		if (!th->waiting && exclusive && o && o->last.valid && o->last.tid != th->tid)
			whatif_wait(c->w, th->wi, o->last.wi, o->last.wsteps, 0);
		return 0;
	}
	uint32_t lock = replay_lock(c, th->pid, mo);
	int shared = hold->state == MS_RW_RD_HOLD;
	if (th->waiting) {
		th->pend_take = 1;
		th->pend_lock = lock;
		th->pend_shared = (uint8_t)shared;
	} else {
		whatif_take(c->w, th->wi, lock, shared, 0);
	}
	return 1;
}

static void on_release(void *ctx, struct mthread *t, struct mobject *mo, const struct mframe *hold,
		       const struct ptt_event *ev)
{
	struct critical *c = ctx;
	struct cthr *th = ptt_map_get(&c->threads, t->serial);
	(void)hold, (void)ev;
	if (th && c->w && !c->over && replay_reorders(c, th->pid, mo->addr))
		whatif_give(c->w, th->wi, replay_lock(c, th->pid, mo));
}

static void on_acquire(void *ctx, struct mthread *t, struct mobject *mo, const struct mframe *hold,
		       const struct mframe *wait, const struct ptt_event *ev)
{
	struct critical *c = ctx;
	struct cthr *th = ptt_map_get(&c->threads, t->serial);
	if (!th || c->over)
		return;
	int took = hold && c->w && replay_take(c, th, mo, hold);
	if (wait) {
		th->took_hold = (uint8_t)took;
		waited(c, th, mo, wait, ev->ns, 1);
		return;
	}
	/* taken without a wait: in the new times, never before the previous holder let it go (order kept) */
	struct cobj *o = ptt_map_get(&c->objects, ptt_obj_key(t->pid, mo->addr));
	int exclusive = hold && (hold->state == MS_MUTEX_HOLD || hold->state == MS_RW_WR_HOLD ||
				 hold->state == MS_SPIN_HOLD || hold->state == MS_SEM_HOLD);
	if (o && o->last.valid && exclusive && o->last.tid != t->tid && ev->type->cls != PTT_CLASS_COND &&
	    o->last.nt > th->nt)
		th->nt = o->last.nt;
}

static void on_wait_end(void *ctx, struct mthread *t, struct mobject *mo, const struct mframe *wait, int ok,
			const struct ptt_event *ev)
{
	struct critical *c = ctx;
	struct cthr *th = ptt_map_get(&c->threads, t->serial);
	unsigned cls = ev->type->cls;
	if (th && wait && !c->over)
		waited(c, th, mo, wait, ev->ns, cls == PTT_CLASS_BARRIER || (ok && (cls == PTT_CLASS_COND || cls == PTT_CLASS_FUTEX)));
}

/* ---- the pass ---- */

struct critical *critical_new(struct ptt_syms *syms, struct model *m)
{
	struct critical *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->syms = syms;
	c->m = m;
	c->compact_at = 65536;
	struct model_ops ops = { .ctx = c, .thread_begin = on_thread_begin, .thread_end = on_thread_end, .link_start = on_link_start, .link_end = on_link_end, .last = on_last,
				 .wait_begin = on_wait_begin, .acquire = on_acquire, .release = on_release, .wait_end = on_wait_end };
	if (model_observe_also(m, &ops)) {
		free(c);
		return NULL;
	}
	return c;
}

int critical_what_if(struct critical *c, const char *spec, char *err, size_t errsize)
{
	const char *colon = strrchr(spec, ':');
	char *end;
	double pct = colon ? strtod(colon + 1, &end) : 0;
	if (!colon || colon == spec || end == colon + 1 || (*end && strcmp(end, "%")) || pct < -100 || pct > 1000) {
		snprintf(err, errsize, "not NAME:-PERCENT%% (a lock's or a site's name, e.g. queue_lock:-50%%): '%s'", spec);
		return -1;
	}
	struct cspec *s = realloc(c->specs, (c->nspecs + 1) * sizeof *s);
	if (!s) {
		snprintf(err, errsize, "%s", strerror(ENOMEM));
		return -1;
	}
	c->specs = s;
	s[c->nspecs].name = strndup(spec, (size_t)(colon - spec));
	s[c->nspecs].factor = 1 + pct / 100;
	s[c->nspecs].matched = 0;
	if (!s[c->nspecs].name) {
		snprintf(err, errsize, "%s", strerror(ENOMEM));
		return -1;
	}
	c->nspecs++;
	if (!c->w && !(c->w = whatif_new())) {
		snprintf(err, errsize, "%s", strerror(ENOMEM));
		return -1;
	}
	return 0;
}

void critical_set_thread(struct critical *c, uint32_t tid) { c->want_tid = tid; }
void critical_observe(struct critical *c, const struct critical_observer *o) { c->obs = *o; }

int critical_late_sites(struct critical *c)
{
	c->late_sites = !c->nspecs && !c->obs.wait && !c->spans;
	return c->late_sites;
}
void critical_set_trace_cost(struct critical *c, double ps) { c->trace_path_ps = ps; }

void critical_set_window(struct critical *c, uint64_t from_ns, uint64_t to_ns)
{
	c->from_ns = from_ns;
	c->to_ns = to_ns;
}

static int advance_one(void *ctx, struct mthread *t)
{
	struct critical *c = ctx;
	struct cthr *th = ptt_map_get(&c->threads, t->serial);
	if (th)
		advance(c, th, c->last_ns);
	return 0;
}

static int seal_one(void *ctx, struct mthread *t)
{
	struct critical *c = ctx;
	struct cthr *th = ptt_map_get(&c->threads, t->serial);
	if (!th)
		return 0;
	if (th->waiting) { /* the wait is cut at the window's start: its part before it is off the path */
		append(c, th, CK_UNKNOWN, th->wait_ctx, th->at, c->from_ns); /* sealed below, never walked */
		th->at = c->from_ns;
	} else {
		advance(c, th, c->from_ns);
	}
	if (!th->head)
		th->head = node_new(c, th, NULL, th->at);
	if (th->head)
		th->head->sealed = 1;
	return 0;
}

/* ---- spans ---- */

void critical_spans(struct critical *c) { c->spans = 1; }

static unsigned hbucket(uint64_t ns)
{
	if (ns < SPAN_SUB)
		return (unsigned)ns;
	unsigned e = 63u - (unsigned)__builtin_clzll(ns);
	unsigned b = e * SPAN_SUB + (unsigned)((ns >> (e - 4)) & (SPAN_SUB - 1));
	return b < SPAN_BUCKETS ? b : SPAN_BUCKETS - 1;
}

/* The middle of bucket b's values. */
static double hvalue(unsigned b)
{
	if (b < SPAN_SUB)
		return b;
	unsigned e = b / SPAN_SUB, sub = b % SPAN_SUB;
	double lo = (double)((uint64_t)(SPAN_SUB + sub) << (e - 4));
	return lo + (double)(1ull << (e - 4)) / 2;
}

/* The q-quantile (0..1) of n values, of which zeros are 0 and the rest in h. */
static double hquantile(const uint32_t *h, uint64_t n, uint64_t zeros, double q)
{
	uint64_t rank = (uint64_t)(q * (double)n + 0.999999);
	if (!rank)
		rank = 1;
	if (rank <= zeros || !h)
		return 0;
	rank -= zeros;
	uint64_t seen = 0;
	for (unsigned b = 0; b < SPAN_BUCKETS; b++)
		if ((seen += h[b]) >= rank)
			return hvalue(b);
	return 0;
}

static uint64_t span_key(uint32_t pid, uint32_t kind, uint64_t key)
{
	uint64_t h = key * 0x9E3779B97F4A7C15ull ^ ((uint64_t)pid << 20 | kind);
	h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ull;
	return (h ^ (h >> 29)) | 1;
}

static struct skind *skind_of(struct critical *c, const char *name)
{
	for (unsigned i = 0; i < c->nkinds; i++)
		if (!strcmp(c->kinds[i].name, name))
			return &c->kinds[i];
	struct skind *k = realloc(c->kinds, (c->nkinds + 1) * sizeof *k);
	if (!k)
		return NULL;
	c->kinds = k;
	k = &c->kinds[c->nkinds++];
	memset(k, 0, sizeof *k);
	snprintf(k->name, sizeof k->name, "%s", name);
	return k;
}

/* What a site's row is of besides the site: the object it took or waited for (a site where several are taken,
 * a lock wrapper seen without a stack, a join loop, has a row for each, not one named after the last). */
static uint64_t site_of_what(const struct cctx *cx)
{
	return ptt_obj_key(cx->pid, cx->obj);
}

/* As row_of, for a span kind's tables (t: 0 objects, 1 sites, a site's row one per object: of) */
static struct srow *srow_of(struct skind *k, int t, uint32_t pid, uint64_t key, unsigned cls, uint64_t of, uint32_t *index)
{
	uint64_t hk = (ptt_obj_key(pid, key) * 0x9E3779B97F4A7C15ull ^ of * 0xff51afd7ed558ccdull) | 1;
	uintptr_t i = (uintptr_t)ptt_map_get(&k->idx[t], hk);
	if (!i) {
		struct srow *r = realloc(k->rows[t], (k->nrows[t] + 1) * sizeof *r);
		if (!r)
			return NULL;
		k->rows[t] = r;
		r[k->nrows[t]] = (struct srow){ pid, 0, key, (uint8_t)cls, 0, 0, 0, NULL };
		i = ++k->nrows[t];
		ptt_map_put(&k->idx[t], hk, (void *)i);
	}
	*index = (uint32_t)(i - 1);
	return &k->rows[t][i - 1];
}

static void sacc_add(struct critical *c, int t, uint32_t row, uint64_t ns)
{
	for (unsigned i = 0; i < c->nsacc; i++)
		if (c->sacc[i].table == t && c->sacc[i].row == row) {
			c->sacc[i].ns += ns;
			return;
		}
	if (PTT_GROW(c->sacc, &c->capsacc, c->nsacc + 1) != 0)
		return;
	c->sacc[c->nsacc++] = (struct sacc){ (uint8_t)t, row, ns };
}

/* ns of an entry of kind in ctx on a span's path: its parts, and every hold around it (once an object), or the wait. */
static void span_account(struct critical *c, struct skind *k, unsigned kind, uint32_t ctx, uint64_t ns)
{
	k->part[kind] += ns;
	if (kind == CK_RUN && !ctx)
		k->free_run += ns;
	for (uint32_t x = ctx; x; x = c->ctx[x].parent) {
		const struct cctx *cx = &c->ctx[x];
		int again = 0;
		for (uint32_t y = cx->parent; y && !again; y = c->ctx[y].parent)
			again = c->ctx[y].obj == cx->obj && c->ctx[y].pid == cx->pid;
		if (again)
			continue;
		uint32_t i;
		struct srow *o = srow_of(k, 0, cx->pid, cx->obj, cx->cls, 0, &i);
		if (o) {
			*(kind == CK_RUN ? &o->held : &o->waited) += ns;
			sacc_add(c, 0, i, ns);
		}
		struct srow *st = cx->site ? srow_of(k, 1, cx->pid, cx->site, cx->cls, site_of_what(cx), &i) : NULL;
		if (st) {
			*(kind == CK_RUN ? &st->held : &st->waited) += ns;
			st->ctx = x;
			sacc_add(c, 1, i, ns);
		}
	}
}

static void hadd(uint32_t **h, uint64_t ns)
{
	if (!*h && !(*h = calloc(SPAN_BUCKETS, sizeof **h)))
		return;
	(*h)[hbucket(ns)]++;
}

/*
 * A span of kind k began at tb ends at th's present: the path ending there,
 * walked back to tb, summed per part, object and site.  A stretch from
 * before tb is cut at it: exactly when it is of one kind in one context (a
 * hand-off, a start), else pro rata over its entries.
 */
static void span_close(struct critical *c, struct skind *k, struct cthr *th, uint64_t tb)
{
	uint64_t te = th->at, len = te > tb ? te - tb : 0, covered = 0;
	c->nsacc = 0;
	for (const struct cnode *n = th->head; n && n->to > tb; n = n->prev) {
		uint64_t elen = 0;
		int same = 1;
		for (uint32_t i = 0; i < n->n; i++) {
			elen += n->e[i].ns;
			same = same && n->e[i].kind == n->e[0].kind && n->e[i].ctx == n->e[0].ctx;
		}
		uint64_t inside = n->from >= tb ? elen : n->to - tb;
		if (inside > elen)
			inside = elen;
		if (n->from < tb && !same)
			k->prorata += inside;
		for (uint32_t i = 0; i < n->n; i++) {
			uint64_t ns = n->from >= tb ? n->e[i].ns
						    : (uint64_t)((double)n->e[i].ns * (double)inside / (double)elen + 0.5);
			span_account(c, k, n->e[i].kind, n->e[i].ctx, ns);
		}
		covered += inside;
	}
	if (covered < len) /* before the path's first stretch: a start the trace does not show */
		span_account(c, k, CK_UNKNOWN, 0, len - covered);
	k->count++;
	k->total += len;
	k->h[hbucket(len)]++;
	for (unsigned i = 0; i < c->nsacc; i++) {
		struct srow *r = &k->rows[c->sacc[i].table][c->sacc[i].row];
		r->n++;
		hadd(&r->h, c->sacc[i].ns);
	}
}

/* A span's begin or end (a user event "ptt.span.KIND" of th's). */
static void span_event(struct critical *c, struct cthr *th, const struct ptt_event *ev)
{
	struct skind *k = skind_of(c, ev->type->name + 9);
	if (!k)
		return;
	uint32_t kind = (uint32_t)(k - c->kinds);
	uint64_t key = ptt_event_arg(ev, "key", 0), h = span_key(ev->pid, kind, key);
	struct sopen *o = ptt_map_get(&c->open_spans, h);
	if (o && (o->pid != ev->pid || o->kind != kind || o->key != key)) { /* two spans on one hash: the new one is left out */
		c->span_clashes++;
		return;
	}
	if (!ptt_event_arg(ev, "end", 0)) {
		if (o) { /* begun again before its end: the new begin counts */
			unsnap(c, &o->begin);
			k->open--;
		} else if (!(o = calloc(1, sizeof *o)) || ptt_map_put(&c->open_spans, h, o)) {
			free(o);
			return;
		}
		*o = (struct sopen){ ev->pid, kind, key, ev->ns, snap(c, th) };
		k->open++;
		return;
	}
	if (!o) {
		c->span_orphans++;
		return;
	}
	span_close(c, k, th, o->tb);
	k->open--;
	unsnap(c, &o->begin);
	free(ptt_map_del(&c->open_spans, h));
}

static int by_srow(const void *a, const void *b)
{
	const struct srow *x = a, *y = b;
	uint64_t p = x->held + x->waited, q = y->held + y->waited;
	return p < q ? 1 : p > q ? -1 : (x->key > y->key) - (x->key < y->key);
}

static const char *obj_name(const struct critical *c, uint32_t pid, uint64_t addr, unsigned cls, char *buf, size_t size);
static const char *class_word(const struct critical *c, const struct critical_obj *o);
static double ms(uint64_t ns);
static double pct(uint64_t part, uint64_t whole);

void critical_print_spans(const struct critical *c, unsigned top, FILE *out)
{
	if (!c->nkinds) {
		fprintf(out, "spans: none in the trace (ptt_span_begin and ptt_span_end, ptt(3))\n");
		return;
	}
	char name[512];
	for (unsigned i = 0; i < c->nkinds; i++) {
		struct skind *k = &c->kinds[i];
		fprintf(out, "%sSPANS %s: %" PRIu64 " ended", i ? "\n" : "", k->name, k->count);
		if (k->open)
			fprintf(out, ", %" PRIu64 " still open where the trace ends (left out)", k->open);
		fprintf(out, "\n  length      total %.3f ms, p50 %.3f ms, p99 %.3f ms\n", ms(k->total),
			hquantile(k->h, k->count, 0, 0.5) / 1e6, hquantile(k->h, k->count, 0, 0.99) / 1e6);
		uint64_t t = k->total;
		fprintf(out, "  their critical paths: running %.1f %% (holding no lock %.1f %%), waiting for a hand-off %.1f %%, "
			     "own waits %.1f %%, thread start-up %.1f %%, unknown %.1f %%\n", pct(k->part[CK_RUN], t),
			pct(k->free_run, t), pct(k->part[CK_HANDOFF], t), pct(k->part[CK_SELF], t), pct(k->part[CK_START], t),
			pct(k->part[CK_UNKNOWN], t));
		if (k->prorata)
			fprintf(out, "  (%.3f ms of it, %.1f %%, in stretches begun before their span: split pro rata over their "
				     "holds)\n", ms(k->prorata), pct(k->prorata, t));
		for (int tb = 0; tb < 2; tb++) {
			if (!k->nrows[tb])
				continue;
			qsort(k->rows[tb], k->nrows[tb], sizeof *k->rows[tb], by_srow);
			fprintf(out, tb ? "  %11s %6s %9s %9s %11s %11s  %s\n" : "  %-34s %-7s %11s %6s %9s %9s %11s %11s\n",
				tb ? "ON PATHS ms" : "OBJECT", tb ? "%" : "CLASS", tb ? "p50 ms" : "ON PATHS ms", tb ? "p99 ms" : "%",
				tb ? "HELD ms" : "p50 ms", tb ? "WAITED ms" : "p99 ms", tb ? "SITE (OBJECT)" : "HELD ms", "WAITED ms");
			for (unsigned r = 0; r < k->nrows[tb] && (!top || r < top); r++) {
				const struct srow *x = &k->rows[tb][r];
				uint64_t on = x->held + x->waited, zeros = k->count - x->n;
				double p50 = hquantile(x->h, k->count, zeros, 0.5) / 1e6, p99 = hquantile(x->h, k->count, zeros, 0.99) / 1e6;
				if (!tb) {
					obj_name(c, x->pid, x->key, x->cls, name, sizeof name);
					fprintf(out, "  %-34s %-7s %11.3f %6.1f %9.3f %9.3f %11.3f %11.3f\n", name, class_word(c, &(struct critical_obj){ .pid = x->pid, .addr = x->key, .cls = x->cls }), ms(on),
						pct(on, t), p50, p99, ms(x->held), ms(x->waited));
				} else {
					char site[512];
					const struct cctx *cx = &c->ctx[x->ctx];
					ptt_syms_code_phrase(c->syms, x->pid, x->key, site, sizeof site);
					obj_name(c, cx->pid, cx->obj, cx->cls, name, sizeof name);
					fprintf(out, "  %11.3f %6.1f %9.3f %9.3f %11.3f %11.3f  %s (%s)\n", ms(on), pct(on, t), p50, p99,
						ms(x->held), ms(x->waited), *site == ' ' ? site + 1 : site, name);
				}
			}
		}
	}
	if (c->span_orphans)
		fprintf(out, "\n%" PRIu64 " span end%s without a begin in the trace (left out)\n", c->span_orphans,
			c->span_orphans > 1 ? "s" : "");
	if (c->span_clashes)
		fprintf(out, "%" PRIu64 " span%s left out: two open spans' keys hashed alike\n", c->span_clashes,
			c->span_clashes > 1 ? "s" : "");
	fprintf(out, "(p50, p99: over every span of the kind, 0 where the object or site was not on its path; from "
		     "histograms of %d buckets per power of two, within 3.2 %%)\n", SPAN_SUB);
}

static void spans_free(struct critical *c)
{
	struct ptt_map_iter it;
	void *v;
	for (ptt_map_iter_init(&it, &c->open_spans); ptt_map_next(&it, NULL, &v);) {
		unsnap(c, &((struct sopen *)v)->begin);
		free(v);
	}
	ptt_map_free(&c->open_spans);
	for (unsigned i = 0; i < c->nkinds; i++)
		for (int t = 0; t < 2; t++) {
			for (unsigned r = 0; r < c->kinds[i].nrows[t]; r++)
				free(c->kinds[i].rows[t][r].h);
			free(c->kinds[i].rows[t]);
			ptt_map_free(&c->kinds[i].idx[t]);
		}
	free(c->kinds);
	free(c->sacc);
}

int critical_event(struct critical *c, const struct ptt_event *ev)
{
	if (c->over)
		return 1;
	if (c->to_ns && ev->ns > c->to_ns) {
		c->over = 1;
		return 1;
	}
	if (!c->any && (!ev->type || ev->type->source != PTT_SRC_RECORDER)) {
		/* the program's first event: the recorder's own start, stamped before it under load, explains none of
		 * the program's time (its 0.6 ms to the program's start was unknown time on the path) */
		c->any = 1;
		c->first_ns = ev->ns;
	}
	c->last_ns = ev->ns;
	if (c->from_ns && !c->sealed && ev->ns >= c->from_ns) {
		c->sealed = 1;
		c->last_ns = c->from_ns;
		model_foreach_thread(c->m, seal_one, c);
		c->last_ns = ev->ns;
	}
	c->cur = ev;
	if (ev->id == PTT_EV_PROCESS_EXEC || ev->id == PTT_EV_PROCESS_BEGIN)
		image_gone(c, ev->pid);
	if (c->compact_at && c->nodes > c->compact_at)
		compact(c);
	if (ev->id == PTT_EV_REC_LOST) { /* the thread ran up to the stretch's start: only the stretch is unknown */
		struct mthread *lt = model_thread_of_tid(c->m, ev->pid, (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_STREAM, 0));
		struct cthr *l = lt ? ptt_map_get(&c->threads, lt->serial) : NULL;
		uint64_t from = ptt_event_argn(ev, PTT_ARGNAME_FROM_NS, 0);
		if (l && from <= ev->ns)
			advance(c, l, from);
	}
	struct cthr *th = thr_of(c, ev->pid, ev->tid);
	if (!th)
		return 0;
	futex_before(c, th, ev);
	advance(c, th, ev->ns);
	if (c->spans && ev->id >= PTT_USER_ID_BASE && ev->type && !strncmp(ev->type->name, "ptt.span.", 9))
		span_event(c, th, ev);
	if (ev->id == PTT_EV_THREAD_CREATE && ptt_event_argn(ev, PTT_ARGNAME_RET, 1) == 0) {
		uint32_t child = (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_CHILD, 0);
		struct csnap *s = child ? malloc(sizeof *s) : NULL;
		if (s) {
			*s = snap(c, th);
			struct csnap *old = ptt_map_get(&c->creates, tkey(ev->pid, child));
			if (old) {
				unsnap(c, old);
				free(old);
				ptt_map_del(&c->creates, tkey(ev->pid, child));
			}
			if (ptt_map_put(&c->creates, tkey(ev->pid, child), s)) {
				unsnap(c, s);
				free(s);
			}
		}
	}
	return 0;
}

void critical_after(struct critical *c, const struct ptt_event *ev)
{
	if (c->over)
		return;
	struct cthr *th = thr_of(c, ev->pid, ev->tid);
	c->cur = NULL;
	if (!th)
		return;
	if (th->waiting && (th->closed || !model_waiting(th->mt))) {
		int64_t ret = (int64_t)ptt_event_argn(ev, PTT_ARGNAME_RET, 0);
		th->lost_wait = !th->closed; /* it ended unseen: the model lost its frame */
		resolve(c, th, ev->ns, ret == ETIMEDOUT || ret == EAGAIN || ret == EINTR);
	}
	if (th->pend_take && !th->waiting) {
		whatif_take(c->w, th->wi, th->pend_lock, th->pend_shared, th->pend_latency);
		th->pend_take = 0;
	}
	count_event(th, ev->ns);
	th->closed = 0;
	futex_after(c, th, ev);
	holds_of(c, th);
}

/* ---- the account ---- */

/* The row of key (an object, a site, a thread) of process pid, made if new; of a site, one per object it took
 * (of: the object; 0 for the other tables), so that a site where several locks are taken (a lock wrapper seen
 * without a stack) is not told as the one it took last. */
static struct crow *row_of(struct crow **rows, unsigned *n, struct ptt_map *idx, uint32_t pid, uint64_t key, unsigned cls,
			   uint64_t of)
{
	uint64_t k = (ptt_obj_key(pid, key) * 0x9E3779B97F4A7C15ull ^ of * 0xff51afd7ed558ccdull) | 1;
	uintptr_t i = (uintptr_t)ptt_map_get(idx, k);
	if (i) {
		if (cls != PTT_CLASS_META && cls)
			(*rows)[i - 1].cls = cls;
		return &(*rows)[i - 1];
	}
	struct crow *r = realloc(*rows, (*n + 1) * sizeof *r);
	if (!r)
		return NULL;
	*rows = r;
	r[*n] = (struct crow){ pid, key, cls, 0, 0, 0 };
	ptt_map_put(idx, k, (void *)(uintptr_t)(*n + 1));
	return &r[(*n)++];
}

static int by_path(const void *a, const void *b)
{
	const struct crow *x = a, *y = b;
	uint64_t p = x->held + x->waited, q = y->held + y->waited;
	return p < q ? 1 : p > q ? -1 : (x->key > y->key) - (x->key < y->key);
}

static int by_running(const void *a, const void *b)
{
	const struct crow *x = a, *y = b;
	return x->held < y->held ? 1 : x->held > y->held ? -1 : (x->key > y->key) - (x->key < y->key);
}

/*
 * A timed wait for a signal or a thread's end that timed out (a condition of
 * no known lock, a join): a timer the thread set (a period, a poll), not
 * another thread's doing; a lock's timed wait that gave up (timedlock, a
 * semaphore or futex, CPython's GIL, a Java monitor) was contention.
 */
static int timer_wait(const struct critical *c, const struct cctx *cx)
{
	if (!cx->wait || (cx->cls != PTT_CLASS_COND && cx->cls != PTT_CLASS_THREAD))
		return 0;
	const struct cobj *o = cx->cls == PTT_CLASS_COND ? ptt_map_get(&c->objects, ptt_obj_key(cx->pid, cx->obj)) : NULL;
	return !o || !o->known;
}

/* One entry of the path into the tables. */
static void account(struct critical *c, const struct cnode *n, const struct centry *e, struct crow **objs, unsigned *nobjs,
		    struct ptt_map *oidx, struct ptt_map *sidx, struct ptt_map *tidx)
{
	struct critical_sum *s = &c->sum;
	switch (e->kind) {
	case CK_RUN: s->running += e->ns; if (!e->ctx) s->running_free += e->ns; break;
	case CK_HANDOFF:
		s->handoff += e->ns;
		if (e->ns > CRITICAL_WAKE_SLOW_NS) {
			s->slow_wake += e->ns - CRITICAL_WAKE_SLOW_NS;
			s->slow_wakes++;
		}
		break;
	case CK_SELF:
		s->self += e->ns;
		if (e->ctx && timer_wait(c, &c->ctx[e->ctx]))
			s->self_timer += e->ns;
		break;
	case CK_UNKNOWN: s->unknown += e->ns; break;
	default: s->start += e->ns; break;
	}
	if (e->kind == CK_RUN) {
		struct crow *t = row_of(&c->thr, &c->nthr, tidx, n->pid, e->tid, 0, 0);
		if (t) {
			t->held += e->ns;
			if (!e->ctx)
				t->waited += e->ns; /* a thread's row: waited counts its running holding no lock */
		}
	}
	/* what the objects on it are given: no unknown time (never guessed), a hand-off's latency up to a
	 * wake-up's (the rest is the scheduler's: the parts say it), no timer's time (timer_wait) */
	uint64_t ns = e->kind == CK_UNKNOWN || (e->kind == CK_SELF && e->ctx && timer_wait(c, &c->ctx[e->ctx])) ? 0
		    : e->kind == CK_HANDOFF && e->ns > CRITICAL_WAKE_SLOW_NS ? CRITICAL_WAKE_SLOW_NS : e->ns;
	if (!ns)
		return;
	if (c->ctx_ns && e->ctx && (e->kind == CK_RUN || e->kind == CK_HANDOFF))
		c->ctx_ns[e->ctx] += ns;
	/* every hold around the time (once per object), or the wait */
	for (uint32_t x = e->ctx; x; x = c->ctx[x].parent) {
		const struct cctx *cx = &c->ctx[x];
		int again = 0;
		for (uint32_t y = c->ctx[x].parent; y && !again; y = c->ctx[y].parent)
			again = c->ctx[y].obj == cx->obj && c->ctx[y].pid == cx->pid;
		if (again)
			continue;
		struct crow *o = row_of(objs, nobjs, oidx, cx->pid, cx->obj, cx->cls, 0);
		struct crow *st = cx->site ? row_of(&c->sites, &c->nsites, sidx, cx->pid, cx->site, 0, site_of_what(cx)) : NULL;
		uint64_t *ho = o ? (e->kind == CK_RUN ? &o->held : &o->waited) : NULL;
		if (ho)
			*ho += ns;
		if (st) {
			*(e->kind == CK_RUN ? &st->held : &st->waited) += ns;
			st->cls = cx->cls;
			st->ctx = x; /* its object, named with the site */
		}
	}
}

void critical_finish(struct critical *c, uint64_t end_ns)
{
	uint64_t end = c->to_ns && c->to_ns < end_ns ? c->to_ns : end_ns;
	if (!c->any)
		return;
	if (end > c->last_ns)
		c->last_ns = end;
	c->over = 0;
	/* the threads alive at the end: their time up to it, and where the path may end */
	model_foreach_thread(c->m, advance_one, c);
	struct ptt_map_iter it;
	void *v;
	for (ptt_map_iter_init(&it, &c->threads); ptt_map_next(&it, NULL, &v);) {
		struct cthr *th = v;
		if (!th->waiting)
			maybe_final(c, th, 0);
		else if (c->obs.wait && end > th->at) { /* still waiting where the trace ends: no edge to know */
			struct critical_wait w = { th->pid, th->tid, th->serial, 0, th->at, end, 0,
						   th->wait_ctx ? c->ctx[th->wait_ctx].obj : 0, CRITICAL_WAIT_OPEN, 0 };
			c->obs.wait(c->obs.ctx, &w);
		}
		if (c->obs.thread)
			c->obs.thread(c->obs.ctx, th->serial, th->pid, th->tid, end, 1);
	}
	c->over = 1;
	for (uint32_t x = 1; c->late_sites && x < c->nctx; x++)
		name_site(c, &c->ctx[x]);
	c->late_sites = 0;
	if (!c->final.valid)
		return;
	struct critical_sum *s = &c->sum;
	uint64_t from = c->from_ns > c->first_ns ? c->from_ns : c->first_ns;
	s->to_ns = c->final.t;
	s->from_ns = from;
	s->end_tid = c->final.tid;
	s->end_pid = c->final_pid;
	struct crow *objs = NULL;
	unsigned nobjs = 0;
	struct ptt_map oidx = { 0 }, sidx = { 0 }, tidx = { 0 };
	uint64_t covered = 0, root = s->to_ns;
	int contiguous = 1;
	c->ctx_ns = calloc(c->nctx ? c->nctx : 1, sizeof *c->ctx_ns);
	for (const struct cnode *n = c->final.node; n && n->to > from; n = n->prev) {
		uint64_t len = 0;
		for (uint32_t i = 0; i < n->n; i++) {
			account(c, n, &n->e[i], &objs, &nobjs, &oidx, &sidx, &tidx);
			len += n->e[i].ns;
		}
		if (len != n->to - n->from || n->to != root)
			contiguous = 0;
		covered += len;
		s->events += n->events;
		root = n->from;
	}
	if (root > from) { /* before the path's first stretch: a thread whose start the trace does not explain */
		s->unknown += root - from;
		covered += root - from;
	}
	s->length = s->to_ns > from ? s->to_ns - from : 0;
	s->checked = contiguous && covered == s->length;
	if (c->nspecs) {
		s->actual_ns = (double)(c->final.t - c->first_ns);
		s->predicted_ns = c->final.nt - (double)c->first_ns; /* hand-offs in their recorded order */
		unsigned stuck = 0;
		if (c->w && !whatif_replay(c->w, &stuck))
			s->predicted_ns = whatif_time(c->w, c->final.wi, c->final.wsteps) - (double)c->first_ns;
		c->replay_stuck = (int)stuck;
		c->replay_forced = c->w ? whatif_forced(c->w) : 0;
	}
	/* objects: with every thread's waits beside the path's */
	c->objs = calloc(nobjs ? nobjs : 1, sizeof *c->objs);
	if (nobjs)
		qsort(objs, nobjs, sizeof *objs, by_path);
	for (unsigned i = 0; c->objs && i < nobjs; i++) {
		const struct cobj *o = ptt_map_get(&c->objects, ptt_obj_key(objs[i].pid, objs[i].key));
		ptt_map_put(&c->objs_by_key, ptt_obj_key(objs[i].pid, objs[i].key), (void *)(uintptr_t)(c->nobjs + 1));
		c->objs[c->nobjs++] = (struct critical_obj){ objs[i].pid, objs[i].key, objs[i].cls, objs[i].held, objs[i].waited,
							   o ? o->total_wait : 0, o ? o->waits : 0 };
	}
	free(objs);
	if (c->nsites) /* qsort of NULL: undefined even for none */
		qsort(c->sites, c->nsites, sizeof *c->sites, by_path);
	if (c->nthr)
		qsort(c->thr, c->nthr, sizeof *c->thr, by_running);
	ptt_map_free(&oidx);
	ptt_map_free(&sidx);
	ptt_map_free(&tidx);
}

const struct critical_obj *critical_object(const struct critical *c, unsigned i)
{
	return c && i < c->nobjs ? &c->objs[i] : NULL;
}

const struct critical_sum *critical_summary(const struct critical *c) { return &c->sum; }

const struct critical_obj *critical_object_of(const struct critical *c, uint32_t pid, uint64_t addr)
{
	uintptr_t i = c ? (uintptr_t)ptt_map_get(&c->objs_by_key, ptt_obj_key(pid, addr)) : 0;
	return i ? &c->objs[i - 1] : NULL;
}

int critical_foreach_stretch(const struct critical *c, int (*fn)(void *ctx, const struct critical_stretch *s), void *ctx)
{
	uint64_t from = c->from_ns > c->first_ns ? c->from_ns : c->first_ns;
	for (const struct cnode *n = c->final.valid ? c->final.node : NULL; n && n->to > from; n = n->prev) {
		struct critical_stretch s = { n->pid, n->tid, 0, n->from, n->to, 0, 0 };
		if (n->prev && n->prev->tid != n->tid && n->prev->to > from)
			s.from_tid = n->prev->tid;
		for (uint32_t i = 0; i < n->n; i++)
			*(n->e[i].kind == CK_RUN ? &s.running : &s.waiting) += n->e[i].ns;
		int rc = fn(ctx, &s);
		if (rc)
			return rc;
	}
	return 0;
}

/* An object's name; a join's "join of THREAD". */
static const char *obj_name(const struct critical *c, uint32_t pid, uint64_t addr, unsigned cls, char *buf, size_t size);

/*
 * --flame=critical: the path's time per stack, "frame;...;[held OBJ] NS" for
 * running inside holds (the innermost hold's stack), "[waited OBJ]" for its
 * waits, "THREAD;[running, no lock]" and "[unknown]" for the rest: the lines
 * add up to the path's length.
 */
void critical_print_folded(const struct critical *c, FILE *out)
{
	char name[512];
	const struct ptt_stacks *stacks = model_stacks(c->m);
	for (uint32_t x = 1; c->ctx_ns && x < c->nctx; x++) {
		const struct cctx *cx = &c->ctx[x];
		if (!c->ctx_ns[x])
			continue;
		if (cx->gone)
			lockframes_fold_frames(c->syms, cx->pid, cx->frames, cx->nframes, cx->site, out);
		else
			lockframes_fold(c->syms, stacks, cx->pid, cx->stack, cx->site, out);
		obj_name(c, cx->pid, cx->obj, cx->cls, name, sizeof name);
		fprintf(out, "[%s %s] %" PRIu64 "\n", cx->wait ? "waited" : "held", lockframes_fold_word(name), c->ctx_ns[x]);
	}
	for (unsigned i = 0; i < c->nthr; i++)
		if (c->thr[i].waited) {
			ptt_syms_thread_name(c->syms, c->thr[i].pid, (uint32_t)c->thr[i].key, name, sizeof name);
			fprintf(out, "%s;[running, no lock] %" PRIu64 "\n", lockframes_fold_word(name), c->thr[i].waited);
		}
	if (c->sum.slow_wake)
		fprintf(out, "[slow wake-ups] %" PRIu64 "\n", c->sum.slow_wake);
	uint64_t other = c->sum.self + c->sum.start;
	if (other)
		fprintf(out, "[own waits and thread start-up] %" PRIu64 "\n", other);
	if (c->sum.unknown)
		fprintf(out, "[unknown] %" PRIu64 "\n", c->sum.unknown);
}

static double ms(uint64_t ns) { return (double)ns / 1e6; }
static double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0; }

const char *critical_object_name(const struct critical *c, const struct critical_obj *o, char *buf, size_t size)
{
	return obj_name(c, o->pid, o->addr, o->cls, buf, size);
}

/* The known lock (knownlock.h) whose condition addr of process pid is, or KL_NONE. */
static enum knownlock known_of(const struct critical *c, uint32_t pid, uint64_t addr, unsigned cls)
{
	const struct cobj *o = cls == PTT_CLASS_COND ? ptt_map_get(&c->objects, ptt_obj_key(pid, addr)) : NULL;
	return o ? (enum knownlock)o->known : KL_NONE;
}

static const char *obj_name(const struct critical *c, uint32_t pid, uint64_t addr, unsigned cls, char *buf, size_t size)
{
	const char *kind = knownlock_name(known_of(c, pid, addr, cls));
	if (kind) { /* "Java monitor (0x7f...)" as ptt-stat names it; the GIL's symbol says so already */
		char sym[256];
		ptt_syms_object_name(c->syms, pid, addr, sym, sizeof sym);
		if (strncmp(sym, kind, strlen(kind)) == 0)
			snprintf(buf, size, "%s", sym);
		else
			snprintf(buf, size, "%s (%s)", kind, sym);
		return buf;
	}
	if (cls != PTT_CLASS_THREAD)
		return ptt_syms_object_name(c->syms, pid, addr, buf, size);
	char t[200];
	snprintf(buf, size, "join of %s", ptt_syms_thread_name(c->syms, pid, (uint32_t)addr, t, sizeof t));
	return buf;
}

/* The CLASS column: the trace's class names, a join's "join", a known lock's condition "lock", none "-". */
static const char *class_word(const struct critical *c, const struct critical_obj *o)
{
	unsigned cls = o->cls;
	if (known_of(c, o->pid, o->addr, cls) != KL_NONE)
		return "lock";
	return cls == PTT_CLASS_THREAD ? "join" : cls == PTT_CLASS_META || cls >= PTT_CLASS_COUNT ? "-" : ptt_class_name(cls);
}

void critical_print(const struct critical *c, unsigned top, FILE *out)
{
	const struct critical_sum *s = &c->sum;
	char name[256], tname[256];
	if (!s->length && !c->final.valid) {
		fprintf(out, "critical path: none (no thread's time in the trace%s)\n", c->from_ns ? " or its window" : "");
		return;
	}
	ptt_syms_thread_name(c->syms, s->end_pid, s->end_tid, tname, sizeof tname);
	fprintf(out, "critical path: %.3f ms, from %.3f to %.3f ms, ending where %s (%" PRIu32 ") ends\n", ms(s->length),
		ms(s->from_ns), ms(s->to_ns), tname, host_local(s->end_tid)); /* as its host gave it (ptt-merge) */
	fprintf(out, "  check: %s\n",
		s->checked ? "its stretches cover the window end to end, each once"
			   : "its stretches do NOT cover the window exactly (out of memory?): figures are partial");
	if (c->to_ns && s->to_ns < c->to_ns) /* the threads alive then were waiting: no path ends inside a wait */
		fprintf(out, "  the window asked ends at %.3f ms, where every thread was ended or waiting: the path ends "
			     "where one last ran\n", ms(c->to_ns));
	fprintf(out, "  running                 %10.3f ms %5.1f %%  (holding no lock: %.3f ms)\n", ms(s->running),
		pct(s->running, s->length), ms(s->running_free));
	fprintf(out, "  waiting for a hand-off  %10.3f ms %5.1f %%\n", ms(s->handoff), pct(s->handoff, s->length));
	if (s->slow_wake)
		fprintf(out, "    of it, wake-ups past 1 ms: %.3f ms (%.1f %%) in %" PRIu64 " hand-off%s: the scheduler's time (a busy "
			     "machine, a thread slow to exit), given to no object below\n",
			ms(s->slow_wake), pct(s->slow_wake, s->length), s->slow_wakes, s->slow_wakes > 1 ? "s" : "");
	fprintf(out, "  own waits (timeouts)    %10.3f ms %5.1f %%\n", ms(s->self), pct(s->self, s->length));
	if (s->self_timer)
		fprintf(out, "    of it, timed waits for a signal or a thread's end that timed out: %.3f ms (%.1f %%): timers the "
			     "threads set (a period, a poll), no other thread's doing, given to no object below\n",
			ms(s->self_timer), pct(s->self_timer, s->length));
	fprintf(out, "  thread start-up         %10.3f ms %5.1f %%\n", ms(s->start), pct(s->start, s->length));
	fprintf(out, "  unknown                 %10.3f ms %5.1f %%%s\n", ms(s->unknown), pct(s->unknown, s->length),
		s->unknown ? "  (lost events, wakers ptt cannot see, a start the trace does not show)" : "");
	if (c->trace_path_ps > 0 && s->events) {
		double own = (double)s->events * c->trace_path_ps / 1e3;
		fprintf(out, "  of it ptt's own recording: about %.3f ms (%" PRIu64 " events on the path, %.1f ns each), in the "
			     "running and held times: untraced, the path is that much shorter\n",
			own / 1e6, s->events, c->trace_path_ps / 1e3);
	}
	fprintf(out, "\nWHAT TO FIX FIRST (objects by their time on the critical path)\n");
	fprintf(out, "%-36s %-7s %11s %6s %11s %11s %12s %8s\n", "OBJECT", "CLASS", "ON PATH ms", "%", "HELD ms", "WAITED ms",
		"ALL WAITS ms", "WAITS");
	unsigned shown = 0;
	for (unsigned i = 0; i < c->nobjs && (!top || shown < top); i++, shown++) {
		const struct critical_obj *o = &c->objs[i];
		obj_name(c, o->pid, o->addr, o->cls, name, sizeof name);
		fprintf(out, "%-36s %-7s %11.3f %6.1f %11.3f %11.3f %12.3f %8" PRIu64 "\n", name, class_word(c, o),
			ms(o->held_ns + o->waited_ns), pct(o->held_ns + o->waited_ns, s->length), ms(o->held_ns),
			ms(o->waited_ns), ms(o->total_wait_ns), o->waits);
	}
	if (!c->nobjs)
		fprintf(out, "(no lock is held or waited for on the path)\n");
	unsigned unwaited = 0, listed = 0;
	for (unsigned i = 0; i < c->nobjs && (!top || i < top); i++, listed++)
		unwaited += !c->objs[i].waited_ns && c->objs[i].cls != PTT_CLASS_THREAD;
	if (unwaited) { /* their time is work done under them: a faster lock would not shorten it */
		char who[64];
		if (unwaited == listed)
			snprintf(who, sizeof who, "%s", listed > 1 ? "none of these was" : "it was never");
		else
			snprintf(who, sizeof who, "%u of these %s never", unwaited, unwaited > 1 ? "were" : "was");
		fprintf(out, "(%s waited for on the path: %s time on it is the work done holding %s, which only faster code "
			     "shortens, not a better lock)\n",
			who, unwaited > 1 ? "their" : "its", unwaited > 1 ? "them" : "it");
	}
	const struct critical_obj *most = NULL; /* the object the path's work held most */
	unsigned futex_held = 0;
	for (unsigned i = 0; i < c->nobjs; i++) {
		const struct critical_obj *o = &c->objs[i];
		if (o->cls != PTT_CLASS_THREAD && (!most || o->held_ns > most->held_ns))
			most = o;
		futex_held += o->cls == PTT_CLASS_FUTEX && o->held_ns && (!top || i < top); /* a row shown */
	}
	if (futex_held)
		fprintf(out, "(a futex lock's HELD: from a woken wait on it to the wake that let it go, the holds taken after "
			     "waiting; a hold taken without waiting is not seen: at least that)\n");
	/* the objects' part of the hand-offs: a slow wake-up's time past the first millisecond is the scheduler's */
	uint64_t objects_handoff = s->handoff > s->slow_wake ? s->handoff - s->slow_wake : 0;
	if (c->nobjs && s->length && pct(objects_handoff, s->length) < 1.0 && pct(s->unknown, s->length) < 1.0) {
		fprintf(out, "(waiting for hand-offs is only %.1f %% of the path%s: no lock's waits set this run's length, its "
			     "threads' own work does", pct(objects_handoff, s->length),
			s->slow_wake ? " past the slow wake-ups" : "");
		if (most && pct(most->held_ns, s->length) >= 1.0) {
			obj_name(c, most->pid, most->addr, most->cls, name, sizeof name);
			fprintf(out, "; %.1f %% of the path is that work done holding %s: shorter holds would shorten it, a "
				     "faster lock would not", pct(most->held_ns, s->length), name);
		}
		fprintf(out, ")\n");
	}
	if (c->nsites) {
		fprintf(out, "\nSITES ON THE PATH (first frame past the lock layer: where a lock on the path was taken or waited for)\n");
		fprintf(out, "%11s %11s %11s  %s\n", "ON PATH ms", "HELD ms", "WAITED ms", "SITE (OBJECT)");
		for (unsigned i = 0; i < c->nsites && (!top || i < top); i++) {
			const struct crow *r = &c->sites[i];
			const struct cctx *x = &c->ctx[r->ctx];
			char site[512];
			ptt_syms_code_phrase(c->syms, r->pid, r->key, site, sizeof site);
			obj_name(c, x->pid, x->obj, x->cls, name, sizeof name);
			fprintf(out, "%11.3f %11.3f %11.3f  %s (%s)\n", ms(r->held + r->waited), ms(r->held), ms(r->waited),
				*site == ' ' ? site + 1 : site, name);
		}
	}
	fprintf(out, "\nTHREADS ON THE PATH (their running time on it)\n");
	fprintf(out, "%11s %6s  %s\n", "RUNNING ms", "%", "THREAD");
	for (unsigned i = 0; i < c->nthr && (!top || i < top); i++) {
		const struct crow *r = &c->thr[i];
		ptt_syms_thread_name(c->syms, r->pid, (uint32_t)r->key, tname, sizeof tname);
		fprintf(out, "%11.3f %6.1f  %s (%" PRIu64 ")\n", ms(r->held), pct(r->held, s->length), tname,
			r->key <= UINT32_MAX ? host_local((uint32_t)r->key) : r->key);
	}
	for (unsigned i = 0; i < c->nspecs; i++) {
		const struct cspec *sp = &c->specs[i];
		if (!i)
			fprintf(out, "\nWHAT IF (the happens-before graph replayed with new hold times: locks go to their longest "
				     "waiter, every other hand-off in its recorded order)\n");
		fprintf(out, "  %s: holds %s%.0f %%%s\n", sp->name, sp->factor >= 1 ? "+" : "", (sp->factor - 1) * 100,
			sp->matched ? "" : "  -- no lock or site of that name in the trace: nothing changed");
	}
	if (c->fx_whole || c->fx_part)
		fprintf(out, "  (a futex lock: %" PRIu64 " hold%s seen from a woken wait's end to the wake, %" PRIu64 " known only "
			     "from a waiter's arrival, taken before it where no event says: the prediction is at most that "
			     "shorter)\n", c->fx_whole, c->fx_whole == 1 ? "" : "s", c->fx_part);
	if (c->replay_forced)
		fprintf(out, "  (uncertain: %u take%s of a lock held across another wait would block for ever in the new order; "
			     "the replay let %s happen as recorded, holds overlapping)\n", c->replay_forced,
			c->replay_forced > 1 ? "s" : "", c->replay_forced > 1 ? "them" : "it");
	if (c->replay_stuck)
		fprintf(out, "  (the replay with locks handed to their longest waiter left %d thread%s blocked: the "
			     "prediction keeps every hand-off's recorded order)\n", c->replay_stuck, c->replay_stuck > 1 ? "s" : "");
	if (c->nspecs)
		fprintf(out, "predicted: %.3f ms (the run as recorded: %.3f ms; %+.1f %%)\n", s->predicted_ns / 1e6,
			s->actual_ns / 1e6, s->actual_ns > 0 ? 100 * (s->predicted_ns - s->actual_ns) / s->actual_ns : 0);
}

static void free_snap(void *v) { free(v); }

void critical_free(struct critical *c)
{
	if (!c)
		return;
	spans_free(c);
	struct ptt_map_iter it;
	void *v;
	for (ptt_map_iter_init(&it, &c->threads); ptt_map_next(&it, NULL, &v);) {
		struct cthr *th = v;
		unsnap(c, &th->edge);
		deref(c, th->head);
		free(th);
	}
	struct ptt_map *snaps[] = { &c->creates, &c->ended };
	for (unsigned k = 0; k < 2; k++) {
		for (ptt_map_iter_init(&it, snaps[k]); ptt_map_next(&it, NULL, &v);)
			unsnap(c, v);
		ptt_map_free_with(snaps[k], free_snap);
	}
	for (ptt_map_iter_init(&it, &c->objects); ptt_map_next(&it, NULL, &v);) {
		unsnap(c, &((struct cobj *)v)->last);
		free(v);
	}
	unsnap(c, &c->final);
	ptt_map_free(&c->threads);
	ptt_map_free(&c->bytid);
	ptt_map_free(&c->objects);
	ptt_map_free(&c->joins);
	ptt_map_free(&c->ctxmap);
	for (unsigned i = 0; i < c->nspecs; i++)
		free(c->specs[i].name);
	free(c->specs);
	whatif_free(c->w);
	for (uint32_t i = 1; i < c->nctx; i++)
		free(c->ctx[i].frames);
	free(c->ctx);
	free(c->objs);
	ptt_map_free(&c->objs_by_key);
	free(c->ctx_ns);
	free(c->sites);
	free(c->thr);
	for (struct cnode *n = c->spare, *next; n; n = next) {
		next = n->prev;
		free(n->e);
		free(n);
	}
	free(c->scratch);
	free(c);
}
