/*
 * shm.c - mapping the shared rings' segments, in libptt.so and in
 * ptt-record alike (each process has its own table).
 */
#include <fcntl.h>
#include <sys/mman.h>

#include "shm.h"

void *ptt_seg_base[PTT_MAX_SEGS];
int ptt_shm_fd = -1;

/*
 * Segment k of the memfd, mapped once per process.  A system call: only on
 * a thread's first event (the segment of the ring it claims) and in the
 * recorder's pass, never on an ordinary event.  Two threads may map the
 * same segment at once: the first to publish wins (release, so a reader
 * of the pointer sees the mapping) and the other unmaps its copy.
 */
void *ptt_seg_map(const struct ptt_shm *s, uint32_t k)
{
	if (k >= PTT_MAX_SEGS || ptt_shm_fd < 0)
		return NULL;
	uint64_t bytes = (uint64_t)s->seg_rings * s->ring_words * 4;
	void *b = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ptt_shm_fd, (off_t)(s->ring_offset + k * bytes));
	if (b == MAP_FAILED)
		return NULL;
	void *none = NULL;
	if (!__atomic_compare_exchange_n(&ptt_seg_base[k], &none, b, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		munmap(b, bytes);
		return none;
	}
	return b;
}

int ptt_ring_forget(const struct ptt_shm *s, uint32_t i)
{
	uint64_t bytes = (uint64_t)s->ring_words * 4;
	if (ptt_shm_fd < 0)
		return -1;
	return fallocate(ptt_shm_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(s->ring_offset + i * bytes), (off_t)bytes);
}
