/* names.c - thread and object names learned from a trace's name events. */
#include <stdlib.h>
#include <string.h>

#include "ptt_trace.h"

struct entry {
	uint64_t key;
	char *name;
};

struct map {
	struct entry *e;
	size_t cap, used;
};

struct ptt_names {
	struct map threads, objects;
};

static size_t hash(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

static int map_put(struct map *m, uint64_t key, const char *name)
{
	if ((m->used + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct entry *e = calloc(cap, sizeof *e);
		if (!e)
			return PTT_E_NOMEM;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->e[i].name)
				continue;
			size_t j = hash(m->e[i].key, cap);
			while (e[j].name)
				j = (j + 1) & (cap - 1);
			e[j] = m->e[i];
		}
		free(m->e);
		m->e = e;
		m->cap = cap;
	}
	size_t j = hash(key, m->cap);
	while (m->e[j].name && m->e[j].key != key)
		j = (j + 1) & (m->cap - 1);
	char *copy = strdup(name);
	if (!copy)
		return PTT_E_NOMEM;
	if (m->e[j].name)
		free(m->e[j].name);
	else
		m->used++;
	m->e[j].key = key;
	m->e[j].name = copy;
	return 0;
}

static const char *map_get(const struct map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	size_t j = hash(key, m->cap);
	while (m->e[j].name) {
		if (m->e[j].key == key)
			return m->e[j].name;
		j = (j + 1) & (m->cap - 1);
	}
	return NULL;
}

struct ptt_names *ptt_names_new(void)
{
	return calloc(1, sizeof(struct ptt_names));
}

int ptt_names_update(struct ptt_names *n, const struct ptt_event *ev)
{
	if (ev->id == PTT_EV_THREAD_NAME)
		return map_put(&n->threads, ptt_event_argn(ev, PTT_ARGNAME_TARGET, ev->tid), ev->str);
	if (ev->id == PTT_EV_OBJECT_NAME)
		return map_put(&n->objects, ptt_event_argn(ev, PTT_ARGNAME_OBJECT, 0), ev->str);
	/* A named semaphore is called by its name ("/jobs") unless an object_name
	 * already named its address: the one place this rule lives, so every tool
	 * (stat, deadlock, paje, csv, filter --object, --human) says the same. */
	int sem = ev->id == PTT_EV_SEM_OPEN && ev->type ? ptt_type_arg_index(ev->type, PTT_ARGNAME_SEM) : -1;
	if (sem >= 0 && ev->str[0] && !map_get(&n->objects, ev->arg[sem]))
		return map_put(&n->objects, ev->arg[sem], ev->str);
	return 0;
}

const char *ptt_names_thread(const struct ptt_names *n, uint32_t tid) { return map_get(&n->threads, tid); }
const char *ptt_names_object(const struct ptt_names *n, uint64_t addr) { return map_get(&n->objects, addr); }

int ptt_names_find_object(const struct ptt_names *n, const char *name, uint64_t *addr)
{
	for (size_t i = 0; i < n->objects.cap; i++)
		if (n->objects.e[i].name && strcmp(n->objects.e[i].name, name) == 0) {
			*addr = n->objects.e[i].key;
			return 1;
		}
	return 0;
}

static void map_free(struct map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->e[i].name);
	free(m->e);
}

void ptt_names_free(struct ptt_names *n)
{
	if (!n)
		return;
	map_free(&n->threads);
	map_free(&n->objects);
	free(n);
}
