/* map.c - the one hash map (u64 -> pointer) with a safe iterator, and the one array growth. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptt_trace.h"

/* The home slot of key k: murmur3's finaliser, half of it */
static size_t slot(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

void *ptt_map_get(const struct ptt_map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t j = slot(key, m->cap); m->vals[j]; j = (j + 1) & (m->cap - 1))
		if (m->keys[j] == key)
			return m->vals[j];
	return NULL;
}

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
			size_t j = slot(m->keys[i], cap);
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
	size_t j = slot(key, m->cap);
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
	size_t i = slot(key, m->cap);
	while (m->vals[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	void *gone = m->vals[i];
	if (!gone)
		return NULL;
	m->vals[i] = NULL;
	m->used--;
	/* backward shift: move back each later entry of the cluster that may sit in the hole */
	for (size_t j = (i + 1) & (m->cap - 1); m->vals[j]; j = (j + 1) & (m->cap - 1)) {
		size_t h = slot(m->keys[j], m->cap);
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

void ptt_map_iter_init(struct ptt_map_iter *it, const struct ptt_map *m)
{
	it->m = m;
	it->pos = it->head = 0;
	it->tail = m->cap;
	it->phase = 0;
	it->given = it->deferred = 0;
	it->nwrap = 0;
	if (!m->cap) {
		it->end = 0;
		it->phase = 3;
		return;
	}
	size_t h = 0;
	while (m->vals[h]) /* at most half full: an empty slot is there */
		h++;
	it->head = it->end = h;
	if (!h || !m->vals[m->cap - 1])
		return; /* no cluster wraps around the end */
	unsigned n = 0;
	for (size_t p = 0; p < h; p++)
		if (slot(m->keys[p], m->cap) > p) { /* its home is at the end of the table */
			if (n < PTT_MAP_ITER_WRAP)
				it->wrap[n] = m->keys[p];
			n++;
		}
	it->nwrap = n < PTT_MAP_ITER_WRAP ? n : PTT_MAP_ITER_WRAP;
	it->deferred = n > PTT_MAP_ITER_WRAP;
	size_t t = m->cap - 1;
	while (m->vals[t - 1]) /* stops at slot h, empty, at the latest */
		t--;
	it->tail = t;
}

static int wrapped_head(const struct ptt_map_iter *it, uint64_t key)
{
	for (unsigned i = 0; i < it->nwrap; i++)
		if (it->wrap[i] == key)
			return 1;
	return 0;
}

/* Is the entry at slot p (not empty) given in this phase? */
static int wanted(const struct ptt_map_iter *it, size_t p)
{
	const struct ptt_map *m = it->m;
	switch (it->phase) {
	case 0:
		return !it->deferred || slot(m->keys[p], m->cap) <= p;
	case 1: /* a deletion may have carried a wrapped entry of the head back to the end */
		return p < it->tail || it->deferred || !it->nwrap || !wrapped_head(it, m->keys[p]);
	default:
		return slot(m->keys[p], m->cap) > p;
	}
}

int ptt_map_next(struct ptt_map_iter *it, uint64_t *key, void **val)
{
	const struct ptt_map *m = it->m;
	if (it->given) {
		it->given = 0;
		/* the current entry deleted and its slot refilled by a later one: look at it again */
		if (!m->vals[it->pos] || m->keys[it->pos] == it->key)
			it->pos++;
	}
	for (;;) {
		if (it->pos >= it->end) {
			if (it->phase == 0) {
				it->phase = 1;
				it->pos = it->head;
				it->end = m->cap;
				continue;
			}
			if (it->phase == 1 && it->deferred) {
				it->phase = 2;
				it->pos = 0;
				it->end = it->head;
				continue;
			}
			it->phase = 3;
			return 0;
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
