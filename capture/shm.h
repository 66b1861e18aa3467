/*
 * shm.h - the memory shared between the traced program (libptt.so) and
 * ptt-record: a control page followed by per-thread rings.
 *
 * Rings come in segments: segment 0 is mapped with the control page, and
 * when every ring is taken a thread that needs one announces the next
 * segment (a compare-and-swap of `nrings`) and maps it from the same memfd,
 * which ptt-record sized for `max_rings` up front (a sparse file: pages
 * exist only once written), without a descriptor (shm.c, seg_remap).  The recorder maps a segment when it sees
 * `nrings` cover it.  Nothing on an event's path changes: a thread keeps
 * the address of its ring's data.
 *
 * Each ring has exactly one writer, the thread that owns it, and one
 * reader, the recorder.  The owner advances `reserved` before writing a
 * record and `committed` (release) after it; the recorder advances
 * `consumed` (release) after copying records out.  A thread never waits
 * for another thread and never takes a lock.  Only two things can make a
 * writer enter the kernel: its first event (choosing a ring) and a full
 * ring in the default lossless mode (it then yields until the recorder
 * makes room, and gives up waiting if the recorder stops beating: one
 * writer's ~2 s finds that out for all, silent_beat).
 */
#ifndef PTT_SHM_H
#define PTT_SHM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../formats/ptt_trace.h"

#define PTT_SHM_MAGIC 0x3152485350545450ull /* "PTTSHMR1" */
#define PTT_SHM_VERSION 10
#define PTT_SHM_ENV "PTT_SHM_FD"
#define PTT_MAX_RINGS 65536   /* ring descriptors the control page has room for */
#define PTT_RING_ALIGN (2ull << 20) /* ring 0's offset in the memfd: a huge page's size */
#define PTT_SEG_RINGS 256     /* rings per segment (fewer when the cap is lower) */
#define PTT_MAX_SEGS (PTT_MAX_RINGS / PTT_SEG_RINGS)
/* every id the format leaves to user types (PTT_USER_ID_BASE up to PTT_MAX_TYPES); their
 * descriptors' pages exist only once written */
#define PTT_MAX_USER_TYPES (PTT_MAX_TYPES - PTT_USER_ID_BASE)
#define PTT_NAMES_WORDS (1u << 20) /* the flight mode's log of naming records (4 MiB, sparse) */
#define PTT_STACKS_WORDS (1u << 20) /* its log of stacks' frames and CPython's code objects (4 MiB, sparse) */

/* A log of records in the shared memory, appended to and never overwritten (struct ptt_shm's names and stacks). */
struct ptt_shm_log {
	_Alignas(64) uint64_t used; /* words taken (may pass the log's end: those records are not kept) */
	uint64_t lost;              /* records not kept: no room */
};

enum ptt_ring_state {
	PTT_RING_FREE = 0,   /* available to a new thread */
	PTT_RING_CLAIMED,    /* a thread is setting it up */
	PTT_RING_ACTIVE,     /* owned by a live thread */
	PTT_RING_CLOSED,     /* owner ended; the recorder frees it once drained */
};

#define PTT_RING_WAITING 2u /* ptt_ring.full: its owner sleeps on the word (a futex) until the recorder gives room back */

enum ptt_shm_flags {
	PTT_SHM_DISCARD = 1u << 0, /* drop events when a ring is full (and count them) */
	PTT_SHM_FLIGHT = 1u << 1,  /* flight recorder: rings overwrite their oldest records, nobody waits */
	PTT_SHM_CODED = 1u << 2,   /* --streams=coded: each thread codes its records into its ring's coded half */
};

/* ptt-record --stacks: which events the runtime unwinds the caller's stack for (capture/runtime/stack.c) */
enum ptt_stack_mode {
	PTT_STACKS_NONE = 0,     /* none */
	PTT_STACKS_BLOCKING = 1, /* blocking paths: the requests of waits (the default) */
	PTT_STACKS_ALL = 2,      /* those and every acquisition, try and release of a lock */
};

struct ptt_shm_type {
	uint32_t ready;         /* set (release) once the fields below are written */
	uint16_t id;
	uint8_t level, cls;
	char name[48];
	char args[256];         /* "name:kind,...": room for every argument list ptt_type_parse_args takes */
};

struct ptt_ring {
	/* owner's cache line */
	_Alignas(64) uint64_t reserved;   /* words handed out, written by the owner */
	uint64_t committed;               /* words fully written (release), by the owner */
	uint64_t lost;                    /* events dropped (discard mode, or nested in a signal handler) */
	uint64_t lost_first, lost_last;   /* ticks of the first and last lost event not yet reported */
	uint64_t waits;                   /* times the owner found the ring full and waited */
	uint32_t full;                    /* the owner found the ring full and woke the recorder (1), and sleeps
					     on this word till room comes (PTT_RING_WAITING); cleared (and woken) by it */
	uint32_t pid, tid;
	/* recorder's cache line */
	_Alignas(64) uint64_t consumed;   /* words the recorder has copied out (release) */
	uint64_t lost_reported;
	uint64_t waits_reported;
	/* shared */
	_Alignas(64) uint32_t state;      /* enum ptt_ring_state */
	uint32_t generation;
	uint64_t first;                   /* position of the owner's first record */
	/* PTT_SHM_CODED: the coded stream in the ring's upper half (ptt_coded_area), a byte ring.
	 * The owner's: the records coded so far and the bytes they end at, as one word (count mod 2^32
	 * << 32 | bytes mod 2^32, release), and the time of the last one (stored before) */
	_Alignas(64) uint64_t coded_pos;
	uint64_t coded_last;
	uint32_t coded_wrap; /* the records (mod 2^32) before the ring's end when the stream last passed it */
	/* where the owner last started the history again (a CPT_STREAM_RESET: records and bytes as in
	 * coded_pos, stored before the coded_pos that publishes it); 0: never.  The recorder starts a
	 * block there, where a reader whose history damage spoiled takes the stream up again */
	uint64_t coded_reset;
	uint64_t coded_reset_ts; /* the time of the first record after it (stored before it) */
	/* the recorder's: bytes of the stream copied out (release) */
	_Alignas(64) uint64_t coded_consumed;
};

/* The coded stream's bytes in a ring of ring_words words (PTT_SHM_CODED): its upper half, at most
 * 1 MiB (a span copied as one block); the records are first written in its lowest PTT_CODED_RAW words. */
#define PTT_CODED_RAW 4096u
#define PTT_CODED_MAX (1u << 20)
static inline uint32_t ptt_coded_bytes(uint32_t ring_words)
{
	return ring_words * 2u < PTT_CODED_MAX ? ring_words * 2u : PTT_CODED_MAX;
}
static inline unsigned char *ptt_coded_area(uint32_t *data, uint32_t ring_words)
{
	return (unsigned char *)(data + ring_words / 2u);
}

struct ptt_shm {
	uint64_t magic;
	uint32_t version;
	uint32_t flags;            /* enum ptt_shm_flags */
	uint64_t size;             /* bytes of the first mapping: control page, descriptors, segment 0 */
	uint32_t nrings;           /* rings announced so far (grows by seg_rings, atomically, up to max_rings) */
	uint32_t max_rings;        /* the cap (-t): the descriptors and the memfd are sized for it */
	uint32_t seg_rings;        /* rings per segment */
	uint32_t recorder_fd;      /* the recorder's own descriptor of the memfd: a runtime that lost its
				      copy opens /proc/recorder_pid/fd/recorder_fd to hand one to an exec */
	uint32_t ring_words;       /* words per ring, a power of two */
	uint64_t ring_offset;      /* byte offset of ring 0's data */
	uint32_t level;            /* detail level to record (1..3) */
	uint32_t class_mask;       /* 1 << enum ptt_class for every class to record */
	uint32_t use_tsc;          /* timestamps are rdtsc ticks (else CLOCK_MONOTONIC ns) */
	uint32_t recorder_pid;
	uint64_t start_ticks;
	_Alignas(64) uint64_t heartbeat;  /* bumped by the recorder on every pass */
	uint64_t silent_beat;      /* heartbeat + 1 when a writer found the recorder silent (no pass for ~2 s):
				      while it still equals heartbeat + 1 no writer waits for the recorder */
	uint32_t stopping;         /* the recorder is gone or finishing: never wait for room */
	uint32_t wake;             /* futex: a writer found its ring full and woke the recorder */
	uint32_t handshake;        /* pid of the first process whose runtime attached */
	uint32_t attached;         /* processes that attached (fork and exec included) */
	uint32_t ring_hint;        /* where to start looking for a free ring */
	uint32_t rings_used;       /* 1 + the highest ring index ever claimed: the recorder looks no further */
	uint64_t no_ring_lost;     /* events of threads that found every ring taken */
	uint64_t late_lost;        /* events after a thread's end (TLS destructors) */
	uint64_t no_map_lost;      /* events of threads whose ring's segment their process could not map */
	uint32_t snapshot;         /* flight mode: the recorder is copying the rings; a writer waits rather than overwrite */
	uint32_t stacks;           /* enum ptt_stack_mode: which events carry the caller's stack (--stacks) */
	uint64_t trace_cost;       /* ticks x 1000 the trace path adds per event, measured at attach (ptt_calibrate); 0 unknown */
	/* Every limit event the runtime made (ptt_emit_limit), summed as formats/limits.c sums them
	 * (count added, limit and need the largest): a recorder of coded rings reads no record, and
	 * says the program's limits from these down a pipe (ptt-record.c) */
	uint64_t limit_count[PTT_LIMIT_COUNT], limit_limit[PTT_LIMIT_COUNT], limit_need[PTT_LIMIT_COUNT];
	_Alignas(64) uint32_t ntypes;
	struct ptt_shm_type types[PTT_MAX_USER_TYPES];
	/*
	 * Flight mode: a copy of every record that begins or names a process,
	 * thread, module or object (process_begin, process_exec, module,
	 * thread_begin, thread_name, object_name, py_runtime; not process_exit:
	 * the recording written at the end needs the names of the processes it
	 * ends with), appended by any thread and never overwritten, so that the
	 * names survive in every snapshot however fast the rings turn over; and,
	 * in a log of its own so that a program with many stacks does not crowd
	 * its names out, every record a stack id needs to be read (stack_frames,
	 * py_code), written once per stack while its events name it for good.
	 * A writer takes its words with a fetch-add on the log's used, writes
	 * the record but its first word, then that word (release): a reader
	 * stops at a first word still 0.  Records past the log's end are not
	 * kept but counted in its lost.
	 */
	struct ptt_shm_log names_log;
	uint32_t names[PTT_NAMES_WORDS];
	struct ptt_shm_log stacks_log;
	uint32_t stack_recs[PTT_STACKS_WORDS];
	_Alignas(64) struct ptt_ring rings[];
};

/* Where each segment after the first is mapped in this process (0: not yet),
 * and the memfd to map it from: the recorder's; -1 in the traced program,
 * which maps segments from the memory it already maps, never from a
 * descriptor it may have closed (capture/shm.c).  One per process:
 * libptt.so and ptt-record each have theirs. */
extern void *ptt_seg_base[PTT_MAX_SEGS] __attribute__((visibility("hidden")));
extern int ptt_shm_fd __attribute__((visibility("hidden")));

/* Map segment k (k >= 1) of s; its base, or NULL (no address space).
 * Safe from any thread at once: the loser of a race unmaps its copy. */
void *ptt_seg_map(const struct ptt_shm *s, uint32_t k) __attribute__((visibility("hidden")));

/* Ask for the rings in bytes at p (a mapping of s's memfd) to be huge pages
 * (MADV_HUGEPAGE): where the host lets shared memory have them
 * (/sys/kernel/mm/transparent_hugepage/shmem_enabled advise, within_size or
 * always; Debian's default, never, ignores the request), a ring's 2 MiB take
 * one page fault in each process instead of 512, at 16-25 us each on a
 * paravirtual guest (doc/recorder.md, section 9).  Each ring its thread
 * writes then takes its 2 MiB of memory at once.  Not with PTT_SHM_CODED,
 * whose threads write 16 KiB and their coded half of the ring: the whole
 * huge page made and zeroed at once cost sqlite3 and node 1.01-1.11 of
 * their time (8 pairs) for CPython's 0.98. */
void ptt_shm_huge(const struct ptt_shm *s, void *p, uint64_t bytes) __attribute__((visibility("hidden")));

/* Give ring i's memory back to the system (its words read as zero again, in
 * every process that maps it): only while the caller holds the ring
 * (claimed), so that nobody writes into it meanwhile. */
int ptt_ring_forget(const struct ptt_shm *s, uint32_t i) __attribute__((visibility("hidden")));

/* The data of ring i (i < nrings), mapping its segment on first use; NULL if that fails. */
static inline uint32_t *ptt_ring_data(const struct ptt_shm *s, uint32_t i)
{
	uint32_t k = i / s->seg_rings;
	uint64_t in = (uint64_t)(i % s->seg_rings) * s->ring_words;
	if (k == 0)
		return (uint32_t *)((char *)s + s->ring_offset) + in;
	void *b = __atomic_load_n(&ptt_seg_base[k], __ATOMIC_ACQUIRE);
	if (__builtin_expect(!b, 0) && !(b = ptt_seg_map(s, k)))
		return NULL;
	return (uint32_t *)b + in;
}

/* Words [from, to) of a ring of size words (data: its words) into out, across its end. */
static inline void ptt_ring_copy(uint32_t *out, const uint32_t *data, uint32_t size, uint64_t from, uint64_t to)
{
	while (from < to) {
		uint32_t off = (uint32_t)from & (size - 1);
		uint64_t k = size - off < to - from ? size - off : to - from;
		memcpy(out, data + off, (size_t)k * 4);
		out += k;
		from += k;
	}
}

/* The record p at position pos of a ring of size words, read up to end, as its owner (pid, tid) wrote
 * it: its length, or 0 when it cannot be one (torn: no mark, too short, past the ring's end or the
 * span's, another thread's).  Its checksum is the caller's to check.  A pad word is the caller's too. */
static inline uint32_t ptt_ring_rec_len(const uint32_t *p, uint64_t pos, uint64_t end, uint32_t size, uint32_t pid,
					uint32_t tid)
{
	uint32_t n = ptt_rec_len(p[0]), off = (uint32_t)pos & (size - 1);
	if (!ptt_rec_marked(p[0]) || n < PTT_REC_MIN_WORDS || off + n > size || pos + n > end || ptt_rec_pid(p) != pid ||
	    ptt_rec_tid(p) != tid)
		return 0;
	return n;
}

/* The next whole record of a flight mode's log (the names, the stacks: words[0, used)) at *pos, which
 * moves past it: its words and *n its length, or NULL at the end or at a record still being written. */
static inline const uint32_t *ptt_log_next(const uint32_t *words, uint64_t used, uint64_t *pos, uint32_t *n)
{
	if (*pos >= used)
		return NULL;
	uint32_t w0 = __atomic_load_n(&words[*pos], __ATOMIC_ACQUIRE);
	*n = ptt_rec_len(w0);
	if (!ptt_rec_marked(w0) || *n < PTT_REC_MIN_WORDS || *pos + *n > used)
		return NULL;
	const uint32_t *rec = words + *pos;
	*pos += *n;
	return rec;
}

/*
 * Bytes of the control page and of the descriptors of max_rings rings
 * (*ring_offset, a multiple of PTT_RING_ALIGN: the memfd's hole before it
 * takes no memory); returns the bytes of the first mapping:
 * that and the first segment of seg_rings rings.  The memfd holds
 * ptt_shm_file_bytes().
 */
static inline uint64_t ptt_shm_bytes(uint32_t max_rings, uint32_t seg_rings, uint32_t ring_words, uint64_t *ring_offset)
{
	uint64_t off = sizeof(struct ptt_shm) + (uint64_t)max_rings * sizeof(struct ptt_ring);
	off = (off + PTT_RING_ALIGN - 1) & ~(PTT_RING_ALIGN - 1); /* the rings on huge-page bounds (ptt_shm_huge) */
	if (ring_offset)
		*ring_offset = off;
	return off + (uint64_t)seg_rings * ring_words * 4;
}

static inline uint64_t ptt_shm_file_bytes(const struct ptt_shm *s)
{
	uint64_t segs = (s->max_rings + s->seg_rings - 1) / s->seg_rings;
	return s->ring_offset + segs * s->seg_rings * (uint64_t)s->ring_words * 4;
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
