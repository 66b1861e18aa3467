/* stacks.c - the stacks a trace defines (stack_frames events), by process and id. */
#include <stdlib.h>
#include <string.h>

#include "ptt_trace.h"

struct stack_entry {
	uint32_t depth;
	uint64_t f[PTT_STACK_MAX];
};

struct ptt_stacks {
	struct ptt_map e; /* pid << 32 | id -> struct stack_entry */
};

struct ptt_stacks *ptt_stacks_new(void)
{
	return calloc(1, sizeof(struct ptt_stacks));
}

void ptt_stacks_free(struct ptt_stacks *s)
{
	if (s)
		ptt_map_free_with(&s->e, free);
	free(s);
}

static struct stack_entry *insert(struct ptt_stacks *s, uint64_t key)
{
	struct stack_entry *e = ptt_map_get(&s->e, key);
	if (e)
		return e;
	if (!(e = calloc(1, sizeof *e)) || ptt_map_put(&s->e, key, e) != 0) {
		free(e);
		return NULL;
	}
	return e;
}

int ptt_stacks_update(struct ptt_stacks *s, const struct ptt_event *ev)
{
	if (ev->id != PTT_EV_STACK_FRAMES || ev->nargs < 3)
		return 0;
	uint32_t id = (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_STACK, 0), at = (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_AT, 0);
	int a = ev->type ? ptt_type_arg_index(ev->type, PTT_ARGNAME_A) : -1; /* the frames: a and those after it */
	if (!id || id == PTT_STACK_ID_FULL || at >= PTT_STACK_MAX || a < 0)
		return 1;
	unsigned first = (unsigned)a;
	struct stack_entry *e = insert(s, (uint64_t)ev->pid << 32 | id);
	if (!e)
		return PTT_E_NOMEM;
	if (at == 0)
		e->depth = 0; /* a redefinition (after an exec, the same pid counts again from 1) */
	for (unsigned k = first; k < ev->nargs && at + k - first < PTT_STACK_MAX; k++) {
		if (!ev->arg[k])
			break;
		e->f[at + k - first] = ev->arg[k];
		if (at + k - first + 1 > e->depth)
			e->depth = at + k - first + 1;
	}
	return 1;
}

unsigned ptt_stacks_get(const struct ptt_stacks *s, uint32_t pid, uint32_t id, const uint64_t **frames)
{
	struct stack_entry *e = id && id != PTT_STACK_ID_FULL ? ptt_map_get(&s->e, (uint64_t)pid << 32 | id) : NULL;
	*frames = e ? e->f : NULL;
	return e ? e->depth : 0;
}
