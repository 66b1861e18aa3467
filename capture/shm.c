/*
 * shm.c - mapping the shared rings' segments, in libptt.so and in
 * ptt-record alike (each process has its own table).
 */
#include <fcntl.h>
#include <stddef.h>
#include <sys/mman.h>

#include "shm.h"

void *ptt_seg_base[PTT_MAX_SEGS];
int ptt_shm_fd = -1;

/*
 * A new mapping of segment k made from one this process already has, with
 * no descriptor: mremap with an old size of 0 makes a second mapping of the
 * same shared pages from the same file offset, of any length the file
 * covers.  The source is the last page of the highest segment below k
 * already mapped (of the first mapping, at worst); the new mapping runs from
 * that page to segment k's end, and what comes before segment k (that page,
 * and segments not mapped here yet, if any) is unmapped at once.  NULL when
 * the kernel refuses (no address space: ulimit -v).
 */
static void *seg_remap(const struct ptt_shm *s, uint32_t k, uint64_t bytes)
{
	const char *src = (const char *)s + s->size - 4096; /* the first mapping: to segment 0's end */
	uint64_t from = s->size - 4096, at = s->ring_offset + k * bytes;
	for (uint32_t j = k - 1; j >= 1; j--) {
		const char *b = __atomic_load_n(&ptt_seg_base[j], __ATOMIC_ACQUIRE);
		if (b) {
			src = b + bytes - 4096;
			from = s->ring_offset + (j + 1) * bytes - 4096;
			break;
		}
	}
	char *m = mremap((void *)src, 0, (size_t)(at + bytes - from), MREMAP_MAYMOVE);
	if (m == MAP_FAILED)
		return NULL;
	munmap(m, (size_t)(at - from));
	return m + (at - from);
}

/*
 * Segment k of the memfd, mapped once per process.  A system call: only on
 * a thread's first event (the segment of the ring it claims) and in the
 * recorder's pass, never on an ordinary event.  The recorder maps from its
 * descriptor (ptt_shm_fd); the runtime has none (ptt_shm_fd is -1 there):
 * the traced program may close every descriptor it did not open, or reuse
 * the number for a file of its own, so segments are made from the mappings
 * it already has (seg_remap).  Two threads may map the same segment at once:
 * the first to publish wins (release, so a reader of the pointer sees the
 * mapping) and the other unmaps its copy.
 */
void *ptt_seg_map(const struct ptt_shm *s, uint32_t k)
{
	if (k == 0 || k >= PTT_MAX_SEGS)
		return NULL;
	uint64_t bytes = (uint64_t)s->seg_rings * s->ring_words * 4;
	void *b;
	if (ptt_shm_fd >= 0) {
		b = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ptt_shm_fd, (off_t)(s->ring_offset + k * bytes));
		if (b == MAP_FAILED)
			return NULL;
	} else if (!(b = seg_remap(s, k, bytes))) {
		return NULL;
	}
	ptt_shm_huge(s, b, bytes);
	void *none = NULL;
	if (!__atomic_compare_exchange_n(&ptt_seg_base[k], &none, b, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		munmap(b, bytes);
		return none;
	}
	return b;
}

void ptt_shm_huge(const struct ptt_shm *s, void *p, uint64_t bytes)
{
	if (!(s->flags & PTT_SHM_CODED)) /* advice: refused or ignored, the rings are as before */
		madvise(p, (size_t)bytes, MADV_HUGEPAGE);
}

int ptt_ring_forget(const struct ptt_shm *s, uint32_t i)
{
	uint64_t bytes = (uint64_t)s->ring_words * 4;
	if (ptt_shm_fd < 0)
		return -1;
	return fallocate(ptt_shm_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(s->ring_offset + i * bytes), (off_t)bytes);
}
