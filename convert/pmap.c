/* pmap.c - a u64 -> pointer hash map with deletion, for the converters' live-object tables. */
#include <stdlib.h>

#include "pmap.h"

/* u64 -> pointer map, open addressing with backward-shift deletion */
static size_t slot(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

void *pmap_get(const struct pmap *m, uint64_t k)
{
	if (!m->cap)
		return NULL;
	for (size_t j = slot(k, m->cap); m->vals[j]; j = (j + 1) & (m->cap - 1))
		if (m->keys[j] == k)
			return m->vals[j];
	return NULL;
}

int pmap_put(struct pmap *m, uint64_t k, void *v)
{
	if ((m->used + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		uint64_t *keys = calloc(cap, sizeof *keys);
		void **vals = calloc(cap, sizeof *vals);
		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -1;
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
	}
	size_t j = slot(k, m->cap);
	while (m->vals[j] && m->keys[j] != k)
		j = (j + 1) & (m->cap - 1);
	if (!m->vals[j])
		m->used++;
	m->keys[j] = k;
	m->vals[j] = v;
	return 0;
}

void pmap_del(struct pmap *m, uint64_t k)
{
	if (!m->cap)
		return;
	size_t i = slot(k, m->cap);
	while (m->vals[i] && m->keys[i] != k)
		i = (i + 1) & (m->cap - 1);
	if (!m->vals[i])
		return;
	m->vals[i] = NULL;
	m->used--;
	for (size_t j = (i + 1) & (m->cap - 1); m->vals[j]; j = (j + 1) & (m->cap - 1)) {
		size_t h = slot(m->keys[j], m->cap);
		if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->vals[j] = NULL;
			i = j;
		}
	}
}

void pmap_free(struct pmap *m)
{
	free(m->keys);
	free(m->vals);
}

