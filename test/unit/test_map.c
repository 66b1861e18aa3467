/*
 * test_map.c - the one hash map (formats/map.c): get/put/del, iteration in
 * slot order, and deletion of the current entry during an iteration (every
 * key there at the start visited exactly once), also where a cluster wraps
 * around the table's end (the backward shift then carries a visited entry
 * back to the last slots) and where more of them wrap than the iterator
 * notes; and ptt_grow.
 */
#include <stdlib.h>
#include <string.h>

#include "../../formats/ptt_trace.h"
#include "tap.h"

/* formats/map.c's home slot, to build clusters on purpose (the tests check they got them) */
static size_t home(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A key not yet used whose home slot in a table of cap slots is in [lo, hi). */
static uint64_t key_at(size_t cap, size_t lo, size_t hi)
{
	for (;;) {
		uint64_t k = next_rand() | 1;
		size_t h = home(k, cap);
		if (h >= lo && h < hi)
			return k;
	}
}

struct seen {
	uint64_t key[512];
	unsigned visits[512], n;
};

static unsigned find(const struct seen *s, uint64_t k)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->key[i] == k)
			return i;
	return s->n;
}

/*
 * Iterate m, deleting each entry given when keep(key) is 0; 1 if every key of
 * s was given exactly once, the deleted ones are gone and the others there.
 */
static int delete_while_iterating(struct ptt_map *m, struct seen *s, int (*keep)(uint64_t), unsigned *deleted)
{
	struct ptt_map_iter it;
	uint64_t k;
	void *v;
	*deleted = 0;
	memset(s->visits, 0, sizeof s->visits);
	for (ptt_map_iter_init(&it, m); ptt_map_next(&it, &k, &v);) {
		unsigned i = find(s, k);
		if (i == s->n || v != &s->key[i])
			return 0;
		s->visits[i]++;
		if (!keep(k)) {
			if (ptt_map_del(m, k) != v)
				return 0;
			++*deleted;
		}
	}
	size_t left = 0;
	for (unsigned i = 0; i < s->n; i++) {
		if (s->visits[i] != 1)
			return 0;
		void *got = ptt_map_get(m, s->key[i]);
		if (keep(s->key[i]) ? got != &s->key[i] : got != NULL)
			return 0;
		left += keep(s->key[i]) != 0;
	}
	return m->used == left;
}

static int keep_none(uint64_t k) { (void)k; return 0; }
static int keep_odd_bit(uint64_t k) { return (k >> 7) & 1; }
static int keep_all(uint64_t k) { (void)k; return 1; }
static uint64_t back; /* the one entry kept */
static int keep_back(uint64_t k) { return k == back; }

static void put_all(struct ptt_map *m, struct seen *s)
{
	for (unsigned i = 0; i < s->n; i++)
		ptt_map_put(m, s->key[i], &s->key[i]);
}

int main(void)
{
	/* get, put, replace, delete */
	struct ptt_map m = { 0 };
	int a, b, c;
	ok(ptt_map_get(&m, 5) == NULL && ptt_map_del(&m, 5) == NULL, "an empty (zeroed) map has nothing");
	ok(ptt_map_put(&m, 5, &a) == 0 && ptt_map_put(&m, 6, &b) == 0 && ptt_map_get(&m, 5) == &a &&
		   ptt_map_get(&m, 6) == &b && m.used == 2, "put then get");
	ok(ptt_map_put(&m, 5, &c) == 0 && ptt_map_get(&m, 5) == &c && m.used == 2, "put on a key replaces its value");
	ok(ptt_map_del(&m, 5) == &c && ptt_map_get(&m, 5) == NULL && ptt_map_get(&m, 6) == &b && m.used == 1,
	   "del returns the value, and the key is gone");
	ptt_map_free(&m);
	ok(m.cap == 0 && ptt_map_get(&m, 6) == NULL, "free leaves an empty map");

	/* iteration without changes: slot order, every entry once */
	struct seen s = { .n = 300 };
	for (unsigned i = 0; i < s.n; i++)
		s.key[i] = next_rand();
	put_all(&m, &s);
	struct ptt_map_iter it;
	uint64_t k;
	size_t slot = 0, given = 0;
	int in_order = 1;
	for (ptt_map_iter_init(&it, &m); ptt_map_next(&it, &k, NULL); given++) {
		while (slot < m.cap && !m.vals[slot])
			slot++;
		in_order &= slot < m.cap && m.keys[slot++] == k;
	}
	ok(in_order && given == s.n, "a plain iteration gives the %zu entries in slot order", given);
	unsigned deleted;
	ok(delete_while_iterating(&m, &s, keep_all, &deleted) && deleted == 0, "each once, keeping them all");
	ok(delete_while_iterating(&m, &s, keep_odd_bit, &deleted) && deleted > 100 && deleted < 200,
	   "deleting about half while iterating: every key given once (%u deleted)", deleted);
	ptt_map_free(&m);

	/* many random tables at various loads, half deleted while iterating; count how
	 * many had a cluster wrapping around the end, where the shift goes back past it */
	unsigned trials = 2000, good = 0, wrapped = 0;
	for (unsigned t = 0; t < trials; t++) {
		s.n = 20 + (unsigned)(next_rand() % 110); /* 64-256 slots, up to half full */
		for (unsigned i = 0; i < s.n; i++)
			s.key[i] = next_rand();
		put_all(&m, &s);
		wrapped += m.vals[0] && m.vals[m.cap - 1] && home(m.keys[0], m.cap) != 0;
		good += delete_while_iterating(&m, &s, t & 1 ? keep_none : keep_odd_bit, &deleted);
		ptt_map_free(&m);
	}
	ok(good == trials && wrapped > trials / 20, "random tables: %u of %u right, %u of them wrapped", good, trials, wrapped);

	/* a cluster wrapping around the end of 256 slots: deleting its first entry at
	 * the end carries the entry of slot 0 (given first) back into that slot */
	s.n = 0;
	for (unsigned i = 0; i < 70; i++) /* 70 entries in the middle: 256 slots */
		s.key[s.n++] = key_at(256, 64, 192);
	s.key[s.n++] = key_at(256, 253, 254);
	s.key[s.n++] = key_at(256, 254, 255);
	s.key[s.n++] = key_at(256, 255, 256);
	back = s.key[s.n++] = key_at(256, 253, 254);
	put_all(&m, &s);
	ok(m.cap == 256 && m.keys[0] == back && m.vals[0] && m.vals[253], "set up: slot 0 holds an entry whose home is 253");
	ok(delete_while_iterating(&m, &s, keep_back, &deleted) && deleted == s.n - 1 && m.keys[253] == back,
	   "deleting all others while iterating, the entry carried back to slot 253 is not given twice");
	ptt_map_free(&m);

	/* more entries wrapped than the iterator notes (PTT_MAP_ITER_WRAP): given at the end instead */
	s.n = 0;
	for (unsigned i = 0; i < 70; i++)
		s.key[s.n++] = key_at(256, 64, 192);
	for (unsigned i = 0; i < PTT_MAP_ITER_WRAP + 8; i++)
		s.key[s.n++] = key_at(256, 254, 255);
	put_all(&m, &s);
	ok(m.cap == 256 && m.vals[PTT_MAP_ITER_WRAP + 5] && home(m.keys[PTT_MAP_ITER_WRAP + 5], 256) == 254,
	   "set up: %d entries wrapped from slot 254", PTT_MAP_ITER_WRAP + 6);
	ok(delete_while_iterating(&m, &s, keep_all, &deleted), "too many wrapped, kept: each given once");
	ok(delete_while_iterating(&m, &s, keep_odd_bit, &deleted) && deleted, "too many wrapped, half deleted: each given once");
	put_all(&m, &s);
	ok(delete_while_iterating(&m, &s, keep_none, &deleted) && deleted == s.n && m.used == 0,
	   "too many wrapped, all deleted: each given once");
	ptt_map_free(&m);

	/* ptt_grow */
	int *arr = NULL;
	size_t cap = 0;
	ok(PTT_GROW(arr, &cap, 1) == 0 && arr && cap >= 1, "grow from nothing: %zu", cap);
	ok(PTT_GROW(arr, &cap, 5) == 0 && cap == 8, "doubled: %zu", cap);
	for (int i = 0; i < 1000; i++) {
		if (PTT_GROW(arr, &cap, (size_t)i + 1) != 0)
			break;
		arr[i] = i;
	}
	int same = cap >= 1000;
	for (int i = 0; same && i < 1000; i++)
		same = arr[i] == i;
	ok(same, "grown one by one to 1000, the contents kept (capacity %zu)", cap);
	int *before = arr;
	ok(PTT_GROW(arr, &cap, 10) == 0 && arr == before, "room already there: unchanged");
	size_t huge = cap;
	ok(PTT_GROW(arr, &huge, SIZE_MAX / 2) == PTT_E_NOMEM && huge == cap && arr == before,
	   "an impossible size: PTT_E_NOMEM, array and capacity unchanged");
	free(arr);
	return tap_done();
}
