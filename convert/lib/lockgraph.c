/*
 * lockgraph.c - lock-order cycles and wait-for cycles (at the end of the
 * trace, and when a process exits), over the one model.
 *
 * Try-acquisitions.  A successful try orders what the thread holds before
 * it only when the try is the fast path of a blocking acquisition: when the
 * trace shows, at the same call site (or on the same object, for a trace
 * without sites), a try that failed and was followed by the same thread
 * asking for the same object blocking, before it gave up any lock it held
 * at the try (CPython: sem_trywait, then sem_wait or sem_clockwait).  A try
 * whose failure makes the thread back off (release what it holds) is an
 * honest non-blocking attempt and orders nothing.  A lock taken by a try is
 * held like any other: blocking for another lock while holding it orders
 * them, whatever the try.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "entity_name.h"
#include "fidelity.h"
#include "knownlock.h"
#include "lockframes.h"
#include "lockgraph.h"
#include "model.h"
#include "symbols.h"

struct node {
	uint32_t pid;
	uint64_t addr;
	struct edge **out;
	size_t nout, capout;
	int index, low, on_stack; /* Tarjan */
	int comp;
	unsigned fast : 1;	/* a failed try of it was followed by a blocking request (see above) */
	uint32_t serial;	/* creation order: edges are keyed by it, two objects never share one */
};

/* A thread's takings of the order: its hold of A from `from` to `to` (B asked for), its first and its
 * latest.  A lost stretch of that thread (a release of A unseen) inside a hold could explain the order. */
#define SAMPLES 8
struct occurrence {
	uint32_t tid;
	uint64_t from[2], to[2]; /* [0] the first, [1] the latest */
};

struct edge {
	struct node *from, *to;
	struct occurrence seen[SAMPLES]; /* the first SAMPLES threads that took it */
	unsigned nseen;
	uint32_t first_tid, other_tid; /* a second thread that took the same order, if any */
	uint32_t first_pid;            /* first_tid's process (its sites and stacks are that process's) */
	uint64_t first_ns;
	uint64_t held_site, taken_site; /* the first time: where A was taken, then where B was asked for */
	uint32_t held_stack, taken_stack; /* their stacks (model_stacks), 0 unknown */
	/* seen with A held exclusively / shared, with B asked exclusively / shared (rwlocks) */
	unsigned held_excl : 1, held_shared : 1, want_excl : 1, want_shared : 1;
	unsigned blocking : 1;	/* seen with B asked for by a call that may block */
	unsigned live : 1;	/* takes part in the cycles (blocking, or a fast-path try) */
	uint64_t *trysites;	/* else the sites (ptt_obj_key) of the successful tries that made it */
	size_t ntry, captry;
};

/* A thread's last failed try, until it asks for the same object blocking (a fast path) or backs off. */
struct pending {
	uint64_t obj, site, ns;
};

struct lockgraph {
	struct model *model;
	struct ptt_map nodes, edges;
	struct ptt_map signallers;  /* (pid, cond) -> struct signallers */
	struct ptt_map takers;      /* (pid, semaphore) -> struct signallers: the threads that took a unit of it */
	struct ptt_map pending;     /* (pid, tid) -> struct pending */
	struct ptt_map fast_sites;  /* (pid, site) of tries that are fast paths of blocking acquisitions */
	char *exited;            /* the deadlocks found as processes exited, printed with the others */
	size_t exited_len;
	FILE *exited_out;
	int exited_found, exited_unverified;
	/* the cycles found as processes exited, judged at the end (a rec_lost may come after): where each heading goes */
	struct exit_cycle {
		size_t at;              /* offset in exited */
		uint32_t pid;
		size_t n;
		struct exit_wait { uint32_t tid; uint64_t begin_ns; } *w; /* the set's waits */
	} *exit_cycles;
	size_t nexit_cycles, capexit_cycles;
	const struct loss *loss;   /* where events may be lost (fidelity.h): no finding is built there */
	struct node **all;
	size_t nall, capall;
	struct ptt_syms *syms;   /* and the names it learns (ptt_syms_names) */
	int tarjan_index;
	struct node **stack;
	size_t sp;
	struct fidelity_blind blind; /* what the trace cannot show */
	struct ptt_map cycled;      /* (pid, tid) of the threads of a cycle found (as a process exited or at the end) */
	char *forever;              /* the threads blocked for ever found as processes exited, printed at the end */
	size_t forever_len;
	FILE *forever_out;
	int forever_found, forever_weak, forever_unknown; /* ... of which owners unknown (futex, Java monitor) */
};

static void exited(struct lockgraph *g, uint32_t pid);
static void forever_cut(struct lockgraph *g, const struct ptt_event *ev);

static struct node *node_of(struct lockgraph *g, uint32_t pid, uint64_t addr)
{
	struct node *n = ptt_map_get(&g->nodes, ptt_obj_key(pid, addr));
	if (n)
		return n;
	if (PTT_GROW(g->all, &g->capall, g->nall + 1) != 0)
		return NULL;
	n = calloc(1, sizeof *n);
	if (!n || ptt_map_put(&g->nodes, ptt_obj_key(pid, addr), n)) {
		free(n);
		return NULL;
	}
	n->pid = pid;
	n->addr = addr;
	n->index = -1;
	n->serial = (uint32_t)g->nall;
	g->all[g->nall++] = n;
	return n;
}

static void edge_modes(struct edge *e, int a_shared, int b_shared)
{
	if (a_shared)
		e->held_shared = 1;
	else
		e->held_excl = 1;
	if (b_shared)
		e->want_shared = 1;
	else
		e->want_excl = 1;
}

/* Note a try site (ptt_obj_key; 0: none) that made e, once. */
static void edge_try(struct edge *e, uint64_t site)
{
	for (size_t i = 0; i < e->ntry; i++)
		if (e->trysites[i] == site)
			return;
	if (PTT_GROW(e->trysites, &e->captry, e->ntry + 1) != 0)
		return;
	e->trysites[e->ntry++] = site;
}

/* try: 0 for a call that may block, else B was taken by a successful try at site key try_site */

/* Keep this taking of e's order, so that one taken where nothing was lost verifies it. */
static void add_occurrence(struct edge *e, uint32_t tid, uint64_t from, uint64_t to)
{
	unsigned i = 0;
	while (i < e->nseen && e->seen[i].tid != tid)
		i++;
	if (i == SAMPLES)
		return;
	if (i == e->nseen) {
		e->nseen++;
		e->seen[i] = (struct occurrence){ tid, { from, from }, { to, to } };
		return;
	}
	e->seen[i].from[1] = from;
	e->seen[i].to[1] = to;
}

static void add_edge(struct lockgraph *g, struct node *a, const struct mframe *a_hold, struct node *b, int b_shared,
		     const struct ptt_event *ev, int try, uint64_t try_site)
{
	int a_shared = a_hold->state == MS_RW_RD_HOLD;
	uint64_t k = (uint64_t)a->serial << 32 | b->serial;
	struct edge *e = ptt_map_get(&g->edges, k);
	if (e) {
		if (ev->tid != e->first_tid && !e->other_tid)
			e->other_tid = ev->tid;
		edge_modes(e, a_shared, b_shared);
		if (try)
			edge_try(e, try_site);
		else
			e->blocking = 1;
		add_occurrence(e, ev->tid, a_hold->begin_ns, ev->ns);
		return;
	}
	e = calloc(1, sizeof *e);
	if (!e || ptt_map_put(&g->edges, k, e)) {
		free(e);
		return;
	}
	e->from = a;
	e->to = b;
	add_occurrence(e, ev->tid, a_hold->begin_ns, ev->ns);
	e->first_tid = ev->tid;
	e->first_pid = ev->pid;
	e->first_ns = ev->ns;
	e->held_site = lockframes_call_site(g->syms, ev->pid, ptt_syms_site_addr(g->syms, a_hold->open.id, a_hold->open.arg));
	e->taken_site = lockframes_call_site(g->syms, ev->pid, ptt_syms_site_addr(g->syms, ev->id, ev->arg));
	/* with stacks, the sites are the first frames past the lock layer (lockframes.h) */
	const struct ptt_stacks *st = model_stacks(g->model);
	struct mthread *t = model_thread(g->model, ev->pid, ev->tid);
	const struct mframe *w = t ? model_waiting(t) : NULL;
	e->held_stack = a_hold->stack;
	e->taken_stack = t && t->pending_stack ? t->pending_stack : w && w->obj == b->addr ? w->stack : 0;
	uint64_t site = lockframes_site(g->syms, st, ev->pid, e->held_stack);
	if (site)
		e->held_site = site;
	if ((site = lockframes_site(g->syms, st, ev->pid, e->taken_stack)))
		e->taken_site = site;
	edge_modes(e, a_shared, b_shared);
	if (try)
		edge_try(e, try_site);
	else
		e->blocking = 1;
	if (PTT_GROW(a->out, &a->capout, a->nout + 1) != 0)
		return;
	a->out[a->nout++] = e;
}

/* Does a frame or an object order locks: mutexes, rwlocks, spinlocks, semaphores used as locks? */
static int orders(const struct mobject *o, unsigned cls)
{
	return cls == PTT_CLASS_MUTEX || cls == PTT_CLASS_RWLOCK || cls == PTT_CLASS_SPIN ||
	       (cls == PTT_CLASS_SEM && o && o->sem_lock);
}

/* t blocks (or may block, or tries) to take b (shared or not): an edge from every lock t holds (but b, and the frame skip). */
static void edges_to(struct lockgraph *g, struct mthread *t, struct node *b, int b_shared, const struct mframe *skip,
		     const struct ptt_event *ev, int try, uint64_t try_site)
{
	for (unsigned i = 0; i < t->depth; i++) {
		const struct mframe *f = &t->stack[i];
		if (f == skip || !mstate_is_hold(f->state) || f->obj == b->addr)
			continue;
		struct node *a = node_of(g, t->pid, f->obj);
		if (a)
			add_edge(g, a, f, b, b_shared, ev, try, try_site);
	}
}

/* the order shows at the request: a deadlocked request never completes */
static void on_wait_begin(void *ctx, struct mthread *t, struct mobject *o, const struct mframe *wait,
			  const struct ptt_event *ev)
{
	struct lockgraph *g = ctx;
	unsigned cls = ev->type->cls;
	if (!o || (cls != PTT_CLASS_MUTEX && cls != PTT_CLASS_RWLOCK && cls != PTT_CLASS_SEM))
		return;
	struct node *b = node_of(g, t->pid, o->addr);
	if (b && orders(o, cls))
		edges_to(g, t, b, wait->state == MS_RW_RD_WAIT, NULL, ev, 0, 0);
}

/* the key of an event's call site in its process (0: the trace has none) */
static uint64_t site_key(struct lockgraph *g, const struct ptt_event *ev)
{
	uint64_t site = ptt_syms_site_addr(g->syms, ev->id, ev->arg);
	return site ? ptt_obj_key(ev->pid, site) : 0;
}

/* an acquisition that may have blocked orders what is held before it; a try, when it is a fast path (see above) */
static void on_acquire(void *ctx, struct mthread *t, struct mobject *o, const struct mframe *hold, const struct mframe *wait,
		       const struct ptt_event *ev)
{
	struct lockgraph *g = ctx;
	unsigned role = ev->type->role, cls = ev->type->cls == PTT_CLASS_COND ? PTT_CLASS_MUTEX : ev->type->cls;
	int try = role == PTT_ROLE_TRY || role == PTT_ROLE_TRY_SHARED;
	(void)wait;
	if (!hold || !orders(o, cls))
		return;
	struct node *b = node_of(g, t->pid, o->addr);
	if (b)
		edges_to(g, t, b, hold->state == MS_RW_RD_HOLD, hold, ev, try, try ? site_key(g, ev) : 0);
}

static uint64_t thread_key(uint32_t pid, uint32_t tid) { return (uint64_t)pid << 32 | tid; }

/* giving up a lock held at a failed try: the thread backs off, the try was honest */
static void on_release(void *ctx, struct mthread *t, struct mobject *o, const struct mframe *hold, const struct ptt_event *ev)
{
	struct lockgraph *g = ctx;
	struct pending *p = ptt_map_get(&g->pending, thread_key(t->pid, t->tid));
	(void)o;
	(void)ev;
	if (p && hold->begin_ns <= p->ns) {
		ptt_map_del(&g->pending, thread_key(t->pid, t->tid));
		free(p);
	}
}

/* A failed try opens a pending fast path; the same thread's blocking request of the object confirms it. */
static void note_try(struct lockgraph *g, const struct ptt_event *ev, unsigned role, uint64_t obj)
{
	unsigned cls = ev->type->cls;
	if (!obj || (cls != PTT_CLASS_MUTEX && cls != PTT_CLASS_RWLOCK && cls != PTT_CLASS_SEM && cls != PTT_CLASS_SPIN))
		return;
	uint64_t k = thread_key(ev->pid, ev->tid);
	struct pending *p = ptt_map_get(&g->pending, k);
	if ((role == PTT_ROLE_TRY || role == PTT_ROLE_TRY_SHARED) && ptt_event_argn(ev, PTT_ARGNAME_RET, 0) != 0) {
		if (!p && ((p = calloc(1, sizeof *p)) == NULL || ptt_map_put(&g->pending, k, p))) {
			free(p);
			return;
		}
		p->obj = obj;
		p->site = site_key(g, ev);
		p->ns = ev->ns;
		return;
	}
	if (!p || p->obj != obj ||
	    (role != PTT_ROLE_REQUEST && role != PTT_ROLE_REQUEST_SHARED && role != PTT_ROLE_ACQUIRE && role != PTT_ROLE_SHARED))
		return;
	struct node *n = node_of(g, ev->pid, obj);
	if (n)
		n->fast = 1;
	if (p->site)
		ptt_map_put(&g->fast_sites, p->site, g);
	ptt_map_del(&g->pending, k);
	free(p);
}

/* The threads that ever signalled a condition variable (a few; more is "many": anyone could). */
#define SIGNALLERS 8
struct signallers {
	uint32_t tid[SIGNALLERS];
	unsigned n, many;
};

/* tid into the set of obj's threads kept in map (a condition's signallers, a semaphore's takers) */
static void note_thread(struct ptt_map *map, uint32_t pid, uint64_t obj, uint32_t tid)
{
	struct signallers *s = ptt_map_get(map, ptt_obj_key(pid, obj));
	if (!s) {
		s = calloc(1, sizeof *s);
		if (!s || ptt_map_put(map, ptt_obj_key(pid, obj), s)) {
			free(s);
			return;
		}
	}
	for (unsigned i = 0; i < s->n; i++)
		if (s->tid[i] == tid)
			return;
	if (s->n < SIGNALLERS)
		s->tid[s->n++] = tid;
	else
		s->many = 1;
}

struct lockgraph *lockgraph_new(const struct loss *loss, struct ptt_syms *syms, struct model *m)
{
	struct lockgraph *g = calloc(1, sizeof *g);
	if (!g)
		return NULL;
	g->loss = loss;
	g->syms = syms;
	g->model = m;
	struct model_ops ops = { .ctx = g, .wait_begin = on_wait_begin, .acquire = on_acquire, .release = on_release };
	model_observe(m, &ops);
	return g;
}

void lockgraph_event(struct lockgraph *g, const struct ptt_event *ev)
{
	fidelity_blind_event(&g->blind, ev);
	if (!ev->type)
		return;
	unsigned role = ev->type->role;
	uint64_t obj = ev->nargs && ev->type->argkind[0] == PTT_ARG_PTR ? ev->arg[0] : 0;
	if ((role == PTT_ROLE_INIT || role == PTT_ROLE_DESTROY) && ptt_event_argn(ev, PTT_ARGNAME_RET, 0) == 0) {
		/* the end of an object, or a new one where another may have been:
		 * the address's next use is a new node, its edges its own.  Not when
		 * the call failed (EBUSY: the object lives on) or a thread holds it. */
		struct node *n = ptt_map_get(&g->nodes, ptt_obj_key(ev->pid, obj));
		if (n && !model_any_holder(g->model, ev->pid, obj, NULL))
			ptt_map_del(&g->nodes, ptt_obj_key(ev->pid, obj));
	}
	if (ev->id == PTT_EV_PROCESS_EXIT)
		exited(g, ev->pid);
	forever_cut(g, ev); /* after exited: the threads of its cycles are known */
	note_try(g, ev, role, obj);
	/* a post makes no node in the model's callbacks (release makes none): its node is made here, first */
	if (role == PTT_ROLE_POST && ev->type->cls == PTT_CLASS_SEM && ptt_event_argn(ev, PTT_ARGNAME_RET, 0) == 0)
		node_of(g, ev->pid, obj);
	if (role == PTT_ROLE_POST && ev->type->cls == PTT_CLASS_COND)
		note_thread(&g->signallers, ev->pid, obj, ev->tid);
	if (ev->type->cls == PTT_CLASS_SEM && (role == PTT_ROLE_ACQUIRE || role == PTT_ROLE_TRY) &&
	    ptt_event_argn(ev, PTT_ARGNAME_RET, 0) == 0)
		note_thread(&g->takers, ev->pid, obj, ev->tid);
	if (ev->type->cls == PTT_CLASS_SEM && (role == PTT_ROLE_INIT || role == PTT_ROLE_DESTROY) &&
	    ptt_event_argn(ev, PTT_ARGNAME_RET, 0) == 0)
		free(ptt_map_del(&g->takers, ptt_obj_key(ev->pid, obj))); /* a new semaphore there */
}

static void strongconnect(struct lockgraph *g, struct node *v, int *comp)
{
	/* recursion depth is bounded by the number of locks a program nests: small */
	v->index = v->low = g->tarjan_index++;
	g->stack[g->sp++] = v;
	v->on_stack = 1;
	for (size_t i = 0; i < v->nout; i++) {
		struct node *w = v->out[i]->to;
		if (!v->out[i]->live)
			continue;
		if (w->index < 0) {
			strongconnect(g, w, comp);
			if (w->low < v->low)
				v->low = w->low;
		} else if (w->on_stack && w->index < v->low) {
			v->low = w->index;
		}
	}
	if (v->low == v->index) {
		struct node *w;
		do {
			w = g->stack[--g->sp];
			w->on_stack = 0;
			w->comp = *comp;
		} while (w != v);
		(*comp)++;
	}
}

static void name_of(struct lockgraph *g, const struct node *n, char *buf, size_t size)
{
	char given[PTT_MAX_STR];
	const char *s = ptt_syms_object_known_name(g->syms, n->pid, n->addr, given, sizeof given);
	char tail[32];
	int t = snprintf(tail, sizeof tail, "0x%" PRIx64, n->addr);
	if (PTT_IS_SHARED(n->addr)) /* in shared memory: its mapping is its name, the address is no process's */
		ptt_name_printf(buf, size, "%s", *s ? s : "shared object");
	else if (*s && size > (size_t)t + 8) { /* a name cut keeps its address: "NAME… (0xADDR)" */
		size_t l = ptt_name_printf(buf, size - (size_t)t - 3, "%s", s);
		snprintf(buf + l, size - l, " (%s)", tail);
	} else {
		ptt_name_printf(buf, size, "%s", tail);
	}
	entity_object_process(buf, size, g->syms, n->pid, n->addr);
}

/* "process N" or "processes N, M" (entity_process_tag's pids): the processes of n threads */
static void processes_of(const uint32_t *pids, size_t n, char *buf, size_t size)
{
	size_t at = 0, distinct = 0;
	buf[0] = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < i && pids[j] != pids[i])
			j++;
		if (j < i)
			continue;
		distinct++;
		at += (size_t)snprintf(buf + at, at < size ? size - at : 0, "%s%" PRIu32, at ? ", " : "", pids[i]);
		if (at >= size)
			break;
	}
	const char *word = distinct > 1 ? "processes " : "process ";
	size_t w = strlen(word), l = strlen(buf);
	if (l + w + 1 > size)
		l = size - w - 1;
	memmove(buf + w, buf, l);
	memcpy(buf, word, w);
	buf[w + l] = 0;
}

/* "TID (NAME)" by the one rule of thread names (symbols.h), or "TID"; with its process where there are several (entity_name.h) */
static void thread_name(struct lockgraph *g, uint32_t pid, uint32_t tid, char *buf, size_t size)
{
	entity_thread_label(buf, size, g->syms, pid, tid);
}

/* A path from -> ... -> target inside component comp (depth-first); fills path, returns its length. */
static size_t find_path(struct node *from, struct node *target, int comp, struct edge **path, size_t depth, size_t max,
			struct ptt_map *seen)
{
	for (size_t i = 0; i < from->nout && depth < max; i++) {
		struct edge *e = from->out[i];
		if (e->to->comp != comp || !e->live)
			continue;
		path[depth] = e;
		if (e->to == target)
			return depth + 1;
		if (ptt_map_get(seen, (uint64_t)(uintptr_t)e->to))
			continue;
		ptt_map_put(seen, (uint64_t)(uintptr_t)e->to, e->to);
		size_t n = find_path(e->to, target, comp, path, depth + 1, max, seen);
		if (n)
			return n;
	}
	return 0;
}

/* The two places of an edge's first occurrence, the code to change: where A was taken, then B (none: no line). */
static void edge_sites(struct lockgraph *g, const struct edge *e, FILE *out)
{
	char a[128], b[128], at_a[512], at_b[512];
	if (!e->held_site && !e->taken_site)
		return;
	ptt_syms_object_name(g->syms, e->from->pid, e->from->addr, a, sizeof a);
	ptt_syms_object_name(g->syms, e->to->pid, e->to->addr, b, sizeof b);
	ptt_syms_code_phrase(g->syms, e->first_pid, e->held_site, at_a, sizeof at_a);
	ptt_syms_code_phrase(g->syms, e->first_pid, e->taken_site, at_b, sizeof at_b);
	fprintf(out, "    %s taken%s, then %s%s\n", a, *at_a ? at_a : " (site unknown)", b, *at_b ? at_b : " (site unknown)");
	const struct ptt_stacks *st = model_stacks(g->model);
	if (lockframes_past(g->syms, st, e->first_pid, e->held_stack, 4, at_a, sizeof at_a))
		fprintf(out, "      %s: %s\n", a, at_a);
	if (lockframes_past(g->syms, st, e->first_pid, e->taken_stack, 4, at_b, sizeof at_b))
		fprintf(out, "      %s: %s\n", b, at_b);
}

/* Does e take part in the cycles: made by a call that may block, or by a try that is a fast path? */
static int edge_live(struct lockgraph *g, const struct edge *e)
{
	if (e->blocking || (e->ntry && e->to->fast))
		return 1;
	for (size_t i = 0; i < e->ntry; i++)
		if (e->trysites[i] && ptt_map_get(&g->fast_sites, e->trysites[i]))
			return 1;
	return 0;
}

/* Is e's order verified: taken at least once where no lost stretch (fidelity.h) could explain it?  Else *why says where. */
static int verified(const struct edge *e, const struct loss *loss, const struct occurrence **why)
{
	*why = e->nseen ? &e->seen[0] : NULL;
	for (unsigned i = 0; i < e->nseen; i++)
		for (int k = 0; k < 2; k++)
			if (!loss_covers(loss, e->seen[i].tid, e->seen[i].from[k], e->seen[i].to[k]))
				return 1;
	return !e->nseen;
}

int lockgraph_report_cycles(struct lockgraph *g, FILE *out, int *unverified)
{
	const struct loss *loss = g->loss;
	int comp = 0, found = 0;
	*unverified = 0;
	g->stack = malloc((g->nall + 1) * sizeof *g->stack);
	if (!g->stack)
		return 0;
	for (size_t i = 0; i < g->nall; i++)
		for (size_t k = 0; k < g->all[i]->nout; k++)
			g->all[i]->out[k]->live = (unsigned)edge_live(g, g->all[i]->out[k]) & 1u;
	for (size_t i = 0; i < g->nall; i++)
		if (g->all[i]->index < 0)
			strongconnect(g, g->all[i], &comp);
	int *size = calloc((size_t)comp + 1, sizeof *size);
	int *done = calloc((size_t)comp + 1, sizeof *done);
	struct edge **path = malloc((g->nall + 1) * sizeof *path);
	for (size_t i = 0; size && done && path && i < g->nall; i++)
		size[g->all[i]->comp]++;
	for (size_t i = 0; size && done && path && i < g->nall; i++) {
		struct node *n = g->all[i];
		if (size[n->comp] < 2 || done[n->comp])
			continue;
		done[n->comp] = 1;
		struct ptt_map seen = { 0 };
		size_t len = find_path(n, n, n->comp, path, 0, g->nall, &seen);
		ptt_map_free(&seen);
		if (!len)
			continue;
		/* a cycle one thread made alone cannot deadlock */
		uint32_t t0 = path[0]->first_tid;
		int several = 0;
		for (size_t k = 0; k < len; k++)
			several |= path[k]->first_tid != t0 || (path[k]->other_tid && path[k]->other_tid != t0);
		/* a cycle through an rwlock only read on both sides of it cannot deadlock (reader-preferring) */
		int conflicts = 1;
		for (size_t k = 0; k < len; k++)
			conflicts &= path[k]->want_excl || path[(k + 1) % len]->held_excl;
		if (!several || !conflicts)
			continue;
		/* an order seen only where events were lost may be a release the trace lacks: no finding */
		const struct occurrence *why = NULL;
		size_t weak = len;
		for (size_t k = 0; k < len && weak == len; k++)
			if (!verified(path[k], loss, &why))
				weak = k;
		if (weak < len)
			++*unverified;
		else
			found++;
		if (!out)
			continue;
		uint32_t pids[16];
		size_t np = 0;
		for (size_t k = 0; k < len && np < sizeof pids / sizeof *pids; k++)
			pids[np++] = path[k]->first_pid;
		char procs[180];
		processes_of(pids, np, procs, sizeof procs);
		if (weak < len) {
			char a[160], t[96];
			name_of(g, path[weak]->from, a, sizeof a);
			thread_name(g, why->tid == path[weak]->first_tid ? path[weak]->first_pid : n->pid, why->tid, t, sizeof t);
			fprintf(out, "unverifiable cycle %d: lock-order cycle of %zu objects in %s, not reported as a "
				"potential deadlock: events of thread %s may be lost while it held %s (%" PRIu64 ".%09" PRIu64 " s to %"
				PRIu64 ".%09" PRIu64 " s), a release of it among them\n", *unverified, len, procs, t, a,
				why->from[0] / 1000000000u, why->from[0] % 1000000000u, why->to[0] / 1000000000u,
				why->to[0] % 1000000000u);
		} else {
			fprintf(out, "potential deadlock %d: lock-order cycle of %zu objects in %s\n", found, len, procs);
		}
		for (size_t k = 0; k < len; k++) {
			char a[160], b[160], t[96];
			name_of(g, path[k]->from, a, sizeof a);
			name_of(g, path[k]->to, b, sizeof b);
			thread_name(g, path[k]->first_pid, path[k]->first_tid, t, sizeof t);
			fprintf(out, "  %s taken while holding %s: first by thread %s at %" PRIu64 ".%09" PRIu64 " s\n", b, a, t,
				path[k]->first_ns / 1000000000u, path[k]->first_ns % 1000000000u);
			edge_sites(g, path[k], out);
		}
	}
	free(size);
	free(done);
	free(path);
	free(g->stack);
	g->stack = NULL;
	return found;
}

/*
 * Who could end t's wait w (at most max, into who; returns how many, or -1
 * when it cannot be told: anyone might).  A lock's holders; a semaphore's
 * holder when it is used as a lock, else the one thread that ever posted it;
 * a join's target; a condition's signallers.  *how says which.
 */
static int releasers(struct lockgraph *g, struct mthread *t, const struct mframe *w, struct mthread **who, int max,
		     const char **how)
{
	struct mobject *o = model_object(g->model, t->pid, w->obj);
	int n = 0;
	switch (w->state) {
	case MS_MUTEX_WAIT: case MS_RW_RD_WAIT: case MS_RW_WR_WAIT:
		*how = "held by";
		for (struct mthread *h = NULL; n < max && (h = model_any_holder(g->model, t->pid, w->obj, t)) != NULL;) {
			who[n++] = h;
			break; /* the owner, or one reader: enough to tell blocked from not */
		}
		return n;
	case MS_SEM_WAIT:
		if (o && o->sem_lock) {
			*how = "held by";
			struct mthread *h = o->owner ? model_object_user(g->model, o, t->pid, o->owner) : NULL;
			if (h && h != t)
				who[n++] = h;
			return n;
		}
		if (o && o->posters == 0) {
			/* never posted, yet taken: its first value let its takers in, as a lock's does (sem_open's
			 * value is not in the trace); a post can only be the takers' giving theirs back */
			*how = "a semaphore never posted, taken by";
			struct signallers *s = ptt_map_get(&g->takers, ptt_obj_key(t->pid, w->obj));
			if (!s || s->many)
				return -1;
			for (unsigned i = 0; i < s->n && n < max; i++) {
				struct mthread *h = model_object_user(g->model, o, t->pid, s->tid[i]);
				if (h && h != t)
					who[n++] = h;
			}
			return n ? n : -1; /* only itself took it: who would post it cannot be told */
		}
		*how = "a semaphore posted only by";
		if (!o || o->posters != 1)
			return -1;
		who[0] = model_object_user(g->model, o, t->pid, o->poster);
		return who[0] ? 1 : 0;
	case MS_JOIN:
		*how = "to join";
		who[0] = model_thread(g->model, t->pid, (uint32_t)w->obj);
		return who[0] && who[0] != t ? 1 : -1;
	case MS_COND_WAIT: {
		*how = "a condition signalled only by";
		struct signallers *s = ptt_map_get(&g->signallers, ptt_obj_key(t->pid, w->obj));
		if (!s || s->many)
			return -1;
		for (unsigned i = 0; i < s->n && n < max; i++) {
			struct mthread *h = model_thread(g->model, t->pid, s->tid[i]);
			if (h && h != t)
				who[n++] = h;
		}
		return n;
	}
	default:
		return -1;
	}
}

static int forever_wait(struct lockgraph *g, struct mthread *t, const struct mframe *f, int at_end);

struct blocked {
	struct lockgraph *g;
	uint32_t pid;           /* only this process's threads (0: all) */
	struct mthread **t;     /* the blocked threads with releasers that can be told */
	size_t n, cap;
	struct ptt_map in;         /* thread -> still in the closed set */
};

static int gather(void *ctx, struct mthread *t)
{
	struct blocked *b = ctx;
	const struct mframe *w = model_waiting(t);
	struct mthread *who[SIGNALLERS];
	const char *how;
	if (!w || (b->pid && t->pid != b->pid) || releasers(b->g, t, w, who, SIGNALLERS, &how) < 0)
		return 0;
	if (PTT_GROW(b->t, &b->cap, b->n + 1) != 0)
		return -1;
	b->t[b->n++] = t;
	return ptt_map_put(&b->in, (uint64_t)(uintptr_t)t, t);
}

/* With a stack: where t waits, at the first frames past the lock layer. */
static void print_wait_stack(struct lockgraph *g, const struct mthread *t, const struct mframe *w, FILE *out)
{
	char at[512], from[1024];
	const struct ptt_stacks *st = model_stacks(g->model);
	uint64_t site = lockframes_site(g->syms, st, t->pid, w->stack);
	if (!site)
		return;
	ptt_syms_code_phrase(g->syms, t->pid, site, at, sizeof at);
	lockframes_past(g->syms, st, t->pid, w->stack, 4, from, sizeof from);
	fprintf(out, "    waiting%s (from %s)\n", at, from);
}

/* Print t's wait and who could end it. */
static void print_wait(struct lockgraph *g, struct mthread *t, FILE *out)
{
	const struct mframe *w = model_waiting(t);
	struct mthread *who[SIGNALLERS];
	const char *how;
	int n = releasers(g, t, w, who, SIGNALLERS, &how);
	char tn[64], on[160], hn[64];
	thread_name(g, t->pid, t->tid, tn, sizeof tn);
	if (w->state == MS_JOIN) {
		snprintf(on, sizeof on, "thread %" PRIu64 " to end", w->obj);
	} else {
		struct node n0 = { .pid = t->pid, .addr = w->obj };
		name_of(g, &n0, on, sizeof on);
	}
	fprintf(out, "  thread %s waits since %" PRIu64 ".%09" PRIu64 " s for %s", tn, w->begin_ns / 1000000000u,
		w->begin_ns % 1000000000u, on);
	if (n < 0) {
		fprintf(out, " (who could end the wait cannot be told)\n");
	} else if (n == 0 && loss_covers(g->loss, 0, 0, UINT64_MAX)) {
		/* a holder or a waker may have acted where events are lost (a flight recording's overwritten
		 * histories, a file read alone): no claim that nobody can end it */
		fprintf(out, ", which no thread the trace shows can end (events were lost: see loss)\n");
	} else if (n == 0) {
		fprintf(out, ", which no live thread can end\n");
	} else if (w->state == MS_JOIN) {
		fprintf(out, "\n");
	} else {
		fprintf(out, ", %s thread", how);
		for (int i = 0; i < n; i++) {
			thread_name(g, who[i]->pid, who[i]->tid, hn, sizeof hn);
			fprintf(out, "%s %s", i ? (i == n - 1 ? " or" : ",") : "", hn);
		}
		fprintf(out, "\n");
	}
	print_wait_stack(g, t, w, out);
}

/*
 * Deadlocked: blocked threads whose waits only threads of the same set could
 * end (a closed set of the wait-for graph through locks, semaphores, joins
 * and condition waits).  Found by removing, until nothing changes, every
 * thread that some thread outside the set (running, or unknown) could wake.
 * Each process's set is printed from a thread, following who could end its
 * wait, so that a cycle reads in order; then (at the end of the trace, not
 * when process pid exits) threads blocked for ever for other reasons.
 */
/* Could t's wait have ended unseen (a lost stretch of t, or of any thread, since it began)? */
static int wait_unverified(const struct mthread *t, const struct loss *loss)
{
	const struct mframe *w = model_waiting(t);
	return w && loss_covers(loss, t->tid, w->begin_ns, UINT64_MAX);
}

/* A cycle found as process pid exits: its waits kept, its heading to be written at out's offset by exit_heading. */
static void defer_exit_cycle(struct lockgraph *g, const struct blocked *b, uint32_t pid, FILE *out)
{
	if (PTT_GROW(g->exit_cycles, &g->capexit_cycles, g->nexit_cycles + 1) != 0)
		return;
	struct exit_cycle *c = &g->exit_cycles[g->nexit_cycles++];
	long at = out && fflush(out) == 0 ? ftell(out) : 0;
	*c = (struct exit_cycle){ at > 0 ? (size_t)at : 0, pid, 0, calloc(b->n ? b->n : 1, sizeof *c->w) };
	for (size_t k = 0; c->w && k < b->n; k++) {
		const struct mframe *w = model_waiting(b->t[k]);
		if (b->t[k]->pid == pid && w && ptt_map_get(&b->in, (uint64_t)(uintptr_t)b->t[k]))
			c->w[c->n++] = (struct exit_wait){ b->t[k]->tid, w->begin_ns };
	}
}

/* The verdict on a cycle found at its process's exit, with every loss the trace told (fidelity.h): 1 if verified. */
static int exit_heading(const struct lockgraph *g, const struct exit_cycle *c, FILE *out)
{
	int weak = 0;
	for (size_t k = 0; k < c->n && !weak; k++)
		weak = loss_covers(g->loss, c->w[k].tid, c->w[k].begin_ns, UINT64_MAX);
	if (out && weak)
		fprintf(out, "unverifiable deadlock: threads blocked in a cycle when their process exited (process %" PRIu32
			"), but events may be lost since their waits began: a wake-up among them\n", c->pid);
	else if (out)
		fprintf(out, "deadlock: threads blocked in a cycle when their process exited (process %" PRIu32 ")\n", c->pid);
	return !weak;
}

static int report_blocked(struct lockgraph *g, uint32_t pid, FILE *out, int *unverified)
{
	const struct loss *loss = g->loss;
	struct blocked b = { g, pid, NULL, 0, 0, { 0 } };
	model_foreach_thread(g->model, gather, &b);
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t i = 0; i < b.n; i++) {
			struct mthread *t = b.t[i], *who[SIGNALLERS];
			const char *how;
			if (!ptt_map_get(&b.in, (uint64_t)(uintptr_t)t))
				continue;
			int n = releasers(g, t, model_waiting(t), who, SIGNALLERS, &how), free_ = n <= 0;
			for (int k = 0; k < n && !free_; k++)
				free_ = !ptt_map_get(&b.in, (uint64_t)(uintptr_t)who[k]);
			if (free_) {
				ptt_map_del(&b.in, (uint64_t)(uintptr_t)t);
				changed = 1;
			}
		}
	}
	int found = 0;
	struct ptt_map shown = { 0 };
	for (size_t i = 0; i < b.n; i++) {
		struct mthread *start = b.t[i];
		if (!ptt_map_get(&b.in, (uint64_t)(uintptr_t)start) || ptt_map_get(&shown, (uint64_t)(uintptr_t)start))
			continue;
		/* the chain from start: in shared memory (shmap.h) it may go through several processes */
		uint32_t pids[16];
		size_t np = 0;
		struct ptt_map chain = { 0 };
		for (struct mthread *t = start; t && !ptt_map_get(&chain, (uint64_t)(uintptr_t)t);) {
			struct mthread *who[SIGNALLERS];
			const char *how;
			ptt_map_put(&chain, (uint64_t)(uintptr_t)t, t);
			if (np < sizeof pids / sizeof *pids)
				pids[np++] = t->pid;
			t = releasers(g, t, model_waiting(t), who, SIGNALLERS, &how) > 0 ? who[0] : NULL;
		}
		char procs[180];
		processes_of(pids, np, procs, sizeof procs);
		int weak = 0; /* a wait of the set that events lost after it began could have ended */
		for (size_t k = 0; k < b.n; k++)
			weak |= (b.t[k]->pid == start->pid || ptt_map_get(&chain, (uint64_t)(uintptr_t)b.t[k])) &&
				ptt_map_get(&b.in, (uint64_t)(uintptr_t)b.t[k]) && wait_unverified(b.t[k], loss);
		if (pid) /* judged at the end, with the loss known then: exit_heading */
			defer_exit_cycle(g, &b, start->pid, out);
		else if (weak)
			++*unverified;
		else
			found++;
		if (out && !pid && weak)
			fprintf(out, "unverifiable deadlock: threads blocked in a cycle at the end of the trace (%s), but events "
				"may be lost since their waits began: a wake-up among them\n", procs);
		else if (out && !pid)
			fprintf(out, "deadlock: threads blocked in a cycle at the end of the trace (%s)\n", procs);
		for (size_t k = 0; k < b.n; k++)
			if ((b.t[k]->pid == start->pid || ptt_map_get(&chain, (uint64_t)(uintptr_t)b.t[k])) &&
			    ptt_map_get(&b.in, (uint64_t)(uintptr_t)b.t[k]))
				ptt_map_put(&g->cycled, ptt_obj_key(b.t[k]->pid, b.t[k]->tid), b.t[k]);
		for (struct mthread *t = start; t && !ptt_map_get(&shown, (uint64_t)(uintptr_t)t);) {
			struct mthread *who[SIGNALLERS];
			const char *how;
			ptt_map_put(&shown, (uint64_t)(uintptr_t)t, t);
			if (out)
				print_wait(g, t, out);
			t = releasers(g, t, model_waiting(t), who, SIGNALLERS, &how) > 0 ? who[0] : NULL;
		}
		for (size_t k = 0; k < b.n; k++) { /* the rest of the set (waiting for the cycle) */
			struct mthread *t = b.t[k];
			if (t->pid != start->pid || !ptt_map_get(&b.in, (uint64_t)(uintptr_t)t) || ptt_map_get(&shown, (uint64_t)(uintptr_t)t))
				continue;
			ptt_map_put(&shown, (uint64_t)(uintptr_t)t, t);
			if (out)
				print_wait(g, t, out);
		}
		ptt_map_free(&chain);
	}
	if (out && !pid) {
		int header = 0;
		for (size_t i = 0; i < b.n; i++) {
			const struct mframe *w = model_waiting(b.t[i]);
			if (ptt_map_get(&b.in, (uint64_t)(uintptr_t)b.t[i]) || (w && forever_wait(g, b.t[i], w, 1)))
				continue; /* in a cycle, or blocked for ever: lockgraph_report_forever */
			if (!header++)
				fprintf(out, "blocked at the end of the trace (not deadlocked as far as the trace tells):\n");
			print_wait(g, b.t[i], out);
		}
	}
	ptt_map_free(&shown);
	ptt_map_free(&b.in);
	free(b.t);
	return found;
}

/* Process pid exits (its threads end with it): its deadlocked threads, kept to be printed with the others. */
static void exited(struct lockgraph *g, uint32_t pid)
{
	if (!g->exited_out)
		g->exited_out = open_memstream(&g->exited, &g->exited_len);
	g->exited_found += report_blocked(g, pid, g->exited_out, &g->exited_unverified);
}

int lockgraph_report_blocked(struct lockgraph *g, FILE *out, int *unverified)
{
	int written = g->exited_out && fclose(g->exited_out) == 0;
	g->exited_out = NULL;
	size_t from = 0;
	for (size_t i = 0; i < g->nexit_cycles; i++) {
		const struct exit_cycle *c = &g->exit_cycles[i];
		if (written && out && c->at >= from && c->at <= g->exited_len) {
			fwrite(g->exited + from, 1, c->at - from, out);
			from = c->at;
		}
		if (exit_heading(g, c, written ? out : NULL))
			g->exited_found++;
		else
			g->exited_unverified++;
	}
	if (written && out && from < g->exited_len)
		fwrite(g->exited + from, 1, g->exited_len - from, out);
	*unverified = g->exited_unverified;
	return g->exited_found + report_blocked(g, 0, out, unverified);
}

const char *lockgraph_blind_note(const struct lockgraph *g) { return fidelity_blind_note(&g->blind); }

/*
 * Blocked for ever: a wait for a lock still open when its process exited,
 * or at the end of the trace, in no cycle found (the waits model_foreach_cut
 * gives, as ptt-stat counts them open).  A lock's: a mutex or rwlock, a
 * semaphore used as one, a futex the futex rule calls a lock's (its waits
 * never returned, or a waiter woke it: Rust's std Mutex), a Java monitor
 * entered (knownlock.h).  Not a condition, a signal or a parking word: a
 * worker idle at its process's exit is no finding.  Nor the GIL: a thread
 * waits for it whenever another runs Python, at exit too.  At the end of the
 * trace (the program did not exit: it was killed or the recording cut), a
 * wait for a lock a live thread holds is report_blocked's to judge (a cycle,
 * or not blocked for ever as far as the trace tells): only those whose owner
 * is unknown (futex, Java monitor) or held by no live thread are listed here.
 */
static int forever_wait(struct lockgraph *g, struct mthread *t, const struct mframe *f, int at_end)
{
	struct mobject *o = model_object(g->model, t->pid, f->obj);
	int lock;
	switch (f->state) {
	case MS_MUTEX_WAIT: case MS_RW_RD_WAIT: case MS_RW_WR_WAIT: lock = 1; break;
	case MS_SEM_WAIT: lock = o && o->sem_lock; break;
	case MS_FUTEX_WAIT: lock = o && model_futex_use(&o->futex) == MF_LOCK; break;
	case MS_COND_WAIT: lock = knownlock_of_wait(g->syms, model_stacks(g->model), t->pid, f) == KL_JVM_MONITOR; break;
	default: lock = 0;
	}
	if (!lock || f != model_waiting(t) || ptt_map_get(&g->cycled, ptt_obj_key(t->pid, t->tid)))
		return 0;
	struct mthread *who[SIGNALLERS];
	const char *how;
	/* at the end, a live holder may still let go (report_blocked judges those): only a lock held by no live thread */
	return !at_end || f->state == MS_FUTEX_WAIT || f->state == MS_COND_WAIT || releasers(g, t, f, who, SIGNALLERS, &how) == 0;
}

/* One thread blocked for ever: its wait, what it waits for, where (its stack past the lock layer). */
static void print_forever(struct lockgraph *g, struct mthread *t, const struct mframe *f, FILE *out)
{
	char tn[64], on[160];
	thread_name(g, t->pid, t->tid, tn, sizeof tn);
	if (f->state == MS_MUTEX_WAIT || f->state == MS_RW_RD_WAIT || f->state == MS_RW_WR_WAIT || f->state == MS_SEM_WAIT) {
		print_wait(g, t, out);
		return;
	}
	ptt_syms_object_name(g->syms, t->pid, f->obj, on, sizeof on);
	if (f->state == MS_FUTEX_WAIT)
		fprintf(out, "  thread %s waits since %" PRIu64 ".%09" PRIu64 " s for futex %s (owner unknown)", tn,
			f->begin_ns / 1000000000u, f->begin_ns % 1000000000u, on);
	else
		fprintf(out, "  thread %s waits since %" PRIu64 ".%09" PRIu64 " s to enter a Java monitor (parked on %s; "
			     "owner unknown)", tn, f->begin_ns / 1000000000u, f->begin_ns % 1000000000u, on);
	/* with a stack, the first frame (or inline level) past the lock layer (lockframes.h) */
	uint64_t site = lockframes_frame_site(g->syms, model_stacks(g->model), t->pid, f);
	const struct ptt_sym *sym = ptt_syms_code(g->syms, t->pid, site);
	fprintf(out, sym ? " at %s\n" : "\n", sym ? sym->text : "");
	print_wait_stack(g, t, f, out);
}

struct forever {
	struct lockgraph *g;
	FILE *out;
	const char *heading;
	uint32_t pid;
	int at_end, found, weak, unknown;
};

static int forever_one(void *ctx, struct mthread *t, const struct mframe *f)
{
	struct forever *fv = ctx;
	if (!forever_wait(fv->g, t, f, fv->at_end))
		return 0;
	int weak = wait_unverified(t, fv->g->loss);
	/* a lock the trace shows nobody holding at its end: its holder may have taken it where events are lost
	 * (a start mid-run, a loss anywhere), as print_wait says */
	int unseen = f->state != MS_FUTEX_WAIT && f->state != MS_COND_WAIT;
	int hidden = !weak && fv->at_end && unseen && loss_covers(fv->g->loss, 0, 0, UINT64_MAX);
	if (fv->out && !fv->found && !fv->weak)
		fprintf(fv->out, "blocked for ever: waiting for %s (process %" PRIu32 "), in no cycle ptt can prove%s:\n",
			fv->heading, t->pid, fv->at_end ? " and with no live holder" : "");
	if (fv->out && (weak || hidden))
		fprintf(fv->out, weak ? "  (unverifiable: events were lost since this wait began)\n"
				      : "  (unverifiable: events were lost, where a holder may have taken the lock)\n");
	weak |= hidden;
	fv->unknown += !unseen;
	if (fv->out)
		print_forever(fv->g, t, f, fv->out);
	if (weak)
		fv->weak++;
	else
		fv->found++;
	return 0;
}

/* A thread's end or a process's exit: its waits for locks cut, kept to be printed with the others. */
static void forever_cut(struct lockgraph *g, const struct ptt_event *ev)
{
	if (ev->id != PTT_EV_PROCESS_EXIT && ev->id != PTT_EV_THREAD_END)
		return;
	if (!g->forever_out)
		g->forever_out = open_memstream(&g->forever, &g->forever_len);
	struct forever fv = { g, g->forever_out, ev->id == PTT_EV_PROCESS_EXIT ? "locks when their process exited" :
			      "a lock when its thread ended", ev->pid, 0, 0, 0, 0 };
	model_foreach_cut(g->model, ev, 0, forever_one, &fv);
	g->forever_found += fv.found;
	g->forever_weak += fv.weak;
	g->forever_unknown += fv.unknown;
}

int lockgraph_report_forever(struct lockgraph *g, FILE *out, int *unverified)
{
	if (g->forever_out && fclose(g->forever_out) == 0 && out && g->forever_len)
		fwrite(g->forever, 1, g->forever_len, out);
	g->forever_out = NULL;
	struct forever fv = { g, out, "locks at the end of the trace", 0, 1, 0, 0, 0 };
	model_foreach_cut(g->model, NULL, UINT64_MAX, forever_one, &fv);
	int found = g->forever_found + fv.found;
	*unverified = g->forever_weak + fv.weak;
	if (out && g->forever_unknown + fv.unknown)
		fprintf(out, "the owners of futex-based locks (Rust's std Mutex, parking_lot, InnoDB) and of Java monitors "
			     "are not in the trace: these threads may be deadlocked, but ptt cannot show the cycle\n");
	return found;
}

int lockgraph_blind_locks(const struct lockgraph *g) { return fidelity_blind_locks(&g->blind); }

static void free_edge(void *e)
{
	free(((struct edge *)e)->trysites);
	free(e);
}

void lockgraph_free(struct lockgraph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nall; i++) {
		free(g->all[i]->out);
		free(g->all[i]);
	}
	if (g->exited_out)
		fclose(g->exited_out);
	if (g->forever_out)
		fclose(g->forever_out);
	free(g->forever);
	ptt_map_free(&g->cycled);
	free(g->exited);
	for (size_t i = 0; i < g->nexit_cycles; i++)
		free(g->exit_cycles[i].w);
	free(g->exit_cycles);
	ptt_map_free_with(&g->pending, free);
	ptt_map_free(&g->fast_sites);
	ptt_map_free_with(&g->signallers, free);
	ptt_map_free_with(&g->takers, free);
	free(g->all);
	ptt_map_free(&g->nodes);
	ptt_map_free_with(&g->edges, free_edge);
	free(g);
}
