/* filter_context.c - what is open when a window starts: the model's frames, told again as their events. */
#include <stdlib.h>
#include <string.h>

#include "filter_context.h"
#include "model.h"

struct fcontext {
	struct model *model;
};

struct open_list {
	const struct mthread **t;
	const struct mframe **f;
	size_t n, cap;
};

struct fcontext *fcontext_new(void)
{
	struct fcontext *c = calloc(1, sizeof *c);
	static const struct model_ops none = { 0 };
	if (c && !(c->model = model_new(&none))) {
		free(c);
		return NULL;
	}
	return c;
}

void fcontext_free(struct fcontext *c)
{
	if (c)
		model_free(c->model);
	free(c);
}

void fcontext_event(struct fcontext *c, const struct ptt_event *ev)
{
	model_event(c->model, ev);
}

static int collect(void *ctx, struct mthread *t, const struct mframe *f)
{
	struct open_list *l = ctx;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		const struct mthread **nt = realloc(l->t, cap * sizeof *nt);
		if (nt)
			l->t = nt;
		const struct mframe **nf = realloc(l->f, cap * sizeof *nf);
		if (nf)
			l->f = nf;
		if (!nt || !nf)
			return PTT_E_NOMEM;
		l->cap = cap;
	}
	l->t[l->n] = t;
	l->f[l->n++] = f;
	return 0;
}

static const struct mframe *const *sort_frames;

static int by_pos(const void *a, const void *b)
{
	uint64_t x = sort_frames[*(const size_t *)a]->open.pos, y = sort_frames[*(const size_t *)b]->open.pos;
	return x < y ? -1 : x > y;
}

int fcontext_replay(struct fcontext *c, uint64_t at_ns, uint64_t at_ticks, const struct ptt_types *types,
		    int (*emit)(void *ctx, struct ptt_event *ev), void *ctx)
{
	struct open_list l = { 0 };
	int rc = model_foreach_open(c->model, collect, &l);
	size_t *order = l.n ? malloc(l.n * sizeof *order) : NULL;
	struct ptt_event *ev = calloc(1, sizeof *ev);
	if (rc || (l.n && !order) || !ev) {
		rc = PTT_E_NOMEM;
		l.n = 0;
	}
	for (size_t i = 0; i < l.n; i++)
		order[i] = i;
	sort_frames = l.f;
	if (l.n)
		qsort(order, l.n, sizeof *order, by_pos); /* oldest first, as they happened */
	for (size_t i = 0; i < l.n && !rc; i++)
		if (model_frame_event(l.t[order[i]], l.f[order[i]], types, at_ns, at_ticks, ev) == 0 && ptt_event_encode(ev) == 0)
			rc = emit(ctx, ev);
	free(order);
	free(ev);
	free(l.t);
	free(l.f);
	return rc;
}
