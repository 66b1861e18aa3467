/*
 * map.h - the containers of ptt: the one hash map (u64 -> pointer) with its
 * iterator, and the one growth of an array.  Part of the format library,
 * reached through ptt_trace.h; like the rest of it, never prints or exits.
 */
#ifndef PTT_MAP_H
#define PTT_MAP_H

#include <stddef.h>
#include <stdint.h>

/*
 * A u64 -> pointer hash map: open addressing, linear probing, deletion by
 * backward shift (no tombstones), kept at most half full.  A zeroed struct is
 * an empty map; a value is never NULL (NULL marks an empty slot).  Where an
 * entry lands depends only on the puts and deletes so far, so two runs over
 * the same trace iterate in the same order.  Tools print in it (what ends
 * with a process, at one time): another hash or growth reorders those lines,
 * as the frozen outputs of test/cli/25-frozen-outputs.bats show.
 */
struct ptt_map {
	uint64_t *keys;
	void **vals;   /* NULL: empty slot */
	size_t cap, used;
};

/*
 * The key of a synchronisation object: its address in its process.  Exact
 * (no two objects share a key) for pids below 2^17 with user addresses below
 * 2^47; above, two objects collide only if their pids agree in the low 17
 * bits and their addresses differ by less than 32.  An object in shared
 * memory (PTT_SHARED_ADDR, ptt_trace.h) has one key in every process.
 */
static inline uint64_t ptt_obj_key(uint32_t pid, uint64_t addr)
{
	if (addr >> 56 == 0xfd) /* PTT_SHARED_ADDR: one object whichever process uses it */
		return addr;
	return addr ^ ((uint64_t)pid << 47) ^ ((uint64_t)pid >> 17);
}

/* The slot a key's probe starts at (a power-of-two table). */
static inline size_t ptt_map_slot(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

/* NULL if absent.  Inline: the readers ask several maps for every event (ptt-critical: 11 % of its time in
 * the call before, sqlite3's trace). */
static inline void *ptt_map_get(const struct ptt_map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t j = ptt_map_slot(key, m->cap); m->vals[j]; j = (j + 1) & (m->cap - 1))
		if (m->keys[j] == key)
			return m->vals[j];
	return NULL;
}
int ptt_map_put(struct ptt_map *m, uint64_t key, void *val);         /* 0 or PTT_E_NOMEM; val not NULL */
void *ptt_map_del(struct ptt_map *m, uint64_t key);                  /* the value removed, or NULL */
void ptt_map_free(struct ptt_map *m); /* the table, not the values; leaves an empty map */
/* The values too: destroy(value) for each (free, or the owner's), in slot order, then the table. */
void ptt_map_free_with(struct ptt_map *m, void (*destroy)(void *val));

/*
 * An iteration over a map, in slot order:
 *
 *	struct ptt_map_iter it;
 *	uint64_t key;
 *	void *v;
 *	for (ptt_map_iter_init(&it, &m); ptt_map_next(&it, &key, &v);)
 *		...
 *
 * Safe, like Linux's hash_for_each_safe or a redis safe dict iterator: the
 * body may delete the entry it was given (ptt_map_del of that key, directly
 * or deep in a callee) and replace values, and the iteration goes on: every
 * entry there at the start is given exactly once (test/unit/test_map.c).  The
 * body must not put a new key nor delete an entry other than the current one
 * (a backward shift could then carry an entry past the iterator, or back).
 *
 * Why it needs more than an index: deleting at slot i shifts later entries
 * of its cluster back, possibly into slot i (so i is looked at again), and,
 * when the cluster wraps past the table's end, carries entries from slots
 * 0.. (visited first) back into the table's last slots.  The iterator notes
 * at the start the keys in slots 0.. that wrapped (usually none, a few at
 * most) and skips them at the end.  More than PTT_MAP_ITER_WRAP of them (never
 * met at half load) are given at the end instead: exactly once still, though
 * not in slot order.
 */
#define PTT_MAP_ITER_WRAP 32
enum { PTT_MAP_ALL, PTT_MAP_NOT_NOTED, PTT_MAP_HOME_BEFORE, PTT_MAP_HOME_AFTER }; /* which entries a run of slots gives */
struct ptt_map_iter {
	const struct ptt_map *m;
	size_t pos, end;       /* the slot looked at, the end of the current run */
	uint64_t key;          /* the key last given, at pos (valid when given) */
	unsigned char given, which, run, nruns;
	struct { size_t from, to; unsigned char which; } runs[3]; /* the runs of slots after the first */
	unsigned nwrap;
	uint64_t wrap[PTT_MAP_ITER_WRAP]; /* the keys of slots 0.. that wrapped: given there, skipped at the end */
};
void ptt_map_iter_init(struct ptt_map_iter *it, const struct ptt_map *m);
int ptt_map_next_run(struct ptt_map_iter *it, uint64_t *key, void **val); /* ptt_map_next's slow path */

/*
 * The next entry: 1 with *key and *val set (either pointer may be NULL), or 0
 * at the end.  Inline: the model walks its threads on many events, and a map
 * with nothing wrapped (the usual case) is then one run of slots.
 */
static inline int ptt_map_next(struct ptt_map_iter *it, uint64_t *key, void **val)
{
	const struct ptt_map *m = it->m;
	size_t p = it->pos;
	if (it->given) {
		it->given = 0;
		/* the current entry deleted and its slot refilled by a later one: look at it again */
		if (!m->vals[p] || m->keys[p] == it->key)
			p++;
	}
	if (it->which == PTT_MAP_ALL) {
		while (p < it->end && !m->vals[p])
			p++;
		if (p < it->end) {
			it->pos = p;
			it->key = m->keys[p];
			it->given = 1;
			if (key)
				*key = m->keys[p];
			if (val)
				*val = m->vals[p];
			return 1;
		}
	}
	it->pos = p;
	return ptt_map_next_run(it, key, val);
}

/*
 * Make room for need elements of elem bytes in the array *arrp (of any
 * pointer type, NULL when empty) of capacity *cap: doubled (from 4) until it
 * holds them.  0, or PTT_E_NOMEM with the array and *cap unchanged.
 */
int ptt_grow(void *arrp, size_t *cap, size_t need, size_t elem);
#define PTT_GROW(arr, cap, need) ptt_grow(&(arr), (cap), (need), sizeof *(arr))

#endif
