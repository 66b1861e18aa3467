/*
 * filter_context.c - what is in force when a window starts: the live
 * processes and threads (the records that began and named them, and the
 * process's modules and object names), the model's open frames (the
 * records that opened them), and, for the model only, the init records of
 * live objects.  Told again stamped at the window's start, or written as a
 * snapshot (ptt-index) from which the same state is rebuilt.
 */
#include <stdlib.h>
#include <string.h>

#include "filter_context.h"
#include "model.h"

/* A record kept as it was stored. */
struct krec {
	struct krec *next;
	uint64_t pos, obj; /* obj: the object of an object_name or init record */
	uint32_t target;   /* the thread a thread_name names */
	uint32_t nwords;
	uint32_t words[];
};

struct fcontext {
	const struct model *model; /* the trace's, fed by the caller (its open frames) */
	struct ptt_map procs;   /* pid -> records of the process (begin, exec, modules, object names) */
	struct ptt_map threads; /* (pid, tid) -> records of the thread (begin, name) */
	struct ptt_map inits;   /* (pid, object) -> its init record */
};

static uint64_t thread_key(uint32_t pid, uint32_t tid) { return (uint64_t)pid << 32 | tid; }

struct fcontext *fcontext_new(const struct model *m)
{
	struct fcontext *c = calloc(1, sizeof *c);
	if (c)
		c->model = m;
	return c;
}

static void free_list(void *list)
{
	struct krec *k = list;
	while (k) {
		struct krec *n = k->next;
		free(k);
		k = n;
	}
}

void fcontext_free(struct fcontext *c)
{
	if (!c)
		return;
	ptt_map_free_with(&c->procs, free_list);
	ptt_map_free_with(&c->threads, free_list);
	ptt_map_free_with(&c->inits, free_list);
	free(c);
}

static struct krec *keep(const struct ptt_event *ev)
{
	struct krec *k = malloc(sizeof *k + ev->nwords * 4);
	if (!k)
		return NULL;
	k->next = NULL;
	k->pos = ev->pos;
	k->obj = 0;
	k->target = 0;
	k->nwords = ev->nwords;
	memcpy(k->words, ev->words, ev->nwords * 4);
	return k;
}

/* Append k to the list at key (k NULL: memory is short, the record is not told again). */
static void append(struct ptt_map *m, uint64_t key, struct krec *k)
{
	if (!k)
		return;
	struct krec *head = ptt_map_get(m, key);
	if (!head) {
		if (ptt_map_put(m, key, k) != 0)
			free(k);
		return;
	}
	while (head->next)
		head = head->next;
	head->next = k;
}

/* Drop the list at key, or from it the records of the same kind (id) about the same obj/target. */
static void drop(struct ptt_map *m, uint64_t key, const struct krec *like)
{
	struct krec *head = ptt_map_get(m, key);
	if (!like) {
		ptt_map_del(m, key);
		free_list(head);
		return;
	}
	struct krec **pp = &head;
	while (*pp) {
		struct krec *k = *pp;
		if (ptt_rec_id(k->words[0]) == ptt_rec_id(like->words[0]) && k->obj == like->obj && k->target == like->target) {
			*pp = k->next;
			free(k);
		} else {
			pp = &k->next;
		}
	}
	if (head)
		ptt_map_put(m, key, head);
	else
		ptt_map_del(m, key);
}

static void drop_process(struct fcontext *c, uint32_t pid)
{
	drop(&c->procs, pid, NULL);
	struct ptt_map_iter it;
	uint64_t key;
	void *k;
	for (struct ptt_map *m = &c->threads; m; m = m == &c->threads ? &c->inits : NULL)
		for (ptt_map_iter_init(&it, m); ptt_map_next(&it, &key, &k);)
			if (((struct krec *)k)->words[3] == pid)
				drop(m, key, NULL); /* deletes the current entry only: safe */
}

/* Is ev a successful call (no ret argument: yes)? */
static int succeeded(const struct ptt_event *ev) { return ptt_event_argn(ev, PTT_ARGNAME_RET, 0) == 0; }

void fcontext_event(struct fcontext *c, const struct ptt_event *ev)
{
	unsigned role = ev->type ? ev->type->role : PTT_ROLE_POINT;
	struct krec *k;
	switch (ev->id) {
	case PTT_EV_PROCESS_BEGIN:
		drop_process(c, ev->pid);
		append(&c->procs, ev->pid, keep(ev));
		return;
	case PTT_EV_PROCESS_EXEC: case PTT_EV_MODULE: case PTT_EV_MODULE_BUILD_ID: case PTT_EV_STACK_FRAMES:
	case PTT_EV_PY_CODE: case PTT_EV_PY_RUNTIME: /* stacks (their Python code objects too) are defined for good */
		append(&c->procs, ev->pid, keep(ev));
		return;
	case PTT_EV_OBJECT_NAME:
		if ((k = keep(ev)) != NULL) {
			k->obj = ptt_event_argn(ev, PTT_ARGNAME_OBJECT, 0);
			drop(&c->procs, ev->pid, k);
		}
		append(&c->procs, ev->pid, k);
		return;
	case PTT_EV_PROCESS_EXIT:
		drop_process(c, ev->pid);
		return;
	case PTT_EV_THREAD_BEGIN: /* a name given before the thread began stays */
		if ((k = keep(ev)) != NULL)
			drop(&c->threads, thread_key(ev->pid, ev->tid), k);
		append(&c->threads, thread_key(ev->pid, ev->tid), k);
		return;
	case PTT_EV_THREAD_NAME: {
		uint32_t target = (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_TARGET, ev->tid);
		if ((k = keep(ev)) != NULL) {
			k->target = target;
			drop(&c->threads, thread_key(ev->pid, target), k);
		}
		append(&c->threads, thread_key(ev->pid, target), k);
		return;
	}
	case PTT_EV_THREAD_END:
		drop(&c->threads, thread_key(ev->pid, ev->tid), NULL);
		return;
	default:
		break;
	}
	if ((role == PTT_ROLE_INIT || role == PTT_ROLE_DESTROY) && succeeded(ev) && ev->nargs) {
		uint64_t key = ptt_obj_key(ev->pid, ev->arg[0]);
		drop(&c->inits, key, NULL);
		if (role == PTT_ROLE_INIT && (k = keep(ev)) != NULL) {
			k->obj = ev->arg[0];
			append(&c->inits, key, k);
		}
	}
}

/* Everything in force, as records in position order. */
struct item {
	uint64_t pos;
	unsigned kind;               /* PTT_SNAP_CONTEXT or PTT_SNAP_STATE */
	const struct krec *k;        /* a kept record, or */
	const struct mthread *t;     /* an open frame */
	const struct mframe *f;
};
struct items {
	struct item *v;
	size_t n, cap;
	int failed;
};

static void add(struct items *l, struct item it)
{
	if (PTT_GROW(l->v, &l->cap, l->n + 1) != 0) {
		l->failed = 1;
		return;
	}
	l->v[l->n++] = it;
}

static int add_frame(void *ctx, struct mthread *t, const struct mframe *f)
{
	if (!f->lost) /* its end may be among its thread's lost events: not known to be in force (model.h) */
		add(ctx, (struct item){ f->open.pos, PTT_SNAP_CONTEXT, NULL, t, f });
	return 0;
}

static int by_pos(const void *a, const void *b)
{
	uint64_t x = ((const struct item *)a)->pos, y = ((const struct item *)b)->pos;
	return x < y ? -1 : x > y;
}

static int collect(const struct fcontext *c, struct items *l, int with_state)
{
	const struct ptt_map *maps[] = { &c->procs, &c->threads, &c->inits };
	struct ptt_map_iter it;
	void *head;
	for (unsigned m = 0; m < (with_state ? 3u : 2u); m++)
		for (ptt_map_iter_init(&it, maps[m]); ptt_map_next(&it, NULL, &head);)
			for (const struct krec *k = head; k; k = k->next)
				add(l, (struct item){ k->pos, m == 2 ? PTT_SNAP_STATE : PTT_SNAP_CONTEXT, k, NULL, NULL });
	model_foreach_open(c->model, add_frame, l);
	if (l->failed) {
		free(l->v);
		return PTT_E_NOMEM;
	}
	if (l->n)
		qsort(l->v, l->n, sizeof *l->v, by_pos); /* oldest first, as they happened */
	return 0;
}

/* The record of item it, as it was stored, in ev (words and decoded fields); 0 or -1. */
static int item_event(const struct item *it, const struct ptt_types *types, struct ptt_event *ev)
{
	if (it->k) {
		ev->nwords = it->k->nwords;
		memcpy(ev->words, it->k->words, it->k->nwords * 4);
		if (ptt_event_decode(types, ev) != 0)
			return -1;
	} else if (model_frame_event(it->t, it->f, types, 0, it->f->open.ticks, ev) != 0 || ptt_event_encode(ev) != 0) {
		return -1;
	}
	ev->pos = it->pos;
	return 0;
}

/* A stack record of thread t naming stack, stamped at ticks, in ev: 0 or -1. */
static int stack_event(const struct ptt_types *types, const struct mthread *t, uint32_t stack, uint64_t ticks,
		       struct ptt_event *ev)
{
	memset(ev, 0, sizeof *ev);
	ev->type = ptt_types_get(types, PTT_EV_STACK);
	if (!ev->type)
		return -1;
	ev->id = PTT_EV_STACK;
	ev->nargs = ev->type->nargs;
	ev->pid = t->pid;
	ev->tid = t->tid;
	ev->ticks = ticks;
	ev->arg[0] = stack;
	return ptt_event_encode(ev) == 0 ? 0 : -1;
}

/*
 * The stack record that went before the opening record of item it (a frame
 * opened with a known stack: its wait's or hold's caller), in ev; 0, or -1
 * when there is none.  Told again with the frame, it keeps the frame's site
 * past the lock layer, as the whole trace names it.
 */
static int item_stack_event(const struct item *it, const struct ptt_types *types, struct ptt_event *ev)
{
	if (it->k || !it->f->stack || stack_event(types, it->t, it->f->stack, it->f->open.ticks, ev) != 0)
		return -1;
	ev->pos = it->pos;
	return 0;
}

/* Stamp ev at the window's start and emit it. */
static int emit_at(struct ptt_event *ev, uint64_t at_ns, uint64_t at_ticks,
		   int (*emit)(void *ctx, struct ptt_event *ev), void *ctx)
{
	ev->ns = at_ns;
	ev->ticks = at_ticks;
	ptt_rec_put_header(ev->words, ev->words[0], at_ticks, ptt_rec_pid(ev->words), ptt_rec_tid(ev->words));
	ptt_rec_seal(ev->words, ev->nwords);
	return emit(ctx, ev);
}

/*
 * The frames the model forgot before this point (a thread past PTT_FRAMES_MAX),
 * as the limit event (PTT_LIMIT_FRAMES) the recorder's keeper writes at a
 * rotated head, in ev: 0, or -1 when none was forgotten.  Without it a window
 * read alone would show the newest PTT_FRAMES_MAX in force as all there was.
 */
static int frames_limit_event(const struct fcontext *c, const struct ptt_types *types, struct ptt_event *ev)
{
	uint64_t forgotten = model_frames_forgotten(c->model);
	memset(ev, 0, sizeof *ev);
	ev->type = forgotten ? ptt_types_get(types, PTT_EV_LIMIT) : NULL;
	if (!ev->type || ev->type->nargs < 3)
		return -1;
	ev->id = PTT_EV_LIMIT;
	ev->nargs = ev->type->nargs;
	model_frames_forgot_by(c->model, &ev->pid, &ev->tid);
	ev->arg[0] = PTT_LIMIT_FRAMES;
	ev->arg[1] = forgotten;
	ev->arg[2] = PTT_FRAMES_MAX;
	return ptt_event_encode(ev) == 0 ? 0 : -1;
}

int fcontext_replay(struct fcontext *c, uint64_t at_ns, uint64_t at_ticks, const struct ptt_types *types,
		    int (*emit)(void *ctx, struct ptt_event *ev), void *ctx)
{
	struct items l = { 0 };
	struct ptt_event *ev = calloc(1, sizeof *ev);
	int rc = ev ? collect(c, &l, 0) : PTT_E_NOMEM;
	for (size_t i = 0; i < l.n && !rc; i++) {
		if (item_stack_event(&l.v[i], types, ev) == 0 && (rc = emit_at(ev, at_ns, at_ticks, emit, ctx)) != 0)
			break;
		if (item_event(&l.v[i], types, ev) == 0)
			rc = emit_at(ev, at_ns, at_ticks, emit, ctx);
	}
	if (!rc && ev && frames_limit_event(c, types, ev) == 0)
		rc = emit_at(ev, at_ns, at_ticks, emit, ctx);
	free(l.v);
	free(ev);
	return rc;
}

/* A thread's stack record read before the snapshot whose event comes after it. */
struct pending {
	const struct ptt_types *types;
	struct ptt_event *ev;
	uint64_t ticks;
	int (*put)(void *ctx, unsigned kind, const struct ptt_event *ev);
	void *ctx;
};

static int put_pending(void *p, struct mthread *t)
{
	struct pending *pd = p;
	if (!t->pending_stack || stack_event(pd->types, t, t->pending_stack, pd->ticks, pd->ev) != 0)
		return 0;
	return pd->put(pd->ctx, PTT_SNAP_CONTEXT, pd->ev);
}

int fcontext_snapshot(struct fcontext *c, const struct ptt_types *types,
		      int (*put)(void *ctx, unsigned kind, const struct ptt_event *ev), void *ctx)
{
	struct items l = { 0 };
	struct ptt_event *ev = calloc(1, sizeof *ev);
	int rc = ev ? collect(c, &l, 1) : PTT_E_NOMEM;
	uint64_t ticks = 0;
	for (size_t i = 0; i < l.n && !rc; i++) {
		if (item_stack_event(&l.v[i], types, ev) == 0 && (rc = put(ctx, l.v[i].kind, ev)) != 0)
			break;
		if (item_event(&l.v[i], types, ev) == 0) {
			ticks = ev->ticks > ticks ? ev->ticks : ticks;
			rc = put(ctx, l.v[i].kind, ev);
		}
	}
	/* last, so that no record of the snapshot takes them: the stacks read just before it whose
	 * events come after it (a snapshot between a stack record and its event) */
	struct pending pd = { types, ev, ticks, put, ctx };
	if (!rc && ev)
		rc = model_foreach_thread(c->model, put_pending, &pd);
	free(l.v);
	free(ev);
	return rc;
}
