/* pmap.h - a u64 -> pointer hash map (open addressing, backward-shift deletion). */
#ifndef PTT_PMAP_H
#define PTT_PMAP_H

#include <stddef.h>
#include <stdint.h>

struct pmap {
	uint64_t *keys;
	void **vals;   /* NULL: empty slot */
	size_t cap, used;
};

void *pmap_get(const struct pmap *m, uint64_t k);
int pmap_put(struct pmap *m, uint64_t k, void *v); /* v must not be NULL */
void pmap_del(struct pmap *m, uint64_t k);
void pmap_free(struct pmap *m); /* the table only, not the values */

#endif
