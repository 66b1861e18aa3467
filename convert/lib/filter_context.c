/*
 * filter_context.c - what is in force when a window starts: the records
 * formats/inforce.h names (the one statement of them, the recorder's heads'
 * too), and, for the model only, the init records of live objects (its own
 * state: a semaphore's initial value makes it a lock).  Told again stamped
 * at the window's start, or written as a snapshot (ptt-index) from which
 * the same state is rebuilt.
 */
#include <stdlib.h>
#include <string.h>

#include "filter_context.h"

/* An init record kept as it was stored. */
struct krec {
	uint64_t pos;
	uint32_t nwords;
	uint32_t words[];
};

struct fcontext {
	struct ptt_inforce *inforce; /* the records in force */
	struct ptt_map inits;        /* (pid, object) -> its init record */
};

struct fcontext *fcontext_new(void)
{
	struct fcontext *c = calloc(1, sizeof *c);
	if (c && !(c->inforce = ptt_inforce_new())) {
		free(c);
		c = NULL;
	}
	return c;
}

void fcontext_free(struct fcontext *c)
{
	if (!c)
		return;
	ptt_inforce_free(c->inforce);
	ptt_map_free_with(&c->inits, free);
	free(c);
}

static struct krec *keep(const struct ptt_event *ev)
{
	struct krec *k = malloc(sizeof *k + ev->nwords * 4);
	if (!k)
		return NULL;
	k->pos = ev->pos;
	k->nwords = ev->nwords;
	memcpy(k->words, ev->words, ev->nwords * 4);
	return k;
}

/* Drop the init records of process pid (it began again, or ended). */
static void drop_process(struct fcontext *c, uint32_t pid)
{
	struct ptt_map_iter it;
	uint64_t key;
	void *k;
	for (ptt_map_iter_init(&it, &c->inits); ptt_map_next(&it, &key, &k);)
		if (ptt_rec_pid(((struct krec *)k)->words) == pid) {
			ptt_map_del(&c->inits, key); /* deletes the current entry only: safe */
			free(k);
		}
}

/* Is ev a successful call (no ret argument: yes)? */
static int succeeded(const struct ptt_event *ev) { return ptt_event_argn(ev, PTT_ARGNAME_RET, 0) == 0; }

void fcontext_event(struct fcontext *c, const struct ptt_event *ev)
{
	if (ev->nwords >= PTT_REC_MIN_WORDS && ev->nwords == ptt_rec_len(ev->words[0])) {
		if (ptt_inforce_takes(c->inforce, ev->id))
			ptt_inforce_take_as(c->inforce, ev->words, ev->pos, ev->type);
		else
			ptt_inforce_see(c->inforce, ev->words, ev->pos);
	}
	unsigned role = ev->type ? ev->type->role : PTT_ROLE_POINT;
	if (ev->id == PTT_EV_PROCESS_BEGIN || ev->id == PTT_EV_PROCESS_EXIT) {
		drop_process(c, ev->pid);
	} else if ((role == PTT_ROLE_INIT || role == PTT_ROLE_DESTROY) && succeeded(ev) && ev->nargs) {
		uint64_t key = ptt_obj_key(ev->pid, ev->arg[0]);
		free(ptt_map_get(&c->inits, key));
		ptt_map_del(&c->inits, key);
		struct krec *k = role == PTT_ROLE_INIT ? keep(ev) : NULL;
		if (k && ptt_map_put(&c->inits, key, k) != 0)
			free(k);
	}
}

/* Everything in force, as records: in position order, then the pending stacks and the limit. */
struct item {
	uint64_t pos, order;
	unsigned kind;               /* PTT_INFORCE_* (an init record: 0) */
	uint32_t nwords;
	uint32_t *words;             /* a copy (an init: its krec's) */
};
struct items {
	struct item *v;
	size_t n, cap;
	int failed;
};

static void add(struct items *l, uint64_t pos, unsigned kind, const uint32_t *words, uint32_t n, int copy)
{
	uint32_t *w = copy ? malloc((size_t)n * 4) : (uint32_t *)words;
	if (!w || PTT_GROW(l->v, &l->cap, l->n + 1) != 0) {
		if (copy)
			free(w);
		l->failed = 1;
		return;
	}
	if (copy)
		memcpy(w, words, (size_t)n * 4);
	l->v[l->n] = (struct item){ pos, l->n, kind, n, w };
	l->n++;
}

static int add_inforce(void *ctx, const struct ptt_inforce_rec *r)
{
	add(ctx, r->pos, r->kind, r->words, r->n, 1);
	return 0;
}

/* The pending stacks and the limit after every record in position order (the pairing is kept: order). */
static int by_pos(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int xl = x->kind == PTT_INFORCE_PENDING || x->kind == PTT_INFORCE_LIMIT;
	int yl = y->kind == PTT_INFORCE_PENDING || y->kind == PTT_INFORCE_LIMIT;
	if (xl != yl)
		return xl - yl;
	if (!xl && x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void free_items(struct items *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].kind)
			free(l->v[i].words);
	free(l->v);
}

static int collect(const struct fcontext *c, struct items *l, int with_state)
{
	struct ptt_map_iter it;
	void *k;
	long rc = ptt_inforce_foreach(c->inforce, add_inforce, l);
	for (ptt_map_iter_init(&it, &c->inits); with_state && ptt_map_next(&it, NULL, &k);)
		add(l, ((struct krec *)k)->pos, 0, ((struct krec *)k)->words, ((struct krec *)k)->nwords, 0);
	if (rc < 0 || l->failed) {
		free_items(l);
		*l = (struct items){ 0 };
		return PTT_E_NOMEM;
	}
	if (l->n)
		qsort(l->v, l->n, sizeof *l->v, by_pos); /* oldest first, as they happened */
	return 0;
}

/* Item it, as it was stored, in ev (words and decoded fields), stamped at ticks if stamp: 0 or -1. */
static int item_event(const struct item *it, const struct ptt_types *types, int stamp, uint64_t ticks,
		      struct ptt_event *ev)
{
	memset(ev, 0, sizeof *ev);
	ev->nwords = it->nwords;
	memcpy(ev->words, it->words, it->nwords * 4);
	if (stamp) {
		ptt_rec_put_header(ev->words, ev->words[0], ticks, ptt_rec_pid(ev->words), ptt_rec_tid(ev->words));
		ptt_rec_seal(ev->words, ev->nwords);
	}
	if (ptt_event_decode(types, ev) != 0)
		return -1;
	ev->pos = it->pos;
	return 0;
}

int fcontext_replay(struct fcontext *c, uint64_t at_ns, uint64_t at_ticks, const struct ptt_types *types,
		    int (*emit)(void *ctx, struct ptt_event *ev), void *ctx)
{
	struct items l = { 0 };
	struct ptt_event *ev = calloc(1, sizeof *ev);
	int rc = ev ? collect(c, &l, 0) : PTT_E_NOMEM;
	for (size_t i = 0; i < l.n && !rc; i++) {
		/* a stack whose event comes after the window's start goes with that event (ptt-filter) */
		if (l.v[i].kind == PTT_INFORCE_PENDING || item_event(&l.v[i], types, 1, at_ticks, ev) != 0)
			continue;
		ev->ns = at_ns;
		rc = emit(ctx, ev);
	}
	free_items(&l);
	free(ev);
	return rc;
}

int fcontext_snapshot(struct fcontext *c, const struct ptt_types *types,
		      int (*put)(void *ctx, unsigned kind, const struct ptt_event *ev), void *ctx)
{
	struct items l = { 0 };
	struct ptt_event *ev = calloc(1, sizeof *ev);
	int rc = ev ? collect(c, &l, 1) : PTT_E_NOMEM;
	uint64_t ticks = 0;
	for (size_t i = 0; i < l.n && !rc; i++) {
		/* last, so that no record of the snapshot takes them: the stacks read just before it whose
		 * events come after it (a snapshot between a stack record and its event), and the limit
		 * (frames forgotten before it), stamped as the latest record before them */
		int last = l.v[i].kind == PTT_INFORCE_PENDING || l.v[i].kind == PTT_INFORCE_LIMIT;
		if (item_event(&l.v[i], types, last, ticks, ev) != 0)
			continue;
		ticks = ev->ticks > ticks ? ev->ticks : ticks;
		rc = put(ctx, l.v[i].kind ? PTT_SNAP_CONTEXT : PTT_SNAP_STATE, ev);
	}
	free_items(&l);
	free(ev);
	return rc;
}
