/* lockgraph.c - lock-order cycles and end-of-trace wait-for cycles. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lockgraph.h"
#include "pmap.h"

#define HELD 16

struct node {
	uint32_t pid;
	uint64_t addr;
	struct edge **out;
	size_t nout, capout;
	int index, low, on_stack; /* Tarjan */
	int comp;
	uint32_t serial;	/* creation order: edges are keyed by it, two objects never share one */
	int sem;		/* a semaphore: no holder, maybe one known poster */
	uint32_t poster;	/* the one thread that posted it, or 0 */
	int posters;		/* 0, 1 or 2 = several */
};

struct edge {
	struct node *from, *to;
	uint32_t first_tid, other_tid; /* a second thread that took the same order, if any */
	uint64_t first_ns;
	/* seen with A held exclusively / shared, with B asked exclusively / shared (rwlocks) */
	unsigned held_excl : 1, held_shared : 1, want_excl : 1, want_shared : 1;
};

struct gthread {
	uint32_t pid, tid;
	struct node *held[HELD];
	unsigned char held_shared[HELD];
	unsigned nheld;
	struct node *waits_for;  /* blocked in a _req with no outcome yet */
	uint64_t wait_since;
};

struct lockgraph {
	struct pmap nodes, edges, threads;
	struct node **all;
	size_t nall, capall;
	struct ptt_names *names;
	int tarjan_index;
	struct node **stack;
	size_t sp;
};


struct lockgraph *lockgraph_new(void)
{
	struct lockgraph *g = calloc(1, sizeof *g);
	if (g && !(g->names = ptt_names_new())) {
		free(g);
		return NULL;
	}
	return g;
}

static struct node *node_of(struct lockgraph *g, uint32_t pid, uint64_t addr)
{
	struct node *n = pmap_get(&g->nodes, pmap_obj_key(pid, addr));
	if (n)
		return n;
	if (g->nall == g->capall) {
		size_t cap = g->capall ? g->capall * 2 : 64;
		struct node **na = realloc(g->all, cap * sizeof *na);
		if (!na)
			return NULL;
		g->all = na;
		g->capall = cap;
	}
	n = calloc(1, sizeof *n);
	if (!n || pmap_put(&g->nodes, pmap_obj_key(pid, addr), n)) {
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

static struct gthread *thread_of(struct lockgraph *g, uint32_t pid, uint32_t tid)
{
	uint64_t k = (uint64_t)pid << 32 | tid;
	struct gthread *t = pmap_get(&g->threads, k);
	if (t)
		return t;
	t = calloc(1, sizeof *t);
	if (!t || pmap_put(&g->threads, k, t)) {
		free(t);
		return NULL;
	}
	t->pid = pid;
	t->tid = tid;
	return t;
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

static int shared_mode(unsigned id)
{
	return id == PTT_EV_RWLOCK_RDLOCK_REQ || id == PTT_EV_RWLOCK_RDLOCK || id == PTT_EV_RWLOCK_TRYRDLOCK ||
	       id == PTT_EV_RWLOCK_TIMEDRDLOCK;
}

static void add_edge(struct lockgraph *g, struct node *a, int a_shared, struct node *b, const struct ptt_event *ev)
{
	int b_shared = shared_mode(ev->id);
	uint64_t k = (uint64_t)a->serial << 32 | b->serial;
	struct edge *e = pmap_get(&g->edges, k);
	if (e) {
		if (ev->tid != e->first_tid && !e->other_tid)
			e->other_tid = ev->tid;
		edge_modes(e, a_shared, b_shared);
		return;
	}
	e = calloc(1, sizeof *e);
	if (!e || pmap_put(&g->edges, k, e)) {
		free(e);
		return;
	}
	e->from = a;
	e->to = b;
	e->first_tid = ev->tid;
	e->first_ns = ev->ns;
	edge_modes(e, a_shared, b_shared);
	if (a->nout == a->capout) {
		size_t cap = a->capout ? a->capout * 2 : 4;
		struct edge **no = realloc(a->out, cap * sizeof *no);
		if (!no)
			return;
		a->out = no;
		a->capout = cap;
	}
	a->out[a->nout++] = e;
}

/* A blocking acquisition of obj: edges from every lock held. */
static void acquire(struct lockgraph *g, struct gthread *t, const struct ptt_event *ev, uint64_t obj, int blocking)
{
	struct node *b = node_of(g, ev->pid, obj);
	if (!b)
		return;
	t->waits_for = NULL;
	if (blocking)
		for (unsigned i = 0; i < t->nheld; i++)
			if (t->held[i] != b)
				add_edge(g, t->held[i], t->held_shared[i], b, ev);
	if (t->nheld < HELD) {
		t->held_shared[t->nheld] = (unsigned char)shared_mode(ev->id);
		t->held[t->nheld++] = b;
	}
}

static void release(struct lockgraph *g, struct gthread *t, uint32_t pid, uint64_t obj)
{
	struct node *b = pmap_get(&g->nodes, pmap_obj_key(pid, obj));
	for (unsigned i = t->nheld; b && i-- > 0;)
		if (t->held[i] == b) {
			memmove(t->held + i, t->held + i + 1, (t->nheld - i - 1) * sizeof t->held[0]);
			memmove(t->held_shared + i, t->held_shared + i + 1, t->nheld - i - 1);
			t->nheld--;
			return;
		}
}

static int ok(const struct ptt_event *ev)
{
	int64_t ret = (int64_t)ptt_event_arg(ev, "ret", 0);
	return ret == 0 || ret == 130;
}

/* The thread that holds lock n, or NULL. */
static struct gthread *lock_holder(const struct lockgraph *g, const struct node *n)
{
	for (size_t i = 0; i < g->threads.cap; i++) {
		struct gthread *t = g->threads.vals[i];
		for (unsigned k = 0; t && k < t->nheld; k++)
			if (t->held[k] == n)
				return t;
	}
	return NULL;
}

void lockgraph_event(struct lockgraph *g, const struct ptt_event *ev)
{
	ptt_names_update(g->names, ev);
	if (ev->id == PTT_EV_SEM_OPEN && ev->nargs && ev->str[0] && !ptt_names_object(g->names, ev->arg[0]))
		ptt_names_set_object(g->names, ev->arg[0], ev->str); /* a named semaphore: its name */
	if (!ev->type || ev->type->source == PTT_SRC_RECORDER)
		return;
	if (ev->id == PTT_EV_THREAD_END || ev->id == PTT_EV_PROCESS_EXIT || ev->id == PTT_EV_PROCESS_BEGIN) {
		for (size_t i = 0; i < g->threads.cap; i++) {
			struct gthread *t = g->threads.vals[i];
			if (t && t->pid == ev->pid && (ev->id != PTT_EV_THREAD_END || t->tid == ev->tid)) {
				pmap_del(&g->threads, (uint64_t)t->pid << 32 | t->tid);
				free(t);
				i = (size_t)-1;
			}
		}
		return;
	}
	uint64_t obj = ev->nargs && ev->type->argkind[0] == PTT_ARG_PTR ? ev->arg[0] : 0;
	struct gthread *t;
	switch (ev->id) {
	case PTT_EV_MUTEX_INIT: case PTT_EV_MUTEX_DESTROY: case PTT_EV_RWLOCK_INIT: case PTT_EV_RWLOCK_DESTROY:
	case PTT_EV_SEM_INIT: case PTT_EV_SEM_DESTROY: {
		/* the end of an object, or a new one where another may have been:
		 * the address's next use is a new node, its edges its own.  Not when
		 * the call failed (EBUSY: the object lives on) or a thread holds it. */
		struct node *n = ok(ev) ? pmap_get(&g->nodes, pmap_obj_key(ev->pid, obj)) : NULL;
		if (n && !lock_holder(g, n))
			pmap_del(&g->nodes, pmap_obj_key(ev->pid, obj));
		break;
	}
	case PTT_EV_MUTEX_LOCK_REQ: case PTT_EV_MUTEX_TIMEDLOCK_REQ:
	case PTT_EV_RWLOCK_RDLOCK_REQ: case PTT_EV_RWLOCK_WRLOCK_REQ: case PTT_EV_SEM_WAIT_REQ:
		if ((t = thread_of(g, ev->pid, ev->tid))) {
			t->waits_for = node_of(g, ev->pid, obj);
			t->wait_since = ev->ns;
			/* the order shows at the request: a deadlocked request never completes */
			for (unsigned i = 0; t->waits_for && ev->id != PTT_EV_SEM_WAIT_REQ && i < t->nheld; i++)
				if (t->held[i] != t->waits_for)
					add_edge(g, t->held[i], t->held_shared[i], t->waits_for, ev);
			if (t->waits_for && ev->id == PTT_EV_SEM_WAIT_REQ)
				t->waits_for->sem = 1;
		}
		break;
	case PTT_EV_MUTEX_LOCK: case PTT_EV_RWLOCK_RDLOCK: case PTT_EV_RWLOCK_WRLOCK:
	case PTT_EV_MUTEX_TIMEDLOCK: case PTT_EV_RWLOCK_TIMEDRDLOCK: case PTT_EV_RWLOCK_TIMEDWRLOCK:
	case PTT_EV_MUTEX_TRYLOCK: case PTT_EV_RWLOCK_TRYRDLOCK: case PTT_EV_RWLOCK_TRYWRLOCK:
		if (!(t = thread_of(g, ev->pid, ev->tid)))
			break;
		t->waits_for = NULL;
		if (ok(ev)) /* try-locks cannot block, so they order nothing */
			acquire(g, t, ev, obj, ev->id == PTT_EV_MUTEX_LOCK || ev->id == PTT_EV_RWLOCK_RDLOCK ||
					       ev->id == PTT_EV_RWLOCK_WRLOCK);
		break;
	case PTT_EV_COND_WAIT:
		if ((t = thread_of(g, ev->pid, ev->tid)))
			acquire(g, t, ev, ptt_event_arg(ev, "mutex", 0), 1);
		break;
	case PTT_EV_COND_WAIT_REQ: case PTT_EV_COND_TIMEDWAIT_REQ:
		if ((t = thread_of(g, ev->pid, ev->tid)))
			release(g, t, ev->pid, ptt_event_arg(ev, "mutex", 0));
		break;
	case PTT_EV_SPIN_LOCK: case PTT_EV_SPIN_TRYLOCK: /* a spinning thread leaves no trace: orders only */
		if ((t = thread_of(g, ev->pid, ev->tid)) && ok(ev))
			acquire(g, t, ev, obj, ev->id == PTT_EV_SPIN_LOCK);
		break;
	case PTT_EV_SEM_POST: {
		struct node *s = ok(ev) ? node_of(g, ev->pid, obj) : NULL;
		if (s) {
			s->sem = 1;
			if (!s->posters) {
				s->poster = ev->tid;
				s->posters = 1;
			} else if (s->poster != ev->tid) {
				s->posters = 2;
			}
		}
		break;
	}
	case PTT_EV_MUTEX_UNLOCK: case PTT_EV_RWLOCK_UNLOCK: case PTT_EV_SPIN_UNLOCK:
		if ((t = thread_of(g, ev->pid, ev->tid)))
			release(g, t, ev->pid, obj);
		break;
	case PTT_EV_SEM_WAIT: case PTT_EV_SEM_TIMEDWAIT:
		if ((t = thread_of(g, ev->pid, ev->tid)))
			t->waits_for = NULL;
		break;
	default:
		break;
	}
}

static void strongconnect(struct lockgraph *g, struct node *v, int *comp)
{
	/* recursion depth is bounded by the number of locks a program nests: small */
	v->index = v->low = g->tarjan_index++;
	g->stack[g->sp++] = v;
	v->on_stack = 1;
	for (size_t i = 0; i < v->nout; i++) {
		struct node *w = v->out[i]->to;
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
	const char *s = ptt_names_object(g->names, n->addr);
	if (s)
		snprintf(buf, size, "%s (0x%" PRIx64 ")", s, n->addr);
	else
		snprintf(buf, size, "0x%" PRIx64, n->addr);
}

static void thread_name(struct lockgraph *g, uint32_t tid, char *buf, size_t size)
{
	const char *s = ptt_names_thread(g->names, tid);
	if (s)
		snprintf(buf, size, "%" PRIu32 " (%s)", tid, s);
	else
		snprintf(buf, size, "%" PRIu32, tid);
}

/* A path from -> ... -> target inside component comp (depth-first); fills path, returns its length. */
static size_t find_path(struct node *from, struct node *target, int comp, struct edge **path, size_t depth, size_t max,
			struct pmap *seen)
{
	for (size_t i = 0; i < from->nout && depth < max; i++) {
		struct edge *e = from->out[i];
		if (e->to->comp != comp)
			continue;
		path[depth] = e;
		if (e->to == target)
			return depth + 1;
		if (pmap_get(seen, (uint64_t)(uintptr_t)e->to))
			continue;
		pmap_put(seen, (uint64_t)(uintptr_t)e->to, e->to);
		size_t n = find_path(e->to, target, comp, path, depth + 1, max, seen);
		if (n)
			return n;
	}
	return 0;
}

int lockgraph_report_cycles(struct lockgraph *g, FILE *out)
{
	int comp = 0, found = 0;
	g->stack = malloc((g->nall + 1) * sizeof *g->stack);
	if (!g->stack)
		return 0;
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
		struct pmap seen = { 0 };
		size_t len = find_path(n, n, n->comp, path, 0, g->nall, &seen);
		pmap_free(&seen);
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
		found++;
		if (!out)
			continue;
		fprintf(out, "potential deadlock %d: lock-order cycle of %zu objects in process %" PRIu32 "\n", found, len, n->pid);
		for (size_t k = 0; k < len; k++) {
			char a[128], b[128], t[64];
			name_of(g, path[k]->from, a, sizeof a);
			name_of(g, path[k]->to, b, sizeof b);
			thread_name(g, path[k]->first_tid, t, sizeof t);
			fprintf(out, "  %s taken while holding %s: first by thread %s at %" PRIu64 ".%09" PRIu64 " s\n", b, a, t,
				path[k]->first_ns / 1000000000u, path[k]->first_ns % 1000000000u);
		}
	}
	free(size);
	free(done);
	free(path);
	free(g->stack);
	g->stack = NULL;
	return found;
}

static struct gthread *holder_of(struct lockgraph *g, const struct node *n)
{
	if (n->sem) { /* the one thread that ever posted it, if still alive, else nobody we can tell */
		struct gthread *p = n->posters == 1 ? pmap_get(&g->threads, (uint64_t)n->pid << 32 | n->poster) : NULL;
		return p;
	}
	return lock_holder(g, n);
}

int lockgraph_report_blocked(struct lockgraph *g, FILE *out)
{
	int found = 0;
	struct pmap reported = { 0 };
	for (size_t i = 0; i < g->threads.cap; i++) {
		struct gthread *start = g->threads.vals[i];
		if (!start || !start->waits_for || pmap_get(&reported, (uint64_t)(uintptr_t)start))
			continue;
		/* follow waits-for: each blocked thread waits for one holder */
		struct gthread *t = start;
		size_t steps = 0;
		while (t && t->waits_for && steps <= g->threads.used) {
			t = holder_of(g, t->waits_for);
			steps++;
			if (t == start)
				break;
		}
		if (t != start)
			continue;
		found++;
		if (out)
			fprintf(out, "deadlock: threads blocked in a cycle at the end of the trace (process %" PRIu32 ")\n", start->pid);
		t = start;
		do {
			struct gthread *h = holder_of(g, t->waits_for);
			pmap_put(&reported, (uint64_t)(uintptr_t)t, t);
			if (out) {
				char tn[64], hn[64], on[128];
				thread_name(g, t->tid, tn, sizeof tn);
				thread_name(g, h->tid, hn, sizeof hn);
				name_of(g, t->waits_for, on, sizeof on);
				fprintf(out, "  thread %s waits since %" PRIu64 ".%09" PRIu64 " s for %s, %s thread %s\n", tn,
					t->wait_since / 1000000000u, t->wait_since % 1000000000u, on,
					t->waits_for->sem ? "a semaphore posted only by" : "held by", hn);
			}
			t = h;
		} while (t != start);
	}
	pmap_free(&reported);
	return found;
}

void lockgraph_free(struct lockgraph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nall; i++) {
		free(g->all[i]->out);
		free(g->all[i]);
	}
	for (size_t i = 0; i < g->edges.cap; i++)
		free(g->edges.vals[i]);
	for (size_t i = 0; i < g->threads.cap; i++)
		free(g->threads.vals[i]);
	free(g->all);
	pmap_free(&g->nodes);
	pmap_free(&g->edges);
	pmap_free(&g->threads);
	ptt_names_free(g->names);
	free(g);
}
