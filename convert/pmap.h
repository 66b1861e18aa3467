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

/*
 * The key of a synchronisation object: its address in its process.  Exact
 * (no two objects share a key) for pids below 2^17 with user addresses below
 * 2^47; above, two objects collide only if their pids agree in the low 17
 * bits and their addresses differ by less than 32.
 */
static inline uint64_t pmap_obj_key(uint32_t pid, uint64_t addr)
{
	return addr ^ ((uint64_t)pid << 47) ^ ((uint64_t)pid >> 17);
}

void *pmap_get(const struct pmap *m, uint64_t k);
int pmap_put(struct pmap *m, uint64_t k, void *v); /* v must not be NULL */
void pmap_del(struct pmap *m, uint64_t k);
void pmap_free(struct pmap *m); /* the table only, not the values */

#endif
