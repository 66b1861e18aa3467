/*
 * stack.c - the caller's stack on blocking paths, interned.
 *
 * ptt_stack_here() unwinds the calling thread's stack with libgcc's
 * unwinder (.eh_frame: Debian builds have no frame pointers), at most
 * PTT_STACK_DEPTH return addresses past libptt's own frames, and interns
 * them: a process-wide hash table, mapped once at start-up, gives each
 * distinct stack an id.  The thread that inserts a stack writes its frames
 * once (stack_frames records) before it publishes the entry, so every
 * later use of the id, by any thread, is stamped after the frames.
 *
 * Why this is safe where a lock call can happen:
 *  - libgcc 12 on glibc >= 2.35 finds unwind tables through _dl_find_object,
 *    which takes no lock (the dl_iterate_phdr fallback and the registry of
 *    __register_frame_info objects would; the latter only holds JIT code and
 *    is checked with an atomic fast path first).  libptt.so links libgcc_s,
 *    so nothing is loaded lazily on first use.
 *  - a thread that is unwinding does not unwind again (a lock taken by the
 *    unwinder, or by a signal handler that interrupts it, is recorded
 *    without a stack), nor does a thread inside the tracer (t->guard: its
 *    record would be deferred or lost).
 *  - the table never allocates: an insert claims an empty slot with one
 *    compare-and-swap of its hash; a slot still being written reads as
 *    "not this stack", so a reader never waits (two threads meeting a new
 *    stack at once may give it two ids: harmless, both are written out).
 *  - full (PTT_STACK_SLOTS * 3/4 entries, or a probe longer than
 *    PTT_STACK_PROBE): nothing more is interned and the events say so
 *    (PTT_STACK_FULL), never silently.
 *  - a fork child starts an empty table (its stacks are written under its
 *    own pid): ptt_stack_after_fork, from the runtime's atfork handler.
 *  - in a CPython, the thread's Python frames follow its native ones
 *    (pyframes.c says why reading them is safe here).
 */
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unwind.h>

#include "runtime.h"

#define PTT_STACK_SLOTS 16384u /* a power of two */
#define PTT_STACK_PROBE 64u

struct stack_slot {
	uint64_t hash;  /* 0: empty; claimed by compare-and-swap */
	uint32_t ready; /* 1 once frames, depth and id are written (release) */
	uint32_t depth;
	uint32_t id;
	uint32_t pad;
	uintptr_t f[PTT_STACK_WALK + PTT_PY_WALK];
};

uint8_t ptt_stack_on[PTT_MAX_TYPES];
static struct stack_slot *table;
static uint32_t next_id, used;
static uintptr_t self_lo, self_hi; /* libptt.so's mapped range: its frames are skipped */

struct walk {
	uintptr_t *f;
	unsigned n;
};

static _Unwind_Reason_Code step(struct _Unwind_Context *ctx, void *arg)
{
	struct walk *w = arg;
	uintptr_t ip = (uintptr_t)_Unwind_GetIP(ctx);
	if (!ip)
		return _URC_END_OF_STACK;
	if (ip >= self_lo && ip < self_hi)
		return _URC_NO_REASON; /* the tracer's own frames: the wrapper, a thread's start trampoline */
	w->f[w->n++] = ip;
	/* in a CPython, the interpreter loop's first frame ends the native part (ptt_py_eval_lo) */
	if (w->n == PTT_STACK_WALK || (ip - 1 >= ptt_py_eval_lo && ip - 1 < ptt_py_eval_hi))
		return _URC_END_OF_STACK;
	return _URC_NO_REASON;
}

static uint64_t stack_hash(const uintptr_t *f, unsigned n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ n;
	for (unsigned i = 0; i < n; i++) {
		h ^= (uint64_t)f[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h | 1; /* never 0, the empty slot's */
}

/* stack_frames records for a new stack, 6 frames each (the frames after the last 0). */
static void write_frames(uint32_t id, const uintptr_t *f, unsigned n)
{
	for (unsigned at = 0; at < n; at += 6) {
		uint32_t a[14] = { id, at };
		for (unsigned k = 0; k < 6 && at + k < n; k++)
			ptt_put64(a + 2 + 2 * k, (uint64_t)f[at + k]);
		ptt_emit_plain(PTT_EV_STACK_FRAMES, a, 14);
	}
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__asm__ volatile("" ::: "memory");
#endif
}

uint32_t ptt_stack_intern(const uintptr_t *f, unsigned n)
{
	if (!table || n == 0)
		return PTT_STACK_NONE;
	uint64_t h = stack_hash(f, n);
	for (unsigned k = 0, i = (unsigned)h & (PTT_STACK_SLOTS - 1); k < PTT_STACK_PROBE;
	     k++, i = (i + 1) & (PTT_STACK_SLOTS - 1)) {
		struct stack_slot *s = &table[i];
		uint64_t sh = __atomic_load_n(&s->hash, __ATOMIC_ACQUIRE);
		if (sh == 0) {
			if (__atomic_load_n(&used, __ATOMIC_RELAXED) >= PTT_STACK_SLOTS / 4 * 3)
				return PTT_STACK_FULL;
			if (__atomic_compare_exchange_n(&s->hash, &sh, h, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				__atomic_fetch_add(&used, 1, __ATOMIC_RELAXED);
				uint32_t id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
				memcpy(s->f, f, n * sizeof *f);
				s->depth = n;
				s->id = id;
				write_frames(id, f, n); /* stamped before any use of id can be */
				__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
				if (n > PTT_STACK_DEPTH && f[PTT_STACK_DEPTH] == (uintptr_t)PTT_FRAME_CUT(PTT_STACK_DEPTH))
					ptt_emit_limit(PTT_LIMIT_STACK_DEPTH, 1, PTT_STACK_DEPTH, 0); /* once per stack cut */
				if (f[n - 1] == (uintptr_t)PTT_FRAME_CUT(PTT_PY_DEPTH)) /* its Python frames cut */
					ptt_emit_limit(PTT_LIMIT_PY_DEPTH, 1, PTT_PY_DEPTH, 0);
				return id;
			}
			/* lost the race for the slot: sh is now the winner's hash */
		}
		if (sh == h && !__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE)) {
			/* another thread claimed this slot and is writing it (maybe our very stack): wait for it a
			 * while rather than take a second slot and id for the same stack; a writer held up longer
			 * (preempted, waiting for room in its ring: threads blocking at one place at once, under
			 * load) makes this stack take the next free slot and an id of its own, the same frames
			 * twice, rather than go without (its wait would be named in the lock's wrapper) */
			for (unsigned spin = 0; spin < (1u << 16) && !__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE); spin++)
				cpu_relax();
			if (!__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE))
				continue;
		}
		if (sh == h && s->depth == n && memcmp(s->f, f, n * sizeof *f) == 0)
			return s->id;
	}
	return PTT_STACK_FULL;
}

uint32_t ptt_stack_here(void)
{
	struct ptt_tls *t = &ptt_tls;
	if (t->guard || t->unwinding || !table)
		return PTT_STACK_NONE;
	int saved = errno; /* the program's, across the unwinder and a first record's ring set-up */
	t->unwinding = 1;
	uintptr_t f[PTT_STACK_WALK + PTT_PY_WALK];
	struct walk w = { f, 0 };
	_Unwind_Backtrace(step, &w);
	if (w.n == PTT_STACK_WALK) /* a frame past the depth kept: the stack is cut, and says so */
		f[PTT_STACK_DEPTH] = (uintptr_t)PTT_FRAME_CUT(PTT_STACK_DEPTH);
	unsigned py = ptt_py_frames(f + w.n, PTT_PY_WALK); /* a CPython's: after the native frames (pyframes.c) */
	if (py == PTT_PY_WALK) /* a Python frame past the depth: cut, and said as the native stack's cut is */
		f[w.n + PTT_PY_DEPTH] = (uintptr_t)PTT_FRAME_CUT(PTT_PY_DEPTH);
	w.n += py;
	uint32_t id = ptt_stack_intern(f, w.n);
	t->unwinding = 0;
	errno = saved;
	return id;
}

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uintptr_t me = (uintptr_t)arg, lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = (uintptr_t)info->dlpi_addr + ph->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (me < lo || me >= hi)
		return 0;
	self_lo = lo;
	self_hi = hi;
	return 1;
}

void ptt_stack_init(unsigned mode)
{
	if (mode == PTT_STACKS_NONE)
		return;
	void *m = mmap(NULL, sizeof(struct stack_slot) * PTT_STACK_SLOTS, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return; /* no stack events: the trace has none (ptt-trace(5)) */
	dl_iterate_phdr(find_self, (void *)(uintptr_t)ptt_stack_init);
	for (unsigned id = 0; id < PTT_EV_BUILTIN_COUNT; id++) {
		unsigned role = ptt_builtin_type(id)->role;
		ptt_stack_on[id] = ptt_on[id] && (ptt_role_is_request(role) ||
			(mode == PTT_STACKS_ALL && (role == PTT_ROLE_ACQUIRE || role == PTT_ROLE_SHARED ||
						    role == PTT_ROLE_TRY || role == PTT_ROLE_TRY_SHARED)));
	}
	ptt_on[PTT_EV_STACK] = ptt_on[PTT_EV_STACK_FRAMES] = 1;
	/* the unwinder's one-time set-up now, not inside the program's first wait */
	uintptr_t f[PTT_STACK_WALK];
	struct walk w = { f, 0 };
	_Unwind_Backtrace(step, &w);
	table = m;
	ptt_py_init();
}

void ptt_stack_after_fork(void)
{
	if (!table)
		return;
	/* private anonymous memory reads as zero again: the child's ids start afresh, under its pid */
	madvise(table, sizeof(struct stack_slot) * PTT_STACK_SLOTS, MADV_DONTNEED);
	next_id = used = 0;
	ptt_tls.unwinding = 0;
	ptt_py_after_fork();
}
