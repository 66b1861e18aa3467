/* filter_context.c - open locks and waits per thread, for windows. */
#include <stdlib.h>
#include <string.h>

#include "filter_context.h"

#define FRAMES 16

struct frame {
	int hold;          /* 1: a lock held, 0: a wait in progress */
	uint64_t key;      /* the object */
	uint64_t ns, ticks, pos;
	uint32_t pid, tid;
	uint16_t id;
	uint64_t arg[PTT_MAX_ARGS];
};

struct tctx {
	uint32_t pid, tid;
	struct frame f[FRAMES];
	unsigned n;
};

struct fcontext {
	struct tctx *t;
	size_t n, cap;
};

struct fcontext *fcontext_new(void)
{
	return calloc(1, sizeof(struct fcontext));
}

void fcontext_free(struct fcontext *c)
{
	if (c)
		free(c->t);
	free(c);
}

static struct tctx *thread(struct fcontext *c, uint32_t pid, uint32_t tid, int create)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->t[i].tid == tid && c->t[i].pid == pid)
			return &c->t[i];
	if (!create)
		return NULL;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		struct tctx *nt = realloc(c->t, cap * sizeof *nt);
		if (!nt)
			return NULL;
		c->t = nt;
		c->cap = cap;
	}
	struct tctx *t = &c->t[c->n++];
	memset(t, 0, sizeof *t);
	t->pid = pid;
	t->tid = tid;
	return t;
}

static void drop_thread(struct fcontext *c, struct tctx *t)
{
	*t = c->t[--c->n];
}

static void push(struct tctx *t, int hold, uint64_t key, const struct ptt_event *ev)
{
	if (t->n == FRAMES) {
		memmove(t->f, t->f + 1, (FRAMES - 1) * sizeof t->f[0]);
		t->n--;
	}
	struct frame *f = &t->f[t->n++];
	f->hold = hold;
	f->key = key;
	f->ns = ev->ns;
	f->ticks = ev->ticks;
	f->pos = ev->pos;
	f->pid = ev->pid;
	f->tid = ev->tid;
	f->id = ev->id;
	memcpy(f->arg, ev->arg, sizeof f->arg);
}

static void pop(struct tctx *t, int hold, uint64_t key)
{
	for (unsigned i = t->n; i-- > 0;)
		if (t->f[i].hold == hold && t->f[i].key == key) {
			memmove(t->f + i, t->f + i + 1, (t->n - i - 1) * sizeof t->f[0]);
			t->n--;
			return;
		}
}

static int ok(const struct ptt_event *ev)
{
	int64_t ret = (int64_t)ptt_event_arg(ev, "ret", 0);
	return ret == 0 || ret == 130;
}

void fcontext_event(struct fcontext *c, const struct ptt_event *ev)
{
	if (!ev->type || ev->type->source == PTT_SRC_RECORDER)
		return;
	if (ev->id == PTT_EV_PROCESS_EXIT || ev->id == PTT_EV_PROCESS_BEGIN) {
		for (size_t i = c->n; i-- > 0;)
			if (c->t[i].pid == ev->pid)
				drop_thread(c, &c->t[i]);
		return;
	}
	if (ev->id == PTT_EV_THREAD_END) {
		struct tctx *t = thread(c, ev->pid, ev->tid, 0);
		if (t)
			drop_thread(c, t);
		return;
	}
	uint64_t obj = ev->nargs && ev->type->argkind[0] == PTT_ARG_PTR ? ev->arg[0] : 0;
	int req = ptt_role_is_request(ev->type->role);
	struct tctx *t = thread(c, ev->pid, ev->tid, req);
	if (!t && !req) {
		switch (ev->id) {
		case PTT_EV_MUTEX_LOCK: case PTT_EV_MUTEX_TRYLOCK: case PTT_EV_MUTEX_TIMEDLOCK: case PTT_EV_COND_WAIT:
		case PTT_EV_RWLOCK_RDLOCK: case PTT_EV_RWLOCK_WRLOCK: case PTT_EV_RWLOCK_TRYRDLOCK:
		case PTT_EV_RWLOCK_TRYWRLOCK: case PTT_EV_RWLOCK_TIMEDRDLOCK: case PTT_EV_RWLOCK_TIMEDWRLOCK:
		case PTT_EV_SPIN_LOCK: case PTT_EV_SPIN_TRYLOCK:
			t = thread(c, ev->pid, ev->tid, 1);
			break;
		default:
			return;
		}
		if (!t)
			return;
	}
	if (req) {
		if (ev->id == PTT_EV_COND_WAIT_REQ || ev->id == PTT_EV_COND_TIMEDWAIT_REQ)
			pop(t, 1, ptt_event_arg(ev, "mutex", 0));
		push(t, 0, obj, ev);
		return;
	}
	switch (ev->id) {
	case PTT_EV_MUTEX_LOCK: case PTT_EV_MUTEX_TRYLOCK: case PTT_EV_MUTEX_TIMEDLOCK:
	case PTT_EV_RWLOCK_RDLOCK: case PTT_EV_RWLOCK_WRLOCK: case PTT_EV_RWLOCK_TRYRDLOCK:
	case PTT_EV_RWLOCK_TRYWRLOCK: case PTT_EV_RWLOCK_TIMEDRDLOCK: case PTT_EV_RWLOCK_TIMEDWRLOCK:
	case PTT_EV_SPIN_LOCK: case PTT_EV_SPIN_TRYLOCK:
		pop(t, 0, obj);
		if (ok(ev))
			push(t, 1, obj, ev);
		break;
	case PTT_EV_COND_WAIT:
		pop(t, 0, obj);
		push(t, 1, ptt_event_arg(ev, "mutex", 0), ev);
		break;
	case PTT_EV_MUTEX_UNLOCK: case PTT_EV_RWLOCK_UNLOCK: case PTT_EV_SPIN_UNLOCK:
		pop(t, 1, obj);
		break;
	case PTT_EV_BARRIER_WAIT: case PTT_EV_SEM_WAIT: case PTT_EV_SEM_TIMEDWAIT: case PTT_EV_THREAD_JOIN:
		pop(t, 0, obj);
		break;
	default:
		break;
	}
	if (t->n == 0)
		drop_thread(c, t);
}

static int by_time(const void *a, const void *b)
{
	const struct frame *x = *(const struct frame *const *)a, *y = *(const struct frame *const *)b;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

int fcontext_replay(struct fcontext *c, uint64_t at_ns, uint64_t at_ticks, const struct ptt_types *types,
		    int (*emit)(void *ctx, struct ptt_event *ev), void *ctx)
{
	size_t total = 0;
	for (size_t i = 0; i < c->n; i++)
		total += c->t[i].n;
	if (!total)
		return 0;
	struct frame **all = malloc(total * sizeof *all);
	struct ptt_event *ev = calloc(1, sizeof *ev);
	if (!all || !ev) {
		free(all);
		free(ev);
		return PTT_E_NOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < c->n; i++)
		for (unsigned j = 0; j < c->t[i].n; j++)
			all[k++] = &c->t[i].f[j];
	qsort(all, total, sizeof *all, by_time);
	int rc = 0;
	for (size_t i = 0; i < total && !rc; i++) {
		const struct frame *f = all[i];
		memset(ev, 0, sizeof *ev);
		ev->type = types->by_id[f->id];
		if (!ev->type)
			continue;
		ev->id = f->id;
		ev->nargs = ev->type->nargs;
		ev->ns = at_ns;
		ev->ticks = at_ticks;
		ev->pid = f->pid;
		ev->tid = f->tid;
		ev->pos = f->pos;
		memcpy(ev->arg, f->arg, sizeof ev->arg);
		if (ptt_event_encode(ev) == 0)
			rc = emit(ctx, ev);
	}
	free(all);
	free(ev);
	return rc;
}
