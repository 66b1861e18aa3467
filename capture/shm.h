/*
 * shm.h - the memory shared between the traced program (libptt.so) and
 * ptt-record: a control page followed by per-thread rings.
 *
 * Each ring has exactly one writer, the thread that owns it, and one
 * reader, the recorder.  The owner advances `reserved` before writing a
 * record and `committed` (release) after it; the recorder advances
 * `consumed` (release) after copying records out.  A thread never waits
 * for another thread and never takes a lock.  Only two things can make a
 * writer enter the kernel: its first event (choosing a ring) and a full
 * ring in the default lossless mode (it then yields until the recorder
 * makes room, and gives up waiting if the recorder stops beating).
 */
#ifndef PTT_SHM_H
#define PTT_SHM_H

#include <stdint.h>

#define PTT_SHM_MAGIC 0x3152485350545450ull /* "PTTSHMR1" */
#define PTT_SHM_VERSION 1
#define PTT_SHM_ENV "PTT_SHM_FD"
#define PTT_MAX_RINGS 1024
#define PTT_MAX_USER_TYPES 256

enum ptt_ring_state {
	PTT_RING_FREE = 0,   /* available to a new thread */
	PTT_RING_CLAIMED,    /* a thread is setting it up */
	PTT_RING_ACTIVE,     /* owned by a live thread */
	PTT_RING_CLOSED,     /* owner ended; the recorder frees it once drained */
};

enum ptt_shm_flags {
	PTT_SHM_DISCARD = 1u << 0, /* drop events when a ring is full (and count them) */
};

struct ptt_shm_type {
	uint32_t ready;         /* set (release) once the fields below are written */
	uint16_t id;
	uint8_t level, cls;
	char name[48];
	char args[200];         /* "name:kind,..." */
};

struct ptt_ring {
	/* owner's cache line */
	_Alignas(64) uint64_t reserved;   /* words handed out, written by the owner */
	uint64_t committed;               /* words fully written (release), by the owner */
	uint64_t lost;                    /* events dropped (discard mode, or nested in a signal handler) */
	uint64_t lost_first, lost_last;   /* ticks of the first and last lost event not yet reported */
	uint64_t waits;                   /* times the owner found the ring full and waited */
	uint32_t full;                    /* the owner found the ring full and woke the recorder; cleared by it */
	uint32_t pid, tid;
	/* recorder's cache line */
	_Alignas(64) uint64_t consumed;   /* words the recorder has copied out (release) */
	uint64_t lost_reported;
	uint64_t waits_reported;
	/* shared */
	_Alignas(64) uint32_t state;      /* enum ptt_ring_state */
	uint32_t generation;
};

struct ptt_shm {
	uint64_t magic;
	uint32_t version;
	uint32_t flags;            /* enum ptt_shm_flags */
	uint64_t size;             /* bytes of the whole mapping */
	uint32_t nrings;
	uint32_t ring_words;       /* words per ring, a power of two */
	uint64_t ring_offset;      /* byte offset of ring 0's data */
	uint32_t level;            /* detail level to record (1..3) */
	uint32_t class_mask;       /* 1 << enum ptt_class for every class to record */
	uint32_t use_tsc;          /* timestamps are rdtsc ticks (else CLOCK_MONOTONIC ns) */
	uint32_t recorder_pid;
	uint64_t start_ticks;
	_Alignas(64) uint64_t heartbeat;  /* bumped by the recorder on every pass */
	uint32_t stopping;         /* the recorder is gone or finishing: never wait for room */
	uint32_t wake;             /* futex: a writer found its ring full and woke the recorder */
	uint32_t handshake;        /* pid of the first process whose runtime attached */
	uint32_t attached;         /* processes that attached (fork and exec included) */
	uint32_t ring_hint;        /* where to start looking for a free ring */
	uint64_t no_ring_lost;     /* events of threads that found every ring taken */
	uint64_t late_lost;        /* events after a thread's end (TLS destructors) */
	_Alignas(64) uint32_t ntypes;
	struct ptt_shm_type types[PTT_MAX_USER_TYPES];
	_Alignas(64) struct ptt_ring rings[];
};

static inline uint32_t *ptt_ring_data(struct ptt_shm *s, uint32_t i)
{
	return (uint32_t *)((char *)s + s->ring_offset + (uint64_t)i * s->ring_words * 4);
}

static inline uint64_t ptt_shm_bytes(uint32_t nrings, uint32_t ring_words, uint64_t *ring_offset)
{
	uint64_t off = sizeof(struct ptt_shm) + (uint64_t)nrings * sizeof(struct ptt_ring);
	off = (off + 4095) & ~4095ull;
	if (ring_offset)
		*ring_offset = off;
	return off + (uint64_t)nrings * ring_words * 4;
}

static inline void ptt_put64(uint32_t *w, uint64_t v)
{
	w[0] = (uint32_t)v;
	w[1] = (uint32_t)(v >> 32);
}

#if defined(__x86_64__) || defined(__i386__)
/*
 * lfence before rdtsc: rdtsc alone may execute before the instructions
 * before it (a lock acquisition) have completed, so a thread that just
 * took a mutex could stamp a time before the previous holder's unlock.
 * lfence (dispatch-serializing on Intel, and on AMD as Linux configures
 * it) makes it wait; rdtscp would too but is not on every x86-64 CPU.
 * The trace's order and the fidelity check depend on it.
 */
static inline uint64_t ptt_rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return (uint64_t)hi << 32 | lo;
}

/* For events stamped before a release (unlock, signal, post) or a request:
 * an early timestamp is still a correct one there. */
static inline uint64_t ptt_rdtsc_early(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}
#define PTT_HAVE_TSC 1
#else
#define PTT_HAVE_TSC 0
static inline uint64_t ptt_rdtsc(void) { return 0; }
static inline uint64_t ptt_rdtsc_early(void) { return 0; }
#endif

#endif
