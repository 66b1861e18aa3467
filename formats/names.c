/* names.c - thread and object names learned from a trace's name events. */
#include <stdlib.h>
#include <string.h>

#include "ptt_trace.h"

struct ptt_names {
	struct ptt_map threads, objects; /* tid, address -> its name (a copy) */
};

static int map_put(struct ptt_map *m, uint64_t key, const char *name)
{
	char *copy = strdup(name), *old = ptt_map_get(m, key);
	if (!copy || ptt_map_put(m, key, copy) != 0) {
		free(copy);
		return PTT_E_NOMEM;
	}
	free(old);
	return 0;
}

struct ptt_names *ptt_names_new(void)
{
	return calloc(1, sizeof(struct ptt_names));
}

/* ptt_names_update on a name or sem_open event: kept out of line, so that every other event costs a compare or three */
__attribute__((noinline)) static int learn(struct ptt_names *n, const struct ptt_event *ev)
{
	if (ev->id == PTT_EV_THREAD_NAME)
		return map_put(&n->threads, ptt_event_argn(ev, PTT_ARGNAME_TARGET, ev->tid), ev->str);
	if (ev->id == PTT_EV_OBJECT_NAME)
		return map_put(&n->objects, ptt_event_argn(ev, PTT_ARGNAME_OBJECT, 0), ev->str);
	/* A named semaphore is called by its name ("/jobs") unless an object_name
	 * already named its address: the one place this rule lives, so every tool
	 * (stat, deadlock, paje, csv, filter --object, --human) says the same. */
	int sem = ev->id == PTT_EV_SEM_OPEN && ev->type ? ptt_type_arg_index(ev->type, PTT_ARGNAME_SEM) : -1;
	if (sem >= 0 && ev->str[0] && !ptt_map_get(&n->objects, ev->arg[sem]))
		return map_put(&n->objects, ev->arg[sem], ev->str);
	return 0;
}

int ptt_names_update(struct ptt_names *n, const struct ptt_event *ev)
{
	if (ev->id != PTT_EV_THREAD_NAME && ev->id != PTT_EV_OBJECT_NAME && ev->id != PTT_EV_SEM_OPEN)
		return 0;
	return learn(n, ev);
}

const char *ptt_names_thread(const struct ptt_names *n, uint32_t tid) { return ptt_map_get(&n->threads, tid); }
const char *ptt_names_object(const struct ptt_names *n, uint64_t addr) { return ptt_map_get(&n->objects, addr); }

int ptt_names_find_object(const struct ptt_names *n, const char *name, uint64_t *addr)
{
	struct ptt_map_iter it;
	uint64_t key;
	void *v;
	for (ptt_map_iter_init(&it, &n->objects); ptt_map_next(&it, &key, &v);)
		if (strcmp(v, name) == 0) {
			*addr = key;
			return 1;
		}
	return 0;
}

void ptt_names_free(struct ptt_names *n)
{
	if (!n)
		return;
	ptt_map_free_with(&n->threads, free);
	ptt_map_free_with(&n->objects, free);
	free(n);
}
