/*
 * compact.h - the compact form of an EVENTS block (PTT_BLOCK_COMPACT,
 * ptt-trace(5) "Compact EVENTS blocks"): internal to formats/, shared by the
 * writer (encode) and the reader (expand).
 *
 * A record is coded against what the block has said before it: its thread
 * by a slot in the block's table of (pid, tid), its time as the difference
 * from the previous record's, its arguments as the words that differ from
 * the last record of the same thread and type.  Its checksum is kept as
 * written by the runtime, so the reader checks every record as in a plain
 * block once it has expanded it.  Both sides keep the same history, reset
 * at each block: a block decodes by itself.
 */
#ifndef PTT_COMPACT_H
#define PTT_COMPACT_H

#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ptt_trace.h"

#define CPT_SLOTS 15          /* threads a block names by slot; tag 15: pid and tid written out */
#define CPT_NEW 15u
#define CPT_REF 0x10u         /* tag bit: arguments coded against the reference record */
#define CPT_BUCKET_SHIFT 5    /* tag bits 5-7: which of a thread's 8 references of the type (cpt_bucket) */
#define CPT_REF_WORDS 16      /* records of at most this many words serve as references */
#define CPT_REFS 512          /* the references: hashed by (slot, id, bucket) */
#define CPT_MAX_BYTES 1040    /* one record coded takes at most this (255 words raw: 1 + 8 + 3 + 9 + 1 + 996 + 4),
				 * and room for the stores of a varint (8 bytes) and of a word not kept (4) */

struct cpt_ref {
	uint64_t key;  /* the block's generation << 32 | slot << 24 | words << 16 | id (cpt_key) */
	uint32_t w[CPT_REF_WORDS - PTT_REC_MIN_WORDS]; /* its arguments */
};

struct ptt_compact {
	uint32_t gen;
	uint32_t nslots;
	uint32_t pid[CPT_SLOTS], tid[CPT_SLOTS];
	uint8_t slot_of[64]; /* by tid: the slot last given to a thread with these low bits (checked) */
	uint64_t prev_ts;
	/* the encoder's: the thread of the record before (words 3 and 4 as one), and its slot
	 * (CPT_NEW: none); a thread's records come in runs */
	uint64_t last_pt;
	uint32_t last_slot;
	uint64_t last_key; /* cpt_key of that slot with words and id 0 */
	struct cpt_ref ref[CPT_REFS];
};

static inline void cpt_reset(struct ptt_compact *c, uint64_t first_ticks)
{
	c->gen++;
	if (c->gen == 0) { /* wrapped: no stale entry may match */
		memset(c->ref, 0, sizeof c->ref);
		c->gen = 1;
	}
	c->nslots = 0;
	c->prev_ts = first_ticks;
	c->last_slot = CPT_NEW;
}

static inline struct cpt_ref *cpt_ref_of(struct ptt_compact *c, uint32_t slot, uint32_t id, uint32_t bucket)
{
	return &c->ref[(id + slot * 97u + bucket * 29u + (id >> 8)) & (CPT_REFS - 1)];
}

/*
 * Which of 8 references a record of k argument words uses (the encoder's
 * choice: the tag tells the reader): a hash of its last word but one, the
 * low word of a call site (the last argument of most events), of its first,
 * the object's, and of the word before the call site, the result of most.
 * A thread that takes a lock from a few places in turn then finds, for
 * each place, a reference with the same arguments (sqlite3: 62 % of records
 * instead of 12 % with one reference per type); one that takes several
 * objects at one place, or whose tries fail and succeed in turn, one for
 * each (CPython's sem_trywait: 13.2 bytes a record to 9.4; sqlite3 11.2 to
 * 10.2, node 11.6 to 10.2; a lock loop's the same).
 */
static inline uint32_t cpt_bucket(const uint32_t *a, uint32_t k)
{
	if (k < 2)
		return 0;
	uint32_t h = a[k - 2];
	if (k >= 3)
		h += a[0] * 0x85EBCA77u + a[k - 3] * 0xC2B2AE3Du;
	return (h * 0x9E3779B1u) >> 29;
}

/* A reference's key: the block's generation, the slot, and the record's first word's low 24 bits (words, id). */
static inline uint64_t cpt_key(const struct ptt_compact *c, uint32_t n, uint32_t slot, uint32_t id)
{
	return (uint64_t)c->gen << 32 | slot << 24 | ptt_rec_idlen(ptt_rec_word0(id, n));
}

/*
 * A prefix varint: n bytes (1 to 8) hold v < 2^(7n) as v << n with n - 1
 * one bits below a zero bit, little-endian; a first byte 0xff is followed by
 * v in 8 bytes.  The length is in the first byte, so neither side loops over
 * bytes.  Writes 9 bytes at most (p needs 9 bytes of room); returns the end.
 */
static inline unsigned char *cpt_put_pv(unsigned char *p, uint64_t v)
{
	/* the bytes for a value of b significant bits, (b + 6) / 7, by b (1 to 56) */
	static const uint8_t bytes[57] = { 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3,
					   3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 6, 6,
					   6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 8, 8, 8, 8, 8, 8, 8 };
	unsigned bits = 64 - (unsigned)__builtin_clzll(v | 1);
	if (__builtin_expect(bits > 56, 0)) {
		*p = 0xff;
		memcpy(p + 1, &v, 8);
		return p + 9;
	}
	unsigned n = bytes[bits];
	uint64_t x = ((v << 1 | 1) << (n - 1)) - 1; /* v << n, then n - 1 one bits */
	memcpy(p, &x, 8);
	return p + n;
}

static inline unsigned char *cpt_put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
	return p + 4;
}

/* A prefix varint at *pp before end, at most max bits: 0 and *v, or -1 (cut short, too large). */
static inline int cpt_get_pv(const unsigned char **pp, const unsigned char *end, uint64_t *v, unsigned max)
{
	const unsigned char *p = *pp;
	if (p >= end)
		return -1;
	unsigned n = (unsigned)__builtin_ctz(~(uint32_t)*p) + 1;
	uint64_t x;
	if (__builtin_expect(end - p >= 9, 1)) {
		memcpy(&x, p + (n == 9), 8);
	} else {
		if ((size_t)(end - p) < n)
			return -1;
		x = 0;
		memcpy(&x, p + (n == 9), n == 9 ? 8 : n);
	}
	if (n < 9)
		x = x >> n & ((1ull << (7 * n)) - 1);
	if (max < 64 && (x >> max))
		return -1;
	*pp = p + n;
	*v = x;
	return 0;
}

/*
 * The mask of the argument words a[0, k) (k <= 10) that differ from the
 * reference's w: four at a time (SSE2, in every x86-64), the rest one by
 * one.  Inlined with k a constant for the common lengths, so that nothing
 * in it branches on the data.
 */
static inline __attribute__((always_inline)) uint32_t cpt_mask(const uint32_t *a, const uint32_t *w, uint32_t k)
{
	uint32_t same = 0, i = 0;
#ifdef __SSE2__
	for (; i + 4 <= k; i += 4) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(a + i));
		__m128i y = _mm_loadu_si128((const __m128i *)(const void *)(w + i));
		same |= (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(x, y))) << i;
	}
#endif
	for (; i < k; i++)
		same |= (uint32_t)(a[i] == w[i]) << i;
	return ~same & ((1u << k) - 1);
}

/*
 * The argument words a[0, k) against the reference's w, whose differing
 * words are mask: the mask as a varint, then those words as they are, in
 * order; w takes a's words.
 */
static inline __attribute__((always_inline)) unsigned char *cpt_put_args(unsigned char *p, const uint32_t *a, uint32_t *w,
									  uint32_t k, uint32_t mask)
{
	if (__builtin_expect(mask < 128, 1))
		*p++ = (unsigned char)(mask << 1);
	else
		p = cpt_put_pv(p, mask);
	for (uint32_t m = mask; m; m &= m - 1) {
		memcpy(p, a + __builtin_ctz(m), 4);
		p += 4;
	}
	memcpy(w, a, k * 4);
	return p;
}

/* a[0, k) against the reference's w: the mask (0 when every word repeats), and the words that differ. */
static inline __attribute__((always_inline)) unsigned char *cpt_code_args(unsigned char *p, const uint32_t *a, uint32_t *w,
									   uint32_t k)
{
	uint32_t mask = cpt_mask(a, w, k);
	if (!mask) {
		*p = 0; /* the mask, as a prefix varint: most records repeat their reference's arguments */
		return p + 1;
	}
	return cpt_put_args(p, a, w, k, mask);
}

/*
 * Whether the thread of rec (pid, tid: its words 3 and 4, pt as one) has a
 * slot the encoder finds without a search: the thread of the record before
 * (last_pt, last_slot, last_key), or the slot that slot_of remembers for
 * its tid, which is then made the thread of the record before.
 */
static inline int cpt_thread_known(struct ptt_compact *c, const uint32_t *rec, uint64_t pt)
{
	if (__builtin_expect(pt == c->last_pt && c->last_slot != CPT_NEW, 1))
		return 1;
	uint32_t pid = ptt_rec_pid(rec), tid = ptt_rec_tid(rec), slot = c->slot_of[tid & 63];
	if (slot >= c->nslots || c->tid[slot] != tid || c->pid[slot] != pid)
		return 0;
	c->last_pt = pt;
	c->last_slot = slot;
	c->last_key = cpt_key(c, 0, slot, 0);
	return 1;
}

/* The arguments a[0, n - PTT_REC_MIN_WORDS) written out, after the record's length n. */
static inline __attribute__((always_inline)) unsigned char *cpt_code_plain(unsigned char *p, const uint32_t *a, uint32_t n)
{
	*p++ = (unsigned char)n;
	memcpy(p, a, (n - PTT_REC_MIN_WORDS) * 4);
	return p + (n - PTT_REC_MIN_WORDS) * 4;
}

/* A record's id and its time against *prev_ts (which takes it), at p; returns the end. */
static inline __attribute__((always_inline)) unsigned char *cpt_put_id_time(unsigned char *p, uint32_t id, uint64_t ts,
									     uint64_t *prev_ts)
{
	uint64_t d = ts - *prev_ts; /* mod 2^64: a record older than the one before takes 9 bytes */
	if (__builtin_expect(id < 128, 1))
		*p++ = (unsigned char)(id << 1);
	else
		p = cpt_put_pv(p, id);
	if (__builtin_expect(d < 128, 1))
		*p++ = (unsigned char)(d << 1); /* cpt_put_pv's one byte */
	else
		p = cpt_put_pv(p, d);
	*prev_ts = ts;
	return p;
}

/*
 * The arguments a[0, k) of a record of the thread in slot, whose first word
 * is w0, against its reference: coded against it when the reference is of
 * its kind (*tag gets CPT_REF), else written out and made the reference.
 * *tag gets the reference's bucket either way, *refp the reference.
 */
static inline __attribute__((always_inline)) unsigned char *cpt_code_ref(struct ptt_compact *c, unsigned char *p,
									  unsigned *tag, uint32_t slot, uint64_t key0,
									  uint32_t w0, const uint32_t *a, uint32_t k,
									  const struct cpt_ref **refp)
{
	uint32_t bucket = cpt_bucket(a, k);
	struct cpt_ref *r = cpt_ref_of(c, slot, ptt_rec_id(w0), bucket);
	uint64_t key = key0 | ptt_rec_idlen(w0); /* cpt_key(c, n, slot, id) */
	*tag |= bucket << CPT_BUCKET_SHIFT;
	*refp = r;
	if (r->key == key) {
		*tag |= CPT_REF;
		return cpt_code_args(p, a, r->w, k);
	}
	r->key = key;
	memcpy(r->w, a, k * 4);
	return cpt_code_plain(p, a, k + PTT_REC_MIN_WORDS);
}

/*
 * The rest of a record once its thread is told (p: past the tag byte, and
 * past pid and tid if written out, which tag CPT_NEW says): the id, the
 * time against *prev_ts, the arguments against the reference of (slot, id,
 * bucket) when slot is one, and the checksum.  key0 is cpt_key(c, 0, slot,
 * 0).  Writes the tag at out (and at *tagp); returns the end.  *refp gets
 * the reference it was coded against or made, NULL when none.
 */
static inline __attribute__((always_inline)) unsigned char *cpt_encode_rest(struct ptt_compact *c, unsigned char *out,
									     unsigned char *p, unsigned tag, uint32_t slot,
									     uint64_t key0, uint64_t *prev_ts,
									     const uint32_t *rec, uint32_t n,
									     const struct cpt_ref **refp, unsigned *tagp)
{
	uint64_t ts;
	memcpy(&ts, rec + 1, 8); /* words 1 and 2: low, high */
	p = cpt_put_id_time(p, ptt_rec_id(rec[0]), ts, prev_ts);
	const uint32_t *a = rec + PTT_REC_HDR_WORDS;
	if (slot != CPT_NEW) {
		switch (n) { /* unrolled for the lengths of most built-in events: mutexes', conditions' */
		case PTT_REC_MIN_WORDS + 5: p = cpt_code_ref(c, p, &tag, slot, key0, rec[0], a, 5, refp); break;
		case PTT_REC_MIN_WORDS + 7: p = cpt_code_ref(c, p, &tag, slot, key0, rec[0], a, 7, refp); break;
		default:
			if (n <= CPT_REF_WORDS) {
				p = cpt_code_ref(c, p, &tag, slot, key0, rec[0], a, n - PTT_REC_MIN_WORDS, refp);
				break;
			}
			*refp = NULL;
			p = cpt_code_plain(p, a, n);
			break;
		}
	} else {
		*refp = NULL;
		p = cpt_code_plain(p, a, n);
	}
	*out = (unsigned char)tag;
	*tagp = tag;
	return cpt_put32(p, rec[n - 1]);
}

/*
 * Whether two records of n words (n <= CPT_REF_WORDS) have the same
 * arguments (a and w: their words 5 to n - 2).  Not !cpt_mask: building
 * the mask of the words that differ cost the lock loop's recorder 8
 * instructions an event more (callgrind) than this yes or no.
 */
static inline __attribute__((always_inline)) int cpt_same_args(const uint32_t *a, const uint32_t *w, uint32_t n)
{
#ifdef __SSE2__
	if (n == PTT_REC_MIN_WORDS + 5) { /* mutexes', rwlocks' */
		__m128i x = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(const void *)a),
					    _mm_loadu_si128((const __m128i *)(const void *)w));
		return _mm_movemask_epi8(x) == 0xffff && a[4] == w[4];
	}
#endif
	return memcmp(a, w, (n - PTT_REC_MIN_WORDS) * 4) == 0;
}

/*
 * A record coded against a reference whose arguments it repeats, with this
 * tag (its slot, CPT_REF and the reference's bucket), its first word w0,
 * its time ts after *prev_ts, and its checksum: the bytes cpt_encode_rest
 * writes for it.
 */
static inline __attribute__((always_inline)) unsigned char *cpt_encode_repeat(unsigned char *out, unsigned tag, uint32_t w0,
									       uint64_t *prev_ts, uint64_t ts, uint32_t sum)
{
	unsigned char *p = cpt_put_id_time(out + 1, ptt_rec_id(w0), ts, prev_ts);
	out[0] = (unsigned char)tag;
	*p = 0; /* the mask: every argument repeats */
	return cpt_put32(p + 1, sum);
}

/*
 * Code the record rec of n words (sound: marked, n >= 6) at out, which has
 * room for CPT_MAX_BYTES; returns the end.
 */
static inline __attribute__((always_inline)) unsigned char *cpt_encode(struct ptt_compact *c, unsigned char *out,
								      const uint32_t *rec, uint32_t n)
{
	uint32_t slot;
	uint64_t pt;
	unsigned char *p = out + 1;
	memcpy(&pt, rec + 3, 8);
	if (cpt_thread_known(c, rec, pt)) {
		slot = c->last_slot;
	} else {
		uint32_t pid = rec[3], tid = rec[4];
		for (slot = 0; slot < c->nslots && (c->tid[slot] != tid || c->pid[slot] != pid); slot++)
			;
		if (slot == c->nslots) { /* new to this block: written out, and given the next slot if one is left */
			p = cpt_put32(cpt_put32(p, pid), tid);
			if (c->nslots < CPT_SLOTS) {
				c->pid[slot] = pid;
				c->tid[slot] = tid;
				c->nslots++;
			} else {
				slot = CPT_NEW;
			}
		}
		if (slot != CPT_NEW)
			c->slot_of[tid & 63] = (uint8_t)slot;
		c->last_pt = pt;
		c->last_slot = slot;
		c->last_key = cpt_key(c, 0, slot, 0);
	}
	const struct cpt_ref *ref;
	unsigned tag;
	return cpt_encode_rest(c, out, p, p != out + 1 ? CPT_NEW : slot, slot, c->last_key, &c->prev_ts, rec, n, &ref, &tag);
}

/* The bits set in x, without the library call __builtin_popcountll makes for a plain x86-64 (no POPCNT):
 * 2 % of a reader's time on a sqlite3 trace. */
static inline unsigned cpt_popcount(uint64_t x)
{
	x -= (x >> 1) & 0x5555555555555555ull;
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned)((x * 0x0101010101010101ull) >> 56);
}

/*
 * Expand the coded records in[0, n) into plain records at out (room for
 * cap words).  Returns the words written; *bad is set when the input does
 * not decode to its end (damaged: what follows the point is lost with the
 * rest of the block, which the caller reports).
 */
/*
 * A coded stream (ptt-record --streams=coded: PTT_BLOCK_CODED blocks) is
 * coded by the writing thread itself, into its ring, and decoded across its
 * blocks with one history per stream.  Two tags no record takes (a thread
 * written out cannot be coded against a reference) mark what the writer
 * says in it: CPT_STREAM_RESET, the history starts again (a thread that
 * claims the ring; the time after it is counted from 0), and CPT_STREAM_PAD,
 * the rest of the block is no record (the ring's end: the next record
 * begins at the ring's start, in the next block).
 */
#define CPT_STREAM_RESET (CPT_NEW | CPT_REF)
#define CPT_STREAM_PAD (CPT_NEW | CPT_REF | 1u << CPT_BUCKET_SHIFT)

static inline size_t cpt_expand_more(struct ptt_compact *c, const unsigned char *in, size_t n, uint32_t *out, size_t cap,
				     int stream, int *bad);

static inline size_t cpt_expand(struct ptt_compact *c, const unsigned char *in, size_t n, uint32_t *out, size_t cap,
				uint64_t first_ticks, int *bad)
{
	cpt_reset(c, first_ticks);
	return cpt_expand_more(c, in, n, out, cap, 0, bad);
}

/*
 * cpt_expand without the reset: the history goes on from where the last
 * call left it.  stream: the input is a coded stream's block, whose marks
 * (CPT_STREAM_RESET, CPT_STREAM_PAD) are read as such.
 */
static inline size_t cpt_expand_more(struct ptt_compact *c, const unsigned char *in, size_t n, uint32_t *out, size_t cap,
				     int stream, int *bad)
{
	const unsigned char *p = in, *end = in + n;
	size_t o = 0;
	*bad = 0;
	while (p < end) {
		unsigned tag = *p++;
		uint32_t slot = tag & 15u, pid, tid, rn;
		uint64_t id, d, mask;
		if (stream && tag == CPT_STREAM_RESET) {
			cpt_reset(c, 0);
			continue;
		}
		if (stream && tag == CPT_STREAM_PAD)
			break;
		if (slot == CPT_NEW) {
			if (end - p < 8)
				goto damaged;
			memcpy(&pid, p, 4);
			memcpy(&tid, p + 4, 4);
			p += 8;
			if (c->nslots < CPT_SLOTS) {
				c->pid[c->nslots] = pid;
				c->tid[c->nslots] = tid;
				slot = c->nslots++;
			}
		} else {
			if (slot >= c->nslots)
				goto damaged;
			pid = c->pid[slot];
			tid = c->tid[slot];
		}
		if (cpt_get_pv(&p, end, &id, 16) || cpt_get_pv(&p, end, &d, 64))
			goto damaged;
		uint64_t ts = c->prev_ts + d;
		c->prev_ts = ts;
		uint32_t *w = out + o;
		if (tag & CPT_REF) {
			if (slot == CPT_NEW)
				goto damaged;
			struct cpt_ref *r = cpt_ref_of(c, slot, (uint32_t)id, tag >> CPT_BUCKET_SHIFT);
			if ((r->key ^ cpt_key(c, 0, slot, (uint32_t)id)) & ~(uint64_t)ptt_rec_idlen(ptt_rec_word0(0, 0xff))) /* but the length */
				goto damaged;
			rn = ptt_rec_len((uint32_t)r->key);
			if (cpt_get_pv(&p, end, &mask, rn - PTT_REC_MIN_WORDS) || o + rn > cap)
				goto damaged;
			if ((size_t)(end - p) < 4u * cpt_popcount(mask))
				goto damaged;
			for (uint32_t i = 0; mask; i++, mask >>= 1)
				if (mask & 1) {
					memcpy(&r->w[i], p, 4);
					p += 4;
				}
			memcpy(w + PTT_REC_HDR_WORDS, r->w, (rn - PTT_REC_MIN_WORDS) * 4);
		} else {
			if (p >= end)
				goto damaged;
			rn = *p++;
			if (rn < PTT_REC_MIN_WORDS || (size_t)(end - p) < (rn - PTT_REC_MIN_WORDS) * 4u || o + rn > cap)
				goto damaged;
			memcpy(w + PTT_REC_HDR_WORDS, p, (rn - PTT_REC_MIN_WORDS) * 4);
			p += (rn - PTT_REC_MIN_WORDS) * 4;
			if (slot != CPT_NEW && rn <= CPT_REF_WORDS) {
				struct cpt_ref *r = cpt_ref_of(c, slot, (uint32_t)id, tag >> CPT_BUCKET_SHIFT);
				r->key = cpt_key(c, rn, slot, (uint32_t)id);
				memcpy(r->w, w + PTT_REC_HDR_WORDS, (rn - PTT_REC_MIN_WORDS) * 4);
			}
		}
		if (end - p < 4)
			goto damaged;
		ptt_rec_put_header(w, ptt_rec_word0((uint32_t)id, rn), ts, pid, tid);
		memcpy(&w[rn - 1], p, 4);
		p += 4;
		o += rn;
	}
	return o;
damaged:
	*bad = 1;
	return o;
}

#endif
