/* map.c - the one hash map (u64 -> pointer) with a safe iterator, and the one array growth. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptt_trace.h"

/* The home slot of key k: murmur3's finaliser, half of it */
/* Double the table (64 slots at first), every entry put again in slot order. */
static int grow(struct ptt_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	uint64_t *keys = calloc(cap, sizeof *keys);
	void **vals = calloc(cap, sizeof *vals);
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return PTT_E_NOMEM;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->vals[i]) {
			size_t j = ptt_map_slot(m->keys[i], cap);
			while (vals[j])
				j = (j + 1) & (cap - 1);
			keys[j] = m->keys[i];
			vals[j] = m->vals[i];
		}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

int ptt_map_put(struct ptt_map *m, uint64_t key, void *val)
{
	int rc;
	if ((m->used + 1) * 2 > m->cap && (rc = grow(m)) != 0)
		return rc;
	size_t j = ptt_map_slot(key, m->cap);
	while (m->vals[j] && m->keys[j] != key)
		j = (j + 1) & (m->cap - 1);
	if (!m->vals[j])
		m->used++;
	m->keys[j] = key;
	m->vals[j] = val;
	return 0;
}

void *ptt_map_del(struct ptt_map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	size_t i = ptt_map_slot(key, m->cap);
	while (m->vals[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	void *gone = m->vals[i];
	if (!gone)
		return NULL;
	m->vals[i] = NULL;
	m->used--;
	/* backward shift: move back each later entry of the cluster that may sit in the hole */
	for (size_t j = (i + 1) & (m->cap - 1); m->vals[j]; j = (j + 1) & (m->cap - 1)) {
		size_t h = ptt_map_slot(m->keys[j], m->cap);
		if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->vals[j] = NULL;
			i = j;
		}
	}
	return gone;
}

void ptt_map_free(struct ptt_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

void ptt_map_free_with(struct ptt_map *m, void (*destroy)(void *val))
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->vals[i])
			destroy(m->vals[i]);
	ptt_map_free(m);
}

/* Add a run of slots [from, to) giving the entries which, unless empty. */
static void add_run(struct ptt_map_iter *it, size_t from, size_t to, unsigned char which)
{
	if (from >= to)
		return;
	if (it->nruns == 0 && it->end == 0) { /* the first: where the iteration starts */
		it->pos = from;
		it->end = to;
		it->which = which;
		it->nruns = 1;
		return;
	}
	it->runs[it->nruns - 1].from = from;
	it->runs[it->nruns - 1].to = to;
	it->runs[it->nruns - 1].which = which;
	it->nruns++;
}

void ptt_map_iter_init(struct ptt_map_iter *it, const struct ptt_map *m)
{
	it->m = m;
	it->pos = it->end = 0;
	it->given = 0;
	it->which = PTT_MAP_ALL;
	it->run = it->nruns = 0;
	it->nwrap = 0;
	if (!m->cap)
		return;
	size_t head = 0;
	while (m->vals[head]) /* at most half full: an empty slot is there */
		head++;
	unsigned n = 0;
	if (head && m->vals[m->cap - 1]) /* a cluster may wrap around the end */
		for (size_t p = 0; p < head; p++)
			if (ptt_map_slot(m->keys[p], m->cap) > p) { /* its home is at the end of the table */
				if (n < PTT_MAP_ITER_WRAP)
					it->wrap[n] = m->keys[p];
				n++;
			}
	if (!n) { /* nothing wrapped: nothing can be carried back */
		add_run(it, 0, m->cap, PTT_MAP_ALL);
		return;
	}
	size_t tail = m->cap - 1; /* the first slot of the cluster that wraps */
	while (m->vals[tail - 1]) /* stops at slot head, empty, at the latest */
		tail--;
	if (n <= PTT_MAP_ITER_WRAP) {
		/* slot order; the wrapped keys, given first, are skipped if carried back to the end */
		it->nwrap = n;
		add_run(it, 0, tail, PTT_MAP_ALL);
		add_run(it, tail, m->cap, PTT_MAP_NOT_NOTED);
	} else {
		/* too many to note: the wrapped entries of slots 0.. are given at the end instead */
		add_run(it, 0, head, PTT_MAP_HOME_BEFORE);
		add_run(it, head, m->cap, PTT_MAP_ALL);
		add_run(it, 0, head, PTT_MAP_HOME_AFTER);
	}
}

/* Is the entry at slot p (not empty) given in the current run? */
static int wanted(const struct ptt_map_iter *it, size_t p)
{
	const struct ptt_map *m = it->m;
	switch (it->which) {
	case PTT_MAP_NOT_NOTED:
		for (unsigned i = 0; i < it->nwrap; i++)
			if (it->wrap[i] == m->keys[p])
				return 0;
		return 1;
	case PTT_MAP_HOME_BEFORE:
		return ptt_map_slot(m->keys[p], m->cap) <= p;
	case PTT_MAP_HOME_AFTER:
		return ptt_map_slot(m->keys[p], m->cap) > p;
	default:
		return 1;
	}
}

int ptt_map_next_run(struct ptt_map_iter *it, uint64_t *key, void **val)
{
	const struct ptt_map *m = it->m;
	for (;;) {
		if (it->pos >= it->end) {
			if (it->run + 1 >= it->nruns) {
				it->which = PTT_MAP_ALL;
				return 0;
			}
			it->pos = it->runs[it->run].from;
			it->end = it->runs[it->run].to;
			it->which = it->runs[it->run].which;
			it->run++;
			continue;
		}
		size_t p = it->pos;
		if (m->vals[p] && wanted(it, p)) {
			it->key = m->keys[p];
			it->given = 1;
			if (key)
				*key = m->keys[p];
			if (val)
				*val = m->vals[p];
			return 1;
		}
		it->pos++;
	}
}

int ptt_grow(void *arrp, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap : 4;
	while (nc < need) {
		if (nc > SIZE_MAX / 2 / elem)
			return PTT_E_NOMEM;
		nc *= 2;
	}
	if (nc > SIZE_MAX / elem)
		return PTT_E_NOMEM;
	void *old, *arr;
	memcpy(&old, arrp, sizeof old); /* arrp: the address of a T *, whatever T */
	if (!(arr = realloc(old, nc * elem)))
		return PTT_E_NOMEM;
	memcpy(arrp, &arr, sizeof arr);
	*cap = nc;
	return 0;
}
