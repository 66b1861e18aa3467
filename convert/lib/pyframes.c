/* pyframes.c - Python frames (py_code events) named as symbols.c names native frames. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyframes.h"

struct code {
	char *name, *file;    /* the qualified name; the file's base name */
	struct ptt_map lines;    /* line -> struct ptt_sym */
};

struct sym_entry { /* a frame's name; its strings follow it */
	struct ptt_sym sym;
	struct sym_entry *next;
	char buf[];
};

struct ptt_pyframes {
	struct ptt_map codes;    /* pid << 24 | code id -> struct code */
	struct sym_entry *all; /* every name handed out (copies: a code redefined after an exec may go) */
	struct ptt_sym unknown;
};

struct ptt_pyframes *ptt_pyframes_new(void)
{
	struct ptt_pyframes *p = calloc(1, sizeof *p);
	if (p)
		p->unknown = (struct ptt_sym){ NULL, "python code not described", NULL, "python code not described", 1, NULL, NULL };
	return p;
}

static void code_free(void *v)
{
	struct code *c = v;
	free(c->name);
	free(c->file);
	ptt_map_free(&c->lines);
	free(c);
}

void ptt_pyframes_free(struct ptt_pyframes *p)
{
	if (!p)
		return;
	ptt_map_free_with(&p->codes, code_free);
	while (p->all) {
		struct sym_entry *e = p->all;
		p->all = e->next;
		free(e);
	}
	free(p);
}

static uint64_t code_key(uint32_t pid, uint32_t id)
{
	return (uint64_t)pid << 24 | (id & 0xffffffu);
}

void ptt_pyframes_update(struct ptt_pyframes *p, const struct ptt_event *ev)
{
	if (ev->id != PTT_EV_PY_CODE || ev->nargs < 2)
		return;
	uint32_t id = (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_CODE, 0);
	if (!id)
		return;
	/* "qualname file": the name has no space */
	const char *sp = strchr(ev->str, ' '), *path = sp ? sp + 1 : "";
	const char *base = strrchr(path, '/');
	struct code *c = calloc(1, sizeof *c);
	if (!c)
		return;
	c->name = strndup(ev->str, sp ? (size_t)(sp - ev->str) : strlen(ev->str));
	c->file = strdup(base ? base + 1 : path);
	uint64_t key = code_key(ev->pid, id);
	struct code *old = ptt_map_get(&p->codes, key); /* an exec numbers its code objects again */
	if (old) {
		ptt_map_del(&p->codes, key);
		code_free(old);
	}
	if (!c->name || !c->file || ptt_map_put(&p->codes, key, c) != 0)
		code_free(c);
}

const struct ptt_sym *ptt_pyframes_sym(struct ptt_pyframes *p, uint32_t pid, uint64_t frame)
{
	struct code *c = p ? ptt_map_get(&p->codes, code_key(pid, PTT_PYFRAME_CODE(frame))) : NULL;
	if (!c)
		return p ? &p->unknown : NULL;
	uint32_t line = PTT_PYFRAME_LINE(frame);
	struct ptt_sym *hit = ptt_map_get(&c->lines, (uint64_t)line + 1);
	if (hit)
		return hit;
	size_t ln = strlen(c->name), lf = strlen(c->file), room = 3 * (ln + lf) + 64;
	struct sym_entry *e = malloc(sizeof *e + room);
	if (!e)
		return &p->unknown;
	char *b = e->buf;
	e->sym.func = b;
	b += sprintf(b, "%s", c->name) + 1;
	e->sym.where = b;
	b += sprintf(b, "%s (%s)", c->name, c->file) + 1;
	e->sym.line = line ? b : NULL;
	if (line)
		b += sprintf(b, "%s:%" PRIu32, c->file, line) + 1;
	e->sym.text = b;
	sprintf(b, "%s%s%s", e->sym.where, line ? " at " : "", line ? e->sym.line : "");
	e->sym.levels = 1;
	e->sym.fn = e->sym.func;
	e->sym.next = NULL;
	e->next = p->all;
	p->all = e;
	ptt_map_put(&c->lines, (uint64_t)line + 1, e); /* no memory: made again next time */
	return &e->sym;
}
